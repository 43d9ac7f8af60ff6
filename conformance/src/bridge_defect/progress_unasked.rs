//! Sends `notifications/progress` for calls that did not ask for it.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct ProgressUnasked {
    /// Progress tokens given so far.
    tokens: AtomicU64,
}

impl Breaks for ProgressUnasked {
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, _: &Relay) -> Flow {
        if client.method == "tools/call" && message["params"]["_meta"]["progressToken"].is_null() {
            let token = self.tokens.fetch_add(1, Ordering::Relaxed) + 1;
            message["params"]["_meta"] = json!({"progressToken": format!("relay-{token}")});
        }
        Flow::Pass
    }
}
