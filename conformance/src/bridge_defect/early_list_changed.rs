//! Sends `notifications/tools/list_changed` before `initialized`.

use editor_link::jsonrpc::notifications;
use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct EarlyListChanged;

impl Breaks for EarlyListChanged {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, relay: &Relay) -> Flow {
        if answering.method != "initialize" {
            return Flow::Pass;
        }
        relay.say(message.to_string());
        relay.say(json!({"jsonrpc": "2.0", "method": notifications::TOOLS_LIST_CHANGED}).to_string());
        Flow::Stop
    }
}
