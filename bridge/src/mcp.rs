//! The MCP side: the only module that knows rmcp (3.9).
//!
//! rmcp runs the MCP session; a guard stands in front of it on stdin and
//! stdout, because rmcp 3.9 on its own exits on a notification before
//! `initialize`, drops a malformed line without an answer, never answers a
//! request whose handler panicked, and waits up to 5 s for handlers at stdin
//! EOF. The guard reads stdin line by line and answers itself what rmcp would
//! mishandle (`-32700` for bad JSON, `-32600` for batches and requests before
//! `initialize`, `-32022` for a `server/discover` probe), drops notifications
//! before `initialize`, and is the only writer of stdout. Handlers run in
//! their own tasks so a panic becomes an error reply. On stdin EOF or when
//! the parent process dies, the bridge flushes stdout and exits at once.

use std::{
    borrow::Cow,
    future::Future,
    pin::Pin,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use futures_util::StreamExt;
use rmcp::{
    ErrorData as McpError, Peer, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientJsonRpcMessage, CompleteRequestMethod,
        CompleteRequestParams, CompleteResult, DiscoverResult, ErrorCode, InitializeRequestParams, InitializeResult,
        ListPromptsRequestMethod, ListPromptsResult, ListResourceTemplatesRequestMethod, ListResourceTemplatesResult,
        ListResourcesRequestMethod, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
        ProgressNotificationParam, ProgressToken, ProtocolVersion, ServerJsonRpcMessage, Tool,
    },
    service::{NotificationContext, RequestContext},
    transport::Transport,
};
use serde_json::{Map, Value, json};
use tokio::{
    io::{AsyncRead, AsyncWrite, AsyncWriteExt},
    sync::{mpsc, oneshot},
};
use tokio_util::{codec::FramedRead, sync::CancellationToken};

use crate::bridge::{Bridge, CallRefused, Progress, ProgressSink};
use editor_link::framing::{Frame, FrameDecoder, Framing};

/// The MCP revisions with an `initialize` handshake, newest first. The
/// stateless 2026-07-28 lifecycle is not supported yet: its `server/discover`
/// probe is refused so clients fall back to `initialize`.
pub const SUPPORTED_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Largest line accepted on stdin.
const STDIN_LIMIT: usize = 16 * 1024 * 1024;

/// How the MCP server behaves.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// Exit when the parent process goes away.
    pub exit_with_parent: bool,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions { page_size: 100, exit_with_parent: true }
    }
}

/// Why the server stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    StdinClosed,
    ParentGone,
    StdoutClosed,
    /// SIGTERM, SIGINT or SIGHUP (a client's shutdown sequence ends with SIGTERM).
    Signal(&'static str),
}

/// Serves MCP on stdin/stdout until stdin closes or the parent dies.
pub async fn serve_stdio(bridge: Arc<Bridge>, options: ServeOptions) -> Stop {
    let (out, out_rx) = Out::new();
    let stdout_closed = CancellationToken::new();
    let writer = tokio::spawn(write_stdout(out_rx, stdout_closed.clone()));
    let (to_rmcp, from_guard) = mpsc::channel(64);
    let stdin_closed = CancellationToken::new();
    let in_flight = InFlight::default();
    tokio::spawn(guard_stdin(to_rmcp, out.clone(), in_flight.clone(), stdin_closed.clone()));

    let handler = Handler::new(bridge.clone(), options.clone(), in_flight.clone());
    let transport = GuardedTransport { from_guard, out: out.clone(), in_flight };
    let session = tokio::spawn(async move {
        match rmcp::serve_server(handler, transport).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => tracing::info!(%e, "the MCP session ended before it began"),
        }
    });

    let stop = tokio::select! {
        _ = stdin_closed.cancelled() => Stop::StdinClosed,
        _ = stdout_closed.cancelled() => Stop::StdoutClosed,
        _ = parent_gone(options.exit_with_parent) => Stop::ParentGone,
        name = termination_signal() => Stop::Signal(name),
    };
    tracing::info!(?stop, "shutting down");
    // Calls in flight are abandoned; what is already answered still goes out.
    bridge.link.stop();
    session.abort();
    out.flush(Duration::from_millis(200)).await;
    writer.abort();
    stop
}

