//! One connection to the Editor: an editor-link
//! [`Connection`](editor_link::connection::Connection) (which frames and
//! writes requests and says how far each got, its [`Delivery`] — the fact
//! every honest answer about a call rests on), a task that matches the
//! Editor's answers to the calls waiting for them, and why it closed.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, Instant},
};

pub(super) use editor_link::connection::Delivery;
use editor_link::{
    connection::{Connection, Ending, Options, Outgoing, Received, Sender},
    endpoint::Endpoint,
    framing::{Framing, HEAD_BYTES},
    jsonrpc::{ErrorObject, Id, IdNumber, Message, Request, Response, ULOOP_MEMBER, notifications},
    methods,
    transcript::{Direction, Recorder},
    version::Version,
};
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::{EditorInfo, LinkConfig, LinkEvent, target::Target};
use crate::raw_json::RawJson;
pub(super) use editor_link::lock;

/// What answered a request.
#[derive(Debug)]
pub(super) enum Reply {
    /// A success, its result as the Editor wrote it.
    Result(RawJson),
    /// An error (or a success read the slow way: an id that is not a plain
    /// string or integer, a `null` result).
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
    /// Internal (a handshake, a ping): not counted as a call in flight.
    internal: bool,
}

/// Why a connection ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum CloseReason {
    Open,
    /// `notifications/server/shutdown` with this reason.
    Shutdown(String),
    /// The Editor closed the socket without a word.
    PeerClosed,
    /// The socket failed or the Editor broke the protocol.
    Failed(String),
    /// The Editor stopped answering.
    Silent,
    /// A call on it outlived its deadline, and the Editor answers in order.
    Overdue,
    /// A call on it was cancelled, and the Editor answers in order.
    Cancelled,
    /// The bridge is stopping.
    Stopped,
}

/// Why a handshake or ping on one connection got no result.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum ExchangeError {
    /// Nothing came back in time: no verdict on the Editor or its framing.
    NoAnswer,
    /// The connection closed before the answer.
    Closed(CloseReason),
    /// The Editor answered with an error.
    Editor(ErrorObject),
    /// The answer could not be used (too large, not JSON).
    Unusable(String),
}

impl std::fmt::Display for ExchangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExchangeError::NoAnswer => f.write_str("no answer"),
            ExchangeError::Closed(CloseReason::Failed(why)) => write!(f, "the connection failed: {why}"),
            ExchangeError::Closed(_) => f.write_str("the connection closed before the answer"),
            ExchangeError::Editor(e) => write!(f, "{e}"),
            ExchangeError::Unusable(why) => f.write_str(why),
        }
    }
}

/// One connection to the Editor, with the calls waiting on it.
#[derive(Debug)]
pub(super) struct EditorConnection {
    pub number: u64,
    /// Where it was opened, and what goes with every request there: the
    /// `x-token` published with the port it reached (extension `token`), or
    /// uLoopMCP 3's `x-uloop`.
    pub target: Target,
    pub framing: Framing,
    pub info: Mutex<EditorInfo>,
    pub session_id: Mutex<Option<String>>,
    /// The client name this Editor has been told (`set-client-name`), held
    /// while it is being told: its resume journal is the client's, so no
    /// call goes out before the Editor knows whose it is.
    told_name: tokio::sync::Mutex<Option<String>>,
    sender: Sender,
    pending: Mutex<HashMap<Id, Pending>>,
    pub closed: CancellationToken,
    reason: Mutex<CloseReason>,
    pub last_inbound: Mutex<Instant>,
    recorder: Option<Arc<Recorder>>,
    /// Requests left out of the recording, with their answers: the bridge's
    /// own probes of the main thread, whose number depends on timing, not on
    /// the session (as the watchdog's probes, on a connection of their own).
    unrecorded: Mutex<Vec<Id>>,
    close_recorded: AtomicBool,
    events: broadcast::Sender<LinkEvent>,
}

