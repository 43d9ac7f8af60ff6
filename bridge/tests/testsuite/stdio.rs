//! The bridge process on its stdio: exiting promptly at stdin EOF, on
//! SIGTERM and when its parent dies; logs never on stdout; stdio over pipes,
//! socket pairs and files. (What the MCP server answers is tested in memory,
//! in `mcp`.)

use std::{
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::{
    client::{self, Expect},
    service::{fake, project},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_eof_ends_the_process_promptly_even_with_calls_in_flight() {
    let project = project();
    let _fake = fake(project.path()).await;
    let mut raw = client::start(project.path(), &["--dev"]);
    raw.handshake().await;
    raw.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"debug-sleep","arguments":{"SleepSeconds":30,"TimeoutSeconds":60}}}"#).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    raw.close_input();
    // A liveness bound, not a timing claim: the bench measures how fast.
    let ended = raw.ended_within(Duration::from_secs(5)).await.expect("the bridge kept running after stdin closed");
    assert_eq!(ended, Ok(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_eof_before_initialize_ends_the_process() {
    let project = project();
    let mut raw = client::start(project.path(), &[]);
    raw.close_input();
    assert!(raw.ended_within(Duration::from_secs(5)).await.is_some());
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
    let mut raw = client::start(project.path(), &["--record", transcript.to_str().unwrap()]);
    raw.handshake().await;
    raw.line(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-logs","arguments":{"MaxCount":1}}}"#,
    )
    .await;
    assert_eq!(raw.answer(&json!(1)).await["result"]["structuredContent"]["DisplayedCount"], 1);
    let pid = nix::unistd::Pid::from_raw(raw.pid().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let ended = raw.ended_within(Duration::from_secs(5)).await.expect("the bridge kept running after SIGTERM");
    assert_eq!(ended, Ok(()));
    let records = editor_link::transcript::Transcript::read(&transcript).unwrap().records;
    let last = records.last().unwrap().to_value();
    assert_eq!((&last["event"], &last["by"]), (&json!("close"), &json!("client")), "{last}");
    assert_eq!(last["reason"], "the bridge is stopping");
}

#[cfg(unix)]
#[test]
fn the_bridge_exits_when_its_parent_dies() {
    use std::io::{BufRead, BufReader};
    let project = project();
    // A shell starts the bridge (stdin kept open by a fifo-less sleep) and
    // reports its pid; then the shell is killed.
    let mut shell = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "sleep 60 2>/dev/null | {} --project {} --log-level error >/dev/null 2>&1 & echo $!; wait",
            env!("CARGO_BIN_EXE_unity-mcp-bridge"),
            project.path().display()
        ))
        .stdout(Stdio::piped())
        // Nothing left behind (the sleep outlives the test) holds the
        // test's own output open.
        .stderr(Stdio::null())
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

#[cfg(unix)]
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z"))
}

/// Windows has no orphan adoption to watch: the bridge holds a handle to its
/// parent and ends when it is signalled. PowerShell starts the bridge and
/// reports its pid, then PowerShell is terminated (as an agent's launcher
/// would be, with no notice).
#[cfg(windows)]
#[test]
fn the_bridge_exits_when_its_parent_dies() {
    use std::io::{BufRead, BufReader};
    let project = project();
    let script = format!(
        "$p = Start-Process -PassThru -NoNewWindow -FilePath '{}' -ArgumentList '--project','\"{}\"','--log-level','error' \
         -RedirectStandardOutput bridge.out -RedirectStandardError bridge.err; [Console]::Out.WriteLine($p.Id); [Console]::Out.Flush(); Start-Sleep 60",
        env!("CARGO_BIN_EXE_unity-mcp-bridge"),
        project.path().display()
    );
    let mut shell = Command::new("powershell")
        .args(["-NoProfile", "-NonInteractive", "-Command", &script])
        .current_dir(project.path())
        // Held open (the bridge inherits it), so only its parent's end can end it.
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _stdin = shell.stdin.take();
    let mut line = String::new();
    BufReader::new(shell.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let bridge_pid: u32 = line.trim().parse().unwrap_or_else(|_| panic!("PowerShell said {line:?}"));
    std::thread::sleep(Duration::from_millis(300));
    assert!(editor_link::discovery::pid_alive(bridge_pid), "the bridge did not start");
    shell.kill().unwrap();
    let _ = shell.wait();
    let deadline = Instant::now() + Duration::from_secs(5);
    while editor_link::discovery::pid_alive(bridge_pid) {
        assert!(Instant::now() < deadline, "the bridge outlived its parent");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_can_go_to_a_file_and_never_to_stdout() {
    let project = project();
    let log = project.path().join("bridge.log");
    let mut raw = client::start(project.path(), &["--log-file", log.to_str().unwrap(), "--log-level", "debug"]);
    raw.handshake().await;
    raw.line(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await;
    raw.answer(&json!(2)).await;
    raw.close_input();
    raw.ended_within(Duration::from_secs(5)).await.unwrap().unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("unity-mcp-bridge serving MCP on stdio") && text.contains("MCP client"), "{text}");
}

/// Node's clients (libuv) give a server socket pairs rather than pipes, and
/// some launchers one socket for both stdin and stdout: the bridge serves
/// over them, and reaching stdin's end does not shut stdout's side.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_over_one_socket_pair_is_served() {
    use crate::e2e::WAIT;
    use mcp_client::McpClient;
    use std::os::unix::net::UnixStream;
    let project = project();
    let (ours, theirs) = UnixStream::pair().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_unity-mcp-bridge"))
        .arg("--project")
        .arg(project.path())
        .args(["--log-level", "warn"])
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs.try_clone().unwrap())))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    ours.set_nonblocking(true).unwrap();
    let (from_bridge, to_bridge) = tokio::net::UnixStream::from_std(ours).unwrap().into_split();
    let mut raw = McpClient::over(from_bridge, to_bridge, None).strict();
    raw.handshake().await;
    for _ in 2..5 {
        raw.call_method("ping", json!({})).await.unwrap();
    }
    // Dropping the writing half shuts the socket down for writing: EOF.
    raw.close_input();
    let status = tokio::time::timeout(WAIT, child.wait()).await;
    assert!(status.is_ok(), "the bridge did not exit at stdin EOF within {WAIT:?}");
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
