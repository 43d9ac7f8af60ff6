//! The Editor failing as a whole, seen on the wire: a crash (and a new
//! Editor process), a hang, a dead listener; ids echoed exactly; a client
//! that never reads cannot grow the Editor.

use std::time::Duration;

use editor_link::{
    discovery::{EditorState, pid_alive},
    framing::{Framing, frame_bytes},
    jsonrpc::{Message, Request},
};
use fake_unity::{CrashOptions, Fault, RuleSpec, Trigger, faults::ReloadPoint};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::support::{Client, TestEditor, WAIT, eventually, none};

/// How long "nothing arrives" is watched for.
const QUIET: Duration = Duration::from_millis(400);

async fn stats(editor: &TestEditor) -> Value {
    editor.fake.control().get("/stats").await.unwrap()
}

/// Whether `client` receives nothing for [`QUIET`] (its connection open).
async fn quiet(client: &mut Client) -> bool {
    tokio::time::timeout(QUIET, client.recv()).await.is_err()
}

#[tokio::test]
async fn a_crash_after_the_tool_ran_answers_nothing_and_a_new_process_forgets_the_journal() {
    let editor = TestEditor::start().await;
    let _fault = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::Crash(fake_unity::faults::Crash {
                restart_after_ms: Some(100),
                move_port: true,
                at: ReloadPoint::AfterRun,
            }))
            .method("clear-console")
            .times(1),
        )
        .unwrap();
    let mut client = editor.connect().await;
    client.ok("set-client-name", json!({"ClientName": "crash-test"})).await;
    let before = client.ok("get-version", none()).await;
    let (old_port, old_session) = (editor.port(), editor.discovery().server_session_id);
    let id = client.request("clear-console", json!({})).await;
    let seen = client.until_closed().await;
    assert!(seen.is_empty(), "a crashed Editor sends nothing, not even a shutdown notification: {seen:?}");
    assert_eq!(stats(&editor).await["runs"]["clear-console"], 1, "it ran before the crash");

    // A new process listens on another port, with a new session and instance.
    eventually("a new Editor process", || !editor.fake.editor().is_crashed() && editor.port() != old_port).await;
    let file = editor.discovery();
    assert_eq!(file.state, Some(EditorState::Ready));
    assert!(pid_alive(file.pid));
    assert_ne!(file.server_session_id, old_session);
    let mut client = Client::connect(editor.port(), Framing::Header).await.ids_from(100);
    client.ok("set-client-name", json!({"ClientName": "crash-test"})).await;
    let after = client.ok("get-version", none()).await;
    assert_ne!(after["EditorInstanceId"], before["EditorInstanceId"]);
    // Its journal is empty: the same id resumed runs again.
    let mut request = Request::new(id.clone(), "clear-console", json!({}));
    request.extra.insert("x-resume".into(), true.into());
    client.send(&Message::Request(request)).await;
    assert!(client.response(&id).await.outcome.is_ok());
    let stats = stats(&editor).await;
    assert_eq!((stats["runs"]["clear-console"].clone(), stats["crashes"].clone()), (json!(2), json!(1)));
}

#[tokio::test]
async fn a_crash_leaves_a_stale_discovery_file_until_a_restart() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    client.ok("ping", none()).await;
    assert!(editor.fake.crash(CrashOptions::default()).await.is_none());
    assert!(client.until_closed().await.is_empty());
    eventually("the crash", || editor.fake.editor().is_crashed()).await;
    let file = editor.discovery();
    assert_eq!(file.state, Some(EditorState::Ready), "a crash leaves the file as it was…");
    assert!(!pid_alive(file.pid), "…naming a process that is gone");
    // Nothing of this Editor listens. (The port is free: another test's
    // Editor may have taken it meanwhile, so a connection that succeeds is
    // judged by whether this Editor accepted it.)
    let accepted = || editor.fake.editor().stats.connections_accepted.load(std::sync::atomic::Ordering::SeqCst);
    let before = accepted();
    if let Ok(stream) = TcpStream::connect(("127.0.0.1", file.port)).await {
        drop(stream);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert_eq!(accepted(), before, "the crashed Editor accepted a connection");
    }
    assert_eq!(editor.state().await["state"], "crashed");

    let report = editor.fake.control().post("/restart", json!({})).await.unwrap();
    assert_eq!(report["port"], file.port, "the same port when it is free");
    let mut client = Client::connect(editor.port(), Framing::Header).await;
    client.ok("ping", none()).await;
    assert!(pid_alive(editor.discovery().pid));
}

