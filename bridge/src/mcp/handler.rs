//! The MCP methods rmcp serves, on the [`Bridge`]: `initialize` and
//! `server/discover`, `tools/list` (paged), list changes (after `initialize`,
//! or on a 2026-07-28 `subscriptions/listen`); what the bridge does not
//! declare it does not serve. (`tools/call` is served beside rmcp, in
//! [`calls`](super::calls).)

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
        CompleteRequestMethod, CompleteRequestParams, CompleteResult, DiscoverResult, InitializeRequestParams,
        InitializeResult, ListPromptsRequestMethod, ListPromptsResult, ListResourceTemplatesResult,
        ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
        ReadResourceResponse, ReadResourceResult, RequestId, ServerNotification, SubscriptionFilter, Tool,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext, SubscriptionSink},
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{
    HANDSHAKE_VERSIONS, SUPPORTED_VERSIONS, ServeOptions,
    session::{InFlight, Negotiated, NotedClient, SERVER_INFO_KEY, defines_structured_content, server_info},
};
use crate::bridge::Bridge;
use editor_link::lock;

pub(super) struct Handler {
    bridge: Arc<Bridge>,
    options: ServeOptions,
    list_changed: Arc<ListChanged>,
    noted_client: NotedClient,
    /// The client's requests in flight (a cancelled one is released here,
    /// since rmcp sends nothing for it).
    in_flight: InFlight,
    /// The revision `initialize` agreed on.
    negotiated: Negotiated,
}

/// Who is told that the Editor's tools changed, in each revision's way: a
/// handshake-era client once `initialized` (and only when the list it last
/// received is stale), and every 2026-07-28 `subscriptions/listen` that asked
/// for `toolsListChanged` (when the tools differ from those it last heard of).
#[derive(Default)]
struct ListChanged {
    /// The handshake-era client, once `initialize` has arrived.
    peer: Mutex<Option<Peer<RoleServer>>>,
    /// `notifications/initialized` arrived: list_changed may be sent.
    initialized: AtomicBool,
    /// The tool list a handshake-era client last received.
    served: Mutex<Option<Vec<Value>>>,
    /// The open 2026-07-28 subscriptions.
    listeners: Mutex<Vec<Listener>>,
}

struct Listener {
    sink: SubscriptionSink,
    /// The tools when it subscribed, or when it was last told of a change.
    seen: Vec<Value>,
}

impl ListChanged {
    fn tools_changed(&self, current: &[Value]) {
        let stale = lock(&self.served).as_ref().is_some_and(|served| served != current);
        // A client that has not listed the tools yet, or already has these,
        // is not told.
        if stale && self.initialized.load(Ordering::SeqCst) {
            if let Some(peer) = lock(&self.peer).clone() {
                tokio::spawn(async move {
                    if let Err(e) = peer.notify_tool_list_changed().await {
                        tracing::debug!(%e, "cannot send tools/list_changed");
                    }
                });
            }
        }
        for listener in lock(&self.listeners).iter_mut().filter(|l| l.seen != current) {
            listener.seen = current.to_vec();
            let sink = listener.sink.clone();
            tokio::spawn(async move {
                // The sink tags it with the subscription's id.
                let changed = ServerNotification::ToolListChangedNotification(Default::default());
                if let Err(e) = sink.send(changed).await {
                    tracing::debug!(%e, "cannot send tools/list_changed to a subscription");
                }
            });
        }
    }

    fn listen(&self, sink: SubscriptionSink, seen: Vec<Value>) {
        lock(&self.listeners).push(Listener { sink, seen });
    }

    fn unlisten(&self, id: &RequestId) {
        lock(&self.listeners).retain(|l| l.sink.id() != id);
    }
}

fn to_rmcp<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value)
        .map_err(|e| McpError::internal_error(format!("the bridge built an invalid message: {e}"), None))
}

impl Handler {
    pub(super) fn new(
        bridge: Arc<Bridge>,
        options: ServeOptions,
        in_flight: InFlight,
        client: NotedClient,
        negotiated: Negotiated,
    ) -> Self {
        let handler =
            Handler { bridge, options, list_changed: Arc::default(), noted_client: client, in_flight, negotiated };
        let list_changed = handler.list_changed.clone();
        let bridge = Arc::downgrade(&handler.bridge);
        handler.bridge.on_tools_changed(move || {
            if let Some(bridge) = bridge.upgrade() {
                list_changed.tools_changed(&bridge.current_tools());
            }
        });
        handler
    }

    fn note_client(&self, context: &RequestContext<RoleServer>) {
        let Some(client) = context.meta.client_info() else { return };
        let protocol = context.meta.protocol_version().map(|v| v.to_string()).unwrap_or_default();
        self.noted_client.note(&(client.name, client.version, protocol), &self.bridge);
    }

    fn info(&self) -> InitializeResult {
        let info = json!({
            "protocolVersion": HANDSHAKE_VERSIONS[0],
            // Resources: the results saved to files (`resource_link`s point at them).
            "capabilities": {"tools": {"listChanged": true}, "resources": {}},
            "serverInfo": server_info(),
            "instructions": "Tools of the Unity Editor that has this project open. After changing C# scripts, call compile (or wait-for-editor-ready): Unity recompiles and reloads, and the bridge reconnects on its own. bridge-status says whether Unity is reachable.",
        });
        serde_json::from_value(info).expect("the server info is valid")
    }
}

