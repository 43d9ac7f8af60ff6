//! Does not declare `tools.listChanged`.

use serde_json::Value;

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct NoListChangedCapability;

impl Breaks for NoListChangedCapability {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method == "initialize" {
            if let Some(tools) = message.pointer_mut("/result/capabilities/tools").and_then(Value::as_object_mut) {
                tools.remove("listChanged");
            }
        }
        Flow::Pass
    }
}
