//! Serves only after `initialize`: a 2026-07-28 request before it gets
//! -32600 "before initialize" (the bridge before it spoke 2026-07-28).

use editor_link::jsonrpc::code;
use serde_json::Value;

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct RequiresHandshake;

impl Breaks for RequiresHandshake {
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, relay: &Relay) -> Flow {
        if !client.stateless || client.id.is_none() || client.initialized {
            return Flow::Pass;
        }
        relay.refuse(
            &message["id"],
            code::INVALID_REQUEST,
            &format!("Invalid Request: {} before initialize", client.method),
        );
        Flow::Stop
    }
}
