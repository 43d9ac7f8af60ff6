//! Answers an unknown tool with a tool result, not a JSON-RPC error.

use editor_link::jsonrpc::code;
use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct UnknownToolAsResult;

impl Breaks for UnknownToolAsResult {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method == "tools/call" && message["error"]["code"] == json!(code::INVALID_PARAMS) {
            let text = message["error"]["message"].as_str().unwrap_or("unknown tool").to_owned();
            let id = message["id"].clone();
            *message = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}], "isError": true}});
        }
        Flow::Pass
    }
}
