//! The bridge's hold on the Editor (protocol §1–§5, §7): one persistent
//! connection, found through discovery and re-established after every domain
//! reload; pipelined calls matched by id; calls cut off by a reload resumed
//! (`x-resume`) when the Editor can, resent when that is safe, and reported
//! honestly otherwise; a watchdog for an Editor that goes silent.
//!
//! [`Link::start`] spawns the task that keeps the connection; [`Link::call`]
//! is the one way requests reach the Editor.

use std::{
    collections::HashMap,
    fmt,
    net::{Ipv4Addr, SocketAddr},
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant, SystemTime},
};

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::{
    io::AsyncWriteExt,
    net::TcpStream,
    sync::{broadcast, mpsc, oneshot, watch},
};
use tokio_util::{codec::FramedRead, sync::CancellationToken};

use crate::{
    discovery::{Candidate, Locator, iso_timestamp, same_folder},
    framing::{DEFAULT_RESPONSE_LIMIT, Frame, FrameDecoder, Framing, HEAD_BYTES, encode_frame},
    jsonrpc::{ErrorObject, Id, Message, Request, Response, notifications},
    transcript::{Direction, Recorder},
};

/// Which framing to speak to the Editor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FramingChoice {
    /// Header framing, falling back to newline framing for an Editor that
    /// does not answer it (the seeds' legacy Editors).
    #[default]
    Auto,
    Header,
    Newline,
}

impl std::str::FromStr for FramingChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(FramingChoice::Auto),
            other => other.parse::<Framing>().map(|f| match f {
                Framing::Header => FramingChoice::Header,
                Framing::Newline => FramingChoice::Newline,
            }),
        }
    }
}

/// How the link behaves.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    pub locator: Locator,
    pub framing: FramingChoice,
    /// Largest response accepted (protocol §2: 64 MiB by default).
    pub response_limit: usize,
    /// Limit for connecting and for the handshake.
    pub connect_timeout: Duration,
    /// While calls wait and nothing arrives for this long, ping the Editor.
    pub silence_before_ping: Duration,
    /// A ping not answered within this is a dead connection.
    pub ping_deadline: Duration,
    /// Retry interval while the Editor reloads.
    pub reload_retry: Duration,
    /// Longest retry interval while the Editor is absent.
    pub absent_retry_max: Duration,
    /// Prefix of every request id: unique across reconnects and bridge
    /// restarts (protocol §5); a transcript redacts it to `${RUN}`.
    pub id_prefix: String,
}

impl LinkConfig {
    pub fn new(locator: Locator) -> Self {
        LinkConfig {
            locator,
            framing: FramingChoice::Auto,
            response_limit: DEFAULT_RESPONSE_LIMIT,
            connect_timeout: Duration::from_secs(2),
            silence_before_ping: Duration::from_secs(3),
            ping_deadline: Duration::from_secs(3),
            reload_retry: Duration::from_millis(10),
            absent_retry_max: Duration::from_secs(1),
            id_prefix: {
                let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
                format!("b{:x}{:05x}", std::process::id(), nanos & 0xfffff)
            },
        }
    }
}

/// What the Editor says about itself (`get-version`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EditorInfo {
    pub unity_version: Option<String>,
    pub package_version: Option<String>,
    pub protocol_version: Option<u32>,
    pub capabilities: Vec<String>,
    pub product_name: Option<String>,
    pub data_path: Option<String>,
}

impl EditorInfo {
    fn from_version(result: &Value) -> EditorInfo {
        let text = |k: &str| result.get(k).and_then(Value::as_str).map(str::to_owned);
        EditorInfo {
            unity_version: text("UnityVersion"),
            package_version: text("PackageVersion").or_else(|| text("Ver")),
            protocol_version: result.get("ProtocolVersion").and_then(Value::as_u64).map(|v| v as u32),
            capabilities: result
                .get("Capabilities")
                .and_then(Value::as_array)
                .map(|c| c.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                .unwrap_or_default(),
            product_name: text("ProductName"),
            data_path: text("DataPath"),
        }
    }

    /// The Editor keeps a resume journal (protocol §5).
    pub fn can_resume(&self) -> bool {
        self.capabilities.iter().any(|c| c == "resume")
    }

    /// Editors of this protocol answer requests on one connection
    /// concurrently; uLoopMCP answers them one at a time.
    fn concurrent(&self) -> bool {
        self.protocol_version.is_some()
    }
}

/// The link's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkState {
    /// Looking for the Editor for the first time.
    Searching,
    Connected,
    /// The Editor is reloading its domain; it will be back.
    Reloading,
    /// No Editor answers.
    Absent,
    /// The bridge is shutting down.
    Stopped,
}