/// Resolves with the signal's name when the process is asked to end, so it
/// ends as it does at stdin EOF: the link closed (and recorded), stdout flushed.
async fn termination_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let kinds = [
            (SignalKind::terminate(), "SIGTERM"),
            (SignalKind::interrupt(), "SIGINT"),
            (SignalKind::hangup(), "SIGHUP"),
        ];
        let mut streams = Vec::new();
        for (kind, name) in kinds {
            match signal(kind) {
                Ok(stream) => streams.push((stream, name)),
                Err(e) => tracing::warn!(%e, name, "cannot watch for the signal"),
            }
        }
        if !streams.is_empty() {
            let waits = streams.iter_mut().map(|(stream, name)| {
                Box::pin(async move {
                    stream.recv().await;
                    *name
                })
            });
            return futures_util::future::select_all(waits).await.0;
        }
    }
    #[cfg(not(unix))]
    if tokio::signal::ctrl_c().await.is_ok() {
        return "Ctrl-C";
    }
    std::future::pending().await
}

/// Resolves when the parent process is gone (its pid changes: the orphan
/// was adopted), never when `enabled` is false.
async fn parent_gone(enabled: bool) {
    #[cfg(unix)]
    if enabled {
        let parent = std::os::unix::process::parent_id();
        loop {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if std::os::unix::process::parent_id() != parent {
                return;
            }
        }
    }
    let _ = enabled;
    std::future::pending::<()>().await;
}

// ---- stdout: one writer, one message per line ----

enum OutItem {
    Line(Vec<u8>),
    Flush(oneshot::Sender<()>),
}

/// The only way to stdout.
#[derive(Clone, Debug)]
struct Out(mpsc::UnboundedSender<OutItem>);

impl std::fmt::Debug for OutItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OutItem::Line(_) => "Line",
            OutItem::Flush(_) => "Flush",
        })
    }
}

impl Out {
    fn new() -> (Out, mpsc::UnboundedReceiver<OutItem>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Out(tx), rx)
    }

    fn line(&self, value: &impl serde::Serialize) -> bool {
        match serde_json::to_vec(value) {
            Ok(bytes) => self.0.send(OutItem::Line(bytes)).is_ok(),
            Err(e) => {
                tracing::error!(%e, "cannot serialise a message for stdout");
                false
            }
        }
    }

    /// A JSON-RPC error answered by the guard itself.
    fn error(&self, id: Option<&Value>, code: i64, message: &str, data: Option<Value>) {
        let mut error = json!({"code": code, "message": message});
        if let Some(data) = data {
            error["data"] = data;
        }
        self.line(&json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": error}));
    }

    /// Waits until everything queued so far is written, up to `limit`.
    async fn flush(&self, limit: Duration) {
        let (tx, rx) = oneshot::channel();
        if self.0.send(OutItem::Flush(tx)).is_ok() {
            let _ = tokio::time::timeout(limit, rx).await;
        }
    }
}

/// stdin for async reads: when it is a pipe or a socket (as MCP clients
/// start us: Python's and Rust's use pipes, Node's socket pairs), the file
/// itself, non-blocking; otherwise (a terminal, a file) tokio's stdin, whose
/// every read is a trip through a blocking thread (tens of µs per message).
fn stdin_reader() -> Pin<Box<dyn AsyncRead + Send>> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Some(reader) = unix_stdio::reader(std::io::stdin().as_fd()) {
            return reader;
        }
    }
    Box::pin(tokio::io::stdin())
}

