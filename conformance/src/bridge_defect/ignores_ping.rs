//! Never answers `ping`.

use serde_json::Value;

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct IgnoresPing;

impl Breaks for IgnoresPing {
    fn client_message(&self, _: &mut Value, client: &FromClient<'_>, _: &Relay) -> Flow {
        if client.method == "ping" { Flow::Stop } else { Flow::Pass }
    }
}
