//! The bridge under test: how to start it, and the session the cases drive
//! it with (the project's one MCP client, [`mcp_client`], whose errors are
//! findings here). The client is raw (JSON lines, no SDK): the `mcp` cases
//! judge the exact bytes on the bridge's stdout, which an SDK would hide.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
    process::ExitStatus,
    time::Duration,
};

use mcp_client::{CLIENT_VERSION, Direction, McpClient, Stderr};
use serde_json::{Value, json};
use tokio::process::Command;

use crate::{finding::Finding, wire_log::WireLog, workflow::Revision};

/// The `_meta` every MCP 2026-07-28 request of the suite carries.
pub fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "unity-conformance", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// How long the client waits for any one answer of the bridge.
pub const MCP_TIMEOUT: Duration = Duration::from_secs(20);

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

/// The bridge as a child process, driven over stdio by the project's one
/// MCP client, which keeps every line for the report; its errors become
/// findings (the bridge's doing: violations; the suite's: harness errors),
/// with the bridge's last stderr lines.
pub struct McpProcess {
    client: McpClient,
}

impl std::fmt::Debug for McpProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpProcess").field("pid", &self.client.pid()).finish_non_exhaustive()
    }
}

impl McpProcess {
    /// Starts the bridge for the Editor at `port` of `project`, with
    /// `token` in `UNITY_MCP_TOKEN` when given (else the bridge reads it
    /// from the project's discovery file, as for users).
    pub fn spawn(
        command: &BridgeCommand,
        project: Option<&Path>,
        port: u16,
        token: Option<String>,
        log: WireLog,
    ) -> Result<McpProcess, Finding> {
        McpProcess::spawn_with_env(command, project, port, token, log, &[])
    }

