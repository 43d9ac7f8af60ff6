//! Says `"requested": null` in its -32022 refusal.

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

/// MCP 2026-07-28's "unsupported protocol version".
const UNSUPPORTED_VERSION: i64 = -32022;

#[derive(Debug, Default)]
pub(super) struct NullRequested;

impl Breaks for NullRequested {
    fn bridge_message(&self, message: &mut Value, _: &Answering<'_>, _: &Relay) -> Flow {
        if message["error"]["code"] == json!(UNSUPPORTED_VERSION) {
            message["error"]["data"]["requested"] = Value::Null;
        }
        Flow::Pass
    }
}
