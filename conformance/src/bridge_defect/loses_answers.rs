//! Loses the answer of every other tool call (the first, third …).

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct LosesAnswers {
    /// Tool calls answered so far (by the bridge).
    answered: AtomicU64,
}

impl Breaks for LosesAnswers {
    fn bridge_message(&self, _: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method == "tools/call" && self.answered.fetch_add(1, Ordering::Relaxed) % 2 == 0 {
            return Flow::Stop;
        }
        Flow::Pass
    }
}