    /// The bridge started in `folder` (a project, or a folder that is not
    /// one), finding the Editor from there as it does for users: no port
    /// given; `args` after its command, `env` added.
    pub fn spawn_in(
        command: &BridgeCommand,
        folder: &Path,
        args: &[&str],
        env: &[(&str, &str)],
        log: WireLog,
    ) -> Result<McpProcess, Finding> {
        let mut command = command.clone();
        command.args.extend(args.iter().map(OsString::from));
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args).env("UNITY_MCP_BRIDGE_LOG", "info").current_dir(folder);
        for variable in ["UNITY_MCP_DEV", "UNITY_MCP_ENDPOINT", "UNITY_MCP_TOKEN", "UNITY_TCP_PORT"] {
            cmd.env_remove(variable);
        }
        cmd.envs(env.iter().copied());
        McpProcess::started(cmd, &command, log)
    }

    /// [`McpProcess::spawn`] with more environment variables.
    pub fn spawn_with_env(
        command: &BridgeCommand,
        project: Option<&Path>,
        port: u16,
        token: Option<String>,
        log: WireLog,
        env: &[(&str, &str)],
    ) -> Result<McpProcess, Finding> {
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args).env("UNITY_MCP_BRIDGE_LOG", "info");
        // What the user's environment may set that changes what the bridge offers.
        cmd.env_remove("UNITY_MCP_DEV").env_remove("UNITY_MCP_ENDPOINT").envs(env.iter().copied());
        match token {
            Some(token) => cmd.env("UNITY_MCP_TOKEN", token),
            None => cmd.env_remove("UNITY_MCP_TOKEN"),
        };
        match project {
            Some(project) => {
                cmd.current_dir(project).env_remove("UNITY_TCP_PORT");
            }
            None => {
                cmd.current_dir(std::env::temp_dir()).env("UNITY_TCP_PORT", port.to_string());
            }
        }
        McpProcess::started(cmd, command, log)
    }

    fn started(cmd: Command, command: &BridgeCommand, log: WireLog) -> Result<McpProcess, Finding> {
        let client = McpClient::spawn(cmd, Stderr::Tail(40))
            .map_err(|e| Finding::Harness(format!("cannot start the bridge ({command}): {e}")))?;
        log.push(&format!(
            "bridge started: {command} (pid {})",
            client.pid().map_or("?".to_owned(), |p| p.to_string())
        ));
        let client = client.named("unity-conformance").log_to(move |direction, line| {
            let arrow = match direction {
                Direction::ToServer => "mcp>",
                Direction::FromServer => "mcp<",
            };
            log.push(&format!("{arrow} {}", crate::wire_log::excerpt(line)));
        });
        Ok(McpProcess { client })
    }

    /// The client's error as a finding, with the bridge's last stderr lines.
    fn finding(&self, error: &mcp_client::Error) -> Finding {
        if error.is_client_side() {
            return Finding::Harness(error.to_string());
        }
        let text = match error {
            mcp_client::Error::ToolFailed { tool, answer } => format!("{tool} failed through the bridge: {answer}"),
            _ => error.to_string(),
        };
        Finding::Violation(format!("{text}{}", self.stderr_tail()))
    }

    /// Writes one line (a newline is added).
    /// The bridge's process id (while it runs).
    pub fn pid(&self) -> Option<u32> {
        self.client.pid()
    }

    pub async fn send_line(&mut self, line: &str) -> Result<(), Finding> {
        let sent = self.client.send_line(line).await;
        sent.map_err(|e| self.finding(&e))
    }

    pub async fn send(&mut self, message: &Value) -> Result<(), Finding> {
        self.send_line(&message.to_string()).await
    }

    /// Sends a request with a fresh integer id; returns the id.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Finding> {
        let sent = self.client.request(method, params).await;
        sent.map_err(|e| self.finding(&e))
    }

    pub async fn notify(&mut self, method: &str, params: Value) -> Result<(), Finding> {
        let sent = self.client.notify(method, params).await;
        sent.map_err(|e| self.finding(&e))
    }

    /// The next message within `timeout`, or `None`. Requests from the
    /// bridge are answered "method not found" (this client offers nothing).
    pub async fn next_message(&mut self, timeout: Duration) -> Result<Option<Value>, Finding> {
        let next = self.client.next_message(timeout).await;
        next.map_err(|e| self.finding(&e))
    }

    /// The answer to `id` (notifications on the way are kept).
    pub async fn response(&mut self, id: &Value) -> Result<Value, Finding> {
        self.response_within(id, MCP_TIMEOUT).await
    }

    pub async fn response_within(&mut self, id: &Value, timeout: Duration) -> Result<Value, Finding> {
        let answer = self.client.response_within(id, timeout).await;
        answer.map_err(|e| self.finding(&e))
    }

    /// The answers to `ids`, in that order, whatever order they come in.
    pub async fn responses(&mut self, ids: &[Value]) -> Result<Vec<Value>, Finding> {
        let answers = self.client.responses(ids).await;
        answers.map_err(|e| self.finding(&e))
    }

    /// Notifications received while waiting for answers, in order.
    pub fn notifications(&mut self) -> &mut Vec<Value> {
        &mut self.client.notifications
    }

    /// Sends a request and returns its answer.
    pub async fn call_method(&mut self, method: &str, params: Value) -> Result<Value, Finding> {
        let answer = self.client.call_method(method, params).await;
        answer.map_err(|e| self.finding(&e))
    }

    /// `initialize` with `version`, then `notifications/initialized`.
    pub async fn initialize_with(&mut self, version: &str) -> Result<Value, Finding> {
        let result = self.client.initialize_with(version).await;
        result.map_err(|e| self.finding(&e))
    }

    pub async fn initialize(&mut self) -> Result<Value, Finding> {
        self.initialize_with(CLIENT_VERSION).await
    }

    /// A request and its answer, as a client of `revision` sends it: in
    /// 2026-07-28 with [`stateless_meta`] in its params.
    pub async fn call_method_in(
        &mut self,
        revision: Revision,
        method: &str,
        mut params: Value,
    ) -> Result<Value, Finding> {
        if revision == Revision::Stateless {
            params["_meta"] = stateless_meta();
        }
        self.call_method(method, params).await
    }

    /// `tools/call`; the whole answer.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, Finding> {
        let answer = self.client.call(tool, arguments).await;
        answer.map_err(|e| self.finding(&e))
    }

    /// `tools/call` that must succeed; its result.
    pub async fn call_ok(&mut self, tool: &str, arguments: Value) -> Result<Value, Finding> {
        let result = self.client.call_ok(tool, arguments).await;
        result.map_err(|e| self.finding(&e))
    }

    /// Every tool of `tools/list`, following `nextCursor`.
    pub async fn list_tools(&mut self) -> Result<Vec<Value>, Finding> {
        let tools = self.client.list_tools().await;
        tools.map_err(|e| self.finding(&e))
    }

    /// Closes stdin (end of the session, as a client leaving does).
    pub fn close_stdin(&mut self) {
        self.client.close_input();
    }

    /// The exit status, if the bridge exits within `timeout`.
    pub async fn exits_within(&mut self, timeout: Duration) -> Option<ExitStatus> {
        self.client.exits_within(timeout).await
    }

    /// Checks what every session must hold (stdout carried only JSON-RPC
    /// messages) and stops the bridge.
    pub async fn finish(mut self) -> Result<(), Finding> {
        self.client.finish(Duration::from_secs(5)).await;
        self.stdout_clean()
    }

    /// A violation naming each stdout line that is not a JSON-RPC message.
    pub fn stdout_clean(&self) -> Result<(), Finding> {
        let stray = self.client.stray();
        if stray.is_empty() {
            return Ok(());
        }
        let shown: Vec<String> = stray.iter().take(3).map(|l| crate::wire_log::excerpt(l.as_bytes())).collect();
        Err(Finding::Violation(format!(
            "the bridge wrote {} line(s) on stdout that are not JSON-RPC messages (stdout is for MCP only): {}",
            stray.len(),
            shown.join(" | ")
        )))
    }

    /// The bridge's last stderr lines, for a failure's detail.
    pub fn stderr_tail(&self) -> String {
        let lines = self.client.stderr_tail();
        if lines.is_empty() {
            return String::new();
        }
        let tail = &lines[lines.len().saturating_sub(5)..];
        format!(
            "\n  bridge stderr (last lines):\n{}",
            tail.iter().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
        )
    }
}
