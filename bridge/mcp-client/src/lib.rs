//! The project's one MCP client, used by the bridge's tests, the
//! conformance suite and the benchmarks: JSON-RPC lines to and from any MCP
//! stdio server, run as a child process ([`McpClient::spawn`]) or served in
//! the same process over in-memory streams ([`McpClient::over`]).
//!
//! It is raw on purpose (JSON lines, no SDK): tests and the suite judge the
//! exact lines a server writes, which an SDK would hide, and the benchmark
//! must not measure a client's machinery. Independent clients (rmcp's, the
//! npm and PyPI SDKs) are driven elsewhere, as clients we did not write.
//!
//! Output is read when asked, by the caller's task: nothing sits between
//! the server and the caller, and a line half read when a wait ends is kept
//! for the next read. Lines that are not JSON-RPC messages are kept
//! ([`McpClient::stray`]) or, with [`McpClient::strict`], an error at once.
//! Requests the server sends are answered "method not found": this client
//! offers nothing.

use std::{
    collections::VecDeque,
    io,
    pin::Pin,
    process::ExitStatus,
    sync::{Arc, Mutex},
    time::Duration,
};

use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader},
    process::{Child, Command},
    task::JoinHandle,
};

/// The MCP revision [`McpClient::initialize`] asks for.
pub const CLIENT_VERSION: &str = "2025-11-25";

/// How long [`McpClient::response`] waits for any one answer.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(20);

/// What went wrong, told apart: the server went away, broke the protocol,
/// or was slow; or the client could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot start the server: {0}")]
    Spawn(io::Error),
    #[error("the input to the server is already closed")]
    InputClosed,
    #[error("the server stopped reading stdin: {0}")]
    Write(io::Error),
    #[error("the server closed stdout (did it exit?)")]
    Closed,
    #[error("cannot read the server's stdout: {0}")]
    Read(io::Error),
    #[error("no answer to request {id} within {waited:?}")]
    NoAnswer { id: Value, waited: Duration },
    #[error("{missing} of {asked} requests unanswered after {waited:?}")]
    Unanswered { missing: usize, asked: usize, waited: Duration },
    #[error("an answer to an id that was not asked for (or twice): {0}")]
    Unexpected(Value),
    #[error("the server wrote a line on stdout that is not a JSON-RPC message: {0}")]
    Stray(String),
    #[error("{method} failed: {answer}")]
    Failed { method: String, answer: Value },
    /// A tool call answered with an error, or a result that says `isError`.
    #[error("tools/call {tool} failed: {answer}")]
    ToolFailed { tool: String, answer: Value },
    #[error("tools/list pages never end (100 pages)")]
    EndlessPages,
}

impl Error {
    /// The client's own trouble (it could not start or send), not the server's.
    pub fn is_client_side(&self) -> bool {
        matches!(self, Error::Spawn(_) | Error::InputClosed)
    }
}

/// Which way a line went, for [`McpClient::log_to`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    ToServer,
    FromServer,
}

/// What to do with a child's stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stderr {
    /// Not kept (the child's stderr is the null device).
    Discard,
    /// Its last `n` lines are kept, for [`McpClient::stderr_tail`].
    Tail(usize),
}

type Log = Arc<dyn Fn(Direction, &[u8]) + Send + Sync>;

/// The server being spoken to.
#[derive(Debug)]
enum Server {
    Process(Box<Child>),
    /// Served in this process; its task says how serving ended.
    Task(JoinHandle<Result<(), String>>),
    /// A served task that has ended, and how.
    Ended(Result<(), String>),
}

/// A client connected to one MCP server.
pub struct McpClient {
    server: Server,
    input: Option<Pin<Box<dyn AsyncWrite + Send>>>,
    output: BufReader<Pin<Box<dyn AsyncRead + Send>>>,
    /// The line being read, kept whole across waits that end first.
    line: Vec<u8>,
    output_closed: bool,
    strict: bool,
    stray: Vec<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    log: Option<Log>,
    next_id: i64,
    client_name: String,
    /// Notifications received while waiting for answers, in order.
    pub notifications: Vec<Value>,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient").field("server", &self.server).field("strict", &self.strict).finish_non_exhaustive()
    }
}

