//! Runs a second request with the id of one in flight, and answers only
//! one of them.

use serde_json::Value;

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct RunsDuplicateIds;

impl Breaks for RunsDuplicateIds {
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, relay: &Relay) -> Flow {
        match &client.id {
            // Run it under another id; its answer goes nowhere.
            Some(id) if !client.method.is_empty() && relay.in_flight(id) => {
                let hidden = relay.fresh_id("relay-dup");
                relay.hide(&hidden);
                message["id"] = hidden;
                Flow::Pass
            }
            _ => Flow::Pass,
        }
    }
}