/// stdout for async writes, as [`stdin_reader`].
fn stdout_writer() -> Pin<Box<dyn AsyncWrite + Send>> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Some(writer) = unix_stdio::writer(std::io::stdout().as_fd()) {
            return writer;
        }
    }
    Box::pin(tokio::io::stdout())
}

#[cfg(unix)]
mod unix_stdio {
    use std::{
        fs::File,
        io,
        os::{
            fd::{BorrowedFd, OwnedFd},
            unix::fs::FileTypeExt,
        },
        pin::Pin,
    };

    use tokio::io::{AsyncRead, AsyncWrite};

    /// A duplicate of `fd`, and whether it is a pipe (else a socket); `None`
    /// when it is neither.
    fn duplicate(fd: BorrowedFd<'_>) -> Option<(File, bool)> {
        let file = File::from(fd.try_clone_to_owned().ok()?);
        let kind = file.metadata().ok()?.file_type();
        (kind.is_fifo() || kind.is_socket()).then_some((file, kind.is_fifo()))
    }

    /// The whole socket (never split: dropping a split write half would
    /// shut down a socket that may be stdout too).
    fn socket(file: File) -> io::Result<tokio::net::UnixStream> {
        let stream = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
        stream.set_nonblocking(true)?;
        tokio::net::UnixStream::from_std(stream)
    }

    pub fn reader(fd: BorrowedFd<'_>) -> Option<Pin<Box<dyn AsyncRead + Send>>> {
        let (file, pipe) = duplicate(fd)?;
        if pipe {
            tokio::net::unix::pipe::Receiver::from_file(file).ok().map(|p| Box::pin(p) as _)
        } else {
            socket(file).ok().map(|s| Box::pin(s) as _)
        }
    }

    pub fn writer(fd: BorrowedFd<'_>) -> Option<Pin<Box<dyn AsyncWrite + Send>>> {
        let (file, pipe) = duplicate(fd)?;
        if pipe {
            tokio::net::unix::pipe::Sender::from_file(file).ok().map(|p| Box::pin(p) as _)
        } else {
            socket(file).ok().map(|s| Box::pin(s) as _)
        }
    }
}

async fn write_stdout(mut rx: mpsc::UnboundedReceiver<OutItem>, closed: CancellationToken) {
    let mut stdout = stdout_writer();
    while let Some(item) = rx.recv().await {
        match item {
            OutItem::Line(mut line) => {
                line.push(b'\n');
                if stdout.write_all(&line).await.is_err() {
                    closed.cancel();
                    return;
                }
                if rx.is_empty() && stdout.flush().await.is_err() {
                    closed.cancel();
                    return;
                }
            }
            OutItem::Flush(done) => {
                let _ = stdout.flush().await;
                let _ = done.send(());
            }
        }
    }
}

// ---- requests in flight ----

/// The ids of the client's requests that are still to be answered: a second
/// request with one of them is refused (rmcp 3.9 would run both and answer
/// one), and an id is free again once its answer has gone out.
#[derive(Clone, Debug, Default)]
struct InFlight(Arc<Mutex<std::collections::HashSet<String>>>);

impl InFlight {
    fn key(id: &Value) -> String {
        id.to_string()
    }

