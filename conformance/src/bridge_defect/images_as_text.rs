//! Sends images as text.

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct ImagesAsText;

impl Breaks for ImagesAsText {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method != "tools/call" {
            return Flow::Pass;
        }
        if let Some(content) = message.pointer_mut("/result/content").and_then(Value::as_array_mut) {
            for block in content.iter_mut().filter(|b| b["type"] == "image") {
                *block = json!({"type": "text", "text": block["data"]});
            }
        }
        Flow::Pass
    }
}
