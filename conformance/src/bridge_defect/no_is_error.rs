//! Leaves `isError` out of failed tool results.

use serde_json::Value;

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct NoIsError;

impl Breaks for NoIsError {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method == "tools/call" {
            if let Some(result) = message.pointer_mut("/result").and_then(Value::as_object_mut) {
                result.remove("isError");
            }
        }
        Flow::Pass
    }
}