#[tokio::test]
async fn a_hung_editor_reads_answers_and_accepts_nothing_until_it_wakes() {
    let editor = TestEditor::start().await;
    let fault = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::Hang(fake_unity::faults::Hang { ms: None })).named("hang").method("clear-console"),
        )
        .unwrap();
    let mut client = editor.connect().await;
    client.ok("ping", none()).await;
    let id = client.request("clear-console", json!({})).await;
    client.request("ping", none()).await;
    assert!(quiet(&mut client).await, "no answer while hung, not even to ping");
    assert_eq!(stats(&editor).await["runs"]["clear-console"], Value::Null, "nothing ran");
    // A new connection completes in the kernel and is never served.
    let mut other = Client::connect(editor.port(), Framing::Header).await.ids_from(50);
    other.request("ping", none()).await;
    assert!(quiet(&mut other).await);
    assert_eq!(editor.state().await["connections"].as_array().unwrap().len(), 1, "not accepted");
    assert_eq!(fault.fired(), 1);

    // The hang ends with its rule: everything waiting is served.
    drop(fault);
    assert!(client.response(&id).await.outcome.is_ok());
    let pong = other.recv().await.unwrap();
    assert!(matches!(pong, Message::Response(r) if r.outcome.is_ok()));
    assert_eq!(stats(&editor).await["runs"]["clear-console"], 1, "it ran once, after the hang");
}

#[tokio::test]
async fn a_hang_ends_after_its_time_or_when_told() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    editor.fake.control().post("/hang", json!({})).await.unwrap();
    let id = client.request("ping", none()).await;
    assert!(quiet(&mut client).await);
    editor.fake.control().delete("/hang").await.unwrap();
    assert!(client.response(&id).await.outcome.is_ok());

    editor.fake.hang(Some(Duration::from_millis(300)));
    let id = client.request("ping", none()).await;
    assert!(client.response(&id).await.outcome.is_ok(), "answered once the hang is over");
}

#[tokio::test]
async fn a_dead_listener_accepts_nothing_until_its_rule_goes() {
    let editor = TestEditor::start_with(|config| {
        config.scenario.faults = vec![
            RuleSpec::new(Fault::DeadListener(fake_unity::faults::DeadListener { ms: None }))
                .named("dead")
                .on(Trigger::Start),
        ];
    })
    .await;
    let mut client = editor.connect().await;
    client.request("ping", none()).await;
    assert!(quiet(&mut client).await, "connected in the kernel, never served");
    assert_eq!(editor.state().await["deadListener"], true);
    editor.fake.control().delete("/faults/dead").await.unwrap();
    assert!(matches!(client.recv().await, Some(Message::Response(r)) if r.outcome.is_ok()));
}

#[tokio::test]
async fn ids_come_back_exactly_as_they_were_written() {
    let editor = TestEditor::start().await;
    let mut stream = TcpStream::connect(("127.0.0.1", editor.port())).await.unwrap();
    for id in ["123456789012345678901234567890", "-0", "1.50", "1e2", "\"x\""] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{}}}}"#);
        stream.write_all(&frame_bytes(Framing::Header, body.as_bytes()).unwrap()).await.unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&got).contains("received") {
            let n = tokio::time::timeout(WAIT, stream.read(&mut buf)).await.unwrap().unwrap();
            assert!(n > 0, "closed");
            got.extend_from_slice(&buf[..n]);
        }
        let text = String::from_utf8_lossy(&got);
        assert!(text.contains(&format!(r#""id":{id},"result""#)), "id {id} came back as: {text}");
    }
}

#[tokio::test]
async fn a_client_that_never_reads_is_no_longer_read_instead_of_growing_the_editor() {
    let editor = TestEditor::start().await;
    let mut stream = TcpStream::connect(("127.0.0.1", editor.port())).await.unwrap();
    // Requests whose answers are large (1 MB each), never read.
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"Message":"x"}}"#;
    let _fault = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::ResponseSize(fake_unity::faults::ResponseSize { bytes: 1 << 20 }))
                .method("ping")
                .times(u64::MAX),
        )
        .unwrap();
    let frame = frame_bytes(Framing::Header, body).unwrap();
    let mut sent = 0usize;
    // Write until the Editor stops reading and the kernel's buffers fill.
    loop {
        match tokio::time::timeout(Duration::from_millis(500), stream.write_all(&frame)).await {
            Ok(Ok(())) => sent += 1,
            Ok(Err(e)) => panic!("the Editor dropped the connection: {e}"),
            Err(_) => break,
        }
        assert!(sent < 1_000_000, "the Editor kept reading requests whose answers nobody reads");
    }
    let state = editor.state().await;
    let queued = state["connections"][0]["queuedBytes"].as_u64().unwrap();
    let limit = fake_unity::editor::Client::QUEUE_LIMIT as u64;
    assert!(queued <= limit + 70 * (1 << 20), "queued {queued} bytes after {sent} requests");
    let requests = stats(&editor).await["requests"].as_u64().unwrap();
    assert!(requests < 200, "{requests} requests read from a client that reads nothing");
    // And the Editor still serves others.
    let mut other = editor.connect().await;
    other.ok("get-version", none()).await;
}
