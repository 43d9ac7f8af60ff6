//! The clients a case talks to the Editor with, on whatever it listens on
//! (TCP, a Unix socket, a named pipe): [`EditorClient`], frames through the
//! editor-link [`Connection`], and [`RawClient`], bytes as they are; and what
//! a uLoopMCP 3 Editor lacks, so that a case asking for it says so rather
//! than sending it. A [`crate::target::Session`] hands them out.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use editor_link::{
    connection::{Connection, Options, Outgoing, Received, Receiver, Sender},
    dialect::{Dialect, ULOOP_3},
    endpoint::Endpoint,
    framing::{DEFAULT_RESPONSE_LIMIT, Framing, encode_frame},
    jsonrpc::{Id, TOKEN_MEMBER, ULOOP_MEMBER},
    methods,
};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::TcpStream,
};

use crate::{
    finding::{Finding, Unreachable},
    wire_log::{WireLog, excerpt},
};

/// How long a case waits for any one thing from the Editor.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// What a read produced.
#[derive(Debug)]
pub enum Read {
    Message(Value),
    /// A frame whose body is not JSON.
    NotJson(String),
    /// The Editor closed the connection (or reset it).
    Closed,
    /// Nothing within the timeout.
    Silence,
    /// The Editor's bytes do not follow the framing.
    BadFraming(String),
}

/// A client of the editor link for the cases: sends frames (or raw bytes)
/// through the editor-link [`Connection`], reads frames, logs both.
#[derive(Debug)]
pub struct EditorClient {
    pub framing: Framing,
    sender: Sender,
    receiver: Receiver,
    log: WireLog,
    next_id: u64,
    endpoint: Endpoint,
    /// Put into every request this client sends (extension `token`).
    token: Option<String>,
    /// `x-uloop.expectedProjectRoot` put into every request (uLoopMCP 3).
    identity: Option<String>,
    /// Tools the Editor lacks: a request for one is not sent.
    lacks: Lacks,
    /// The last bytes sent, where a request's method is looked for.
    sent_tail: Vec<u8>,
}

impl EditorClient {
    pub(crate) async fn connect(
        endpoint: Endpoint,
        framing: Framing,
        log: WireLog,
        lacks: Lacks,
    ) -> Result<EditorClient, Finding> {
        let options = Options::client(framing, DEFAULT_RESPONSE_LIMIT);
        let connecting = async {
            Ok::<_, std::io::Error>(match &endpoint {
                Endpoint::Tcp(addr) => Connection::tcp(TcpStream::connect(addr).await?, options),
                #[cfg(unix)]
                Endpoint::Unix(path) => Connection::unix(connect_unix(path).await?, options),
                #[cfg(windows)]
                Endpoint::Pipe(name) => {
                    Connection::pipe(tokio::net::windows::named_pipe::ClientOptions::new().open(name)?, options)
                }
                #[allow(unreachable_patterns)]
                other => return Err(std::io::Error::other(format!("{other}: not on this platform"))),
            })
        };
        let connection = tokio::time::timeout(READ_TIMEOUT, connecting)
            .await
            .map_err(|_| {
                Finding::Unreachable(Unreachable::timed_out(format!(
                    "timed out after {READ_TIMEOUT:?} connecting to {endpoint}"
                )))
            })?
            .map_err(|e| {
                Finding::Unreachable(Unreachable::connecting(format_args!("cannot connect to {endpoint}"), &e))
            })?;
        log.push(&format!("connect {endpoint} ({framing} framing)"));
        let Connection { sender, receiver, .. } = connection;
        Ok(EditorClient {
            framing,
            sender,
            receiver,
            log,
            next_id: 1,
            endpoint,
            token: None,
            identity: None,
            lacks,
            sent_tail: Vec::new(),
        })
    }

    pub(crate) fn with_token(mut self, token: Option<String>) -> Self {
        self.token = token;
        self
    }

    pub(crate) fn with_identity(mut self, identity: Option<String>) -> Self {
        self.identity = identity;
        self
    }

