//! The bridge under the project's one MCP client ([`mcp_client::McpClient`]),
//! strict (every line the bridge writes must be a JSON-RPC message): served
//! in this process over in-memory pipes ([`in_memory`], for what the MCP
//! server does) or as a child process on its stdio ([`start`], for what the
//! process does: exiting, signals, logs, stdout). [`Expect`] is what the
//! tests do with it, failing the test on any error. (rmcp's own client
//! drives the process in `e2e`: a client we did not write.)

use std::path::Path;

use mcp_client::{McpClient, Stderr};
use serde_json::{Value, json};

use crate::e2e::WAIT;

/// The bridge's command line for `project` with `extra`, as tests run it.
fn arguments(project: &Path, extra: &[&str], logs: &str) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = vec!["--project".into(), project.into()];
    if !extra.contains(&"--tools-wait") {
        args.extend(["--tools-wait".into(), "2".into()]);
    }
    // BRIDGE_TEST_LOGS=DIR keeps every test bridge's debug log there.
    match std::env::var_os("BRIDGE_TEST_LOGS") {
        Some(dir) if !extra.contains(&"--log-level") => {
            static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let file = Path::new(&dir).join(format!("{logs}-{}-{n}.log", std::process::id()));
            args.extend(["--log-level".into(), "debug".into(), "--log-file".into(), file.into()]);
        }
        _ if !extra.contains(&"--log-level") => args.extend(["--log-level".into(), "warn".into()]),
        _ => {}
    }
    args.extend(extra.iter().map(Into::into));
    args
}

/// The bridge binary as a child process, with these arguments.
pub fn start(project: &Path, extra: &[&str]) -> McpClient {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_unity-mcp-bridge"));
    command.args(arguments(project, extra, "process"));
    McpClient::spawn(command, Stderr::Discard).unwrap().strict()
}

/// The same MCP server, with the same command line, served in this
/// process over in-memory pipes, on a runtime of its own (a test's
/// blocking waits do not stall it). Its logs are not kept.
pub fn in_memory(project: &Path, extra: &[&str]) -> McpClient {
    let mut args = vec![std::ffi::OsString::from("unity-mcp-bridge")];
    args.extend(arguments(project, extra, "memory"));
    let (client_side, server_side) = tokio::io::duplex(1 << 20);
    let (server_in, server_out) = tokio::io::split(server_side);
    let (client_in, client_out) = tokio::io::split(client_side);
    let serving = tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let stop = runtime.block_on(unity_mcp_bridge::cli::serve_streams(args, server_in, server_out));
        stop.map(|_| ()).map_err(|e| format!("{e:#}"))
    });
    McpClient::over(client_in, client_out, Some(serving)).strict()
}

/// What the tests do with a client; any error fails the test.
pub(crate) trait Expect {
    /// Writes one line.
    async fn line(&mut self, line: &str);
    /// The next message, within [`WAIT`].
    async fn next_json(&mut self) -> Value;
    /// The answer to `id`, within [`WAIT`] (notifications are passed over).
    async fn answer(&mut self, id: &Value) -> Value;
    /// `initialize` at 2025-06-18 (which must be echoed), then `initialized`.
    async fn handshake(&mut self);
}

impl Expect for McpClient {
    async fn line(&mut self, line: &str) {
        self.send_line(line).await.unwrap_or_else(|e| panic!("cannot send {line}: {e}"));
    }

    async fn next_json(&mut self) -> Value {
        match self.next_message(WAIT).await {
            Ok(Some(message)) => message,
            Ok(None) => panic!("nothing on stdout within {WAIT:?}"),
            Err(e) => panic!("{e}"),
        }
    }

    async fn answer(&mut self, id: &Value) -> Value {
        self.response_within(id, WAIT).await.unwrap_or_else(|e| panic!("{e}"))
    }

    async fn handshake(&mut self) {
        self.line(r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-test","version":"1"}}}"#).await;
        assert_eq!(self.answer(&json!("init")).await["result"]["protocolVersion"], "2025-06-18");
        self.line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    }
}
