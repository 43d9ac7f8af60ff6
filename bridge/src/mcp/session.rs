//! What one MCP session's parts share: where the session stands
//! ([`Lifecycle`]), the ids of the client's requests in flight, the client a
//! 2026-07-28 request named, the revision a request was made in, and the
//! server's name. The ground the dispatcher, the calls, the subscriptions
//! and the output stand on; it imports none of them.

use std::{
    collections::{HashMap, hash_map::Entry},
    sync::{Arc, Mutex},
};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::message::Versioned;
use crate::bridge::Bridge;
use editor_link::lock;

/// Where the session stands: one state, changed only by the dispatcher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Lifecycle {
    /// Nothing begun: `initialize` begins a session of the handshake
    /// revisions, a request that names its revision in `_meta` a stateless
    /// one; `ping` is answered, anything else refused.
    New,
    /// After `initialize`, in the revision agreed (the newest with a
    /// handshake when the client asked for another); `initialized` once the
    /// client said so: only then may list changes be sent to it.
    Handshake { revision: String, initialized: bool },
    /// A request that named its revision was served: every request names it.
    Stateless,
}

impl Lifecycle {
    /// The revision `request` was made in: the one its `_meta` names, else
    /// the one `initialize` agreed on (the newest, before it).
    pub(super) fn revision(&self, versioned: Option<&Versioned>) -> Revision {
        match versioned {
            Some(v) => {
                Revision::Stateless { result_type: v.stateless(), structured: defines_structured_content(&v.version) }
            }
            None => Revision::Handshake {
                structured: match self {
                    Lifecycle::Handshake { revision, .. } => defines_structured_content(revision),
                    Lifecycle::New | Lifecycle::Stateless => true,
                },
            },
        }
    }
}

/// The ids of the client's requests that are still to be answered: a second
/// request with one of them is refused (MCP: a new id for every request),
/// and an id is free again once its answer has gone out. A request that
/// takes time (a call, a list that waits for the Editor, a subscription)
/// keeps its cancellation here: `notifications/cancelled` reaches it.
#[derive(Clone, Debug, Default)]
pub(super) struct InFlight(Arc<Mutex<HashMap<String, CancellationToken>>>);

impl InFlight {
    fn key(id: &Value) -> String {
        id.to_string()
    }

    /// Takes `id`, and what cancels its request; `None` when a request with
    /// it is in flight.
    pub(super) fn take(&self, id: &Value) -> Option<CancellationToken> {
        match lock(&self.0).entry(Self::key(id)) {
            Entry::Occupied(_) => None,
            Entry::Vacant(free) => Some(free.insert(CancellationToken::new()).clone()),
        }
    }

    pub(super) fn release(&self, id: &Value) {
        lock(&self.0).remove(&Self::key(id));
    }

    /// Cancels the request with `id`; false when none is in flight.
    pub(super) fn cancel(&self, id: &Value) -> bool {
        match lock(&self.0).get(&Self::key(id)) {
            Some(cancel) => {
                cancel.cancel();
                true
            }
            None => false,
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

/// The revision a request was made in, which shapes its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Revision {
    /// After `initialize`: the result as the handshake revisions have it.
    Handshake { structured: bool },
    /// A request versioned in its `_meta`: the result names the server in
    /// its `_meta`, and has `resultType` (and cache hints on lists) from
    /// 2026-07-28 on.
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

    /// The request named its revision: its result names the server.
    pub(super) fn names_the_server(self) -> bool {
        matches!(self, Revision::Stateless { .. })
    }
}

/// Whether MCP revision `version` (a date) defines `structuredContent`.
pub(super) fn defines_structured_content(version: &str) -> bool {
    version >= "2025-06-18"
}

/// The `_meta` key a 2026-07-28 result names its server under.
pub(super) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// Who this server is (`initialize`'s `serverInfo`; in 2026-07-28 results' `_meta`).
pub(super) fn server_info() -> Value {
    json!({"name": "unity-mcp-bridge", "title": "Unity Editor", "version": crate::VERSION})
}
