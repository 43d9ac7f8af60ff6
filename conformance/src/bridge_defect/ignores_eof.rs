//! Keeps running after stdin closes.

use super::Breaks;

#[derive(Debug, Default)]
pub(super) struct IgnoresEof;

impl Breaks for IgnoresEof {
    fn outlives_input(&self) -> bool {
        true
    }
}
