//! What one MCP session's parts share: the ids of the client's requests in
//! flight, the client a 2026-07-28 request named, the revision a call was
//! made in, and the server's name. The ground the input ([`guard`](super::guard)),
//! the calls, the output and the handler stand on; it imports none of them.

use std::{
    collections::{HashMap, hash_map::Entry},
    sync::{Arc, Mutex},
};

use rmcp::model::ServerJsonRpcMessage;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::bridge::Bridge;
use editor_link::lock;

/// The ids of the client's requests that are still to be answered: a second
/// request with one of them is refused (rmcp 3.9 would run both and answer
/// one), and an id is free again once its answer has gone out. A
/// `tools/call` (served beside rmcp) keeps its cancellation here too.
#[derive(Clone, Debug, Default)]
pub(super) struct InFlight(Arc<Mutex<HashMap<String, Option<CancellationToken>>>>);

impl InFlight {
    fn key(id: &Value) -> String {
        id.to_string()
    }

    fn ids(&self) -> std::sync::MutexGuard<'_, HashMap<String, Option<CancellationToken>>> {
        lock(&self.0)
    }

    /// Takes `id`; false when a request with it is in flight.
    pub(super) fn take(&self, id: &Value) -> bool {
        match self.ids().entry(Self::key(id)) {
            Entry::Occupied(_) => false,
            Entry::Vacant(free) => {
                free.insert(None);
                true
            }
        }
    }

    pub(super) fn release(&self, id: &Value) {
        self.ids().remove(&Self::key(id));
    }

    /// What cancels the request with `id` (taken): `notifications/cancelled`.
    pub(super) fn cancellation(&self, id: &Value) -> CancellationToken {
        let cancel = CancellationToken::new();
        if let Some(slot) = self.ids().get_mut(&Self::key(id)) {
            *slot = Some(cancel.clone());
        }
        cancel
    }

    /// Cancels the request with `id`; false when none in flight can be
    /// cancelled here (answered, or one rmcp serves).
    pub(super) fn cancel(&self, id: &Value) -> bool {
        match self.ids().get(&Self::key(id)) {
            Some(Some(cancel)) => {
                cancel.cancel();
                true
            }
            _ => false,
        }
    }

    /// An answer going out frees its id.
    pub(super) fn answered(&self, message: &ServerJsonRpcMessage) {
        let id = match message {
            ServerJsonRpcMessage::Response(r) => Some(&r.id),
            ServerJsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        if let Some(id) = id.and_then(|id| serde_json::to_value(id).ok()) {
            self.release(&id);
        }
    }
}

/// The client a 2026-07-28 request last named: (name, version, revision).
#[derive(Clone, Debug, Default)]
pub(super) struct NotedClient(Arc<Mutex<Option<(String, String, String)>>>);

impl NotedClient {
    /// A 2026-07-28 request names its client in `_meta` (there is no
    /// initialize to do it): Unity is told, as after an initialize, and the
    /// log says who speaks which revision when that changes.
    pub(super) fn note(&self, seen: &(String, String, String), bridge: &Bridge) {
        let mut noted = lock(&self.0);
        if noted.as_ref() != Some(seen) {
            tracing::info!(client = %seen.0, version = %seen.1, protocol = %seen.2, "MCP client");
            *noted = Some(seen.clone());
        }
        drop(noted);
        bridge.link.set_client_name(&seen.0);
    }
}

/// The revision a `tools/call` was made in, which shapes its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Revision {
    /// After `initialize`: the result as the handshake revisions have it.
    Handshake { structured: bool },
    /// A request versioned in its `_meta`: the result names the server in
    /// its `_meta`, and has `resultType` from 2026-07-28 on.
    Stateless { result_type: bool, structured: bool },
}

impl Revision {
    /// The revision defines `structuredContent`, `outputSchema` and
    /// `resource_link` content (2025-06-18 and later): older clients get none.
    pub(super) fn structured(self) -> bool {
        match self {
            Revision::Handshake { structured } | Revision::Stateless { structured, .. } => structured,
        }
    }

    /// 2026-07-28 or later: results carry `resultType`.
    pub(super) fn result_type(self) -> bool {
        matches!(self, Revision::Stateless { result_type: true, .. })
    }
}

/// Whether MCP revision `version` (a date) defines `structuredContent`.
pub(super) fn defines_structured_content(version: &str) -> bool {
    version >= "2025-06-18"
}

/// The revision `initialize` agreed on, for the handshake-era client's calls.
#[derive(Clone, Debug, Default)]
pub(super) struct Negotiated(Arc<Mutex<Option<String>>>);

impl Negotiated {
    pub(super) fn set(&self, version: &str) {
        *lock(&self.0) = Some(version.to_owned());
    }

    /// The revision of a call made after `initialize` (the newest before it).
    pub(super) fn revision(&self) -> Revision {
        let structured = lock(&self.0).as_deref().is_none_or(defines_structured_content);
        Revision::Handshake { structured }
    }
}

/// The `_meta` key a 2026-07-28 result names its server under.
pub(super) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// Who this server is (`initialize`'s `serverInfo`; in 2026-07-28 results' `_meta`).
pub(super) fn server_info() -> Value {
    json!({"name": "unity-mcp-bridge", "title": "Unity Editor", "version": crate::VERSION})
}
