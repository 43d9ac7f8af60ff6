//! Never answers `server/discover`.

use serde_json::Value;

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct IgnoresDiscover;

impl Breaks for IgnoresDiscover {
    fn client_message(&self, _: &mut Value, client: &FromClient<'_>, _: &Relay) -> Flow {
        if client.method == "server/discover" { Flow::Stop } else { Flow::Pass }
    }
}
