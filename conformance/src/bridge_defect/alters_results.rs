//! Changes what Unity answered: a suffix on every description, text
//! and error message.

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct AltersResults;

impl Breaks for AltersResults {
    fn bridge_message(&self, message: &mut Value, _: &Answering<'_>, _: &Relay) -> Flow {
        for tool in message.pointer_mut("/result/tools").and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(d) = tool["description"].as_str() {
                tool["description"] = json!(format!("{d} (relayed)"));
            }
        }
        for block in message.pointer_mut("/result/content").and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(t) = block["text"].as_str() {
                block["text"] = json!(format!("{t} (relayed)"));
            }
        }
        if let Some(m) = message["error"]["message"].as_str() {
            message["error"]["message"] = json!(format!("{m} (relayed)"));
        }
        Flow::Pass
    }
}
