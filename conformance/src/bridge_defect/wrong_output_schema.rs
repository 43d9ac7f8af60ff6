//! Declares every output member a string in tools' `outputSchema`s.

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct WrongOutputSchema;

impl Breaks for WrongOutputSchema {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method != "tools/list" {
            return Flow::Pass;
        }
        for tool in message.pointer_mut("/result/tools").and_then(Value::as_array_mut).into_iter().flatten() {
            let properties = tool.pointer_mut("/outputSchema/properties").and_then(Value::as_object_mut);
            for property in properties.into_iter().flat_map(|p| p.values_mut()) {
                *property = json!({"type": "string"});
            }
        }
        Flow::Pass
    }
}
