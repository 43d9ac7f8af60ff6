//! Integration tests of the bridge crate, compiled as one binary.

mod blocked;
mod cli;
mod client;
mod e2e;
mod link;
mod mcp;
mod packaging;
mod promises;
mod service;
mod stdio;
mod tasks;
mod uloop211;
mod uloop3;