/// The last domain reload the link went through.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadRecord {
    /// When the Editor announced it (or the connection dropped).
    pub started_at: String,
    /// How long until the link was connected again.
    pub reconnected_after_ms: u64,
}

/// A snapshot of the link, for status reports.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkStatus {
    pub state: LinkState,
    pub port: Option<u16>,
    pub framing: Option<&'static str>,
    pub session_id: Option<String>,
    pub editor: Option<EditorInfo>,
    pub connected_since: Option<String>,
    pub reloads: u64,
    pub last_reload: Option<ReloadRecord>,
    /// Calls waiting for the Editor now.
    pub calls_in_flight: u64,
    /// What was tried, when not connected.
    pub tried: Vec<String>,
}

/// What the link tells the rest of the bridge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkEvent {
    /// Connected (again): tools may have changed.
    Connected,
    /// The Editor said its tools changed.
    ToolsChanged,
    /// The connection closed.
    Disconnected,
}

/// Why a call did not return a result.
#[derive(Clone, Debug, PartialEq)]
pub enum CallError {
    /// The Editor answered with a JSON-RPC error.
    Editor(ErrorObject),
    /// No answer before the deadline.
    Timeout { seconds: f64 },
    /// A reload (or a dropped connection) cut the call off after it was sent,
    /// and it could not be resumed or safely resent.
    Interrupted,
    /// The answer was larger than the response limit.
    TooLarge { size: u64, limit: usize },
    /// The answer was not valid JSON (its id could still be read).
    Unreadable { reason: String },
    /// The caller cancelled.
    Cancelled,
    /// The deadline passed without any Editor to send to.
    NoEditor { tried: Vec<String> },
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Editor(e) => write!(f, "{e}"),
            CallError::Timeout { seconds } => write!(f, "no answer from Unity within {seconds} s"),
            CallError::Interrupted => f.write_str("interrupted by a domain reload"),
            CallError::TooLarge { size, limit } => {
                write!(f, "the answer ({size} bytes) is over the {limit}-byte limit")
            }
            CallError::Unreadable { reason } => write!(f, "the answer was not valid JSON: {reason}"),
            CallError::Cancelled => f.write_str("cancelled"),
            CallError::NoEditor { tried } => write!(f, "no Unity Editor found (tried: {})", tried.join("; ")),
        }
    }
}

impl std::error::Error for CallError {}

/// How one call goes.
#[derive(Clone, Debug)]
pub struct CallOptions {
    pub deadline: Instant,
    pub cancel: CancellationToken,
    /// Receives the Editor's `notifications/progress` params for this call.
    pub progress: Option<mpsc::UnboundedSender<Value>>,
    /// The tool only reads: resending it after a reload is harmless.
    pub read_only: bool,
}

impl CallOptions {
    pub fn within(timeout: Duration) -> Self {
        CallOptions {
            deadline: Instant::now() + timeout,
            cancel: CancellationToken::new(),
            progress: None,
            read_only: false,
        }
    }
}

/// How many times one call follows the Editor through reloads.
const MAX_ATTEMPTS: usize = 8;

/// After a connection closes, how long the link retries at the fast reload
/// pace even when no discovery file says the Editor is reloading (uLoopMCP
/// writes none; big projects take a minute or more to reload).
const RELOAD_WINDOW: Duration = Duration::from_secs(120);

/// What answered a request.
#[derive(Debug)]
enum Reply {
    Response(Response),
    TooLarge {
        size: u64,
        limit: usize,
    },
    /// The answer came, but was not valid JSON.
    Unreadable(String),
}

#[derive(Debug)]
struct Pending {
    reply: oneshot::Sender<Reply>,
    progress: Option<mpsc::UnboundedSender<Value>>,
    /// Internal (a ping): not counted as a call in flight.
    internal: bool,
}

/// Why a connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
enum CloseReason {
    Open,
    /// `notifications/server/shutdown` with this reason.
    Shutdown(String),
    /// The Editor closed the socket.
    PeerClosed,
    /// The socket failed or the Editor broke the protocol.
    Failed(String),
    /// The Editor stopped answering.
    Silent,
    /// The bridge is stopping.
    Stopped,
}

