//! The MCP methods, served on the [`Bridge`]: `initialize`, `tools/list`
//! (paged), `tools/call` (with progress and cancellation), list changes;
//! what the bridge does not declare it does not serve.

use std::{
    borrow::Cow,
    future::Future,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
};

use rmcp::{
    ErrorData as McpError, Peer, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestMethod, CompleteRequestParams,
        CompleteResult, DiscoverResult, InitializeRequestParams, InitializeResult, ListPromptsRequestMethod,
        ListPromptsResult, ListResourceTemplatesRequestMethod, ListResourceTemplatesResult, ListResourcesRequestMethod,
        ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
        ProtocolVersion, Tool,
    },
    service::{NotificationContext, RequestContext},
};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::{HANDSHAKE_VERSIONS, SUPPORTED_VERSIONS, ServeOptions, guard::InFlight};
use crate::bridge::{Bridge, CallRefused, Progress, ProgressSink};

pub(super) struct Handler {
    bridge: Arc<Bridge>,
    options: ServeOptions,
    /// The client, once `initialize` has arrived.
    peer: Arc<Mutex<Option<Peer<RoleServer>>>>,
    /// `notifications/initialized` arrived: list_changed may be sent.
    initialized: Arc<AtomicBool>,
    /// The tool list the client last received: list_changed is sent only
    /// when the tools differ from it.
    served: Arc<Mutex<Option<Vec<Value>>>>,
    /// The client's requests in flight (a cancelled one is released here,
    /// since rmcp sends nothing for it).
    in_flight: InFlight,
}

fn to_rmcp<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value)
        .map_err(|e| McpError::internal_error(format!("the bridge built an invalid message: {e}"), None))
}

impl Handler {
    pub(super) fn new(bridge: Arc<Bridge>, options: ServeOptions, in_flight: InFlight) -> Self {
        let handler = Handler {
            bridge,
            options,
            peer: Arc::new(Mutex::new(None)),
            initialized: Arc::new(AtomicBool::new(false)),
            served: Arc::new(Mutex::new(None)),
            in_flight,
        };
        let (peer, initialized, served) = (handler.peer.clone(), handler.initialized.clone(), handler.served.clone());
        let bridge = Arc::downgrade(&handler.bridge);
        handler.bridge.on_tools_changed(move || {
            if !initialized.load(Ordering::SeqCst) {
                return;
            }
            let Some(bridge) = bridge.upgrade() else { return };
            let current = bridge.current_tools();
            let stale = served.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|s| *s != current);
            if !stale {
                // The client has not listed the tools yet, or already has these.
                return;
            }
            if let Some(peer) = peer.lock().unwrap_or_else(|p| p.into_inner()).clone() {
                tokio::spawn(async move {
                    if let Err(e) = peer.notify_tool_list_changed().await {
                        tracing::debug!(%e, "cannot send tools/list_changed");
                    }
                });
            }
        });
        handler
    }

    /// A 2026-07-28 request names its client in `_meta` (there is no
    /// initialize to do it): Unity is told, as after an initialize.
    fn note_client(&self, context: &RequestContext<RoleServer>) {
        if let Some(client) = context.meta.client_info() {
            self.bridge.link.set_client_name(&client.name);
        }
    }

    fn info(&self) -> InitializeResult {
        let info = json!({
            "protocolVersion": HANDSHAKE_VERSIONS[0],
            "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "unity-mcp-bridge", "title": "Unity Editor", "version": crate::VERSION},
            "instructions": "Tools of the Unity Editor that has this project open. After changing C# scripts, call compile (or wait-for-editor-ready): Unity recompiles and reloads, and the bridge reconnects on its own. bridge-status says whether Unity is reachable.",
        });
        serde_json::from_value(info).expect("the server info is valid")
    }
}

