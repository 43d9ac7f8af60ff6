//! Says nothing of what holds the Editor's main thread (a bridge that
//! does not ask `get-editor-state`): progress and answers cut before it.

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct HidesWhatBlocks;

impl Breaks for HidesWhatBlocks {
    fn bridge_message(&self, message: &mut Value, _: &Answering<'_>, _: &Relay) -> Flow {
        let cut = |text: &str| match text.find("the Editor's main thread") {
            Some(at) => text[..at].to_owned(),
            None => text.to_owned(),
        };
        if let Some(m) = message.pointer("/params/message").and_then(Value::as_str).map(cut) {
            message["params"]["message"] = json!(m);
        }
        for block in message.pointer_mut("/result/content").and_then(Value::as_array_mut).into_iter().flatten() {
            if let Some(t) = block["text"].as_str().map(cut) {
                block["text"] = json!(t);
            }
        }
        Flow::Pass
    }
}