/// One TCP connection to the Editor.
#[derive(Debug)]
struct Connection {
    number: u64,
    port: u16,
    framing: Framing,
    info: Mutex<EditorInfo>,
    session_id: Mutex<Option<String>>,
    out: mpsc::UnboundedSender<(Bytes, Option<Arc<AtomicBool>>)>,
    pending: Mutex<HashMap<Id, Pending>>,
    closed: CancellationToken,
    reason: Mutex<CloseReason>,
    last_inbound: Mutex<Instant>,
    recorder: Option<Arc<Recorder>>,
    close_recorded: AtomicBool,
    events: broadcast::Sender<LinkEvent>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Connection {
    async fn open(
        port: u16,
        framing: Framing,
        number: u64,
        config: &LinkConfig,
        recorder: Option<Arc<Recorder>>,
        events: broadcast::Sender<LinkEvent>,
    ) -> Result<Arc<Connection>, String> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let stream = match tokio::time::timeout(config.connect_timeout, TcpStream::connect(addr)).await {
            Err(_) => return Err(format!("no answer to connect within {:?}", config.connect_timeout)),
            Ok(Err(e)) => return Err(e.to_string()),
            Ok(Ok(stream)) => stream,
        };
        let _ = stream.set_nodelay(true);
        let (read, mut write) = stream.into_split();
        let (out, mut out_rx) = mpsc::unbounded_channel::<(Bytes, Option<Arc<AtomicBool>>)>();
        let connection = Arc::new(Connection {
            number,
            port,
            framing,
            info: Mutex::new(EditorInfo::default()),
            session_id: Mutex::new(None),
            out,
            pending: Mutex::new(HashMap::new()),
            closed: CancellationToken::new(),
            reason: Mutex::new(CloseReason::Open),
            last_inbound: Mutex::new(Instant::now()),
            recorder,
            close_recorded: AtomicBool::new(false),
            events,
        });
        if let Some(r) = &connection.recorder {
            r.event(number, "connect", json!({"port": port, "framing": framing.as_str()}));
        }
        let writer = connection.clone();
        tokio::spawn(async move {
            let mut buf = BytesMut::new();
            loop {
                let next = tokio::select! {
                    next = out_rx.recv() => next,
                    _ = writer.closed.cancelled() => None,
                };
                let Some((body, sent)) = next else { break };
                buf.clear();
                if encode_frame(writer.framing, &body, &mut buf).is_err() {
                    continue;
                }
                if let Err(e) = write.write_all(&buf).await {
                    writer.close(CloseReason::Failed(format!("write failed: {e}")));
                    break;
                }
                if let Some(sent) = sent {
                    sent.store(true, Ordering::SeqCst);
                }
            }
            let _ = write.shutdown().await;
        });
        let reader = connection.clone();
        let decoder = FrameDecoder::new(framing, config.response_limit).keep_head(HEAD_BYTES);
        tokio::spawn(async move {
            let mut frames = FramedRead::new(read, decoder);
            loop {
                let next = tokio::select! {
                    next = frames.next() => next,
                    _ = reader.closed.cancelled() => break,
                };
                *lock(&reader.last_inbound) = Instant::now();
                match next {
                    None => {
                        reader.close(CloseReason::PeerClosed);
                        break;
                    }
                    Some(Ok(Frame::Body(body))) => reader.on_body(&body),
                    Some(Ok(Frame::TooLarge { size, limit, head })) => reader.on_too_large(size, limit, &head),
                    Some(Err(e)) => {
                        let reason =
                            if e.is_peer_gone() { CloseReason::PeerClosed } else { CloseReason::Failed(e.to_string()) };
                        reader.close(reason);
                        break;
                    }
                }
            }
        });
        Ok(connection)
    }

    fn close(&self, reason: CloseReason) {
        // Only the first close is recorded, whichever task gets here first.
        if !self.close_recorded.swap(true, Ordering::SeqCst) {
            if let Some(r) = &self.recorder {
                let (by, why) = match &reason {
                    CloseReason::PeerClosed => ("editor", "the Editor closed the connection".to_owned()),
                    CloseReason::Failed(e) => ("client", e.clone()),
                    CloseReason::Silent => ("client", "the Editor stopped answering".to_owned()),
                    CloseReason::Stopped => ("client", "the bridge is stopping".to_owned()),
                    CloseReason::Shutdown(why) => ("editor", format!("shutdown: {why}")),
                    CloseReason::Open => ("client", String::new()),
                };
                r.event(self.number, "close", json!({"by": by, "reason": why}));
            }
        }
        {
            let mut current = lock(&self.reason);
            if *current == CloseReason::Open {
                *current = reason;
            }
        }
        self.closed.cancel();
        // Callers waiting on these see the connection gone.
        lock(&self.pending).clear();
    }

    fn reason(&self) -> CloseReason {
        lock(&self.reason).clone()
    }

