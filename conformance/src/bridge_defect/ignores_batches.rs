//! Never answers a batch.

use serde_json::Value;

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct IgnoresBatches;

impl Breaks for IgnoresBatches {
    fn client_message(&self, message: &mut Value, _: &FromClient<'_>, _: &Relay) -> Flow {
        if message.is_array() { Flow::Stop } else { Flow::Pass }
    }
}
