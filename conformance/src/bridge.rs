//! The bridge under test: how to start it, and a raw MCP stdio client that
//! speaks to it line by line and keeps every line for the report.
//!
//! The client is deliberately minimal (JSON lines, no SDK): the `mcp` cases
//! judge the exact bytes on the bridge's stdout, and an SDK would hide them.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
    process::{ExitStatus, Stdio},
    sync::{Arc, Mutex},
    time::Duration,
};

use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    process::{Child, ChildStdin, Command},
    sync::mpsc,
};

use crate::{case::Finding, target::WireLog};

/// How long the client waits for any one answer of the bridge.
pub const MCP_TIMEOUT: Duration = Duration::from_secs(20);

/// The protocol version the client asks for.
pub const CLIENT_VERSION: &str = "2025-11-25";

/// How to start the bridge under test. It is started in the Unity project's
/// folder (so it finds the Editor the way it does for users) or, when the
/// project is not known, with `UNITY_TCP_PORT` set to the Editor's port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BridgeCommand {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

impl BridgeCommand {
    /// The bridge embedded in the `unity-conformance` binary at `program`
    /// (its hidden `bridge` subcommand runs `unity-mcp-bridge`'s own
    /// command line), optionally with a deliberate defect.
    pub fn embedded(program: impl Into<PathBuf>, defect: Option<crate::bridge_defect::BridgeDefect>) -> BridgeCommand {
        let mut args = vec![OsString::from("bridge")];
        if let Some(defect) = defect {
            args.push("--defect".into());
            args.push(defect.to_string().into());
        }
        args.push("--".into());
        BridgeCommand { program: program.into(), args }
    }

    /// A command line given by the user (`--bridge "PATH ARGS…"`), split on
    /// whitespace.
    pub fn parse(line: &str) -> Result<BridgeCommand, String> {
        let mut words = line.split_whitespace();
        let program = words.next().ok_or("the bridge command is empty")?;
        Ok(BridgeCommand { program: program.into(), args: words.map(OsString::from).collect() })
    }
}

impl std::fmt::Display for BridgeCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.program.display())?;
        for arg in &self.args {
            write!(f, " {}", arg.to_string_lossy())?;
        }
        Ok(())
    }
}

/// What the bridge wrote on stdout that is not one JSON-RPC message per
/// line, and its stderr's last lines.
#[derive(Debug, Default)]
struct Captured {
    stray: Vec<String>,
    stderr: Vec<String>,
}

/// The bridge as a child process, driven over stdio.
pub struct McpProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: mpsc::UnboundedReceiver<Value>,
    captured: Arc<Mutex<Captured>>,
    log: WireLog,
    next_id: i64,
    /// Notifications received so far (in order), while waiting for answers.
    pub notifications: Vec<Value>,
}

impl std::fmt::Debug for McpProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpProcess").field("pid", &self.child.id()).finish_non_exhaustive()
    }
}

/// Is this a JSON-RPC 2.0 message (request, notification or response)?
fn is_jsonrpc_message(value: &Value) -> bool {
    let Some(object) = value.as_object() else { return false };
    object.get("jsonrpc") == Some(&json!("2.0"))
        && (object.get("method").is_some_and(Value::is_string)
            || (object.contains_key("id") && (object.contains_key("result") ^ object.contains_key("error"))))
}