impl EditorConnection {
    pub(super) async fn open(
        target: &Target,
        framing: Framing,
        number: u64,
        config: &LinkConfig,
        recorder: Option<Arc<Recorder>>,
        events: broadcast::Sender<LinkEvent>,
    ) -> Result<Arc<EditorConnection>, DialError> {
        let options = Options::client(framing, config.response_limit).keep_head(HEAD_BYTES);
        let Connection { sender, mut receiver, .. } =
            match tokio::time::timeout(config.connect_timeout, dial(&target.endpoint, options)).await {
                Err(_) => return Err(DialError::TimedOut(config.connect_timeout)),
                Ok(Err(e)) => return Err(e),
                Ok(Ok(connection)) => connection,
            };
        let connection = Arc::new(EditorConnection {
            number,
            target: target.clone(),
            framing,
            info: Mutex::new(EditorInfo::at(&target.endpoint, Version::default())),
            session_id: Mutex::new(None),
            told_name: tokio::sync::Mutex::new(None),
            sender,
            pending: Mutex::new(HashMap::new()),
            closed: CancellationToken::new(),
            reason: Mutex::new(CloseReason::Open),
            last_inbound: Mutex::new(Instant::now()),
            recorder,
            unrecorded: Mutex::new(Vec::new()),
            close_recorded: AtomicBool::new(false),
            events,
        });
        if let Some(r) = &connection.recorder {
            let at = match target.port() {
                Some(port) => json!({"port": port, "framing": framing.as_str()}),
                None => json!({"endpoint": target.endpoint.to_string(), "framing": framing.as_str()}),
            };
            r.event(number, "connect", at);
        }
        let reader = connection.clone();
        tokio::spawn(async move {
            loop {
                let received = tokio::select! {
                    received = receiver.recv() => received,
                    // The writer failed (the Editor went away), or the bridge closed it.
                    _ = reader.sender.closed() => {
                        reader.close(CloseReason::Failed("the connection could not be written to".into()));
                        break;
                    }
                    _ = reader.closed.cancelled() => break,
                };
                *lock(&reader.last_inbound) = Instant::now();
                match received {
                    Received::Body(body) => reader.on_body(&body),
                    Received::TooLarge { size, limit, head } => reader.on_too_large(size, limit, &head),
                    Received::Closed | Received::Lost(_) => {
                        reader.close(CloseReason::PeerClosed);
                        break;
                    }
                    Received::Broken(e) => {
                        reader.close(CloseReason::Failed(e.to_string()));
                        break;
                    }
                }
            }
        });
        Ok(connection)
    }