    /// The token this client sends, if any.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// `body` as this client sends a request: a JSON object with a `method`
    /// gets the token (and, to uLoopMCP 3, `x-uloop` with the project's
    /// root, as its CLI sends) as its first members, unless it has them,
    /// every other byte unchanged (ids and numbers keep their exact text).
    /// Anything else is returned as it is: a batch, a body that is not
    /// JSON, a notification-less fragment.
    pub fn signed(&self, body: &[u8]) -> Vec<u8> {
        let Ok(Value::Object(request)) = serde_json::from_slice::<Value>(body) else { return body.to_vec() };
        if !request.contains_key("method") {
            return body.to_vec();
        }
        let mut members = Vec::new();
        if let Some(token) = self.token.as_ref().filter(|_| !request.contains_key(TOKEN_MEMBER)) {
            members.push(format!("{}:{}", json!(TOKEN_MEMBER), json!(token)));
        }
        if let Some(root) = self.identity.as_ref().filter(|_| !request.contains_key(ULOOP_MEMBER)) {
            members.push(format!("{}:{}", json!(ULOOP_MEMBER), json!({"expectedProjectRoot": root})));
        }
        let Some(open) = body.iter().position(|b| *b == b'{').filter(|_| !members.is_empty()) else {
            return body.to_vec();
        };
        let member = format!("{},", members.join(","));
        let empty = body[open + 1..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'}');
        let member = if empty { member.trim_end_matches(',').to_owned() } else { member };
        [&body[..=open], member.as_bytes(), &body[open + 1..]].concat()
    }

    /// The same connection as bytes, for checks of the exact bytes sent.
    pub fn into_raw(self) -> RawClient {
        let (read, buffered) = self.receiver.into_inner();
        RawClient {
            read,
            sender: self.sender,
            buffered: buffered.to_vec(),
            log: self.log,
            token: self.token,
            lacks: self.lacks,
            sent_tail: self.sent_tail,
        }
    }

    /// The Editor's TCP port this client is connected to; not applicable
    /// for an Editor on a Unix socket or pipe (uLoopMCP 3).
    pub fn peer_port(&self) -> Result<u16, Finding> {
        match &self.endpoint {
            Endpoint::Tcp(addr) => Ok(addr.port()),
            other => Err(no_tcp_port(other)),
        }
    }

    /// Where the Editor this client is connected to listens.
    pub fn peer_endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Sends bytes exactly as given (unless they call a tool the Editor
    /// lacks: [`Lacks`]).
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), Finding> {
        self.lacks.check(&mut self.sent_tail, bytes)?;
        self.log.push(&format!("> {}", redacted(excerpt(bytes), self.token.as_deref())));
        sent(&self.sender, Outgoing::raw(Bytes::copy_from_slice(bytes))).await
    }

    /// Sends one frame holding `body` (with the token, when it is a
    /// request: [`EditorClient::signed`]), in this client's framing.
    pub async fn send_body(&mut self, body: &[u8]) -> Result<(), Finding> {
        let body = self.signed(body);
        let mut buf = BytesMut::new();
        encode_frame(self.framing, &body, &mut buf).map_err(|e| Finding::Harness(e.to_string()))?;
        self.send_raw(&buf).await
    }

    pub async fn send_json(&mut self, value: &Value) -> Result<(), Finding> {
        self.send_body(value.to_string().as_bytes()).await
    }