    fn on_body(&self, body: &[u8]) {
        if let Some(r) = &self.recorder {
            r.frame(self.number, Direction::FromEditor, body);
        }
        match Message::parse(body) {
            Ok(Message::Response(response)) => {
                let Some(id) = &response.id else {
                    tracing::warn!(error = ?response.outcome.err(), "the Editor sent an error about an unreadable frame");
                    return;
                };
                if let Some(pending) = lock(&self.pending).remove(id) {
                    let _ = pending.reply.send(Reply::Response(response));
                } else {
                    tracing::debug!(%id, "late or unknown response ignored");
                }
            }
            Ok(Message::Notification(note)) => match note.method.as_str() {
                notifications::TOOLS_LIST_CHANGED => {
                    let _ = self.events.send(LinkEvent::ToolsChanged);
                }
                notifications::SERVER_SHUTDOWN => {
                    let why = note.params.as_ref().and_then(|p| p.get("reason")).and_then(Value::as_str).unwrap_or("");
                    *lock(&self.reason) = CloseReason::Shutdown(why.to_owned());
                }
                notifications::PROGRESS => {
                    let params = note.params.unwrap_or(Value::Null);
                    let id = params.get("requestId").and_then(|v| Id::from_value(v).ok().flatten());
                    if let Some(id) = id {
                        if let Some(Pending { progress: Some(tx), .. }) = lock(&self.pending).get(&id) {
                            let _ = tx.send(params);
                        }
                    }
                }
                other => tracing::debug!(method = other, "Editor notification ignored"),
            },
            Ok(Message::Request(request)) => tracing::debug!(method = request.method, "Editor request ignored"),
            Err(e) => {
                tracing::warn!(%e, "the Editor sent a frame that is not a message");
                // Its id may still be legible: that call fails now rather
                // than at its deadline.
                if let Some(p) = id_in_head(body).and_then(|id| lock(&self.pending).remove(&id)) {
                    let _ = p.reply.send(Reply::Unreadable(e.to_string()));
                }
            }
        }
    }

    /// A discarded over-limit frame: its head says whose answer it was.
    fn on_too_large(&self, size: u64, limit: usize, head: &[u8]) {
        let id = id_in_head(head);
        tracing::warn!(size, limit, ?id, "the Editor sent a response over the limit");
        let mut pending = lock(&self.pending);
        let key = id.or_else(|| {
            // Without an id, and only one call waiting, it was that call's.
            let waiting: Vec<&Id> = pending.iter().filter(|(_, p)| !p.internal).map(|(k, _)| k).collect();
            (waiting.len() == 1).then(|| waiting[0].clone())
        });
        if let Some(p) = key.and_then(|k| pending.remove(&k)) {
            let _ = p.reply.send(Reply::TooLarge { size, limit });
        }
    }

    /// Sends a request; the receiver gets its answer, or is dropped if the
    /// connection ends first. `sent` turns true once the bytes are written.
    fn request(
        &self,
        request: Request,
        progress: Option<mpsc::UnboundedSender<Value>>,
        internal: bool,
    ) -> (oneshot::Receiver<Reply>, Arc<AtomicBool>) {
        let (tx, rx) = oneshot::channel();
        let sent = Arc::new(AtomicBool::new(false));
        if self.closed.is_cancelled() {
            return (rx, sent);
        }
        tracing::debug!(connection = self.number, method = request.method, id = %request.id, "request sent");
        lock(&self.pending).insert(request.id.clone(), Pending { reply: tx, progress, internal });
        let body = Bytes::from(Message::Request(request).to_bytes());
        if let Some(r) = &self.recorder {
            r.frame(self.number, Direction::ToEditor, &body);
        }
        let _ = self.out.send((body, Some(sent.clone())));
        (rx, sent)
    }

    fn forget(&self, id: &Id) {
        lock(&self.pending).remove(id);
    }

    fn calls_waiting(&self) -> usize {
        lock(&self.pending).values().filter(|p| !p.internal).count()
    }

    /// One request on this connection with a deadline: handshakes and pings.
    async fn call_once(&self, id: Id, method: &str, params: Value, timeout: Duration) -> Result<Value, String> {
        let (rx, _) = self.request(Request::new(id.clone(), method, params), None, true);
        match tokio::time::timeout(timeout, rx).await {
            Err(_) => {
                self.forget(&id);
                Err(format!("no answer to {method} within {timeout:?}"))
            }
            Ok(Err(_)) => Err(format!("the connection closed before the answer to {method}")),
            Ok(Ok(Reply::TooLarge { size, .. })) => Err(format!("the answer to {method} is too large ({size} bytes)")),
            Ok(Ok(Reply::Unreadable(reason))) => Err(format!("the answer to {method} was not valid JSON: {reason}")),
            Ok(Ok(Reply::Response(r))) => r.outcome.map_err(|e| e.to_string()),
        }
    }
}

/// What to do with a call whose connection ended before its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Retry {
    /// Send it as a new request.
    Fresh,
    /// Send the same request again with `x-resume`.
    Resume,
    /// Report it as interrupted.
    GiveUp,
}

