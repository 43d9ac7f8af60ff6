//! Never lets go of a call the client cancelled: it keeps waiting for
//! the Editor's answer, and relays it.

use serde_json::Value;

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct IgnoresCancellation;

impl Breaks for IgnoresCancellation {
    fn client_message(&self, _: &mut Value, client: &FromClient<'_>, _: &Relay) -> Flow {
        if client.method == "notifications/cancelled" { Flow::Stop } else { Flow::Pass }
    }
}
