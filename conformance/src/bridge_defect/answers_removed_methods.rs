//! Answers the methods 2026-07-28 removed (ping, logging/setLevel) in
//! that revision as if they were still there.

use serde_json::{Value, json};

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct AnswersRemovedMethods;

impl Breaks for AnswersRemovedMethods {
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, relay: &Relay) -> Flow {
        if client.stateless && client.id.is_some() && matches!(client.method, "ping" | "logging/setLevel") {
            relay.answer(&message["id"], &json!({}));
            return Flow::Stop;
        }
        Flow::Pass
    }
}
