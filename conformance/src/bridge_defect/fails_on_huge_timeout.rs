//! Fails with a JSON-RPC error (a panicked task) on a TimeoutSeconds of
//! 1e18 or more.

use editor_link::jsonrpc::code;
use serde_json::Value;

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct FailsOnHugeTimeout;

impl Breaks for FailsOnHugeTimeout {
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, relay: &Relay) -> Flow {
        let huge = message["params"]["arguments"]["TimeoutSeconds"].as_f64().is_some_and(|t| t >= 1e18);
        if client.method != "tools/call" || !huge {
            return Flow::Pass;
        }
        relay.refuse(
            &message["id"],
            code::INTERNAL_ERROR,
            "the bridge failed while handling tools/call: task panicked with message \"overflow when adding duration to instant\"",
        );
        Flow::Stop
    }
}
