//! The bridge's stdio as bytes: bad input, the lifecycle edges, cancellation,
//! and exiting promptly — checked line by line, with every stdout line
//! required to be a JSON-RPC message.

use std::{
    io::{BufRead, BufReader, Write},
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::{
    e2e::WAIT,
    service::{fake, project},
};

/// The bridge as a child process with line access to its stdio. Reads block
/// the calling thread, so tests that also run a fake in-process use a
/// multi-threaded runtime.
pub struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Raw {
    pub fn start(project: &std::path::Path, extra: &[&str]) -> Raw {
        let mut command = Command::new(env!("CARGO_BIN_EXE_unity-mcp-bridge"));
        command.arg("--project").arg(project);
        if !extra.contains(&"--tools-wait") {
            command.args(["--tools-wait", "2"]);
        }
        // BRIDGE_TEST_LOGS=DIR keeps every test bridge's debug log there.
        match std::env::var_os("BRIDGE_TEST_LOGS") {
            Some(dir) if !extra.contains(&"--log-level") => {
                static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
                let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let file = std::path::Path::new(&dir).join(format!("raw-{}-{n}.log", std::process::id()));
                command.args(["--log-level", "debug,rmcp=info", "--log-file"]).arg(file);
            }
            _ if !extra.contains(&"--log-level") => {
                command.args(["--log-level", "warn"]);
            }
            _ => {}
        }
        let mut child =
            command.args(extra).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
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
        Raw { stdin: child.stdin.take(), child, lines }
    }

    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next stdout line, which must be a JSON-RPC 2.0 message.
    fn next(&self) -> Value {
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

    /// Waits for the process to exit; `None` if it is still running at `within`.
    fn exit_within(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_answered_and_the_server_keeps_running() {
    let project = project();
    let _fake = fake(project.path()).await;
    let mut raw = Raw::start(project.path(), &[]);
    // Before initialize: a notification is ignored, a probe refused, garbage answered.
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#);
    raw.send(
        r#"{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"protocolVersion":"2026-07-28"}}}"#,
    );
    let discover = raw.answer(&json!("d"));
    assert_eq!(discover["error"]["code"], -32022);
    assert_eq!(discover["error"]["data"]["supported"][0], "2025-11-25");
    raw.send(r#"{"jsonrpc":"2.0","id":"p0","method":"ping"}"#);
    assert_eq!(raw.answer(&json!("p0"))["result"], json!({}));
    raw.initialize();
    for (line, code) in [
        ("this is not json", -32700),
        ("{\"jsonrpc\":\"2.0\",\"id\":", -32700),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, -32600),
        (r#""a string""#, -32600),
        (r#"{"jsonrpc":"2.0","id":{"nested":true},"method":"ping"}"#, -32600),
    ] {
        raw.send(line);
        let answer = raw.next();
        assert_eq!((answer["id"].clone(), answer["error"]["code"].as_i64()), (Value::Null, Some(code)), "{line}");
    }
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":7}}"#);
    assert_eq!(raw.answer(&json!(9))["error"]["code"], -32602);
    raw.send(r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"cursor":"not-a-cursor"}}"#);
    assert_eq!(raw.answer(&json!(10))["error"]["code"], -32602);
    raw.send(r#"{"jsonrpc":"2.0","id":11,"method":"no/such/method"}"#);
    assert_eq!(raw.answer(&json!(11))["error"]["code"], -32601);
    // Logging is not declared, so not served.
    raw.send(r#"{"jsonrpc":"2.0","id":12,"method":"logging/setLevel","params":{"level":"debug"}}"#);
    assert_eq!(raw.answer(&json!(12))["error"]["code"], -32601);
    // Still serving, ids echoed exactly.
    raw.send(r#"{"jsonrpc":"2.0","id":"s-1","method":"ping"}"#);
    assert_eq!(raw.answer(&json!("s-1"))["result"], json!({}));
    raw.send(
        r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"get-logs","arguments":{"MaxCount":1}}}"#,
    );
    assert_eq!(raw.answer(&json!(13))["result"]["structuredContent"]["DisplayedCount"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_is_answered_while_a_call_runs_and_cancelled_calls_get_no_answer() {
    let project = project();
    let _fake = fake(project.path()).await;
    let mut raw = Raw::start(project.path(), &["--dev"]);
    raw.initialize();
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"debug-sleep","arguments":{"SleepSeconds":2,"TimeoutSeconds":10}}}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    assert_eq!(raw.answer(&json!(2))["result"], json!({}), "ping is not held up by the call");
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"debug-sleep","arguments":{"SleepSeconds":2.5,"TimeoutSeconds":10}}}"#);
    // The cancelled call's answer never comes: the next answer is call 3's.
    let next = raw.answer(&json!(3));
    assert_eq!(next["result"]["structuredContent"]["ActualSleepSeconds"], 2.5, "{next}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_eof_ends_the_process_promptly_even_with_calls_in_flight() {
    let project = project();
    let _fake = fake(project.path()).await;
    let mut raw = Raw::start(project.path(), &["--dev"]);
    raw.initialize();
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"debug-sleep","arguments":{"SleepSeconds":30,"TimeoutSeconds":60}}}"#);
    std::thread::sleep(Duration::from_millis(200));
    drop(raw.stdin.take());
    // A liveness bound, not a timing claim: the bench measures how fast.
    let status = raw.exit_within(Duration::from_secs(5)).expect("the bridge kept running after stdin closed");
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_eof_before_initialize_ends_the_process() {
    let project = project();
    let mut raw = Raw::start(project.path(), &[]);
    drop(raw.stdin.take());
    assert!(raw.exit_within(Duration::from_secs(5)).is_some());
}

/// The end of a client's shutdown sequence (stdin closed, then SIGTERM):
/// the bridge ends as at stdin EOF, closing the link, so a recording it
/// makes ends with that close.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_process_cleanly_and_the_recording_says_so() {
    let project = project();
    let _fake = fake(project.path()).await;
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("run.jsonl");
    let mut raw = Raw::start(project.path(), &["--record", transcript.to_str().unwrap()]);
    raw.initialize();
    raw.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-logs","arguments":{"MaxCount":1}}}"#,
    );
    assert_eq!(raw.answer(&json!(1))["result"]["structuredContent"]["DisplayedCount"], 1);
    let pid = nix::unistd::Pid::from_raw(raw.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = raw.exit_within(Duration::from_secs(5)).expect("the bridge kept running after SIGTERM");
    assert!(status.success(), "{status}");
    let records = editor_link::transcript::Transcript::read(&transcript).unwrap().records;
    let last = records.last().unwrap().to_value();
    assert_eq!((&last["event"], &last["by"]), (&json!("close"), &json!("client")), "{last}");
    assert_eq!(last["reason"], "the bridge is stopping");
}

#[cfg(unix)]
#[test]
fn the_bridge_exits_when_its_parent_dies() {
    let project = project();
    // A shell starts the bridge (stdin kept open by a fifo-less sleep) and
    // reports its pid; then the shell is killed.
    let mut shell = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "sleep 60 | {} --project {} --log-level error >/dev/null 2>&1 & echo $!; wait",
            env!("CARGO_BIN_EXE_unity-mcp-bridge"),
            project.path().display()
        ))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(shell.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let bridge_pid: u32 = line.trim().parse().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(std::path::Path::new(&format!("/proc/{bridge_pid}")).exists() || !cfg!(target_os = "linux"));
    shell.kill().unwrap();
    let _ = shell.wait();
    let deadline = Instant::now() + Duration::from_secs(5);
    while editor_link::discovery::pid_alive(bridge_pid) && !is_zombie(bridge_pid) {
        assert!(Instant::now() < deadline, "the bridge outlived its parent");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_are_echoed_when_supported_and_the_newest_answered_otherwise() {
    let project = project();
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2099-01-01", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ] {
        let mut raw = Raw::start(project.path(), &[]);
        raw.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "v", "version": "1"}}}).to_string());
        let answer = raw.answer(&json!(1));
        assert_eq!(answer["result"]["protocolVersion"], answered, "asked {asked}");
        assert_eq!(answer["result"]["capabilities"]["tools"]["listChanged"], true);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_can_go_to_a_file_and_never_to_stdout() {
    let project = project();
    let log = project.path().join("bridge.log");
    let mut raw = Raw::start(project.path(), &["--log-file", log.to_str().unwrap(), "--log-level", "debug"]);
    raw.initialize();
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    raw.answer(&json!(2));
    drop(raw.stdin.take());
    raw.exit_within(Duration::from_secs(5)).unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("unity-mcp-bridge serving MCP on stdio") && text.contains("MCP client"), "{text}");
}

