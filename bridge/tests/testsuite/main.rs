//! Integration tests of the bridge crate, compiled as one binary.

mod cli;
mod e2e;
mod link;
mod promises;
mod service;
mod sessions;
mod snapshots;
mod stdio;