    /// Sends a request with a fresh id (`c-N`); returns the id.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Finding> {
        let id = json!(format!("c-{}", self.next_id));
        self.next_id += 1;
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await?;
        Ok(id)
    }

    /// The next frame, whatever it holds.
    pub async fn receive(&mut self, timeout: Duration) -> Read {
        let received = match tokio::time::timeout(timeout, self.receiver.recv()).await {
            Err(_) => return Read::Silence,
            Ok(received) => received,
        };
        let read = match received {
            Received::Body(body) => {
                self.log.push(&format!("< {}", excerpt(&body)));
                match serde_json::from_slice(&body) {
                    Ok(value) => Read::Message(value),
                    Err(e) => Read::NotJson(format!("{e}: {}", excerpt(&body))),
                }
            }
            Received::TooLarge { size, .. } => Read::BadFraming(format!("a frame of {size} bytes")),
            Received::Closed | Received::Lost(_) => Read::Closed,
            Received::Broken(e) => Read::BadFraming(e.to_string()),
        };
        if matches!(read, Read::Closed) {
            self.log.push("< (closed)");
        }
        read
    }

    /// The next frame's body as it came (for checks of exact bytes).
    pub async fn body(&mut self) -> Result<Vec<u8>, Finding> {
        match tokio::time::timeout(READ_TIMEOUT, self.receiver.recv()).await {
            Err(_) => Err(Finding::Violation(format!("no answer within {READ_TIMEOUT:?}"))),
            Ok(Received::Body(body)) => {
                self.log.push(&format!("< {}", excerpt(&body)));
                Ok(body.to_vec())
            }
            Ok(Received::TooLarge { size, .. }) => {
                Err(Finding::Violation(format!("the Editor sent a frame of {size} bytes")))
            }
            Ok(Received::Broken(e)) => Err(Finding::Violation(format!("bad framing: {e}"))),
            Ok(Received::Closed | Received::Lost(_)) => {
                Err(Finding::Violation("the Editor closed the connection".into()))
            }
        }
    }

    /// The next message; anything else is a violation.
    pub async fn message(&mut self) -> Result<Value, Finding> {
        match self.receive(READ_TIMEOUT).await {
            Read::Message(m) => Ok(m),
            Read::NotJson(e) => Err(Finding::Violation(format!("the Editor sent a body that is not JSON: {e}"))),
            Read::Closed => Err(Finding::Violation("the Editor closed the connection".into())),
            Read::Silence => Err(Finding::Violation(format!("no answer within {READ_TIMEOUT:?}"))),
            Read::BadFraming(e) => {
                Err(Finding::Violation(format!("the Editor's reply is not in {} framing: {e}", self.framing)))
            }
        }
    }

    /// Reads until the response whose id equals `id` (notifications skipped).
    pub async fn response(&mut self, id: &Value) -> Result<Value, Finding> {
        loop {
            let message = self.message().await?;
            if message.get("id") == Some(id) && (message.get("result").is_some() || message.get("error").is_some()) {
                return Ok(message);
            }
            if message.get("method").is_none() {
                return Err(Finding::Violation(format!("expected the answer to id {id}, got {message}")));
            }
        }
    }

    /// Calls a tool and returns the whole response.
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value, Finding> {
        let id = self.request(method, params).await?;
        self.response(&id).await
    }

    /// Calls a tool that must succeed; returns its result.
    pub async fn result(&mut self, method: &str, params: Value) -> Result<Value, Finding> {
        let response = self.call(method, params).await?;
        match response.get("result") {
            Some(result) => Ok(result.clone()),
            None => Err(Finding::Violation(format!("{method} failed: {response}"))),
        }
    }

    /// The harmless request this Editor answers ([`Probe`]).
    pub fn probe(&self) -> Probe {
        Probe::of(self.lacks)
    }

    /// Sends the probe carrying `message` and checks its answer; returns it.
    pub async fn probe_with(&mut self, message: &str) -> Result<Value, Finding> {
        let probe = self.probe();
        let response = self.call(probe.method(), json!({"Message": message})).await?;
        probe.check(&response, message)?;
        Ok(response)
    }

    /// True when the Editor closes the connection within `timeout` (messages
    /// before the close are skipped).
    pub async fn closes_within(&mut self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.receive(left).await {
                Read::Closed => return true,
                Read::Silence => return false,
                _ => {}
            }
        }
    }
}

/// The harmless request a case about the wire (framing, ids, tokens,
/// concurrency) sends, of the Editor's own catalogue: `ping`, which echoes
/// its `Message`, where the Editor has it; `get-version`, which every
/// catalogue has and which ignores its params, where it has not (uLoopMCP 3,
/// whose CLI uses it as its own readiness probe: `docs/uloop-3-wire.md` §9).
/// The request carries its message either way, so a frame's bytes are the
/// same size and shape; only an echo can be checked against `ping`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    Ping,
    GetVersion,
}

impl Probe {
    /// The probe an Editor lacking `lacks` answers.
    pub fn of(lacks: Lacks) -> Probe {
        if lacks.0.contains(&methods::PING) { Probe::GetVersion } else { Probe::Ping }
    }

