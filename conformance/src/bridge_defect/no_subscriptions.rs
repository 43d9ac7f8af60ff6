//! Answers `subscriptions/listen` with -32601 (the bridge before it
//! served 2026-07-28's list changes).

use editor_link::jsonrpc::code;
use serde_json::Value;

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct NoSubscriptions;

impl Breaks for NoSubscriptions {
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, relay: &Relay) -> Flow {
        if client.id.is_none() || client.method != "subscriptions/listen" {
            return Flow::Pass;
        }
        relay.refuse(&message["id"], code::METHOD_NOT_FOUND, "Method not found: subscriptions/listen");
        Flow::Stop
    }
}
