//! `tools/call`, served straight from the [`guard`](super::guard) beside
//! rmcp rather than through it.
//!
//! rmcp's model holds a result as a `serde_json::Value` in a
//! `CallToolResult`, which its service serialises again: a result was built
//! three times on its way out, and every call paid for rmcp's conversions
//! and task hops. Here the checked request goes to the [`Bridge`] and its
//! answer to the [output](super::out) as the Editor's bytes
//! ([`ToolResult::Relayed`]), in the shape rmcp 3.9 writes (its member
//! order, `resultType` only for 2026-07-28, the server named in `_meta` for
//! any `_meta`-versioned request). What rmcp did for the method is done here
//! too: the call runs in its own task and a panic in it becomes an error
//! answer; `notifications/cancelled` cancels it and then nothing is answered
//! (as MCP asks); progress is sent when the request has a `progressToken`.

use std::{panic::AssertUnwindSafe, sync::Arc};

use futures_util::FutureExt;
use serde_json::{Map, Value, json};

use super::{
    STATELESS_VERSION,
    out::Out,
    session::{InFlight, NotedClient, Revision},
};
use crate::bridge::{Bridge, CallRefused, Progress, ProgressSink};

/// A checked `tools/call` request.
#[derive(Debug)]
pub(super) struct ToolCall {
    pub id: Value,
    pub name: String,
    pub arguments: Map<String, Value>,
    pub progress_token: Option<Value>,
    pub revision: Revision,
    /// A 2026-07-28 request's `clientInfo` (name, version) and revision.
    pub client: Option<(String, String, String)>,
}

impl ToolCall {
    /// The call in a request the guard has checked (an object with this
    /// id), or why its params are invalid.
    pub(super) fn read(id: &Value, message: &mut Map<String, Value>) -> Result<ToolCall, String> {
        let params = match message.get_mut("params") {
            Some(Value::Object(params)) => params,
            Some(_) => return Err("params must be an object".into()),
            None => return Err("params is missing (it names the tool)".into()),
        };
        let name = match params.remove("name") {
            Some(Value::String(name)) => name,
            _ => return Err("name must be a string".into()),
        };
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(arguments)) => arguments,
            Some(_) => return Err("arguments must be an object".into()),
        };
        let meta = params.get("_meta").and_then(Value::as_object);
        let progress_token = meta.and_then(|m| m.get("progressToken")).filter(|t| t.is_string() || t.is_i64()).cloned();
        let version = meta.and_then(|m| m.get(super::PROTOCOL_VERSION_KEY)).and_then(Value::as_str);
        let revision = match version {
            None => Revision::Handshake,
            Some(v) => Revision::Stateless { result_type: v >= STATELESS_VERSION },
        };
        let client = meta.and_then(|m| m.get(super::CLIENT_INFO_KEY)).and_then(|info| {
            let text = |key: &str| info.get(key).and_then(Value::as_str).map(str::to_owned);
            Some((text("name")?, text("version").unwrap_or_default(), version.unwrap_or_default().to_owned()))
        });
        Ok(ToolCall { id: id.clone(), name, arguments, progress_token, revision, client })
    }
}

/// Where calls run and answer.
#[derive(Clone, Debug)]
pub(super) struct Calls {
    bridge: Arc<Bridge>,
    out: Out,
    in_flight: InFlight,
    client: NotedClient,
}

impl Calls {
    pub(super) fn new(bridge: Arc<Bridge>, out: Out, in_flight: InFlight, client: NotedClient) -> Calls {
        Calls { bridge, out, in_flight, client }
    }

    /// Runs `call` in its own task; its id is in flight (taken by the guard,
    /// cancellable there) until its answer is queued, or it is cancelled.
    pub(super) fn start(&self, call: ToolCall) {
        let cancel = self.in_flight.cancellation(&call.id);
        if let Some(client) = &call.client {
            self.client.note(client, &self.bridge);
        }
        let calls = self.clone();
        tokio::spawn(async move {
            let ToolCall { id, name, arguments, progress_token, revision, .. } = call;
            let progress = progress_token.map(|token| progress_sink(calls.out.clone(), token));
            let work = calls.bridge.call_tool(&name, arguments, progress, cancel.clone());
            let outcome = AssertUnwindSafe(work).catch_unwind().await;
            calls.in_flight.release(&id);
            match outcome {
                // Cancelled by the client: MCP says not to answer.
                _ if cancel.is_cancelled() => tracing::debug!(%id, "tools/call cancelled"),
                Ok(Ok(result)) => {
                    calls.out.tool_answer(id, result, revision);
                }
                Ok(Err(CallRefused::UnknownTool(name))) => {
                    calls.out.error(Some(&id), -32602, &format!("Unknown tool: {name}"), None)
                }
                Ok(Err(CallRefused::Cancelled)) => tracing::debug!(%id, "tools/call cancelled"),
                Err(panic) => {
                    let why = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    tracing::error!(%why, "tools/call panicked");
                    let message = format!("the bridge failed while handling tools/call: {why}");
                    calls.out.error(Some(&id), -32603, &message, None);
                }
            }
        });
    }
}

/// Sends a call's progress to the client.
fn progress_sink(out: Out, token: Value) -> ProgressSink {
    Arc::new(move |p: Progress| {
        let params = json!({"progressToken": token, "progress": p.progress, "message": p.message});
        out.line(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}));
        Box::pin(std::future::ready(()))
    })
}