    pub fn method(self) -> &'static str {
        match self {
            Probe::Ping => methods::PING,
            Probe::GetVersion => methods::GET_VERSION,
        }
    }

    /// A request with `id` carrying `message`.
    pub fn request(self, id: impl Into<Value>, message: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id.into(), "method": self.method(), "params": {"Message": message}})
    }

    /// That request's body.
    pub fn body(self, id: impl Into<Value>, message: &str) -> Vec<u8> {
        self.request(id, message).to_string().into_bytes()
    }

    /// Whether `response` answers this probe carrying `message`: `ping`'s
    /// echo names it intact; `get-version`'s result names a Unity version.
    pub fn check(self, response: &Value, message: &str) -> Result<(), Finding> {
        let result = &response["result"];
        let answered = match self {
            Probe::Ping => result["Message"] == format!("Unity MCP Bridge received: {message}").as_str(),
            Probe::GetVersion => result["UnityVersion"].is_string(),
        };
        if answered {
            Ok(())
        } else {
            Err(Finding::Violation(format!("{} carrying {message:?} was answered {response}", self.method())))
        }
    }
}

/// The tools an Editor does not have, for which a case is not applicable.
///
/// The core cases call `ping` (it echoes its `Message`) and a few call
/// `debug-sleep`, the internal tools every uLoopMCP 2.x Editor has.
/// uLoopMCP 3 (v3-beta c50f54c) has neither (`docs/uloop-3-wire.md` §10),
/// nor the package's `unity-search`, `get-provider-details`,
/// `get-menu-items`, `execute-menu-item` (§7): a request for one is not
/// sent, and the case, wherever it calls it (a helper, a raw frame written
/// a byte at a time), is not applicable, saying which tool is missing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lacks(&'static [&'static str]);

/// What uLoopMCP 3 lacks of the tools the cases call.
pub const ULOOP3_LACKS: &[&str] = &[
    methods::PING,
    methods::SET_CLIENT_NAME,
    "debug-sleep",
    "focus-window",
    "unity-search",
    "get-provider-details",
    "get-menu-items",
    "execute-menu-item",
];

impl Lacks {
    /// What an Editor of `dialect` lacks of the tools the cases call.
    pub fn of(dialect: &Dialect) -> Lacks {
        if *dialect == ULOOP_3 { Lacks(ULOOP3_LACKS) } else { Lacks::default() }
    }

    /// Not applicable when `bytes`, after what was sent before (`tail`),
    /// complete a request for a tool the Editor lacks.
    fn check(self, tail: &mut Vec<u8>, bytes: &[u8]) -> Result<(), Finding> {
        if self.0.is_empty() {
            return Ok(());
        }
        tail.extend_from_slice(bytes);
        let text = String::from_utf8_lossy(tail).replace([' ', '\t', '\r', '\n'], "");
        let missing = self.0.iter().find(|tool| text.contains(&format!("\"method\":\"{tool}\"")));
        if let Some(tool) = missing {
            return Err(Finding::NotApplicable(format!(
                "not applicable: this case calls {tool}, which uLoopMCP 3 does not have (v3-beta c50f54c: docs/uloop-3-wire.md §7, §10)"
            )));
        }
        let keep = tail.len().saturating_sub(256);
        tail.drain(..keep);
        Ok(())
    }
}

/// Why a case about a TCP port does not apply to an Editor at `endpoint`.
pub fn no_tcp_port(endpoint: &Endpoint) -> Finding {
    Finding::NotApplicable(format!(
        "not applicable: this case checks the Editor's TCP port, and it has none: it listens on {endpoint} (uLoopMCP 3)"
    ))
}

/// A byte stream to an Editor, over whatever it listens on.
pub trait ByteStream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> ByteStream for T {}