/// `reached`: a request with this id was written to the Editor at least once.
fn after_cut_off(reached: bool, editor_can_resume: bool, read_only: bool) -> Retry {
    if !reached {
        // The Editor cannot have seen it.
        Retry::Fresh
    } else if editor_can_resume {
        Retry::Resume
    } else if read_only {
        Retry::Fresh
    } else {
        // It may have run: never run a mutating call twice.
        Retry::GiveUp
    }
}

/// The id in the first bytes of a response, if it can be read there.
fn id_in_head(head: &[u8]) -> Option<Id> {
    let text = String::from_utf8_lossy(head);
    let at = text.find("\"id\"")?;
    let rest = text[at + 4..].trim_start().strip_prefix(':')?.trim_start();
    if let Some(quoted) = rest.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = quoted.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return Some(Id::String(out)),
                '\\' => out.push(chars.next()?),
                c => out.push(c),
            }
        }
        None
    } else {
        let end =
            rest.find(|c: char| !(c.is_ascii_digit() || c == '-' || c == '.' || c == 'e' || c == 'E' || c == '+'))?;
        crate::jsonrpc::IdNumber::parse(&rest[..end]).map(Id::Number)
    }
}

#[derive(Debug)]
struct Shared {
    status: LinkStatus,
    client_name: Option<String>,
    /// When the current reload began, while it lasts.
    reload_started: Option<(Instant, SystemTime)>,
    /// The framing that worked last (for `Auto`).
    working_framing: Option<Framing>,
}

/// The bridge's link to the Editor.
#[derive(Debug)]
pub struct Link {
    config: LinkConfig,
    recorder: Option<Arc<Recorder>>,
    shared: Mutex<Shared>,
    current: watch::Sender<Option<Arc<Connection>>>,
    events: broadcast::Sender<LinkEvent>,
    id_prefix: String,
    next_id: AtomicU64,
    next_connection: AtomicU64,
    stopping: CancellationToken,
}

impl Link {
    /// Starts looking for the Editor, and keeps the connection from then on.
    pub fn start(config: LinkConfig, recorder: Option<Recorder>) -> Arc<Link> {
        let (current, _) = watch::channel(None);
        let (events, _) = broadcast::channel(64);
        let id_prefix = config.id_prefix.clone();
        let link = Arc::new(Link {
            config,
            recorder: recorder.map(Arc::new),
            shared: Mutex::new(Shared {
                status: LinkStatus {
                    state: LinkState::Searching,
                    port: None,
                    framing: None,
                    session_id: None,
                    editor: None,
                    connected_since: None,
                    reloads: 0,
                    last_reload: None,
                    calls_in_flight: 0,
                    tried: Vec::new(),
                },
                client_name: None,
                reload_started: None,
                working_framing: None,
            }),
            current,
            events,
            id_prefix,
            next_id: AtomicU64::new(1),
            next_connection: AtomicU64::new(1),
            stopping: CancellationToken::new(),
        });
        tokio::spawn(link.clone().keep_connected());
        link
    }

