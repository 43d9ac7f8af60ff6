//! The `fake-unity` binary as a user runs it: a real process, its listening
//! line, the discovery file, the control API, signals and bad arguments.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::Duration,
};

use editor_link::{
    discovery::{DiscoveryFile, EditorState},
    framing::Framing,
};
use serde_json::{Value, json};

use crate::support::{Client, WAIT, copy_dir, fixture_project, fixtures};

struct Running {
    child: KillOnDrop,
    line: Value,
    project: tempfile::TempDir,
    /// Kept open: later lines (after "starting") must have somewhere to go.
    stdout: BufReader<std::process::ChildStdout>,
}

impl Running {
    /// A client of this Editor that sends the token its discovery file
    /// publishes, as a client in the project does.
    async fn client(&self, port: u16, framing: Framing) -> Client {
        let token = DiscoveryFile::read(self.project.path()).unwrap().token;
        assert_eq!(token.as_ref().map(String::len), Some(43), "the package publishes a 32-byte token");
        Client::connect(port, framing).await.with_token(token)
    }
}

/// A fake-unity process, killed when the test lets go of it: a test that
/// fails before its own `/quit` leaves nothing running.
struct KillOnDrop(Child);

impl std::ops::Deref for KillOnDrop {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for KillOnDrop {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn spawn(extra: &[&str]) -> Running {
    let project = tempfile::tempdir().unwrap();
    copy_dir(&fixture_project(), project.path());
    let project_arg = project.path().to_str().unwrap().to_owned();
    let mut args = vec!["serve", "--project", &project_arg, "--port", "0", "--seed", "7"];
    args.extend_from_slice(extra);
    let (child, line, stdout) = start_tool(&args);
    Running { child, line, project, stdout }
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(std::time::Instant::now() < deadline, "fake-unity did not exit within {WAIT:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn serve_prints_its_listening_line_and_writes_the_discovery_file() {
    let running = spawn(&[]);
    let line = &running.line;
    assert_eq!(line["event"], "listening");
    assert_eq!(line["seed"], 7);
    let port = line["port"].as_u64().unwrap() as u16;
    assert!(port > 0);
    assert!(line["control"].as_str().unwrap().starts_with("http://127.0.0.1:"));
    let discovery = DiscoveryFile::read(running.project.path()).unwrap();
    assert_eq!((discovery.port, discovery.state, discovery.pid), (port, Some(EditorState::Ready), running.child.id()));
    assert_eq!(discovery.protocol_version, Some(1));
    let mut client = running.client(port, Framing::Newline).await;
    assert_eq!(client.ok("ping", json!({"Message": "cli"})).await["Message"], "Unity MCP Bridge received: cli");
}

#[cfg(unix)]
#[tokio::test]
async fn sigterm_quits_cleanly_with_a_summary() {
    let mut running = spawn(&[]);
    let port = running.line["port"].as_u64().unwrap() as u16;
    let mut client = running.client(port, Framing::Header).await;
    client.ok("ping", crate::support::none()).await;
    let status = Command::new("kill").args(["-TERM", &running.child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let seen = client.until_closed().await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    let status = wait_exit(&mut running.child);
    assert!(status.success(), "{status}");
    let discovery = DiscoveryFile::read(running.project.path()).unwrap();
    assert_eq!(discovery.state, Some(EditorState::Stopped));
    let mut stderr = String::new();
    std::io::Read::read_to_string(running.child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("exit summary (seed 7)") && stderr.contains("\"requests\":1"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn sigterm_ends_the_process_even_when_a_client_never_reads() {
    use std::io::Write;
    let mut running = spawn(&[]);
    let port = running.line["port"].as_u64().unwrap() as u16;
    // A client that sends forever and reads nothing (its answers are padded
    // to 256 KB so they pile up fast).
    let control = running.line["control"].as_str().unwrap().to_owned();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let control = fake_unity::ControlClient::from_url(&control).unwrap();
        let rule = json!({"match": {"method": "ping"}, "fault": {"kind": "responseSize", "bytes": 262144}});
        control.post("/faults", rule).await.unwrap();
    });
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_write_timeout(Some(Duration::from_millis(500))).unwrap();
    let token = DiscoveryFile::read(running.project.path()).unwrap().token;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}, "x-token": token}).to_string();
    let frame = editor_link::framing::frame_bytes(Framing::Header, body.as_bytes()).unwrap();
    for _ in 0..100_000 {
        if stream.write_all(&frame).is_err() {
            break;
        }
    }
    let status = Command::new("kill").args(["-TERM", &running.child.id().to_string()]).status().unwrap();
    assert!(status.success());
    wait_exit(&mut running.child);
    drop(stream);
}

#[tokio::test]
async fn proxy_relays_to_its_upstream_with_a_scenario_s_wire_faults() {
    let running = spawn(&[]);
    let upstream = format!("127.0.0.1:{}", running.line["port"]);
    let scenario = fixtures().join("scenarios/flaky-link.toml");
    let (mut proxy, line, _out) = start_tool(&[
        "proxy",
        "--upstream",
        &upstream,
        "--scenario",
        scenario.to_str().unwrap(),
        "--time-scale",
        "0.1",
    ]);
    assert_eq!((line["event"].as_str(), line["upstream"].as_str()), (Some("listening"), Some(upstream.as_str())));
    assert!(line["control"].as_str().unwrap().starts_with("http://127.0.0.1:"));
    let mut client = running.client(line["port"].as_u64().unwrap() as u16, Framing::Header).await;
    assert_eq!(client.ok("ping", json!({"Message": "via"})).await["Message"], "Unity MCP Bridge received: via");
    client.close().await;
    let control = fake_unity::ControlClient::from_url(line["control"].as_str().unwrap()).unwrap();
    let stats = control.get("/stats").await.unwrap();
    assert!(stats["faults"].as_array().unwrap().iter().any(|r| r["fired"].as_u64() > Some(0)), "{stats}");
    control.post("/quit", json!({})).await.unwrap();
    assert!(wait_exit(&mut proxy).success());

    // A scenario with an Editor fault is refused, naming it.
    let editor_fault = fixtures().join("scenarios/long-compile.toml");
    let output = Command::new(env!("CARGO_BIN_EXE_fake-unity"))
        .args(["proxy", "--upstream", &upstream, "--scenario", editor_fault.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("slowTool") && stderr.contains("wire faults"), "{stderr}");
}

#[tokio::test]
async fn post_quit_ends_the_process() {
    let mut running = spawn(&[]);
    let control = fake_unity::ControlClient::from_url(running.line["control"].as_str().unwrap()).unwrap();
    let state = control.get("/state").await.unwrap();
    assert_eq!(state["seed"], 7);
    control.post("/quit", json!({})).await.unwrap();
    assert!(wait_exit(&mut running.child).success());
}

#[tokio::test]
async fn a_state_file_can_be_chosen() {
    let state = fixtures().join("editor-states/compile-errors.json");
    let running = spawn(&["--state", state.to_str().unwrap()]);
    let mut client = running.client(running.line["port"].as_u64().unwrap() as u16, Framing::Header).await;
    let logs = client.ok("get-logs", json!({"LogType": "Error", "SearchText": "CS0103"})).await;
    assert_eq!(logs["TotalCount"], 1);
}

/// A client written independently, in Python, calls every tool in both
/// framings and drives a reload, against the real binary.
#[test]
fn a_python_client_calls_every_tool_and_survives_a_reload() {
    if !crate::have(&["python3"], "apt-get install python3") {
        return;
    }
    let running = spawn(&[]);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/editor_link_client.py");
    let output = Command::new("python3")
        .arg(&script)
        .arg("--project")
        .arg(running.project.path())
        .args(["--control", running.line["control"].as_str().unwrap()])
        .output()
        .unwrap_or_else(|e| panic!("python3 is needed for this test (apt-get install python3): {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("checks passed, 0 failed"), "{stdout}");
}

#[test]
fn bad_arguments_fail_with_a_clear_message() {
    let missing = assert_cmd::Command::cargo_bin("fake-unity")
        .unwrap()
        .args(["serve", "--project", "/definitely/not/here", "--port", "0"])
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&missing.get_output().stderr).into_owned();
    assert!(stderr.contains("/definitely/not/here") && stderr.contains("does not exist"), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let bad_state = dir.path().join("bad.json");
    std::fs::write(&bad_state, r#"{"formatVersion": 1, "editor": {}}"#).unwrap();
    let bad = assert_cmd::Command::cargo_bin("fake-unity")
        .unwrap()
        .args(["serve", "--port", "0", "--project"])
        .arg(dir.path())
        .arg("--state")
        .arg(&bad_state)
        .assert()
        .failure();
    let stderr = String::from_utf8_lossy(&bad.get_output().stderr).into_owned();
    assert!(stderr.contains("bad.json") && stderr.contains("missing field"), "{stderr}");
    assert!(bad.get_output().stdout.is_empty(), "nothing on stdout when it cannot start");
}

#[tokio::test]
async fn every_fixture_scenario_loads_and_lists_its_rules() {
    let dir = fixtures().join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    files.sort();
    assert!(files.len() >= 13, "{files:?}");
    for file in files {
        let scenario = fake_unity::Scenario::load(&file).unwrap();
        // Long enough a start delay to see the "starting" line first; a
        // timeline at its own pace, so no action of it (a rule removed at
        // 30 s: 30 ms at 0.001, less than a loaded machine takes to ask for
        // the rules) comes before the rules are listed.
        let scale = if scenario.start_delay_ms > 0 {
            "0.05"
        } else if !scenario.timeline.is_empty() {
            "1"
        } else {
            "0.001"
        };
        let mut running = spawn(&["--scenario", file.to_str().unwrap(), "--time-scale", scale]);
        let event = running.line["event"].as_str().unwrap().to_owned();
        let expected_event = if scenario.start_delay_ms > 0 { "starting" } else { "listening" };
        assert_eq!(event, expected_event, "{}", file.display());
        if event == "starting" {
            let mut next = String::new();
            running.stdout.read_line(&mut next).unwrap();
            assert!(next.contains(r#""event":"listening""#), "{next}");
        }
        let control = fake_unity::ControlClient::from_url(running.line["control"].as_str().unwrap()).unwrap();
        let rules = control.get("/faults").await.unwrap();
        let names: Vec<&str> = rules.as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
        let expected: Vec<&str> = scenario.faults.iter().map(|r| r.name.as_deref().unwrap()).collect();
        assert_eq!(names, expected, "{}", file.display());
        control.post("/quit", json!({})).await.unwrap();
        let status = wait_exit(&mut running.child);
        assert!(status.success(), "{}: {status}; stderr: {}", file.display(), stderr_text(&mut running.child));
    }
}

#[test]
fn a_bad_scenario_is_refused_naming_the_file_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "[[faults]]\nfault = { kind = \"latency\", ms = 5, jiter = 1 }\n").unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_fake-unity"))
        .args(["serve", "--port", "0", "--project"])
        .arg(dir.path())
        .arg("--scenario")
        .arg(&file)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.toml") && stderr.contains("jiter"), "{stderr}");
    assert!(output.stdout.is_empty(), "no listening line");
}

/// Starts a `fake-unity` subcommand; its first stdout line.
fn start_tool(args: &[&str]) -> (KillOnDrop, Value, BufReader<std::process::ChildStdout>) {
    // Held from the start: a first line that never comes fails the test
    // without leaving the process behind.
    let mut child = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_fake-unity"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let line: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("first line {line:?}: {e}"));
    (child, line, stdout)
}

/// What an exited child wrote on stderr, for a failure's message.
fn stderr_text(child: &mut Child) -> String {
    let mut stderr = String::new();
    if let Some(pipe) = child.stderr.as_mut() {
        let _ = std::io::Read::read_to_string(pipe, &mut stderr);
    }
    stderr
}

#[cfg(unix)]
fn stderr_of(child: &mut Child) -> String {
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    stderr
}

#[cfg(unix)]
async fn workflow(port: u16, max_count: u64) -> Vec<Value> {
    let mut client = Client::connect(port, Framing::Newline).await;
    let mut answers = Vec::new();
    for (method, params) in [
        ("get-version", crate::support::none()),
        ("get-logs", json!({"MaxCount": max_count})),
        ("get-hierarchy", crate::support::none()),
    ] {
        let outcome = client.call(method, params).await.outcome;
        answers.push(outcome.unwrap_or_else(|e| json!({"error": e.detail()})));
    }
    client.close().await;
    answers
}

#[cfg(unix)]
#[tokio::test]
async fn record_and_replay_through_the_binaries() {
    let mut editor = spawn(&[]);
    let editor_port = editor.line["port"].as_u64().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.jsonl");
    let project = editor.project.path().to_str().unwrap().to_owned();
    let upstream = format!("127.0.0.1:{editor_port}");
    let (mut recorder, line, _out) =
        start_tool(&["record", "--upstream", &upstream, "--out", file.to_str().unwrap(), "--project", &project]);
    assert_eq!(line["event"], "listening");
    let recorded = workflow(line["port"].as_u64().unwrap() as u16, 2).await;
    assert!(Command::new("kill").args(["-TERM", &recorder.id().to_string()]).status().unwrap().success());
    assert!(wait_exit(&mut recorder).success());
    assert!(stderr_of(&mut recorder).contains("1 connection(s) recorded"));
    let _ = editor.child.kill();
    let _ = editor.child.wait();

    // The same client, the same answers.
    let (mut replay, line, mut out) =
        start_tool(&["replay", file.to_str().unwrap(), "--port", "0", "--project", &project, "--idle-timeout", "0.5"]);
    assert_eq!((line["event"].as_str(), line["requests"].as_u64()), (Some("listening"), Some(3)));
    assert_eq!(DiscoveryFile::read(editor.project.path()).unwrap().port as u64, line["port"].as_u64().unwrap());
    let replayed = workflow(line["port"].as_u64().unwrap() as u16, 2).await;
    assert_eq!(replayed, recorded);
    assert!(wait_exit(&mut replay).success());
    let mut finished = String::new();
    out.read_line(&mut finished).unwrap();
    let finished: Value = serde_json::from_str(&finished).unwrap();
    assert_eq!((finished["ok"].as_bool(), finished["matched"].as_u64()), (Some(true), Some(3)));

    // A request that differs: the report, and exit 1.
    let report = dir.path().join("report.json");
    let (mut replay, line, _out) = start_tool(&[
        "replay",
        file.to_str().unwrap(),
        "--port",
        "0",
        "--idle-timeout",
        "0.5",
        "--report",
        report.to_str().unwrap(),
    ]);
    workflow(line["port"].as_u64().unwrap() as u16, 9).await;
    let status = wait_exit(&mut replay);
    assert_eq!(status.code(), Some(1));
    let stderr = stderr_of(&mut replay);
    for part in
        ["MISMATCH", "params.MaxCount: recorded 2, received 9", "re-run:    fake-unity replay", "never received"]
    {
        assert!(stderr.contains(part), "{part} missing from:\n{stderr}");
    }
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["mismatches"][0]["firstDifference"], "params.MaxCount");
}

#[test]
fn replay_refuses_a_broken_transcript_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("broken.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"format":"unity-editor-link-transcript","formatVersion":1,"producer":"t","producerVersion":"0","startedAt":"x","recorded":"editor-link","redactions":[]}"#,
            "\n{\"seq\":1,\"ms\":0,\"conn\":1,\"dir\":\"up\",\"message\":{}}\n"
        ),
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_fake-unity")).arg("replay").arg(&file).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("broken.jsonl:2") && stderr.contains("\"up\""), "{stderr}");
}

/// `--unity-version` is the Unity the Editor runs in: get-version says it,
/// and from 6000.5 objects are named as the package names them there — an
/// exact EntityId in decimal text (past 2^53), and uLoopMCP's `id`, its low
/// 32 bits; a bad version is refused before anything starts.
#[tokio::test]
async fn serve_plays_the_unity_version_it_is_given() {
    let running = spawn(&["--unity-version", "6000.5.2f1"]);
    let port = running.line["port"].as_u64().unwrap() as u16;
    let mut client = running.client(port, Framing::Header).await;
    assert_eq!(client.ok("get-version", json!({})).await["UnityVersion"], "6000.5.2f1");
    let hierarchy = client.ok("get-hierarchy", json!({"IncludeInactive": true})).await;
    let root = &hierarchy["hierarchy"][0];
    let entity: u64 = root["entityId"].as_str().unwrap().parse().unwrap();
    assert!(entity > 1 << 53, "{root}");
    assert_eq!(root["id"].as_i64().unwrap(), i64::from(entity as u32 as i32), "{root}");
    let search = client.ok("unity-search", json!({"SearchQuery": root["name"], "Providers": ["scene"]})).await;
    assert!(search.to_string().contains(&entity.to_string()), "the scene provider names items by EntityId: {search}");

    let older = spawn(&[]);
    let port = older.line["port"].as_u64().unwrap() as u16;
    let mut client = older.client(port, Framing::Header).await;
    let root = client.ok("get-hierarchy", json!({})).await["hierarchy"][0].clone();
    assert_eq!(root["entityId"].as_str().unwrap(), root["id"].to_string(), "before 6000.5 the instance ID: {root}");

    let out = Command::new(env!("CARGO_BIN_EXE_fake-unity"))
        .args(["serve", "--project", ".", "--unity-version", "6000.5"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a Unity version"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[cfg(unix)]
#[tokio::test]
async fn serve_uloop_3_listens_on_the_socket_it_prints_and_deletes_it_on_quit() {
    let sockets = tempfile::tempdir().unwrap();
    let socket = sockets.path().join("v3.sock");
    let mut running = spawn(&["--editor", "uloop-3", "--endpoint", socket.to_str().unwrap()]);
    let line = running.line.clone();
    assert_eq!(line["event"], "listening");
    assert_eq!(line["port"], 0, "no TCP port");
    assert_eq!(line["endpoint"], format!("unix:{}", socket.display()));
    assert!(std::fs::symlink_metadata(&socket).is_ok(), "the socket file is there");

    let stream = tokio::net::UnixStream::connect(&socket).await.unwrap();
    let options =
        editor_link::connection::Options::client(Framing::Header, editor_link::framing::DEFAULT_RESPONSE_LIMIT);
    let mut client = Client::over(editor_link::connection::Connection::unix(stream, options));
    let root = editor_link::endpoint::canonical_project_root(running.project.path()).unwrap();
    let mut request =
        editor_link::jsonrpc::Request::new(editor_link::jsonrpc::Id::from(1_u64), "get-version", json!({}));
    request.extra.insert("x-uloop".into(), json!({"expectedProjectRoot": root}));
    client.send(&editor_link::jsonrpc::Message::Request(request)).await;
    let answer = client.response(&editor_link::jsonrpc::Id::from(1_u64)).await;
    assert_eq!(answer.outcome.unwrap()["Ver"], "3.0.0-beta.1");

    let control = fake_unity::ControlClient::from_url(line["control"].as_str().unwrap()).unwrap();
    control.post("/quit", json!({})).await.unwrap();
    assert!(wait_exit(&mut running.child).success());
    assert!(std::fs::symlink_metadata(&socket).is_err(), "deleted on quit");
}

#[tokio::test]
async fn serve_prints_its_tcp_endpoint_too() {
    let running = spawn(&[]);
    let port = running.line["port"].as_u64().unwrap();
    assert_eq!(running.line["endpoint"], format!("tcp://127.0.0.1:{port}"));
}