    pub(super) fn close(&self, reason: CloseReason) {
        // Only the first close is recorded, whichever task gets here first.
        if !self.close_recorded.swap(true, Ordering::SeqCst) {
            if let Some(r) = &self.recorder {
                let (by, why) = match &reason {
                    CloseReason::PeerClosed => ("editor", "the Editor closed the connection".to_owned()),
                    CloseReason::Failed(e) => ("client", e.clone()),
                    CloseReason::Silent => ("client", "the Editor stopped answering".to_owned()),
                    CloseReason::Overdue => {
                        ("client", "a call outlived its deadline on an Editor that answers in order".to_owned())
                    }
                    CloseReason::Cancelled => {
                        ("client", "a call was cancelled on an Editor that answers in order".to_owned())
                    }
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
        // Nothing more is sent on it.
        self.sender.end(Ending::Close);
        // Callers waiting on these see the connection gone.
        lock(&self.pending).clear();
    }

    pub(super) fn reason(&self) -> CloseReason {
        lock(&self.reason).clone()
    }

    pub(super) fn info(&self) -> EditorInfo {
        lock(&self.info).clone()
    }

    fn on_body(&self, body: &bytes::Bytes) {
        if let Some(r) = &self.recorder {
            let quiet = {
                let mut unrecorded = lock(&self.unrecorded);
                let answered = (!unrecorded.is_empty()).then(|| success(body)).flatten().map(|(id, _)| id);
                let at = answered.and_then(|id| unrecorded.iter().position(|u| *u == id));
                at.map(|at| unrecorded.swap_remove(at)).is_some()
            };
            if !quiet {
                r.frame(self.number, Direction::FromEditor, body);
            }
        }
        if let Some((id, result)) = success(body) {
            match lock(&self.pending).remove(&id) {
                Some(pending) => {
                    let _ = pending.reply.send(Reply::Result(result));
                }
                None => tracing::debug!(%id, "late or unknown response ignored"),
            }
            return;
        }
        let body = &body[..];
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

    /// Queues a request; the receiver gets its answer, or is dropped if the
    /// connection ends first. The [`Delivery`] says how far it got.
    pub(super) fn request(
        &self,
        request: Request,
        progress: Option<mpsc::UnboundedSender<Value>>,
        internal: bool,
    ) -> (oneshot::Receiver<Reply>, Delivery) {
        let (tx, rx) = oneshot::channel();
        tracing::debug!(connection = self.number, method = request.method, id = %request.id, "request sent");
        if !self.closed.is_cancelled() {
            lock(&self.pending).insert(request.id.clone(), Pending { reply: tx, progress, internal });
        }
        let mut request = request.with_token(self.target.token.as_deref());
        if let Some(root) = &self.target.project_root {
            // uLoopMCP 3 checks it before anything else (`docs/uloop-3-wire.md` §5).
            request.extra.insert(ULOOP_MEMBER.into(), json!({ "expectedProjectRoot": root }));
        }
        let quiet = request.method == editor_link::methods::GET_EDITOR_STATE;
        if quiet && self.recorder.is_some() {
            let mut unrecorded = lock(&self.unrecorded);
            // Bounded: an answer that never came is forgotten in time.
            if unrecorded.len() >= 64 {
                unrecorded.remove(0);
            }
            unrecorded.push(request.id.clone());
        }
        let out = Outgoing::message(&Message::Request(request), None);
        if let (Some(r), false) = (&self.recorder, quiet) {
            r.frame(self.number, Direction::ToEditor, &out.body);
        }
        // On a closed connection it is withdrawn at once: it never leaves.
        let delivery = self.sender.send(out);
        (rx, delivery)
    }

    /// Records that the Editor was told `name` (in the handshake).
    pub(super) fn told(&self, name: Option<String>) {
        if let Ok(mut told) = self.told_name.try_lock() {
            *told = name;
        }
    }

    /// Whether the Editor has been told `name` (false while it is being told).
    pub(super) fn was_told(&self, name: &str) -> bool {
        self.told_name.try_lock().is_ok_and(|told| told.as_deref() == Some(name))
    }

    /// Tells the Editor `name` unless it was told already, waiting for its
    /// answer (up to `limit`): a call sent after this is journaled as this
    /// client's. Calls that find the name told do not wait.
    pub(super) async fn ensure_named(&self, name: &str, id: impl FnOnce() -> Id, limit: Duration) {
        let started = Instant::now();
        // Another naming in progress (say, at connect) holds the lock: it is
        // waited for within the same limit, never past it.
        let Ok(mut told) = tokio::time::timeout(limit, self.told_name.lock()).await else { return };
        if told.as_deref() == Some(name) || self.closed.is_cancelled() {
            return;
        }
        let left = limit.saturating_sub(started.elapsed());
        let _ = self.exchange(id(), methods::SET_CLIENT_NAME, json!({"ClientName": name}), left).await;
        *told = Some(name.to_owned());
    }

    pub(super) fn forget(&self, id: &Id) {
        lock(&self.pending).remove(id);
    }

    pub(super) fn calls_waiting(&self) -> usize {
        lock(&self.pending).values().filter(|p| !p.internal).count()
    }

    /// One request on this connection with a time limit: handshakes, pings.
    pub(super) async fn exchange(
        &self,
        id: Id,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, ExchangeError> {
        let (rx, delivery) = self.request(Request::new(id.clone(), method, params), None, true);
        self.answer(&id, method, rx, delivery, timeout).await
    }

    /// The answer to an internal request already sent, if it comes within
    /// `window`; `None` when it has not come yet, the request still awaited.
    pub(super) async fn answer_within(
        &self,
        method: &str,
        rx: &mut oneshot::Receiver<Reply>,
        window: Duration,
    ) -> Option<Result<Value, ExchangeError>> {
        let reply = tokio::time::timeout(window, rx).await.ok()?;
        Some(match reply {
            Err(_) => Err(ExchangeError::Closed(self.reason())),
            Ok(reply) => reply_value(method, reply),
        })
    }

    /// The answer to an internal request already sent, with a time limit.
    pub(super) async fn answer(
        &self,
        id: &Id,
        method: &str,
        rx: oneshot::Receiver<Reply>,
        delivery: Delivery,
        timeout: Duration,
    ) -> Result<Value, ExchangeError> {
        match tokio::time::timeout(timeout, rx).await {
            Err(_) => {
                self.forget(id);
                delivery.withdraw();
                Err(ExchangeError::NoAnswer)
            }
            Ok(Err(_)) => Err(ExchangeError::Closed(self.reason())),
            Ok(Ok(reply)) => reply_value(method, reply),
        }
    }
}

/// What an internal request's reply says.
fn reply_value(method: &str, reply: Reply) -> Result<Value, ExchangeError> {
    match reply {
        Reply::TooLarge { size, .. } => {
            Err(ExchangeError::Unusable(format!("the answer to {method} is too large ({size} bytes)")))
        }
        Reply::Unreadable(reason) => {
            Err(ExchangeError::Unusable(format!("the answer to {method} was not valid JSON: {reason}")))
        }
        Reply::Response(r) => r.outcome.map_err(ExchangeError::Editor),
        Reply::Result(raw) => Ok(raw.to_value()),
    }
}

/// Why a connection could not be opened, by kind: the link tells "nothing
/// is there" (an answer: no Editor) from "not allowed" (an answer too, with
/// its reason: a sandbox, a socket of another user) from "no answer".
#[derive(Debug)]
pub(super) enum DialError {
    /// Nothing listens there: refused, no such socket or pipe.
    NothingThere(std::io::Error),
    /// The system refused this process (permission): a sandboxed shell,
    /// a socket or pipe of another user.
    Denied(String),
    /// No answer to connect in time (a listener whose backlog is full).
    TimedOut(Duration),
    Other(std::io::Error),
}

impl DialError {
    fn of(e: std::io::Error) -> DialError {
        use std::io::ErrorKind;
        match e.kind() {
            ErrorKind::ConnectionRefused | ErrorKind::NotFound | ErrorKind::AddrNotAvailable => {
                DialError::NothingThere(e)
            }
            ErrorKind::PermissionDenied => DialError::Denied(e.to_string()),
            _ => DialError::Other(e),
        }
    }
}

impl std::fmt::Display for DialError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DialError::NothingThere(e) | DialError::Other(e) => write!(f, "{e}"),
            DialError::Denied(why) => write!(f, "not permitted: {why}"),
            DialError::TimedOut(after) => write!(f, "no answer to connect within {after:?}"),
        }
    }
}

/// Opens a connection to `endpoint`: TCP, a Unix domain socket (checked
/// again just before: never one that cannot be trusted), or a named pipe.
async fn dial(endpoint: &Endpoint, options: Options) -> Result<Connection, DialError> {
    match endpoint {
        Endpoint::Tcp(addr) => {
            tokio::net::TcpStream::connect(addr).await.map(|s| Connection::tcp(s, options)).map_err(DialError::of)
        }
        #[cfg(unix)]
        Endpoint::Unix(path) => {
            use editor_link::endpoint::Untrusted;
            match editor_link::endpoint::check_socket(path) {
                Ok(()) => {}
                Err(missing @ Untrusted::Missing { .. }) => {
                    return Err(DialError::NothingThere(std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        missing.to_string(),
                    )));
                }
                Err(why) => return Err(DialError::Denied(why.to_string())),
            }
            tokio::net::UnixStream::connect(path).await.map(|s| Connection::unix(s, options)).map_err(DialError::of)
        }
        #[cfg(windows)]
        Endpoint::Pipe(name) => {
            use tokio::net::windows::named_pipe::ClientOptions;
            /// All instances of the pipe are busy (uLoopMCP 3 waits with one
            /// at a time, a new one made after each connect).
            const ERROR_PIPE_BUSY: i32 = 231;
            loop {
                match ClientOptions::new().open(name) {
                    Ok(pipe) => {
                        // Only now can Windows say who serves it.
                        editor_link::endpoint::check_pipe(&pipe, name)
                            .map_err(|why| DialError::Denied(why.to_string()))?;
                        return Ok(Connection::pipe(pipe, options));
                    }
                    Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY) => {
                        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    }
                    Err(e) => return Err(DialError::of(e)),
                }
            }
        }
        #[allow(unreachable_patterns)]
        other => Err(DialError::Other(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            format!("{other}: not supported on this platform"),
        ))),
    }
}

