//! Answers every tool call with an error ("Unity is not reachable")
//! instead of its result, as a bridge that gives up instead of waiting
//! through a reload or a fault would.

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct GivesUp;

impl Breaks for GivesUp {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method == "tools/call" {
            let id = message["id"].clone();
            *message = json!({"jsonrpc": "2.0", "id": id, "result": {"isError": true,
                "content": [{"type": "text", "text": "Unity is not reachable: the connection was lost"}]}});
        }
        Flow::Pass
    }
}