    /// Stops the link: closes the connection, ends the background task.
    pub fn stop(&self) {
        self.stopping.cancel();
        if let Some(c) = self.current.borrow().as_ref() {
            c.close(CloseReason::Stopped);
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<LinkEvent> {
        self.events.subscribe()
    }

    pub fn status(&self) -> LinkStatus {
        let mut status = lock(&self.shared).status.clone();
        status.calls_in_flight = self.current.borrow().as_ref().map_or(0, |c| c.calls_waiting() as u64);
        status
    }

    pub fn is_connected(&self) -> bool {
        self.current.borrow().as_ref().is_some_and(|c| !c.closed.is_cancelled())
    }

    /// The Editor's self-description, once connected.
    pub fn editor_info(&self) -> Option<EditorInfo> {
        self.current.borrow().as_ref().map(|c| lock(&c.info).clone())
    }

    /// The name sent with `set-client-name` on every connect.
    pub fn set_client_name(self: &Arc<Self>, name: &str) {
        lock(&self.shared).client_name = Some(name.to_owned());
        if let Some(conn) = self.current.borrow().clone() {
            let link = self.clone();
            let name = name.to_owned();
            tokio::spawn(async move {
                let id = link.fresh_id();
                let _ =
                    conn.call_once(id, "set-client-name", json!({"ClientName": name}), Duration::from_secs(5)).await;
            });
        }
    }

    fn fresh_id(&self) -> Id {
        Id::String(format!("{}-{}", self.id_prefix, self.next_id.fetch_add(1, Ordering::Relaxed)))
    }

    /// Waits until connected (through reloads), up to the deadline.
    pub async fn wait_connected(&self, deadline: Instant, cancel: &CancellationToken) -> Result<(), CallError> {
        self.connection(deadline, cancel).await.map(|_| ())
    }

    async fn connection(&self, deadline: Instant, cancel: &CancellationToken) -> Result<Arc<Connection>, CallError> {
        let mut watch = self.current.subscribe();
        loop {
            if let Some(c) = watch.borrow_and_update().as_ref() {
                if !c.closed.is_cancelled() {
                    return Ok(c.clone());
                }
            }
            tokio::select! {
                changed = watch.changed() => {
                    if changed.is_err() {
                        return Err(CallError::NoEditor { tried: vec!["the bridge is stopping".into()] });
                    }
                }
                _ = tokio::time::sleep_until(deadline.into()) => {
                    let tried = self.status().tried;
                    return Err(CallError::NoEditor { tried });
                }
                _ = cancel.cancelled() => return Err(CallError::Cancelled),
            }
        }
    }

    /// Calls a tool on the Editor: waits for a connection, follows the Editor
    /// through reloads, and answers exactly once.
    pub async fn call(&self, method: &str, params: Value, options: CallOptions) -> Result<Value, CallError> {
        let started = Instant::now();
        let mut id = self.fresh_id();
        let mut resume = false;
        // Whether a request with this id ever reached the socket.
        let mut reached = false;
        for _ in 0..MAX_ATTEMPTS {
            let connection = self.connection(options.deadline, &options.cancel).await?;
            let mut request = Request::new(id.clone(), method, params.clone());
            if resume {
                request.extra.insert("x-resume".into(), true.into());
            }
            let (reply, sent) = connection.request(request, options.progress.clone(), false);
            let reply = tokio::select! {
                reply = reply => reply,
                _ = tokio::time::sleep_until(options.deadline.into()) => {
                    // A late answer finds no one waiting and is dropped.
                    connection.forget(&id);
                    let seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
                    return Err(CallError::Timeout { seconds });
                }
                _ = options.cancel.cancelled() => {
                    connection.forget(&id);
                    return Err(CallError::Cancelled);
                }
            };
            match reply {
                // The Editor says the resumed call was cut off before it
                // finished; a read-only call is simply made again.
                Ok(Reply::Response(Response { outcome: Err(e), .. }))
                    if resume && options.read_only && e.kind() == crate::jsonrpc::ErrorKind::Interrupted =>
                {
                    (id, resume, reached) = (self.fresh_id(), false, false);
                }
                Ok(Reply::Response(response)) => return response.outcome.map_err(CallError::Editor),
                Ok(Reply::TooLarge { size, limit }) => return Err(CallError::TooLarge { size, limit }),
                Ok(Reply::Unreadable(reason)) => return Err(CallError::Unreadable { reason }),
                Err(_) => {
                    // The connection ended before the answer.
                    reached |= sent.load(Ordering::SeqCst);
                    match after_cut_off(reached, lock(&connection.info).can_resume(), options.read_only) {
                        Retry::Fresh => (id, resume, reached) = (self.fresh_id(), false, false),
                        Retry::Resume => resume = true,
                        Retry::GiveUp => return Err(CallError::Interrupted),
                    }
                    tracing::info!(method, %id, resume, "call cut off by a closed connection; sending it again");
                }
            }
        }
        Err(CallError::Interrupted)
    }

    fn update(&self, f: impl FnOnce(&mut Shared)) {
        f(&mut lock(&self.shared));
    }

    /// The background task: find, connect, serve until closed, repeat.
    async fn keep_connected(self: Arc<Self>) {
        let mut absent_delay = self.config.reload_retry.max(Duration::from_millis(50));
        let mut first = true;
        loop {
            if self.stopping.is_cancelled() {
                break;
            }
            let found = self.config.locator.candidates();
            let mut tried = found.notes.clone();
            let mut connected = None;
            for candidate in &found.ports {
                match self.connect(candidate).await {
                    Ok(c) => {
                        connected = Some(c);
                        break;
                    }
                    Err(why) => tried.push(format!("port {} ({}): {why}", candidate.port, candidate.source)),
                }
            }
            let Some(connection) = connected else {
                let reloading = found.reloading
                    || lock(&self.shared).reload_started.is_some_and(|(began, _)| began.elapsed() < RELOAD_WINDOW);
                self.update(|s| {
                    s.status.state = if reloading {
                        LinkState::Reloading
                    } else if first {
                        LinkState::Searching
                    } else {
                        LinkState::Absent
                    };
                    s.status.tried = tried;
                });
                let delay = if reloading {
                    self.config.reload_retry
                } else {
                    let d = absent_delay;
                    absent_delay = (absent_delay * 2).min(self.config.absent_retry_max);
                    d
                };
                if self.pause(delay, &found).await {
                    break;
                }
                continue;
            };
            first = false;
            absent_delay = self.config.reload_retry.max(Duration::from_millis(50));
            self.on_connected(&connection);
            tokio::spawn(self.clone().watch_silence(connection.clone()));
            tokio::select! {
                _ = connection.closed.cancelled() => {}
                _ = self.stopping.cancelled() => connection.close(CloseReason::Stopped),
            }
            self.on_disconnected(&connection);
        }
        self.current.send_replace(None);
        self.update(|s| s.status.state = LinkState::Stopped);
    }

    /// Sleeps `delay`, waking early when the discovery files change; true
    /// when the link is stopping.
    async fn pause(&self, delay: Duration, seen: &crate::discovery::Candidates) -> bool {
        let until = Instant::now() + delay;
        loop {
            let step = until.saturating_duration_since(Instant::now()).min(Duration::from_millis(25));
            if step.is_zero() {
                return false;
            }
            tokio::select! {
                _ = tokio::time::sleep(step) => {}
                _ = self.stopping.cancelled() => return true,
            }
            if self.config.locator.project.is_some() && self.config.locator.candidates() != *seen {
                return false;
            }
        }
    }

    fn on_connected(&self, connection: &Arc<Connection>) {
        let info = lock(&connection.info).clone();
        self.update(|s| {
            if let Some((began, at)) = s.reload_started.take() {
                s.status.reloads += 1;
                s.status.last_reload = Some(ReloadRecord {
                    started_at: iso_timestamp(at),
                    reconnected_after_ms: began.elapsed().as_millis() as u64,
                });
            }
            s.status.state = LinkState::Connected;
            s.status.port = Some(connection.port);
            s.status.framing = Some(connection.framing.as_str());
            s.status.session_id = lock(&connection.session_id).clone();
            s.status.editor = Some(info);
            s.status.connected_since = Some(iso_timestamp(SystemTime::now()));
            s.status.tried.clear();
            s.working_framing = Some(connection.framing);
        });
        tracing::info!(port = connection.port, framing = %connection.framing, "connected to the Unity Editor");
        self.current.send_replace(Some(connection.clone()));
        let _ = self.events.send(LinkEvent::Connected);
    }

    fn on_disconnected(&self, connection: &Arc<Connection>) {
        let reason = connection.reason();
        tracing::info!(?reason, "the connection to the Unity Editor closed");
        self.update(|s| {
            let reloading =
                !matches!(&reason, CloseReason::Shutdown(r) if r == "EditorQuit") && reason != CloseReason::Stopped;
            if reloading && s.reload_started.is_none() {
                s.reload_started = Some((Instant::now(), SystemTime::now()));
            }
            if !reloading {
                s.reload_started = None;
            }
            s.status.state = match &reason {
                CloseReason::Shutdown(r) if r == "EditorQuit" => LinkState::Absent,
                CloseReason::Stopped => LinkState::Stopped,
                _ => LinkState::Reloading,
            };
            s.status.connected_since = None;
        });
        let _ = self.events.send(LinkEvent::Disconnected);
    }

    /// Connects to one candidate and shakes hands; checks it is this
    /// project's Editor.
    async fn connect(&self, candidate: &Candidate) -> Result<Arc<Connection>, String> {
        let framings: Vec<Framing> = match self.config.framing {
            FramingChoice::Header => vec![Framing::Header],
            FramingChoice::Newline => vec![Framing::Newline],
            FramingChoice::Auto => match lock(&self.shared).working_framing {
                Some(Framing::Newline) => vec![Framing::Newline, Framing::Header],
                _ => vec![Framing::Header, Framing::Newline],
            },
        };
        let mut last = String::new();
        for framing in framings {
            let number = self.next_connection.fetch_add(1, Ordering::Relaxed);
            let connection = Connection::open(
                candidate.port,
                framing,
                number,
                &self.config,
                self.recorder.clone(),
                self.events.clone(),
            )
            .await?;
            match connection.call_once(self.fresh_id(), "get-version", json!({}), self.config.connect_timeout).await {
                Ok(version) => {
                    let info = EditorInfo::from_version(&version);
                    if let (Some(project), Some(data_path)) = (&self.config.locator.project, &info.data_path) {
                        if !same_folder(std::path::Path::new(data_path), &project.join("Assets")) {
                            connection.close(CloseReason::Stopped);
                            return Err(format!("that Editor has another project open ({data_path})"));
                        }
                    }
                    *lock(&connection.info) = info;
                }
                Err(e) if e.contains("Unknown tool") || e.contains("Method not found") => {
                    // An Editor without get-version: serve it all the same.
                }
                Err(e) => {
                    connection.close(CloseReason::Stopped);
                    last = format!("{e} ({framing} framing)");
                    continue;
                }
            }
            lock(&connection.session_id).clone_from(&candidate.session_id);
            let name = lock(&self.shared).client_name.clone();
            if let Some(name) = name {
                let _ = connection
                    .call_once(
                        self.fresh_id(),
                        "set-client-name",
                        json!({"ClientName": name}),
                        self.config.connect_timeout,
                    )
                    .await;
            }
            return Ok(connection);
        }
        Err(last)
    }

    /// While calls wait and the Editor says nothing, make sure it is alive;
    /// close a connection it no longer answers on (a half-open Editor).
    async fn watch_silence(self: Arc<Self>, connection: Arc<Connection>) {
        let tick = (self.config.silence_before_ping / 4).max(Duration::from_millis(50));
        loop {
            tokio::select! {
                _ = tokio::time::sleep(tick) => {}
                _ = connection.closed.cancelled() => return,
            }
            let silent_for = lock(&connection.last_inbound).elapsed();
            if connection.calls_waiting() == 0 || silent_for < self.config.silence_before_ping {
                continue;
            }
            let concurrent = lock(&connection.info).concurrent();
            let alive = if concurrent {
                // Our Editors answer a ping beside a running call.
                connection.call_once(self.fresh_id(), "ping", json!({}), self.config.ping_deadline).await.is_ok()
            } else {
                // uLoopMCP answers one request at a time per connection: ask
                // on a second connection whether the Editor is there at all.
                self.probe(connection.port, connection.framing).await
            };
            if alive {
                *lock(&connection.last_inbound) = Instant::now();
            } else if !connection.closed.is_cancelled() {
                tracing::warn!(port = connection.port, "the Editor stopped answering; reconnecting");
                connection.close(CloseReason::Silent);
                return;
            }
        }
    }

    async fn probe(&self, port: u16, framing: Framing) -> bool {
        let (events, _) = broadcast::channel(1);
        let number = self.next_connection.fetch_add(1, Ordering::Relaxed);
        let Ok(probe) = Connection::open(port, framing, number, &self.config, None, events).await else { return false };
        let ok = probe.call_once(self.fresh_id(), "ping", json!({}), self.config.ping_deadline).await.is_ok();
        probe.close(CloseReason::Stopped);
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_from_the_head_of_a_discarded_frame() {
        assert_eq!(id_in_head(br#"{"jsonrpc":"2.0","id":"b1-7","result":{"x":"#), Some(Id::String("b1-7".into())));
        assert_eq!(id_in_head(br#"{"jsonrpc":"2.0","id": 42,"result""#), Some(Id::from(42u64)));
        assert_eq!(id_in_head(br#"{"id":"a\"b","#), Some(Id::String("a\"b".into())));
        assert_eq!(id_in_head(br#"{"jsonrpc":"2.0","result":"#), None);
        assert_eq!(id_in_head(br#"{"id":"unterminated"#), None);
    }

    #[test]
    fn version_results_become_editor_info() {
        let info = EditorInfo::from_version(&json!({
            "UnityVersion": "6000.0.65f1", "PackageVersion": "0.1.0", "ProtocolVersion": 1,
            "Capabilities": ["resume", "progress"], "DataPath": "/p/Assets", "Ver": "0.1.0"
        }));
        assert!(info.can_resume() && info.concurrent());
        let uloop = EditorInfo::from_version(&json!({"UnityVersion": "2022.3.1f1", "Ver": "2.1.1"}));
        assert!(!uloop.can_resume() && !uloop.concurrent());
        assert_eq!(uloop.package_version.as_deref(), Some("2.1.1"));
    }

    #[test]
    fn a_call_that_may_have_run_is_never_sent_fresh_unless_it_only_reads() {
        assert_eq!(after_cut_off(false, false, false), Retry::Fresh);
        assert_eq!(after_cut_off(true, true, false), Retry::Resume);
        assert_eq!(after_cut_off(true, false, true), Retry::Fresh);
        assert_eq!(after_cut_off(true, false, false), Retry::GiveUp);
    }

    #[test]
    fn framing_choices_parse() {
        assert_eq!("auto".parse::<FramingChoice>(), Ok(FramingChoice::Auto));
        assert_eq!("newline".parse::<FramingChoice>(), Ok(FramingChoice::Newline));
        assert!("xml".parse::<FramingChoice>().is_err());
    }

    #[test]
    fn errors_read_well() {
        let e = CallError::NoEditor { tried: vec!["port 8700: refused".into()] };
        assert_eq!(e.to_string(), "no Unity Editor found (tried: port 8700: refused)");
    }
}
