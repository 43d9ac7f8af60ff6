//! Marks every parameter of every tool required.

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct RequiresEveryParameter;

impl Breaks for RequiresEveryParameter {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method != "tools/list" {
            return Flow::Pass;
        }
        for tool in message.pointer_mut("/result/tools").and_then(Value::as_array_mut).into_iter().flatten() {
            let names: Vec<Value> = tool["inputSchema"]["properties"]
                .as_object()
                .map(|p| p.keys().map(|k| json!(k)).collect())
                .unwrap_or_default();
            tool["inputSchema"]["required"] = Value::Array(names);
        }
        Flow::Pass
    }
}