/// A 2026-07-28 request's result names the server in its `_meta`, as that
/// revision asks of every result (a handshake-era client was told once, in
/// `initialize`).
fn name_the_server(result: &mut Value, stateless: bool) {
    if !stateless {
        return;
    }
    if let Some(result) = result.as_object_mut() {
        let meta = result.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(SERVER_INFO_KEY.into(), server_info());
        }
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
        *lock(&self.list_changed.peer) = Some(context.peer.clone());
        let name = request.client_info.name.clone();
        let answer = self.negotiate_initialize(&request);
        let protocol = answer.as_ref().map(|a| a.protocol_version.to_string()).unwrap_or_default();
        self.negotiated.set(&protocol);
        tracing::info!(client = %name, version = %request.client_info.version, %protocol, "MCP client");
        // Told to Unity on every connect; initialize itself never waits for Unity.
        self.bridge.link.set_client_name(&name);
        answer
    }

    async fn discover(&self, _context: RequestContext<RoleServer>) -> Result<DiscoverResult, McpError> {
        let info = self.info();
        let mut result = json!({
            "resultType": "complete",
            "supportedVersions": SUPPORTED_VERSIONS,
            // In 2026-07-28 list_changed reaches a client that subscribed
            // (`subscriptions/listen`); calls may be answered with tasks.
            "capabilities": {"tools": {"listChanged": true}, "resources": {}, "extensions": {super::tasks::TASKS_EXTENSION: {}}},
            "instructions": info.instructions,
            "ttlMs": 0,
            "cacheScope": "private",
        });
        name_the_server(&mut result, true);
        to_rmcp(result)
    }

    async fn on_initialized(&self, _context: NotificationContext<RoleServer>) {
        self.list_changed.initialized.store(true, Ordering::SeqCst);
    }

    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        // rmcp narrows this to what was asked for.
        let mut accepted = SubscriptionFilter::new();
        accepted.tools_list_changed = Some(true);
        Some(accepted)
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), McpError> {
        // A subscription ends when the client cancels it; rmcp answers nothing then.
        let _release_if_cancelled = ReleaseIfCancelled::new(&self.in_flight, subscription.request_context());
        let id = subscription.sink().id().clone();
        if subscription.accepted().tools_list_changed == Some(true) {
            self.list_changed.listen(subscription.sink().clone(), self.bridge.current_tools());
        }
        subscription.cancelled().await;
        self.list_changed.unlisten(&id);
        Ok(())
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

    /// The results this bridge saved to files (too large to send), newest last.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let resources: Vec<Value> = self
            .bridge
            .saved_results()
            .iter()
            .map(|s| {
                json!({"uri": s.uri, "name": s.name, "mimeType": "application/json", "size": s.size,
                "description": format!("The whole result of {}", s.tool)})
            })
            .collect();
        let mut result = json!({"resultType": "complete", "resources": resources});
        name_the_server(&mut result, context.meta.protocol_version().is_some());
        to_rmcp(result)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let mut result = json!({"resultType": "complete", "resourceTemplates": []});
        name_the_server(&mut result, context.meta.protocol_version().is_some());
        to_rmcp(result)
    }

    /// A saved result's file, by its URI; only files this bridge saved.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let _release_if_cancelled = ReleaseIfCancelled::new(&self.in_flight, &context);
        let Some(saved) = self.bridge.saved_results().into_iter().find(|s| s.uri == request.uri) else {
            return Err(McpError::resource_not_found(
                format!("{}: not a result this bridge saved (resources/list names them)", request.uri),
                Some(json!({"uri": request.uri})),
            ));
        };
        let text = tokio::fs::read_to_string(&saved.path).await.map_err(|e| {
            McpError::resource_not_found(format!("{}: cannot be read: {e}", saved.path.display()), None)
        })?;
        let mut result = json!({"resultType": "complete", "contents": [{"uri": saved.uri, "mimeType": "application/json", "text": text}]});
        name_the_server(&mut result, context.meta.protocol_version().is_some());
        Ok(ReadResourceResponse::Complete(to_rmcp::<ReadResourceResult>(result)?))
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
        let list_changed = self.list_changed.clone();
        let stateless = context.meta.protocol_version().is_some();
        let structured = match context.meta.protocol_version() {
            Some(version) => defines_structured_content(&version.to_string()),
            None => self.negotiated.revision().structured(),
        };
        guarded("tools/list", async move {
            let start = match &cursor {
                None => 0,
                Some(c) => {
                    c.parse::<usize>().map_err(|_| McpError::invalid_params(format!("invalid cursor {c:?}"), None))?
                }
            };
            let tools = bridge.list_tools().await;
            if start == 0 {
                *lock(&list_changed.served) = Some(tools.clone());
            }
            if start > tools.len() {
                return Err(McpError::invalid_params(
                    format!("invalid cursor {start}: there are {} tools", tools.len()),
                    None,
                ));
            }
            let end = (start + page_size).min(tools.len());
            let mut page = tools[start..end].to_vec();
            if !structured {
                // outputSchema came with structuredContent (2025-06-18).
                page.iter_mut().filter_map(Value::as_object_mut).for_each(|tool| drop(tool.remove("outputSchema")));
            }
            // rmcp drops resultType for handshake-era clients, and adds the
            // cache hints (ttlMs, cacheScope) for 2026-07-28 ones.
            let mut result = json!({"resultType": "complete", "tools": page});
            if end < tools.len() {
                result["nextCursor"] = end.to_string().into();
            }
            name_the_server(&mut result, stateless);
            to_rmcp::<ListToolsResult>(result)
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
