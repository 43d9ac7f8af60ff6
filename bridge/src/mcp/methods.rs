//! What the MCP methods answer (but `tools/call`, [`calls`](super::calls),
//! and `subscriptions/listen`, [`subscriptions`](super::subscriptions)):
//! `initialize`, `server/discover`, `tools/list` (paged), the resources
//! (the results saved to files), each in the shape of the revision its
//! request was made in: `resultType` and cache hints from 2026-07-28 on, the
//! server named in `_meta` for a request that named its revision.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{
    HANDSHAKE_VERSIONS, SUPPORTED_VERSIONS,
    message::{Method, Refusal, Request},
    session::{Revision, SERVER_INFO_KEY, server_info},
    subscriptions::Subscriptions,
    tasks::TASKS_EXTENSION,
};
use crate::bridge::Bridge;
use editor_link::jsonrpc::code;

/// MCP's error for a resource that is not there (before 2026-07-28, which
/// answers -32602 instead).
const RESOURCE_NOT_FOUND: i64 = -32002;

/// What the server says of itself in `initialize` and `server/discover`.
const INSTRUCTIONS: &str = "Tools of the Unity Editor that has this project open. After changing C# scripts, call compile (or wait-for-editor-ready): Unity recompiles and reloads, and the bridge reconnects on its own. bridge-status says whether Unity is reachable.";

/// `initialize`'s params: what MCP requires of them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct InitializeParams {
    pub protocol_version: String,
    #[allow(dead_code, reason = "required by MCP: a client that sends none is refused")]
    capabilities: Map<String, Value>,
    pub client_info: ClientInfo,
}

#[derive(Debug, Deserialize)]
pub(super) struct ClientInfo {
    pub name: String,
    pub version: String,
}

/// The params of a paged list.
#[derive(Debug, Default, Deserialize)]
struct Paging {
    cursor: Option<String>,
}

/// The params of `resources/read`.
#[derive(Debug, Deserialize)]
struct ReadParams {
    uri: String,
}

/// `request`'s params as `T` (absent or `null`: as if `{}`).
pub(super) fn params<T: serde::de::DeserializeOwned>(request: &Request) -> Result<T, Refusal> {
    let params = match &request.params {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(params @ Value::Object(_)) => params.clone(),
        Some(_) => return Err(Refusal::invalid_params(&request.id, &request.method, "params must be an object")),
    };
    serde_json::from_value(params).map_err(|e| Refusal::invalid_params(&request.id, &request.method, e))
}

/// The revision agreed for a client that asked for `requested`: that one
/// when it has a handshake, else the newest that has.
pub(super) fn negotiate(requested: &str) -> &'static str {
    HANDSHAKE_VERSIONS.iter().find(|v| **v == requested).copied().unwrap_or(HANDSHAKE_VERSIONS[0])
}

/// `initialize`'s result in the revision agreed.
pub(super) fn initialize_result(revision: &str) -> Value {
    json!({
        "protocolVersion": revision,
        // Resources: the results saved to files (`resource_link`s point at them).
        "capabilities": {"resources": {}, "tools": {"listChanged": true}},
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    })
}

/// `server/discover` (2026-07-28): every revision served; list changes
/// reach a client that subscribed (`subscriptions/listen`); calls may be
/// answered with tasks.
pub(super) fn discover_result() -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": SUPPORTED_VERSIONS,
        "capabilities": {"extensions": {TASKS_EXTENSION: {}}, "resources": {}, "tools": {"listChanged": true}},
        "instructions": INSTRUCTIONS,
        "ttlMs": 0,
        "cacheScope": "private",
        "_meta": {SERVER_INFO_KEY: server_info()},
    })
}

/// A list's result in its request's revision: `resultType` and the cache
/// hints (`ttlMs: 0`, stale at once; `cacheScope: private`) from
/// 2026-07-28 on, the server named in `_meta` for a request that named its
/// revision.
fn list_result(revision: Revision, items: &str, list: Vec<Value>, next_cursor: Option<String>) -> Value {
    let mut result = Map::new();
    if revision.result_type() {
        result.insert("resultType".into(), "complete".into());
    }
    if revision.names_the_server() {
        result.insert("_meta".into(), json!({SERVER_INFO_KEY: server_info()}));
    }
    if let Some(cursor) = next_cursor {
        result.insert("nextCursor".into(), cursor.into());
    }
    if revision.result_type() {
        result.insert("ttlMs".into(), 0.into());
        result.insert("cacheScope".into(), "private".into());
    }
    result.insert(items.into(), list.into());
    Value::Object(result)
}