    /// Takes `id`; false when a request with it is in flight.
    fn take(&self, id: &Value) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(Self::key(id))
    }

    fn release(&self, id: &Value) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(&Self::key(id));
    }

    /// An answer going out frees its id.
    fn answered(&self, message: &ServerJsonRpcMessage) {
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

// ---- stdin: the guard ----

async fn guard_stdin(
    to_rmcp: mpsc::Sender<ClientJsonRpcMessage>,
    out: Out,
    in_flight: InFlight,
    closed: CancellationToken,
) {
    let mut lines = FramedRead::new(stdin_reader(), FrameDecoder::new(Framing::Newline, STDIN_LIMIT));
    let mut guard = Guard { initialize_seen: false, in_flight };
    while let Some(frame) = lines.next().await {
        match frame {
            Ok(Frame::Body(line)) => {
                if let Some(message) = guard.check(&line, &out) {
                    if to_rmcp.send(message).await.is_err() {
                        break;
                    }
                }
            }
            Ok(Frame::TooLarge { size, limit, .. }) => {
                out.error(
                    None,
                    -32600,
                    &format!("Invalid Request: a message of {size} bytes is over the {limit}-byte limit"),
                    None,
                );
            }
            Err(e) => {
                tracing::debug!(%e, "stdin ended");
                break;
            }
        }
    }
    closed.cancel();
}

/// What the guard knows of the session.
#[derive(Debug)]
struct Guard {
    initialize_seen: bool,
    in_flight: InFlight,
}

impl Guard {
    /// Checks one line: a message for rmcp, or `None` when the guard has
    /// answered it (or dropped it) itself.
    fn check(&mut self, line: &[u8], out: &Out) -> Option<ClientJsonRpcMessage> {
        let value: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(e) => {
                out.error(None, -32700, &format!("Parse error: {e}"), None);
                return None;
            }
        };
        let obj = match &value {
            Value::Object(obj) => obj,
            Value::Array(_) => {
                out.error(None, -32600, "Invalid Request: batches are not supported (removed in MCP 2025-06-18)", None);
                return None;
            }
            _ => {
                out.error(None, -32600, "Invalid Request: a message must be a JSON object", None);
                return None;
            }
        };
        let id = obj.get("id").filter(|id| !id.is_null());
        if id.is_some_and(|id| !id.is_string() && !id.is_i64()) {
            out.error(None, -32600, "Invalid Request: an id must be a string or a 64-bit integer", None);
            return None;
        }
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            if id.is_some() {
                out.error(id, -32600, "Invalid Request: \"jsonrpc\" must be \"2.0\"", None);
            }
            return None;
        }
        let method = obj.get("method").and_then(Value::as_str);
        if method == Some("server/discover") {
            if id.is_some() {
                let requested = obj.get("params").and_then(|p| p.get("_meta")).and_then(|m| m.get("protocolVersion"));
                out.error(
                    id,
                    i64::from(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0),
                    "Unsupported protocol version: this server uses the initialize handshake",
                    Some(json!({"supported": SUPPORTED_VERSIONS, "requested": requested})),
                );
            }
            return None;
        }
        if !self.initialize_seen {
            match (method, id) {
                (Some("initialize"), Some(_)) => self.initialize_seen = true,
                (Some("ping"), Some(_)) => {}
                (Some(method), Some(id)) => {
                    out.error(Some(id), -32600, &format!("Invalid Request: {method} before initialize"), None);
                    return None;
                }
                // Notifications and stray responses before initialize: ignored.
                _ => {
                    tracing::debug!(?method, "message before initialize ignored");
                    return None;
                }
            }
        }
        match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
            // rmcp takes a known method with unreadable params for a custom
            // request and would answer "method not found": say what it is.
            Ok(ClientJsonRpcMessage::Request(r)) if matches!(&r.request, rmcp::model::ClientRequest::CustomRequest(c) if is_mcp_method(&c.method)) =>
            {
                out.error(id, -32602, &format!("Invalid params for {}", method.unwrap_or("")), None);
                None
            }
            Ok(ClientJsonRpcMessage::Request(r)) => {
                if let (Some(id), Some(method)) = (id, method) {
                    if !self.in_flight.take(id) {
                        out.error(
                            Some(id),
                            -32600,
                            &format!(
                                "Invalid Request: a request with id {id} is still in flight; this {method} was not run (use a new id for every request)"
                            ),
                            None,
                        );
                        return None;
                    }
                }
                Some(ClientJsonRpcMessage::Request(r))
            }
            Ok(message) => Some(message),
            Err(e) => {
                match (method, id) {
                    (Some(method), Some(id)) => {
                        out.error(Some(id), -32602, &format!("Invalid params for {method}: {e}"), None)
                    }
                    (None, Some(id)) if obj.get("result").is_none() && obj.get("error").is_none() => {
                        out.error(Some(id), -32600, "Invalid Request: no method", None);
                    }
                    _ => tracing::debug!(%e, "unreadable notification or response ignored"),
                }
                None
            }
        }
    }
}

