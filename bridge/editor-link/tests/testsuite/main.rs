//! Integration tests of the editor link, compiled as one binary.

mod connection;
mod framing_props;
mod framing_vectors;
