//! Integration tests of the bridge crate, compiled as one binary.

mod framing_props;
mod link;
mod service;