/// Runs `work` in its own task, so a panic becomes an error reply.
async fn guarded<T: Send + 'static>(
    what: &str,
    work: impl Future<Output = Result<T, McpError>> + Send + 'static,
) -> Result<T, McpError> {
    match tokio::spawn(work).await {
        Ok(result) => result,
        Err(e) => {
            tracing::error!(%e, "{what} panicked");
            Err(McpError::internal_error(format!("the bridge failed while handling {what}: {e}"), None))
        }
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> InitializeResult {
        self.info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Owned(
            SUPPORTED_VERSIONS.iter().map(|v| serde_json::from_value(json!(v)).expect("a version string")).collect(),
        )
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        *self.peer.lock().unwrap_or_else(|p| p.into_inner()) = Some(context.peer.clone());
        let name = request.client_info.name.clone();
        tracing::info!(client = %name, version = %request.client_info.version, "MCP client");
        // Told to Unity on every connect; initialize itself never waits for Unity.
        self.bridge.link.set_client_name(&name);
        self.negotiate_initialize(&request)
    }

    async fn discover(&self, _context: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        // In 2026-07-28, `tools/list_changed` reaches only a client that
        // subscribed (`subscriptions/listen`, not served yet): the tools
        // capability is declared without it there.
        let info = self.info();
        let mut result = json!({
            "resultType": "complete",
            "supportedVersions": SUPPORTED_VERSIONS,
            "capabilities": {"tools": {}},
            "instructions": info.instructions,
            "ttlMs": 0,
            "cacheScope": "private",
        });
        result["_meta"] = json!({"io.modelcontextprotocol/serverInfo": info.server_info});
        to_rmcp(result)
    }

    async fn on_initialized(&self, _context: NotificationContext<RoleServer>) {
        self.initialized.store(true, Ordering::SeqCst);
    }

    // What the bridge does not declare, it does not serve (rmcp's defaults
    // would answer these with empty lists).
    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        Err(McpError::method_not_found::<CompleteRequestMethod>())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        Err(McpError::method_not_found::<ListPromptsRequestMethod>())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Err(McpError::method_not_found::<ListResourcesRequestMethod>())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        Err(McpError::method_not_found::<ListResourceTemplatesRequestMethod>())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let _release_if_cancelled = ReleaseIfCancelled::new(&self.in_flight, &context);
        self.note_client(&context);
        let bridge = self.bridge.clone();
        let page_size = self.options.page_size.max(1);
        let cursor = request.and_then(|r| r.cursor);
        let served = self.served.clone();
        guarded("tools/list", async move {
            let start = match &cursor {
                None => 0,
                Some(c) => {
                    c.parse::<usize>().map_err(|_| McpError::invalid_params(format!("invalid cursor {c:?}"), None))?
                }
            };
            let tools = bridge.list_tools().await;
            if start == 0 {
                *served.lock().unwrap_or_else(|p| p.into_inner()) = Some(tools.clone());
            }
            if start > tools.len() {
                return Err(McpError::invalid_params(
                    format!("invalid cursor {start}: there are {} tools", tools.len()),
                    None,
                ));
            }
            let end = (start + page_size).min(tools.len());
            // rmcp drops resultType for handshake-era clients, and adds the
            // cache hints (ttlMs, cacheScope) for 2026-07-28 ones.
            let mut result = json!({"resultType": "complete", "tools": tools[start..end]});
            if end < tools.len() {
                result["nextCursor"] = end.to_string().into();
            }
            to_rmcp::<ListToolsResult>(result)
        })
        .await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.note_client(&context);
        let bridge = self.bridge.clone();
        let name = request.name.to_string();
        let arguments: Map<String, Value> = request.arguments.unwrap_or_default();
        let progress = context.meta.get_progress_token().map(|token| progress_sink(context.peer.clone(), token));
        let cancel = context.ct.clone();
        let _release_if_cancelled = ReleaseIfCancelled::new(&self.in_flight, &context);
        guarded("tools/call", async move {
            match bridge.call_tool(&name, arguments, progress, cancel).await {
                Ok(result) => {
                    let mut result = result.0;
                    if let Some(object) = result.as_object_mut() {
                        object.entry("resultType").or_insert_with(|| json!("complete"));
                    }
                    Ok(CallToolResponse::from(to_rmcp::<CallToolResult>(result)?))
                }
                Err(CallRefused::UnknownTool(name)) => {
                    Err(McpError::invalid_params(format!("Unknown tool: {name}"), None))
                }
                // rmcp sends nothing for a cancelled request.
                Err(CallRefused::Cancelled) => Err(McpError::internal_error("cancelled", None)),
            }
        })
        .await
    }

    fn get_tool(&self, _name: &str) -> Option<Tool> {
        // Arguments are checked by Unity, which reports what is wrong.
        None
    }
}

/// Frees a request's id when its handler ends after the client cancelled it
/// (rmcp sends no answer then, so the transport never sees one).
struct ReleaseIfCancelled {
    in_flight: InFlight,
    id: Value,
    cancel: CancellationToken,
}

impl ReleaseIfCancelled {
    fn new(in_flight: &InFlight, context: &RequestContext<RoleServer>) -> Self {
        ReleaseIfCancelled {
            in_flight: in_flight.clone(),
            id: serde_json::to_value(&context.id).unwrap_or(Value::Null),
            cancel: context.ct.clone(),
        }
    }
}

impl Drop for ReleaseIfCancelled {
    fn drop(&mut self) {
        if self.cancel.is_cancelled() {
            self.in_flight.release(&self.id);
        }
    }
}

/// Sends a call's progress to the client.
fn progress_sink(peer: Peer<RoleServer>, token: ProgressToken) -> ProgressSink {
    Arc::new(move |p: Progress| {
        let (peer, token) = (peer.clone(), token.clone());
        Box::pin(async move {
            let params = json!({"progressToken": token, "progress": p.progress, "message": p.message});
            if let Ok(params) = serde_json::from_value::<ProgressNotificationParam>(params) {
                let _ = peer.notify_progress(params).await;
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panicking_handler_is_answered_with_an_error() {
        let answer = guarded("tools/call", async {
            if std::hint::black_box(true) {
                panic!("boom");
            }
            Ok(())
        })
        .await;
        let error = answer.unwrap_err();
        assert!(
            error.message.contains("the bridge failed while handling tools/call") && error.message.contains("boom"),
            "{error:?}"
        );
        assert_eq!(guarded("tools/list", async { Ok(5) }).await.unwrap(), 5);
    }
}