/// The methods this server serves (their params may be wrong). Any other
/// method — including MCP's for capabilities it does not declare, such as
/// resources, prompts, completions and logging — is not found.
fn is_mcp_method(method: &str) -> bool {
    matches!(method, "initialize" | "ping" | "tools/list" | "tools/call")
}

/// The transport rmcp sees: messages the guard let through, and stdout.
struct GuardedTransport {
    from_guard: mpsc::Receiver<ClientJsonRpcMessage>,
    out: Out,
    in_flight: InFlight,
}

impl Transport<RoleServer> for GuardedTransport {
    type Error = std::io::Error;

    fn send(&mut self, item: ServerJsonRpcMessage) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = self.out.line(&item);
        self.in_flight.answered(&item);
        std::future::ready(if sent { Ok(()) } else { Err(std::io::Error::other("stdout is closed")) })
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.from_guard.recv().await
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.from_guard.close();
        std::future::ready(Ok(()))
    }
}

// ---- the session ----

struct Handler {
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
    fn new(bridge: Arc<Bridge>, options: ServeOptions, in_flight: InFlight) -> Self {
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

    fn info(&self) -> InitializeResult {
        let info = json!({
            "protocolVersion": SUPPORTED_VERSIONS[0],
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
        // The guard answers server/discover; this is never reached.
        Err(McpError::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            Some(json!({"supported": SUPPORTED_VERSIONS})),
        ))
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
            let mut result = json!({"tools": tools[start..end]});
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
        let bridge = self.bridge.clone();
        let name = request.name.to_string();
        let arguments: Map<String, Value> = request.arguments.unwrap_or_default();
        let progress = context.meta.get_progress_token().map(|token| progress_sink(context.peer.clone(), token));
        let cancel = context.ct.clone();
        let _release_if_cancelled = ReleaseIfCancelled::new(&self.in_flight, &context);
        guarded("tools/call", async move {
            match bridge.call_tool(&name, arguments, progress, cancel).await {
                Ok(result) => Ok(CallToolResponse::from(to_rmcp::<CallToolResult>(result.0)?)),
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

    fn guard_lines(lines: &[&str]) -> (Vec<String>, Vec<Value>) {
        let (out, mut rx) = Out::new();
        let mut guard = Guard { initialize_seen: false, in_flight: InFlight::default() };
        let mut passed = Vec::new();
        for line in lines {
            if let Some(m) = guard.check(line.as_bytes(), &out) {
                passed.push(serde_json::to_value(m).unwrap()["method"].as_str().unwrap_or("").to_owned());
            }
        }
        drop(out);
        let mut answered = Vec::new();
        while let Ok(OutItem::Line(l)) = rx.try_recv() {
            answered.push(serde_json::from_slice(&l).unwrap());
        }
        (passed, answered)
    }

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

    #[test]
    fn the_guard_answers_what_rmcp_would_mishandle() {
        let (passed, answered) = guard_lines(&[
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"not json"#,
            r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"id":7,"method":"ping"}"#,
        ]);
        assert_eq!(passed, ["ping", "initialize", "notifications/initialized"]);
        let codes: Vec<(Value, i64)> =
            answered.iter().map(|a| (a["id"].clone(), a["error"]["code"].as_i64().unwrap())).collect();
        assert_eq!(
            codes,
            [
                (json!(1), -32022),
                (json!(2), -32600),
                (Value::Null, -32700),
                (Value::Null, -32600),
                (Value::Null, -32600),
                (json!(6), -32602),
                (json!(7), -32600)
            ]
        );
        assert_eq!(answered[0]["error"]["data"]["supported"], json!(SUPPORTED_VERSIONS));
    }
}