/// How long a connect to a Unix socket whose listen backlog is full is
/// tried again: the kernel answers it at once (EAGAIN: "try again"), where
/// a TCP client's kernel would send its SYN again after a second. An Editor
/// that accepts slowly for a moment is not refused; one that stopped
/// accepting still is.
#[cfg(unix)]
const BACKLOG_PATIENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// Connects to the Unix socket at `path`, trying again while its backlog
/// is full, for up to [`BACKLOG_PATIENCE`].
#[cfg(unix)]
async fn connect_unix(path: &std::path::Path) -> std::io::Result<tokio::net::UnixStream> {
    let until = std::time::Instant::now() + BACKLOG_PATIENCE;
    loop {
        match tokio::net::UnixStream::connect(path).await {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && std::time::Instant::now() < until => {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            done => return done,
        }
    }
}

/// A connection as bytes, for the cases that write below the frames.
pub type Stream = Box<dyn ByteStream>;

/// Connects to `endpoint` as bytes.
pub async fn connect_stream(endpoint: &Endpoint) -> std::io::Result<Stream> {
    match endpoint {
        Endpoint::Tcp(addr) => Ok(Box::new(TcpStream::connect(addr).await?)),
        #[cfg(unix)]
        Endpoint::Unix(path) => Ok(Box::new(connect_unix(path).await?)),
        #[cfg(windows)]
        Endpoint::Pipe(name) => Ok(Box::new(tokio::net::windows::named_pipe::ClientOptions::new().open(name)?)),
        #[allow(unreachable_patterns)]
        other => Err(std::io::Error::other(format!("{other}: not on this platform"))),
    }
}

/// Sends `out` and waits until it is written: a violation when the Editor
/// stopped reading or closed the connection first.
async fn sent(sender: &Sender, out: Outgoing) -> Result<(), Finding> {
    let delivery = sender.send(out);
    let written = async {
        while !delivery.reached() || sender.queued_bytes() > 0 {
            if sender.is_closed() {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        true
    };
    match tokio::time::timeout(READ_TIMEOUT, written).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(Finding::Violation("the Editor stopped reading (the connection is closed)".into())),
        Err(_) => Err(Finding::Violation(format!("the Editor stopped reading: nothing written for {READ_TIMEOUT:?}"))),
    }
}

/// `shown` without the token: a credential is never in a report.
fn redacted(shown: String, token: Option<&str>) -> String {
    match token {
        Some(token) => shown.replace(token, "${TOKEN}"),
        None => shown,
    }
}

/// The id as the JSON-RPC types of the bridge library see it.
pub fn id_of(value: &Value) -> Option<Id> {
    Id::from_value(value).ok().flatten()
}

/// A connection read as bytes, not frames.
pub struct RawClient {
    read: std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>,
    sender: Sender,
    buffered: Vec<u8>,
    log: WireLog,
    /// Left out of the log.
    token: Option<String>,
    lacks: Lacks,
    sent_tail: Vec<u8>,
}

impl std::fmt::Debug for RawClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawClient").field("buffered", &self.buffered.len()).finish_non_exhaustive()
    }
}

impl RawClient {
    pub async fn send(&mut self, bytes: &[u8]) -> Result<(), Finding> {
        self.lacks.check(&mut self.sent_tail, bytes)?;
        self.log.push(&format!("> {}", redacted(excerpt(bytes), self.token.as_deref())));
        sent(&self.sender, Outgoing::raw(Bytes::copy_from_slice(bytes))).await
    }

    /// Everything that arrives until the Editor has been quiet for `quiet`
    /// (waiting up to [`READ_TIMEOUT`] for the first byte).
    pub async fn read_until_quiet(&mut self, quiet: Duration) -> Result<Vec<u8>, Finding> {
        use tokio::io::AsyncReadExt;
        let mut out = std::mem::take(&mut self.buffered);
        let mut chunk = [0u8; 8192];
        let mut wait = if out.is_empty() { READ_TIMEOUT } else { quiet };
        while out.len() < 1 << 20 {
            match tokio::time::timeout(wait, self.read.read(&mut chunk)).await {
                Ok(Ok(0)) | Err(_) => break,
                Ok(Ok(n)) => out.extend_from_slice(&chunk[..n]),
                Ok(Err(e)) => return Err(Finding::Violation(format!("reading: {e}"))),
            }
            wait = quiet;
        }
        self.log.push(&format!("< {}", excerpt(&out)));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_for_a_tool_the_editor_lacks_is_not_sent_however_it_is_cut() {
        let lacks = Lacks(ULOOP3_LACKS);
        let frame = br#"Content-Length: 52\r\n\r\n{"jsonrpc":"2.0","id":1,"method": "ping","params":{}}"#;
        let mut tail = Vec::new();
        let refused = frame.chunks(3).map(|chunk| lacks.check(&mut tail, chunk)).find(Result::is_err);
        let Some(Err(Finding::NotApplicable(why))) = refused else { panic!("{refused:?}") };
        assert!(why.contains("calls ping, which uLoopMCP 3 does not have"), "{why}");
        let mut tail = Vec::new();
        let version = br#"{"jsonrpc":"2.0","id":1,"method":"get-version","params":{}}"#;
        assert!(lacks.check(&mut tail, version).is_ok());
        assert!(Lacks::default().check(&mut Vec::new(), frame).is_ok(), "other Editors lack nothing");
    }
}
