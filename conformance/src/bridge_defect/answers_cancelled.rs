//! Answers a request the client cancelled.

use serde_json::{Value, json};

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct AnswersCancelled;

impl Breaks for AnswersCancelled {
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, relay: &Relay) -> Flow {
        if client.method == "notifications/cancelled" {
            relay.answer(&message["params"]["requestId"], &json!({"content": [{"type": "text", "text": "cancelled"}]}));
        }
        Flow::Pass
    }
}
