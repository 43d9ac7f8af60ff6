//! Answers `tools/list` with an invalid cursor as if it were the end.

use editor_link::jsonrpc::code;
use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct AcceptsAnyCursor;

impl Breaks for AcceptsAnyCursor {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method == "tools/list" && message["error"]["code"] == json!(code::INVALID_PARAMS) {
            let id = message["id"].clone();
            *message = json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}});
        }
        Flow::Pass
    }
}
