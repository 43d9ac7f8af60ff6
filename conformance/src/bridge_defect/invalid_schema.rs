//! Advertises a tool whose input schema is not a valid JSON Schema.

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct InvalidSchema;

impl Breaks for InvalidSchema {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method == "tools/list" {
            if let Some(tool) = message.pointer_mut("/result/tools/0") {
                tool["inputSchema"]["type"] = json!("objekt");
            }
        }
        Flow::Pass
    }
}