/// A success response read in one pass, its result left as text in the
/// frame's buffer: `None` for anything else (errors, notifications,
/// requests, and the rare success [`Message::parse`] must read: a `null`
/// result or id, an id that is not a string or a 64-bit integer, a member
/// named twice), which then goes the general way.
fn success(body: &bytes::Bytes) -> Option<(Id, RawJson)> {
    use serde_json::value::RawValue;
    #[derive(serde::Deserialize)]
    struct Success<'a> {
        #[serde(borrow)]
        jsonrpc: Option<&'a RawValue>,
        #[serde(borrow)]
        id: Option<&'a RawValue>,
        #[serde(borrow)]
        result: Option<&'a RawValue>,
        #[serde(borrow)]
        error: Option<&'a RawValue>,
        #[serde(borrow)]
        method: Option<&'a RawValue>,
    }
    let message: Success<'_> = serde_json::from_slice(body).ok()?;
    if message.error.is_some() || message.method.is_some() || message.jsonrpc.is_some_and(|v| v.get() != "\"2.0\"") {
        return None;
    }
    let id = match serde_json::from_str::<Value>(message.id?.get()).ok()? {
        Value::String(s) => Id::String(s),
        Value::Number(n) if n.is_i64() || n.is_u64() => Id::Number((&n).into()),
        _ => return None,
    };
    Some((id, RawJson::within(body, message.result?)))
}

/// The id in the first bytes of a response, if it can be read there.
pub(super) fn id_in_head(head: &[u8]) -> Option<Id> {
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
        IdNumber::parse(&rest[..end]).map(Id::Number)
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
}
