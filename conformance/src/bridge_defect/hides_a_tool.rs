//! Leaves the last of the Editor's tools out of `tools/list`.

use serde_json::Value;

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct HidesATool;

impl Breaks for HidesATool {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method == "tools/list" {
            if let Some(tools) = message.pointer_mut("/result/tools").and_then(Value::as_array_mut) {
                tools.pop();
            }
        }
        Flow::Pass
    }
}