impl McpProcess {
    /// Starts the bridge for the Editor at `port` of `project`.
    pub fn spawn(
        command: &BridgeCommand,
        project: Option<&Path>,
        port: u16,
        log: WireLog,
    ) -> Result<McpProcess, Finding> {
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("UNITY_MCP_BRIDGE_LOG", "info,rmcp=error")
            .kill_on_drop(true);
        match project {
            Some(project) => {
                cmd.current_dir(project).env_remove("UNITY_TCP_PORT");
            }
            None => {
                cmd.current_dir(std::env::temp_dir()).env("UNITY_TCP_PORT", port.to_string());
            }
        }
        let mut child =
            cmd.spawn().map_err(|e| Finding::Harness(format!("cannot start the bridge ({command}): {e}")))?;
        log.push(format!("bridge started: {command}"));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or_else(|| Finding::Harness("the bridge has no stdout".into()))?;
        let stderr = child.stderr.take().ok_or_else(|| Finding::Harness("the bridge has no stderr".into()))?;
        let captured = Arc::new(Mutex::new(Captured::default()));
        let (tx, messages) = mpsc::unbounded_channel();
        let (out_log, out_captured) = (log.clone(), captured.clone());
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                out_log.push(format!("mcp< {}", crate::target::excerpt(line.as_bytes())));
                match serde_json::from_str::<Value>(&line) {
                    Ok(value) if is_jsonrpc_message(&value) => {
                        let _ = tx.send(value);
                    }
                    _ => {
                        if let Ok(mut t) = out_captured.lock() {
                            t.stray.push(line);
                        }
                    }
                }
            }
        });
        let err_captured = captured.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(mut t) = err_captured.lock() {
                    if t.stderr.len() == 40 {
                        t.stderr.remove(0);
                    }
                    t.stderr.push(line);
                }
            }
        });
        Ok(McpProcess { child, stdin, messages, captured, log, next_id: 1, notifications: Vec::new() })
    }

    /// Writes one line (a newline is added).
    pub async fn send_line(&mut self, line: &str) -> Result<(), Finding> {
        self.log.push(format!("mcp> {}", crate::target::excerpt(line.as_bytes())));
        let stdin = self.stdin.as_mut().ok_or_else(|| Finding::Harness("stdin is already closed".into()))?;
        let written = async {
            stdin.write_all(line.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await
        };
        written
            .await
            .map_err(|e| Finding::Violation(format!("the bridge stopped reading stdin: {e}{}", self.stderr_tail())))
    }

    pub async fn send(&mut self, message: &Value) -> Result<(), Finding> {
        self.send_line(&message.to_string()).await
    }

    /// Sends a request with a fresh integer id; returns the id.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Finding> {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await?;
        Ok(id)
    }

    pub async fn notify(&mut self, method: &str, params: Value) -> Result<(), Finding> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params})).await
    }

    /// The next message within `timeout`, or `None`. Requests from the
    /// bridge are answered "method not found" (this client offers nothing).
    pub async fn next_message(&mut self, timeout: Duration) -> Result<Option<Value>, Finding> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let message = match tokio::time::timeout(left, self.messages.recv()).await {
                Err(_) => return Ok(None),
                Ok(None) => {
                    return Err(Finding::Violation(format!(
                        "the bridge closed its stdout (exited?){}",
                        self.stderr_tail()
                    )));
                }
                Ok(Some(message)) => message,
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

    /// The answer to `id` (notifications on the way are kept).
    pub async fn response(&mut self, id: &Value) -> Result<Value, Finding> {
        self.response_within(id, MCP_TIMEOUT).await
    }

    pub async fn response_within(&mut self, id: &Value, timeout: Duration) -> Result<Value, Finding> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next_message(left).await? {
                None => {
                    return Err(Finding::Violation(format!(
                        "no answer to request {id} within {timeout:?}{}",
                        self.stderr_tail()
                    )));
                }
                Some(message) if message.get("method").is_some() => self.notifications.push(message),
                Some(message) if message.get("id") == Some(id) => return Ok(message),
                Some(message) => {
                    return Err(Finding::Violation(format!(
                        "an answer to an id that was not asked for (or twice): {message}"
                    )));
                }
            }
        }
    }

    /// The answers to `ids`, in that order, whatever order they come in.
    pub async fn responses(&mut self, ids: &[Value]) -> Result<Vec<Value>, Finding> {
        let mut answers: Vec<Option<Value>> = vec![None; ids.len()];
        let deadline = tokio::time::Instant::now() + MCP_TIMEOUT;
        while answers.iter().any(Option::is_none) {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let Some(message) = self.next_message(left).await? else {
                let missing = answers.iter().filter(|a| a.is_none()).count();
                return Err(Finding::Violation(format!(
                    "{missing} of {} requests unanswered after {MCP_TIMEOUT:?}{}",
                    ids.len(),
                    self.stderr_tail()
                )));
            };
            if message.get("method").is_some() {
                self.notifications.push(message);
                continue;
            }
            match ids.iter().position(|id| message.get("id") == Some(id)) {
                Some(n) if answers[n].is_none() => answers[n] = Some(message),
                _ => {
                    return Err(Finding::Violation(format!(
                        "an answer to an id that was not asked for (or twice): {message}"
                    )));
                }
            }
        }
        Ok(answers.into_iter().flatten().collect())
    }

    /// Sends a request and returns its answer.
    pub async fn call_method(&mut self, method: &str, params: Value) -> Result<Value, Finding> {
        let id = self.request(method, params).await?;
        self.response(&id).await
    }

    /// `initialize` with `version`, then `notifications/initialized`.
    pub async fn initialize_with(&mut self, version: &str) -> Result<Value, Finding> {
        let answer = self
            .call_method(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "unity-conformance", "version": env!("CARGO_PKG_VERSION")},
                }),
            )
            .await?;
        if answer.get("result").is_none() {
            return Err(Finding::Violation(format!("initialize failed: {answer}")));
        }
        self.notify("notifications/initialized", json!({})).await?;
        Ok(answer["result"].clone())
    }

    pub async fn initialize(&mut self) -> Result<Value, Finding> {
        self.initialize_with(CLIENT_VERSION).await
    }

    /// `tools/call`; the whole answer.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, Finding> {
        self.call_method("tools/call", json!({"name": tool, "arguments": arguments})).await
    }

    /// `tools/call` that must succeed; its result.
    pub async fn call_ok(&mut self, tool: &str, arguments: Value) -> Result<Value, Finding> {
        let answer = self.call(tool, arguments).await?;
        match answer.get("result") {
            Some(result) if result["isError"] != json!(true) => Ok(result.clone()),
            _ => Err(Finding::Violation(format!("{tool} failed through the bridge: {answer}"))),
        }
    }

    /// Every tool of `tools/list`, following `nextCursor`.
    pub async fn list_tools(&mut self) -> Result<Vec<Value>, Finding> {
        let mut tools = Vec::new();
        let mut cursor: Option<Value> = None;
        for _ in 0..100 {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let answer = self.call_method("tools/list", params).await?;
            let result =
                answer.get("result").ok_or_else(|| Finding::Violation(format!("tools/list failed: {answer}")))?;
            let page = result["tools"]
                .as_array()
                .ok_or_else(|| Finding::Violation(format!("tools/list has no tools array: {result}")))?;
            tools.extend(page.iter().cloned());
            match result.get("nextCursor") {
                Some(next) if !next.is_null() => cursor = Some(next.clone()),
                _ => return Ok(tools),
            }
        }
        Err(Finding::Violation("tools/list pages never end (100 pages)".into()))
    }

    /// Closes stdin (end of the session, as a client leaving does).
    pub fn close_stdin(&mut self) {
        self.log.push("mcp> (stdin closed)".into());
        self.stdin = None;
    }

    /// The exit status, if the bridge exits within `timeout`.
    pub async fn exits_within(&mut self, timeout: Duration) -> Option<ExitStatus> {
        tokio::time::timeout(timeout, self.child.wait()).await.ok().and_then(Result::ok)
    }

    /// Checks what every session must hold (stdout carried only JSON-RPC
    /// messages) and stops the bridge.
    pub async fn finish(mut self) -> Result<(), Finding> {
        self.close_stdin();
        if self.exits_within(Duration::from_secs(5)).await.is_none() {
            let _ = self.child.kill().await;
        }
        // Let the stdout reader take the last lines.
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.stdout_clean()
    }

    /// A violation naming each stdout line that is not a JSON-RPC message.
    pub fn stdout_clean(&self) -> Result<(), Finding> {
        let stray = self.captured.lock().map(|t| t.stray.clone()).unwrap_or_default();
        if stray.is_empty() {
            return Ok(());
        }
        let shown: Vec<String> = stray.iter().take(3).map(|l| crate::target::excerpt(l.as_bytes())).collect();
        Err(Finding::Violation(format!(
            "the bridge wrote {} line(s) on stdout that are not JSON-RPC messages (stdout is for MCP only): {}",
            stray.len(),
            shown.join(" | ")
        )))
    }

    /// The bridge's last stderr lines, for a failure's detail.
    pub fn stderr_tail(&self) -> String {
        let lines = self.captured.lock().map(|t| t.stderr.clone()).unwrap_or_default();
        if lines.is_empty() {
            return String::new();
        }
        let tail: Vec<&String> = lines.iter().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
        format!(
            "\n  bridge stderr (last lines):\n{}",
            tail.iter().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
        )
    }
}