/// `tools/list`: the bridge's tools and the Editor's, `page_size` a page
/// (waiting a bounded time for the Editor's list when none is known);
/// `outputSchema` only for revisions that define it. The first page is
/// the list a handshake-era client is said to have received.
pub(super) async fn list_tools(
    bridge: Arc<Bridge>,
    request: &Request,
    revision: Revision,
    page_size: usize,
    subscriptions: Subscriptions,
) -> Result<Value, Refusal> {
    let Paging { cursor } = params(request)?;
    let start = match &cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .map_err(|_| Refusal::new(Some(&request.id), code::INVALID_PARAMS, format!("invalid cursor {c:?}")))?,
    };
    let tools = bridge.list_tools().await;
    if start == 0 {
        subscriptions.served(&tools);
    }
    if start > tools.len() {
        let why = format!("invalid cursor {start}: there are {} tools", tools.len());
        return Err(Refusal::new(Some(&request.id), code::INVALID_PARAMS, why));
    }
    let end = (start + page_size.max(1)).min(tools.len());
    let mut page = tools[start..end].to_vec();
    if !revision.structured() {
        // outputSchema came with structuredContent (2025-06-18).
        page.iter_mut().filter_map(Value::as_object_mut).for_each(|tool| drop(tool.remove("outputSchema")));
    }
    let next = (end < tools.len()).then(|| end.to_string());
    Ok(list_result(revision, "tools", page, next))
}

/// `resources/list`: the results this bridge saved to files (too large to
/// send), newest last.
pub(super) fn list_resources(bridge: &Bridge, request: &Request, revision: Revision) -> Result<Value, Refusal> {
    params::<Paging>(request)?;
    let resources: Vec<Value> = bridge
        .saved_results()
        .iter()
        .map(|s| {
            json!({"uri": s.uri, "name": s.name, "description": format!("The whole result of {}", s.tool),
                "mimeType": "application/json", "size": s.size})
        })
        .collect();
    Ok(list_result(revision, "resources", resources, None))
}

/// `resources/templates/list`: none.
pub(super) fn list_resource_templates(request: &Request, revision: Revision) -> Result<Value, Refusal> {
    params::<Paging>(request)?;
    Ok(list_result(revision, "resourceTemplates", Vec::new(), None))
}

/// `resources/read`: a saved result's file, by its URI; only files this
/// bridge saved.
pub(super) async fn read_resource(
    bridge: Arc<Bridge>,
    request: &Request,
    revision: Revision,
) -> Result<Value, Refusal> {
    let ReadParams { uri } = params(request)?;
    let not_found = if revision.result_type() { code::INVALID_PARAMS } else { RESOURCE_NOT_FOUND };
    let Some(saved) = bridge.saved_results().into_iter().find(|s| s.uri == uri) else {
        let why = format!("{uri}: not a result this bridge saved (resources/list names them)");
        return Err(Refusal::new(Some(&request.id), not_found, why).with_data(json!({"uri": uri})));
    };
    let text = tokio::fs::read_to_string(&saved.path).await.map_err(|e| {
        Refusal::new(Some(&request.id), not_found, format!("{}: cannot be read: {e}", saved.path.display()))
    })?;
    let mut result = Map::new();
    if revision.result_type() {
        result.insert("resultType".into(), "complete".into());
        result.insert("ttlMs".into(), 0.into());
        result.insert("cacheScope".into(), "private".into());
    }
    result.insert("contents".into(), json!([{"uri": saved.uri, "mimeType": "application/json", "text": text}]));
    if revision.names_the_server() {
        result.insert("_meta".into(), json!({SERVER_INFO_KEY: server_info()}));
    }
    Ok(Value::Object(result))
}

/// Whether `method` is served in `revision` only as a 2026-07-28 request
/// (subscriptions and tasks), and this is not one: then it is not found.
pub(super) fn needs_2026(method: &Method, revision: Revision) -> bool {
    matches!(method, Method::SubscriptionsListen | Method::TasksGet | Method::TasksUpdate | Method::TasksCancel)
        && !revision.result_type()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_gets_the_revision_it_asked_for_or_the_newest_with_a_handshake() {
        assert_eq!(negotiate("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate("2024-11-05"), "2024-11-05");
        assert_eq!(negotiate("2026-07-28"), "2025-11-25", "2026-07-28 has no initialize");
        assert_eq!(negotiate("1999-01-01"), "2025-11-25");
    }

    #[test]
    fn a_list_has_the_shape_of_its_requests_revision() {
        let handshake = list_result(Revision::Handshake { structured: true }, "tools", vec![], None);
        assert_eq!(handshake, json!({"tools": []}));
        let newest =
            list_result(Revision::Stateless { result_type: true, structured: true }, "tools", vec![], Some("2".into()));
        assert_eq!(newest["resultType"], "complete");
        assert_eq!((newest["ttlMs"].clone(), newest["cacheScope"].clone()), (json!(0), json!("private")));
        assert_eq!(
            (newest["nextCursor"].clone(), newest["_meta"][SERVER_INFO_KEY]["name"].clone()),
            (json!("2"), json!("unity-mcp-bridge"))
        );
        let versioned =
            list_result(Revision::Stateless { result_type: false, structured: true }, "tools", vec![], None);
        assert!(
            versioned.get("resultType").is_none()
                && versioned.get("ttlMs").is_none()
                && versioned.get("_meta").is_some()
        );
    }
}
