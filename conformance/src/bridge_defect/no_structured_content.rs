//! Leaves `structuredContent` out of tool results.

use serde_json::Value;

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct NoStructuredContent;

impl Breaks for NoStructuredContent {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method == "tools/call" {
            if let Some(result) = message.pointer_mut("/result").and_then(Value::as_object_mut) {
                result.remove("structuredContent");
            }
        }
        Flow::Pass
    }
}
