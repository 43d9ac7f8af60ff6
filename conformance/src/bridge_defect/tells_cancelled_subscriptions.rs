//! Still sends `notifications/tools/list_changed` on a subscription the
//! client cancelled.

use std::time::Duration;

use editor_link::jsonrpc::notifications;
use serde_json::{Value, json};

use super::{Breaks, Flow, FromClient, Relay};

/// How long after the cancellation the stale notification comes.
const AFTER: Duration = Duration::from_millis(1500);

#[derive(Debug, Default)]
pub(super) struct TellsCancelledSubscriptions;

impl Breaks for TellsCancelledSubscriptions {
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, relay: &Relay) -> Flow {
        if client.method == "notifications/cancelled" {
            let listen = message["params"]["requestId"].clone();
            let stale = json!({"jsonrpc": "2.0", "method": notifications::TOOLS_LIST_CHANGED,
                "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": listen}}});
            relay.say_later(AFTER, &stale);
        }
        Flow::Pass
    }
}
