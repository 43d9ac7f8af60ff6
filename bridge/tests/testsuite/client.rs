//! The one MCP test client of the bridge's tests: JSON-RPC lines to and
//! from a bridge, which is either served in this process over an in-memory
//! pipe ([`McpClient::in_memory`], for what the MCP server does) or a child
//! process on its stdio ([`McpClient::start`], for what the process does:
//! exiting, signals, logs, stdout). Every line the bridge writes must be a
//! JSON-RPC 2.0 message. Reads block the calling thread (with a deadline),
//! so tests that also run a fake in-process use a multi-threaded runtime.
//! (rmcp's own client drives the process in `e2e`: a client we did not write.)

use std::{
    io::{BufRead, BufReader, Write},
    path::Path,
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::e2e::WAIT;

/// Where the client's lines go.
enum Input {
    Pipe(ChildStdin),
    Memory(tokio::sync::mpsc::UnboundedSender<Vec<u8>>),
}

/// The bridge being driven.
enum Server {
    Process(Child),
    /// Served on a thread of its own; `ended` says how `serve` returned.
    Memory {
        ended: mpsc::Receiver<Result<unity_mcp_bridge::mcp::Stop, String>>,
    },
}

pub struct McpClient {
    input: Option<Input>,
    lines: mpsc::Receiver<String>,
    server: Server,
}

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
            args.extend(["--log-level".into(), "debug,rmcp=info".into(), "--log-file".into(), file.into()]);
        }
        _ if !extra.contains(&"--log-level") => args.extend(["--log-level".into(), "warn".into()]),
        _ => {}
    }
    args.extend(extra.iter().map(Into::into));
    args
}

impl McpClient {
    /// The bridge binary as a child process, with these arguments.
    pub fn start(project: &Path, extra: &[&str]) -> McpClient {
        let mut child = Command::new(env!("CARGO_BIN_EXE_unity-mcp-bridge"))
            .args(arguments(project, extra, "process"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        McpClient { input: child.stdin.take().map(Input::Pipe), lines, server: Server::Process(child) }
    }

    /// The same MCP server, with the same command line, served in this
    /// process over an in-memory pipe. (Its logs are not kept.)
    pub fn in_memory(project: &Path, extra: &[&str]) -> McpClient {
        let mut args = vec![std::ffi::OsString::from("unity-mcp-bridge")];
        args.extend(arguments(project, extra, "memory"));
        let (to_server, mut from_client) = tokio::sync::mpsc::unbounded_channel::<Vec<u8>>();
        let (tx, lines) = mpsc::channel();
        let (ended_tx, ended) = mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
                let (client, server) = tokio::io::duplex(1 << 20);
                let (server_in, server_out) = tokio::io::split(server);
                let (client_in, mut client_out) = tokio::io::split(client);
                tokio::spawn(async move {
                    while let Some(bytes) = from_client.recv().await {
                        if client_out.write_all(&bytes).await.is_err() {
                            return;
                        }
                    }
                    // The client closed its input: the server reads EOF.
                    let _ = client_out.shutdown().await;
                });
                tokio::spawn(async move {
                    let mut reader = tokio::io::BufReader::new(client_in).lines();
                    while let Ok(Some(line)) = reader.next_line().await {
                        if tx.send(line).is_err() {
                            return;
                        }
                    }
                });
                let stop = unity_mcp_bridge::cli::serve_streams(args, server_in, server_out).await;
                let _ = ended_tx.send(stop.map_err(|e| format!("{e:#}")));
            });
        });
        McpClient { input: Some(Input::Memory(to_server)), lines, server: Server::Memory { ended } }
    }

    pub fn send(&mut self, line: &str) {
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        match self.input.as_mut().expect("the input is closed") {
            Input::Pipe(stdin) => {
                stdin.write_all(&bytes).unwrap();
                stdin.flush().unwrap();
            }
            Input::Memory(tx) => tx.send(bytes).expect("the in-memory bridge stopped reading"),
        }
    }

    /// Closes the bridge's input (stdin EOF).
    pub fn close_input(&mut self) {
        self.input = None;
    }

    /// The next line the bridge wrote, which must be a JSON-RPC 2.0 message.
    pub fn next(&self) -> Value {
        let line = self.lines.recv_timeout(WAIT).unwrap_or_else(|e| match e {
            mpsc::RecvTimeoutError::Timeout => panic!("nothing on stdout within {WAIT:?}"),
            mpsc::RecvTimeoutError::Disconnected => panic!("the bridge closed its stdout (it exited)"),
        });
        let message: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"));
        assert_eq!(message["jsonrpc"], "2.0", "stdout carried {line}");
        message
    }

    /// The answer to `id`, skipping notifications.
    pub fn answer(&self, id: &Value) -> Value {
        loop {
            let message = self.next();
            if message.get("method").is_some() {
                continue;
            }
            assert_eq!(&message["id"], id, "expected the answer to {id}, got {message}");
            return message;
        }
    }

    pub fn initialize(&mut self) {
        self.send(r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-test","version":"1"}}}"#);
        assert_eq!(self.answer(&json!("init"))["result"]["protocolVersion"], "2025-06-18");
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// The process, for signals; `None` in memory.
    pub fn pid(&self) -> Option<u32> {
        match &self.server {
            Server::Process(child) => Some(child.id()),
            Server::Memory { .. } => None,
        }
    }

    /// Waits until the bridge has stopped: whether it stopped cleanly (exit
    /// status 0, or `serve` returning), `None` if it still runs at `within`.
    pub fn ended_within(&mut self, within: Duration) -> Option<Result<(), String>> {
        let deadline = Instant::now() + within;
        match &mut self.server {
            Server::Process(child) => {
                while Instant::now() < deadline {
                    if let Some(status) = child.try_wait().unwrap() {
                        return Some(if status.success() { Ok(()) } else { Err(status.to_string()) });
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                None
            }
            Server::Memory { ended } => ended.recv_timeout(within).ok().map(|stop| stop.map(|_| ())),
        }
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        self.input = None;
        if let Server::Process(child) = &mut self.server {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
