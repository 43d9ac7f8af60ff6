//! Answers `initialize` with an error when the version is not one it knows.

use editor_link::jsonrpc::code;
use serde_json::Value;

use super::{Breaks, Flow, FromClient, Relay};

/// The handshake revisions it knows (it does not know 2026-07-28's).
const KNOWN_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

#[derive(Debug, Default)]
pub(super) struct RejectsUnknownVersion;

impl Breaks for RejectsUnknownVersion {
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, relay: &Relay) -> Flow {
        let version = message["params"]["protocolVersion"].as_str().unwrap_or("");
        if client.method != "initialize" || KNOWN_VERSIONS.contains(&version) {
            return Flow::Pass;
        }
        relay.refuse(&message["id"], code::INVALID_PARAMS, &format!("unsupported protocol version {version}"));
        Flow::Stop
    }
}