/// Node's clients (libuv) give a server socket pairs rather than pipes, and
/// some launchers one socket for both stdin and stdout: the bridge serves
/// over them, and reaching stdin's end does not shut stdout's side.
#[cfg(unix)]
#[test]
fn stdio_over_one_socket_pair_is_served() {
    use std::os::unix::net::UnixStream;
    let project = project();
    let (ours, theirs) = UnixStream::pair().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_unity-mcp-bridge"))
        .arg("--project")
        .arg(project.path())
        .args(["--log-level", "warn"])
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs.try_clone().unwrap())))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    ours.set_read_timeout(Some(WAIT)).unwrap();
    let mut reader = BufReader::new(ours.try_clone().unwrap());
    let mut writer = ours;
    let mut ask = |line: &str| {
        writer.write_all(format!("{line}\n").as_bytes()).unwrap();
        let mut answer = String::new();
        reader.read_line(&mut answer).unwrap();
        serde_json::from_str::<Value>(&answer).unwrap_or_else(|e| panic!("{answer:?}: {e}"))
    };
    let init = ask(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"socket-test","version":"1"}}}"#,
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    for id in 2..5 {
        assert_eq!(ask(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#))["id"], id);
    }
    writer.shutdown(std::net::Shutdown::Write).unwrap();
    let deadline = Instant::now() + WAIT;
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the bridge did not exit at stdin EOF within {WAIT:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// stdin from a file (neither pipe nor socket) is read through tokio's
/// blocking stdin: every line is answered, then EOF ends the process.
#[test]
fn stdin_from_a_file_is_served() {
    let project = project();
    let requests = project.path().join("requests.jsonl");
    std::fs::write(
        &requests,
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"file-test","version":"1"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            "\n"
        ),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_unity-mcp-bridge"))
        .arg("--project")
        .arg(project.path())
        .args(["--log-level", "warn"])
        .stdin(std::fs::File::open(&requests).unwrap())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let ids: Vec<Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone())
        .collect();
    assert_eq!(ids, [json!(1), json!(2)]);
}
