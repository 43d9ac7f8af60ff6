//! Integration tests of the bridge crate, compiled as one binary.

mod e2e;
mod framing_props;
mod link;
mod service;
