//! Exits at a line that is not JSON.

use super::{Breaks, Flow};

#[derive(Debug, Default)]
pub(super) struct DiesOnBadJson;

impl Breaks for DiesOnBadJson {
    fn not_json(&self) -> Flow {
        Flow::Exit(70)
    }
}
