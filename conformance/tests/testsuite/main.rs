//! Integration tests of the conformance runner, compiled as one binary.

mod cli;
mod defects;