impl McpClient {
    /// Starts `command` (its program, arguments, environment and folder as
    /// the caller set them) with its stdin and stdout piped to the client;
    /// the child is killed when the client is dropped.
    pub fn spawn(mut command: Command, stderr: Stderr) -> Result<McpClient, Error> {
        command.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).kill_on_drop(true);
        command.stderr(match stderr {
            Stderr::Discard => std::process::Stdio::null(),
            Stderr::Tail(_) => std::process::Stdio::piped(),
        });
        let mut child = command.spawn().map_err(Error::Spawn)?;
        let input = child.stdin.take().ok_or_else(|| Error::Spawn(io::Error::other("the child has no stdin")))?;
        let output = child.stdout.take().ok_or_else(|| Error::Spawn(io::Error::other("the child has no stdout")))?;
        let mut client = McpClient::new(Server::Process(Box::new(child)), Box::pin(input), Box::pin(output));
        if let (Stderr::Tail(keep), Server::Process(child)) = (stderr, &mut client.server)
            && let Some(err) = child.stderr.take()
        {
            // Drained all along, or a chatty child would block on a full pipe.
            let tail = client.stderr.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(err).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let Ok(mut tail) = tail.lock() else { return };
                    if keep == 0 {
                        continue;
                    }
                    if tail.len() == keep {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            });
        }
        Ok(client)
    }

    /// A server served in this process: the client writes to `input` (the
    /// server's stdin) and reads `output` (its stdout). `serving`, when
    /// given, is the server's task, for [`McpClient::ended_within`].
    pub fn over(
        output: impl AsyncRead + Send + 'static,
        input: impl AsyncWrite + Send + 'static,
        serving: Option<JoinHandle<Result<(), String>>>,
    ) -> McpClient {
        let server = match serving {
            Some(task) => Server::Task(task),
            None => Server::Ended(Ok(())),
        };
        McpClient::new(server, Box::pin(input), Box::pin(output))
    }

    fn new(
        server: Server,
        input: Pin<Box<dyn AsyncWrite + Send>>,
        output: Pin<Box<dyn AsyncRead + Send>>,
    ) -> McpClient {
        McpClient {
            server,
            input: Some(input),
            output: BufReader::with_capacity(1 << 16, output),
            line: Vec::new(),
            output_closed: false,
            strict: false,
            stray: Vec::new(),
            stderr: Arc::default(),
            log: None,
            next_id: 1,
            client_name: "unity-mcp-client".into(),
            notifications: Vec::new(),
        }
    }

    /// A line on stdout that is not a JSON-RPC message is an error at once
    /// ([`Error::Stray`]), not kept for later.
    pub fn strict(mut self) -> McpClient {
        self.strict = true;
        self
    }

    /// Every line sent and read is shown to `log` too.
    pub fn log_to(mut self, log: impl Fn(Direction, &[u8]) + Send + Sync + 'static) -> McpClient {
        self.log = Some(Arc::new(log));
        self
    }

    /// The `clientInfo.name` that [`McpClient::initialize`] sends.
    pub fn named(mut self, name: &str) -> McpClient {
        self.client_name = name.to_owned();
        self
    }

    // ---- sending ----

    /// Writes one line (a newline is added).
    pub async fn send_line(&mut self, line: &str) -> Result<(), Error> {
        if let Some(log) = &self.log {
            log(Direction::ToServer, line.as_bytes());
        }
        let input = self.input.as_mut().ok_or(Error::InputClosed)?;
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        let written = async {
            input.write_all(&bytes).await?;
            input.flush().await
        };
        written.await.map_err(Error::Write)
    }

    pub async fn send(&mut self, message: &Value) -> Result<(), Error> {
        self.send_line(&message.to_string()).await
    }

    /// Sends a request with a fresh integer id; returns the id.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Error> {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await?;
        Ok(id)
    }

    pub async fn notify(&mut self, method: &str, params: Value) -> Result<(), Error> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params})).await
    }

    /// Closes the server's input (stdin EOF), as a client leaving does.
    pub fn close_input(&mut self) {
        if let Some(log) = &self.log {
            log(Direction::ToServer, b"(stdin closed)");
        }
        self.input = None;
    }

    // ---- reading ----

    /// The next line on stdout, without its newline, as bytes (`None`: not
    /// within `timeout`). What it says is not looked at: the benchmark
    /// reads answers of many megabytes this way without building them.
    pub async fn next_line(&mut self, timeout: Duration) -> Result<Option<&[u8]>, Error> {
        if self.line.last() == Some(&b'\n') {
            self.line.clear();
        }
        if self.output_closed {
            return Err(Error::Closed);
        }
        let read = match tokio::time::timeout(timeout, self.output.read_until(b'\n', &mut self.line)).await {
            Err(_) => return Ok(None),
            Ok(read) => read.map_err(Error::Read)?,
        };
        if read == 0 || self.line.last() != Some(&b'\n') {
            // EOF (a last line without a newline is still a line).
            self.output_closed = true;
            if self.line.is_empty() {
                return Err(Error::Closed);
            }
            self.line.push(b'\n');
        }
        let line = &self.line[..self.line.len() - 1];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(log) = &self.log {
            log(Direction::FromServer, line);
        }
        Ok(Some(line))
    }

    /// The next JSON-RPC message within `timeout`, or `None`. Stray lines
    /// are kept (or, strict, an error); requests from the server are
    /// answered "method not found".
    pub async fn next_message(&mut self, timeout: Duration) -> Result<Option<Value>, Error> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let Some(line) = self.next_line(left).await? else { return Ok(None) };
            let message = match serde_json::from_slice::<Value>(line) {
                Ok(value) if is_jsonrpc_message(&value) => value,
                _ => {
                    let line = String::from_utf8_lossy(line).into_owned();
                    if self.strict {
                        return Err(Error::Stray(line));
                    }
                    self.stray.push(line);
                    continue;
                }
            };
            if message.get("method").is_some() && message.get("id").is_some() {
                let id = message["id"].clone();
                self.send(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "not offered"}}))
                    .await?;
                continue;
            }
            return Ok(Some(message));
        }
    }

    /// The answer to `id` within [`ANSWER_TIMEOUT`] (notifications on the
    /// way are kept).
    pub async fn response(&mut self, id: &Value) -> Result<Value, Error> {
        self.response_within(id, ANSWER_TIMEOUT).await
    }

    pub async fn response_within(&mut self, id: &Value, timeout: Duration) -> Result<Value, Error> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next_message(left).await? {
                None => return Err(Error::NoAnswer { id: id.clone(), waited: timeout }),
                Some(message) if message.get("method").is_some() => self.notifications.push(message),
                Some(message) if message.get("id") == Some(id) => return Ok(message),
                Some(message) => return Err(Error::Unexpected(message)),
            }
        }
    }

    /// The answers to `ids`, in that order, whatever order they come in.
    pub async fn responses(&mut self, ids: &[Value]) -> Result<Vec<Value>, Error> {
        let mut answers: Vec<Option<Value>> = vec![None; ids.len()];
        let deadline = tokio::time::Instant::now() + ANSWER_TIMEOUT;
        while answers.iter().any(Option::is_none) {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let Some(message) = self.next_message(left).await? else {
                let missing = answers.iter().filter(|a| a.is_none()).count();
                return Err(Error::Unanswered { missing, asked: ids.len(), waited: ANSWER_TIMEOUT });
            };
            if message.get("method").is_some() {
                self.notifications.push(message);
                continue;
            }
            match ids.iter().position(|id| message.get("id") == Some(id)) {
                Some(n) if answers[n].is_none() => answers[n] = Some(message),
                _ => return Err(Error::Unexpected(message)),
            }
        }
        Ok(answers.into_iter().flatten().collect())
    }

    // ---- MCP ----

    /// Sends a request and returns its answer.
    pub async fn call_method(&mut self, method: &str, params: Value) -> Result<Value, Error> {
        let id = self.request(method, params).await?;
        self.response(&id).await
    }

    /// `initialize` asking for `version`, then `notifications/initialized`;
    /// the result.
    pub async fn initialize_with(&mut self, version: &str) -> Result<Value, Error> {
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": self.client_name, "version": env!("CARGO_PKG_VERSION")},
        });
        let mut answer = self.call_method("initialize", params).await?;
        if answer.get("result").is_none() {
            return Err(Error::Failed { method: "initialize".into(), answer });
        }
        self.notify("notifications/initialized", json!({})).await?;
        Ok(answer["result"].take())
    }

    /// [`McpClient::initialize_with`] the [`CLIENT_VERSION`].
    pub async fn initialize(&mut self) -> Result<Value, Error> {
        self.initialize_with(CLIENT_VERSION).await
    }

    /// `tools/call`; the whole answer.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, Error> {
        self.call_method("tools/call", json!({"name": tool, "arguments": arguments})).await
    }

    /// `tools/call` that must succeed (no error, no `isError`); its result.
    pub async fn call_ok(&mut self, tool: &str, arguments: Value) -> Result<Value, Error> {
        let mut answer = self.call(tool, arguments).await?;
        match answer.get_mut("result") {
            Some(result) if result["isError"] != json!(true) => Ok(result.take()),
            _ => Err(Error::ToolFailed { tool: tool.to_owned(), answer }),
        }
    }

    /// Every tool of `tools/list`, following `nextCursor`.
    pub async fn list_tools(&mut self) -> Result<Vec<Value>, Error> {
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..100 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let answer = self.call_method("tools/list", params).await?;
            let Some(page) = answer.get("result").and_then(|r| r["tools"].as_array()) else {
                return Err(Error::Failed { method: "tools/list".into(), answer });
            };
            tools.extend(page.iter().cloned());
            match answer["result"].get("nextCursor") {
                Some(next) if !next.is_null() => cursor = Some(next.clone()),
                _ => return Ok(tools),
            }
        }
        Err(Error::EndlessPages)
    }

    // ---- the server ----

    /// The child's process id; `None` served in memory, or once it exited.
    pub fn pid(&self) -> Option<u32> {
        match &self.server {
            Server::Process(child) => child.id(),
            _ => None,
        }
    }

    /// The child's exit status, if it exits within `timeout` (`None` in memory).
    pub async fn exits_within(&mut self, timeout: Duration) -> Option<ExitStatus> {
        match &mut self.server {
            Server::Process(child) => tokio::time::timeout(timeout, child.wait()).await.ok().and_then(Result::ok),
            _ => None,
        }
    }

    /// Whether the server stopped within `within` and how: cleanly (exit
    /// status 0, or its task returning `Ok`) or not. `None` while it runs.
    pub async fn ended_within(&mut self, within: Duration) -> Option<Result<(), String>> {
        match &mut self.server {
            Server::Process(child) => {
                let status = tokio::time::timeout(within, child.wait()).await.ok()?;
                Some(match status {
                    Ok(status) if status.success() => Ok(()),
                    Ok(status) => Err(status.to_string()),
                    Err(err) => Err(err.to_string()),
                })
            }
            Server::Task(task) => {
                let ended = tokio::time::timeout(within, task).await.ok()?;
                let ended = ended.unwrap_or_else(|e| Err(format!("the server's task failed: {e}")));
                self.server = Server::Ended(ended.clone());
                Some(ended)
            }
            Server::Ended(ended) => Some(ended.clone()),
        }
    }

    /// Ends the session as a client leaving does: closes stdin, waits up to
    /// `grace` for the server to stop (a child still running then is
    /// killed), and reads what stdout still carries. Stray lines are then
    /// all in [`McpClient::stray`].
    pub async fn finish(&mut self, grace: Duration) {
        self.close_input();
        if self.ended_within(grace).await.is_none()
            && let Server::Process(child) = &mut self.server
        {
            let _ = child.kill().await;
        }
        // The rest of stdout, to its end (a stopped server's comes at once).
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        while !self.output_closed {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next_message(left).await {
                Ok(Some(message)) if message.get("method").is_some() => self.notifications.push(message),
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
    }

    /// The lines on stdout so far that were not JSON-RPC messages.
    pub fn stray(&self) -> &[String] {
        &self.stray
    }

    /// The child's last stderr lines (with [`Stderr::Tail`]).
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr.lock().map(|t| t.iter().cloned().collect()).unwrap_or_default()
    }
}

/// Is this a JSON-RPC 2.0 message (request, notification or response)?
pub fn is_jsonrpc_message(value: &Value) -> bool {
    let Some(object) = value.as_object() else { return false };
    object.get("jsonrpc") == Some(&json!("2.0"))
        && (object.get("method").is_some_and(Value::is_string)
            || (object.contains_key("id") && (object.contains_key("result") ^ object.contains_key("error"))))
}
