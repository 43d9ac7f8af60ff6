//! Every fault proven on the wire: a raw TCP client watches what the fake
//! Editor really sends (bytes, reads, closes, resets), and the rule's
//! counter shows it fired.

use std::{io, time::Duration};

use bytes::BytesMut;
use editor_link::{
    discovery::{DiscoveryFile, EditorState},
    framing::{Frame, FrameDecoder, Framing, frame_bytes},
    jsonrpc::{Message, Request, notifications},
};
use fake_unity::{EditorKind, Fault, FrameKind, RuleSpec, Trigger, faults::ReloadPoint};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::support::{Client, TestEditor, WAIT, eventually, kind, none};

/// How long "nothing arrives" is watched for.
const QUIET: Duration = Duration::from_millis(300);

/// How a raw read ended.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// A clean close (FIN).
    Eof,
    /// A TCP reset.
    Reset,
    /// Nothing more within the wait; the connection is still open.
    Quiet,
}

/// A raw editor-link connection that keeps every read separate.
struct Raw {
    stream: TcpStream,
}

impl Raw {
    async fn connect(port: u16) -> Raw {
        let stream = tokio::time::timeout(WAIT, TcpStream::connect(("127.0.0.1", port)))
            .await
            .unwrap_or_else(|_| panic!("timed out after {WAIT:?} connecting to {port}"))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        Raw { stream }
    }

    async fn request(&mut self, id: u64, method: &str, params: Value) {
        let body = Message::Request(Request::new(id, method, params)).to_bytes();
        self.stream.write_all(&frame_bytes(Framing::Header, &body).unwrap()).await.unwrap();
    }

    /// Every read until the connection ends or is quiet for `quiet`.
    async fn reads(&mut self, quiet: Duration) -> (Vec<Vec<u8>>, End) {
        let mut reads = Vec::new();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match tokio::time::timeout(quiet, self.stream.read(&mut buf)).await {
                Err(_) => return (reads, End::Quiet),
                Ok(Ok(0)) => return (reads, End::Eof),
                Ok(Ok(n)) => reads.push(buf[..n].to_vec()),
                Ok(Err(e)) if e.kind() == io::ErrorKind::ConnectionReset => return (reads, End::Reset),
                Ok(Err(e)) => panic!("read failed: {e}"),
            }
        }
    }

    /// Everything until the connection ends or is quiet for `quiet`.
    async fn bytes(&mut self, quiet: Duration) -> (Vec<u8>, End) {
        let (reads, end) = self.reads(quiet).await;
        (reads.concat(), end)
    }
}

/// Header-framed bodies in `bytes`, and what is left over.
fn frames(bytes: &[u8]) -> (Vec<Vec<u8>>, usize) {
    let mut buf = BytesMut::from(bytes);
    let mut decoder = FrameDecoder::new(Framing::Header, 1 << 30);
    let mut bodies = Vec::new();
    while let Ok(Some(Frame::Body(body))) = decoder.decode_frame(&mut buf) {
        bodies.push(body.to_vec());
    }
    (bodies, buf.len())
}

fn json_of(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(body)))
}

/// A ping's response body as the Editor sends it without faults.
async fn plain_ping(editor: &TestEditor, id: u64) -> Vec<u8> {
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(id, "ping", json!({"Message": "x"})).await;
    let mut got = Vec::new();
    loop {
        let (reads, _) = raw.reads(Duration::from_millis(100)).await;
        got.extend(reads.concat());
        if let Some(body) = frames(&got).0.into_iter().next() {
            return body;
        }
    }
}

#[tokio::test]
async fn latency_delays_the_response_by_at_least_its_time() {
    let editor = TestEditor::start().await;
    let fault = editor
        .fake
        .add_fault(RuleSpec::new(Fault::Latency(fake_unity::faults::Latency { ms: 300, jitter_ms: 0 })).method("ping"))
        .unwrap();
    let mut client = editor.connect().await;
    let started = std::time::Instant::now();
    client.ok("ping", none()).await;
    assert!(started.elapsed() >= Duration::from_millis(300), "answered after {:?}", started.elapsed());
    client.ok("get-version", none()).await;
    assert_eq!(fault.fired(), 1, "only ping matches");
}

#[tokio::test]
async fn the_slicer_produces_many_small_reads() {
    let editor = TestEditor::start().await;
    let plain = plain_ping(&editor, 1).await;
    let fault = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::Slicer(fake_unity::faults::Slicer { bytes: 8, size_variation: 0, delay_ms: 20 }))
                .frame(FrameKind::Response),
        )
        .unwrap();
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(1, "ping", json!({"Message": "x"})).await;
    let (reads, end) = raw.reads(Duration::from_secs(2)).await;
    assert_eq!(end, End::Quiet);
    let bytes = reads.concat();
    let (bodies, rest) = frames(&bytes);
    assert_eq!((bodies, rest), (vec![plain], 0), "the pieces make the same frame");
    // 8-byte pieces 20 ms apart: a reader waiting on the socket sees them
    // one by one; allow for several to coalesce on a busy machine.
    assert!(reads.len() >= bytes.len() / 32, "{} reads for {} bytes: {:?}", reads.len(), bytes.len(), reads);
    assert!(reads.len() >= 4, "{} reads", reads.len());
    assert_eq!(fault.fired(), 1);
}

#[tokio::test]
async fn bandwidth_paces_a_large_response_over_many_writes() {
    let editor = TestEditor::start().await;
    let fault = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::Bandwidth(fake_unity::faults::Bandwidth { bytes_per_second: 100_000 }))
                .method("get-tool-details"),
        )
        .unwrap();
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(1, "get-tool-details", json!({})).await;
    let (reads, _) = raw.reads(Duration::from_secs(1)).await;
    let bytes = reads.concat();
    let (bodies, rest) = frames(&bytes);
    assert_eq!((bodies.len(), rest), (1, 0));
    assert!(bytes.len() > 10_000, "a large response: {} bytes", bytes.len());
    assert!(reads.len() >= 3, "paced in 5 kB slices: {} reads", reads.len());
    assert_eq!(fault.fired(), 1);
}

#[tokio::test]
async fn close_after_bytes_cuts_the_frame_where_asked() {
    let editor = TestEditor::start().await;
    let plain = plain_ping(&editor, 1).await;
    let framed = frame_bytes(Framing::Header, &plain).unwrap();
    let fault = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::CloseAfterBytes(fake_unity::faults::CloseAfterBytes { bytes: 30 })).method("ping"),
        )
        .unwrap();
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(1, "ping", json!({"Message": "x"})).await;
    let (bytes, end) = raw.bytes(WAIT).await;
    assert_eq!(end, End::Eof);
    assert_eq!(bytes, framed[..30], "exactly the first 30 bytes of the frame, then a close");
    assert_eq!(fault.fired(), 1);
}

#[tokio::test]
async fn a_black_hole_swallows_everything_then_closes_when_asked() {
    let editor = TestEditor::start().await;
    let fault = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::BlackHole(fake_unity::faults::BlackHole { close_after_ms: Some(500) }))
                .method("get-logs")
                .times(1),
        )
        .unwrap();
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(1, "get-logs", json!({})).await;
    let (bytes, end) = raw.bytes(QUIET).await;
    assert_eq!((bytes.len(), end), (0, End::Quiet));
    raw.request(2, "ping", json!({})).await;
    let (bytes, end) = raw.bytes(WAIT).await;
    assert_eq!((bytes.len(), end), (0, End::Eof), "nothing answered, then closed");
    assert_eq!(fault.fired(), 1);
    // Other connections are served.
    editor.connect().await.ok("ping", none()).await;
}

#[rstest::rstest]
#[case::from_editor(Trigger::FromEditor)]
#[case::to_editor(Trigger::ToEditor)]
#[case::on_connect(Trigger::Connect)]
#[tokio::test]
async fn reset_aborts_the_connection(#[case] on: Trigger) {
    let editor = TestEditor::start().await;
    let fault =
        editor.fake.add_fault(RuleSpec::new(Fault::Reset(fake_unity::faults::Reset {})).on(on).times(1)).unwrap();
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(1, "ping", json!({})).await;
    let (bytes, end) = raw.bytes(WAIT).await;
    assert_eq!((bytes.len(), end), (0, End::Reset), "a reset, not a clean close");
    assert_eq!(fault.fired(), 1);
}

#[tokio::test]
async fn close_is_a_clean_close_without_an_answer() {
    let editor = TestEditor::start().await;
    let fault =
        editor.fake.add_fault(RuleSpec::new(Fault::Close(fake_unity::faults::Close {})).method("compile")).unwrap();
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(1, "compile", json!({})).await;
    let (bytes, end) = raw.bytes(WAIT).await;
    assert_eq!((bytes.len(), end), (0, End::Eof));
    assert_eq!(fault.fired(), 1);
}

#[tokio::test]
async fn refused_connections_are_reset_at_once_until_the_rule_runs_out() {
    let editor = TestEditor::start().await;
    let fault = editor
        .fake
        .add_fault(RuleSpec::new(Fault::RefuseConnections(fake_unity::faults::RefuseConnections {})).times(2))
        .unwrap();
    for _ in 0..2 {
        let mut raw = Raw::connect(editor.port()).await;
        let (bytes, end) = raw.bytes(WAIT).await;
        assert_eq!((bytes.len(), end), (0, End::Reset));
    }
    editor.connect().await.ok("ping", none()).await;
    assert_eq!(fault.fired(), 2);
}

#[tokio::test]
async fn garbage_comes_before_the_frame() {
    let editor = TestEditor::start().await;
    let plain = plain_ping(&editor, 1).await;
    let framed = frame_bytes(Framing::Header, &plain).unwrap();
    let fault = editor
        .fake
        .add_fault(RuleSpec::new(Fault::Garbage(fake_unity::faults::Garbage { bytes: 7 })).method("ping"))
        .unwrap();
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(1, "ping", json!({"Message": "x"})).await;
    let (bytes, _) = raw.bytes(QUIET).await;
    assert_eq!(bytes.len(), 7 + framed.len());
    assert_eq!(bytes[7..], framed[..]);
    assert_eq!(fault.fired(), 1);
}

#[tokio::test]
async fn corrupt_and_truncate_send_well_framed_invalid_json() {
    let editor = TestEditor::start().await;
    let plain = plain_ping(&editor, 2).await;
    let corrupt = editor
        .fake
        .add_fault(RuleSpec::new(Fault::Corrupt(fake_unity::faults::Corrupt {})).method("ping").nth(1))
        .unwrap();
    let truncate = editor
        .fake
        .add_fault(RuleSpec::new(Fault::Truncate(fake_unity::faults::Truncate { keep: None })).method("ping"))
        .unwrap();
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(1, "ping", json!({"Message": "x"})).await;
    raw.request(2, "ping", json!({"Message": "x"})).await;
    let (bytes, _) = raw.bytes(QUIET).await;
    let (bodies, rest) = frames(&bytes);
    assert_eq!((bodies.len(), rest), (2, 0), "both frames are well framed");
    assert_eq!(bodies[0].len(), plain.len(), "corruption keeps the length (ids 1 and 2 are as long)");
    assert!(serde_json::from_slice::<Value>(&bodies[0]).is_err());
    assert_eq!(bodies[1][..], plain[..plain.len() / 2], "truncation keeps the first half");
    assert_eq!((corrupt.fired(), truncate.fired()), (1, 1));
}

#[tokio::test]
async fn duplicate_wrong_id_and_drop_change_what_answers_arrive() {
    let editor = TestEditor::start().await;
    let duplicate = editor
        .fake
        .add_fault(RuleSpec::new(Fault::Duplicate(fake_unity::faults::Duplicate {})).method("ping").nth(1))
        .unwrap();
    let wrong = editor
        .fake
        .add_fault(RuleSpec::new(Fault::WrongId(fake_unity::faults::WrongId {})).method("ping").nth(1))
        .unwrap();
    let dropped =
        editor.fake.add_fault(RuleSpec::new(Fault::Drop(fake_unity::faults::Drop {})).method("ping").nth(1)).unwrap();
    let mut raw = Raw::connect(editor.port()).await;
    for id in 1..=4 {
        raw.request(id, "ping", json!({})).await;
        // One at a time, so the rules meet the pings in order.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (bytes, _) = raw.bytes(QUIET).await;
    let ids: Vec<Value> = frames(&bytes).0.iter().map(|b| json_of(b)["id"].clone()).collect();
    // First match wins: the 1st ping is duplicated; the 2nd (the first the
    // wrong-id rule sees) gets a wrong id; the 3rd is dropped; the 4th is fine.
    assert_eq!(ids, [json!(1), json!(1), json!(1_000_002), json!(4)]);
    assert_eq!((duplicate.fired(), wrong.fired(), dropped.fired()), (1, 1, 1));
}

#[tokio::test]
async fn to_editor_faults_change_what_the_editor_handles() {
    let editor = TestEditor::start().await;
    let dropped = editor
        .fake
        .add_fault(RuleSpec::new(Fault::Drop(fake_unity::faults::Drop {})).on(Trigger::ToEditor).method("get-logs"))
        .unwrap();
    let doubled = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::Duplicate(fake_unity::faults::Duplicate {}))
                .on(Trigger::ToEditor)
                .method("clear-console"),
        )
        .unwrap();
    let corrupt = editor
        .fake
        .add_fault(RuleSpec::new(Fault::Corrupt(fake_unity::faults::Corrupt {})).on(Trigger::ToEditor).method("ping"))
        .unwrap();
    let mut client = editor.connect().await;
    let lost = client.request("get-logs", none()).await;
    let twice = client.call("clear-console", json!({"AddConfirmationMessage": false})).await;
    assert!(twice.outcome.is_ok());
    let again = client.response(&twice.id.clone().unwrap()).await;
    assert_eq!(again.id, twice.id, "the request ran twice, so it is answered twice");
    client.request("ping", none()).await;
    let error = client.null_id_error().await;
    assert_eq!(kind(&error), "parse_error");
    client.ok("get-version", none()).await;
    assert!(client.backlog.iter().all(|m| !matches!(m, Message::Response(r) if r.id.as_ref() == Some(&lost))));
    assert_eq!((dropped.fired(), doubled.fired(), corrupt.fired()), (1, 1, 1));
}

#[tokio::test]
async fn half_open_answers_nothing_and_does_not_close() {
    let editor = TestEditor::start().await;
    let fault = editor
        .fake
        .add_fault(RuleSpec::new(Fault::HalfOpen(fake_unity::faults::HalfOpen {})).method("compile"))
        .unwrap();
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(1, "compile", json!({})).await;
    raw.request(2, "ping", json!({})).await;
    let (bytes, end) = raw.bytes(QUIET).await;
    assert_eq!((bytes.len(), end), (0, End::Quiet), "silent, yet open");
    raw.request(3, "ping", json!({})).await;
    assert_eq!(fault.fired(), 1);
    // The Editor still serves everyone else.
    editor.connect().await.ok("ping", none()).await;
}

#[tokio::test]
async fn a_stalled_main_thread_holds_what_waits_for_it_as_each_editor_runs_it() {
    let stall =
        || RuleSpec::new(Fault::MainThreadStall(fake_unity::faults::MainThreadStall { ms: 250, ..Default::default() }));
    // The package: a tool waits for the main thread; the link's own
    // questions run on a worker (Dispatcher.cs) and are answered meanwhile.
    let editor = TestEditor::start().await;
    let fault = editor.fake.add_fault(stall()).unwrap();
    let mut client = editor.connect().await;
    let started = std::time::Instant::now();
    client.ok("get-logs", none()).await;
    assert!(started.elapsed() >= Duration::from_millis(250), "get-logs answered after {:?}", started.elapsed());
    let held = client.request("get-logs", none()).await;
    for question in ["ping", "get-version", "set-client-name", "get-tool-details"] {
        let asked = client.request(question, none()).await;
        let first = loop {
            match client.recv().await {
                Some(Message::Response(r)) => break r.id,
                Some(_) => {}
                None => panic!("closed"),
            }
        };
        assert_eq!(first, Some(asked), "{question} is answered while get-logs waits for the main thread");
    }
    client.response(&held).await;
    assert_eq!(fault.fired(), 6, "the stall fired on every request; it held two");

    // uLoopMCP 2.1.1 runs every request on the main thread, the handshake's too.
    let editor = TestEditor::start_with(|c| c.editor = EditorKind::Uloop211).await;
    let _fault = editor.fake.add_fault(stall()).unwrap();
    let mut client = Client::connect(editor.port(), Framing::Header).await;
    for method in ["ping", "get-version"] {
        let started = std::time::Instant::now();
        client.ok(method, none()).await;
        assert!(started.elapsed() >= Duration::from_millis(250), "{method} answered after {:?}", started.elapsed());
    }
}

#[tokio::test]
async fn a_slow_tool_reports_progress_and_meets_its_deadline() {
    let editor = TestEditor::start().await;
    let fault = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::SlowTool(fake_unity::faults::SlowTool { ms: 2_500, progress: true }))
                .method("compile"),
        )
        .unwrap();
    let mut client = editor.connect().await;
    let id = client.request("compile", none()).await;
    let progress = client.notification(notifications::PROGRESS).await;
    assert_eq!(progress.params.as_ref().unwrap()["requestId"], id.to_value());
    let response = client.response(&id).await;
    assert!(response.outcome.is_ok(), "{response:?}");
    // A deadline shorter than the slow part: the tool times out.
    let error = client.err("compile", json!({"TimeoutSeconds": 0.5})).await;
    assert_eq!(kind(&error), "timeout");
    assert_eq!(fault.fired(), 2);
}

#[tokio::test]
async fn a_deadlocked_tool_sends_no_progress() {
    let editor = TestEditor::start().await;
    let _fault = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::SlowTool(fake_unity::faults::SlowTool { ms: 60_000, progress: false }))
                .method("run-tests"),
        )
        .unwrap();
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(1, "run-tests", json!({})).await;
    let (bytes, end) = raw.bytes(Duration::from_millis(1_500)).await;
    assert_eq!((bytes.len(), end), (0, End::Quiet), "{}", String::from_utf8_lossy(&bytes));
}

#[tokio::test]
async fn a_response_can_be_made_huge() {
    let editor = TestEditor::start().await;
    let fault = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::ResponseSize(fake_unity::faults::ResponseSize { bytes: 2_000_000 }))
                .method("get-logs"),
        )
        .unwrap();
    let mut client = editor.connect().await;
    let result = client.ok("get-logs", none()).await;
    let size = result.to_string().len();
    assert!((1_990_000..=2_000_100).contains(&size), "{size} bytes");
    assert!(result["Logs"].is_array(), "the real result is still there");
    assert_eq!(fault.fired(), 1);
}

#[tokio::test]
async fn a_reload_at_a_request_moves_the_port_and_the_discovery_file_follows() {
    let editor = TestEditor::start().await;
    let before = editor.discovery();
    let fault = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::Reload(fake_unity::faults::Reload {
                downtime_ms: Some(100),
                move_port: true,
                at: ReloadPoint::BeforeRun,
            }))
            .method("compile"),
        )
        .unwrap();
    let mut client = editor.connect().await;
    client.request("compile", none()).await;
    let seen = client.until_closed().await;
    assert!(
        matches!(&seen[..], [Message::Notification(n)] if n.method == notifications::SERVER_SHUTDOWN),
        "the call is interrupted, not answered: {seen:?}"
    );
    let path = editor.path().to_owned();
    eventually("the discovery file on a new port", || {
        DiscoveryFile::read(&path).is_ok_and(|d| d.state == Some(EditorState::Ready) && d.port != before.port)
    })
    .await;
    let after = editor.discovery();
    assert_eq!(after.port, editor.port());
    Client::connect(after.port, Framing::Header).await.ok("ping", none()).await;
    assert_eq!(fault.fired(), 1);
}

#[tokio::test]
async fn a_reload_after_the_tool_ran_leaves_the_result_for_resume() {
    let editor = TestEditor::start().await;
    let _fault = editor
        .fake
        .add_fault(
            RuleSpec::new(Fault::Reload(fake_unity::faults::Reload {
                downtime_ms: Some(50),
                move_port: false,
                at: ReloadPoint::AfterRun,
            }))
            .method("clear-console"),
        )
        .unwrap();
    let mut client = editor.connect().await;
    client.ok("set-client-name", json!({"ClientName": "resumer"})).await;
    let id = client.request("clear-console", json!({"AddConfirmationMessage": true})).await;
    let seen = client.until_closed().await;
    assert!(seen.iter().all(|m| !matches!(m, Message::Response(_))), "{seen:?}");
    let port = editor.port();
    eventually("listening again", || editor.fake.editor().phase() == EditorState::Ready).await;
    let mut client = Client::connect(port, Framing::Header).await.ids_from(100);
    client.ok("set-client-name", json!({"ClientName": "resumer"})).await;
    let mut request = Request::new(id.clone(), "clear-console", json!({"AddConfirmationMessage": true}));
    request.extra.insert("x-resume".into(), true.into());
    client.send(&Message::Request(request)).await;
    let response = client.response(&id).await;
    assert!(response.outcome.is_ok(), "the journaled result: {response:?}");
}

#[tokio::test]
async fn the_tool_set_changes_across_a_reload() {
    let editor = TestEditor::start().await;
    let fault = editor
        .fake
        .add_fault(RuleSpec::new(Fault::ToolsChange(fake_unity::faults::ToolsChange {
            remove: vec!["run-tests".into(), "ping".into()],
        })))
        .unwrap();
    let names = |result: &Value| -> Vec<String> {
        result["Tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    let mut client = editor.connect().await;
    assert!(names(&client.ok("get-tool-details", none()).await).contains(&"run-tests".to_owned()));
    editor.fake.control().reload(50, false).await.unwrap();
    let mut client = editor.connect().await;
    let after = names(&client.ok("get-tool-details", none()).await);
    assert!(!after.contains(&"run-tests".to_owned()) && !after.is_empty(), "{after:?}");
    assert_eq!(kind(&client.err("ping", none()).await), "method_not_found");
    assert_eq!(fault.fired(), 1);
    editor.fake.control().post("/reset", json!({})).await.unwrap();
    client.ok("ping", none()).await;
}

#[rstest::rstest]
#[case::zombie(Fault::ZombieListener(fake_unity::faults::ZombieListener { ms: None }), End::Quiet)]
#[case::held(Fault::PortHeld(fake_unity::faults::PortHeld { ms: None }), End::Eof)]
#[tokio::test]
async fn after_a_reload_the_old_port_stays_taken(#[case] fault: Fault, #[case] old_port_ends: End) {
    let editor = TestEditor::start().await;
    let old = editor.port();
    let rule = editor.fake.add_fault(RuleSpec::new(fault).on(Trigger::Reload)).unwrap();
    assert_eq!(rule.fired(), 0);
    let report = editor.fake.control().reload(50, false).await.unwrap();
    let new = report["port"].as_u64().unwrap() as u16;
    assert_ne!(new, old, "the Editor came back elsewhere");
    assert_eq!(editor.discovery().port, new);
    let mut raw = Raw::connect(old).await;
    raw.request(1, "ping", json!({})).await;
    let (bytes, end) = raw.bytes(QUIET).await;
    assert_eq!((bytes.len(), end), (0, old_port_ends), "something accepts on the old port and never answers");
    Client::connect(new, Framing::Header).await.ok("ping", none()).await;
    assert_eq!(rule.fired(), 1);
    // Reset lets the old port go.
    editor.fake.control().post("/reset", json!({})).await.unwrap();
    let mut gone = false;
    for _ in 0..100 {
        if TcpStream::connect(("127.0.0.1", old)).await.is_err() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(gone, "the old port is released by POST /reset");
}

#[tokio::test]
async fn a_zombie_on_connect_accepts_and_never_answers() {
    let editor = TestEditor::start().await;
    let fault = editor
        .fake
        .add_fault(RuleSpec::new(Fault::ZombieListener(fake_unity::faults::ZombieListener { ms: None })).times(1))
        .unwrap();
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(1, "ping", json!({})).await;
    assert_eq!(raw.bytes(QUIET).await, (vec![], End::Quiet));
    editor.connect().await.ok("ping", none()).await;
    assert_eq!(fault.fired(), 1);
}

#[tokio::test]
async fn a_stale_discovery_file_is_left_on_quit() {
    let editor = TestEditor::start().await;
    let _fault =
        editor.fake.add_fault(RuleSpec::new(Fault::StaleDiscovery(fake_unity::faults::StaleDiscovery {}))).unwrap();
    let path = editor.path().to_owned();
    let port = editor.port();
    let TestEditor { fake, project } = editor;
    fake.quit().await;
    let stale = DiscoveryFile::read(&path).unwrap();
    assert_eq!(stale.state, Some(EditorState::Ready), "it still says ready");
    assert_eq!((stale.pid, stale.port), (fake_unity::editor::DEAD_PID, port));
    drop(project);
}

#[tokio::test]
async fn rules_match_by_connection_message_and_time() {
    let editor = TestEditor::start().await;
    let mut spec = RuleSpec::new(Fault::Drop(fake_unity::faults::Drop {})).named("second-connection");
    spec.matcher.connection = Some(2);
    let by_connection = editor.fake.add_fault(spec).unwrap();
    let mut later = RuleSpec::new(Fault::Drop(fake_unity::faults::Drop {})).named("later").method("get-version");
    later.matcher.after_ms = Some(400);
    let by_time = editor.fake.add_fault(later).unwrap();
    let mut first = editor.connect().await;
    first.ok("ping", none()).await;
    first.ok("get-version", none()).await;
    let mut second = Raw::connect(editor.port()).await;
    second.request(1, "ping", json!({})).await;
    assert_eq!(second.bytes(QUIET).await, (vec![], End::Quiet), "the second connection's answers are dropped");
    let mut third = Raw::connect(editor.port()).await;
    third.request(1, "ping", json!({})).await;
    assert_eq!(frames(&third.bytes(QUIET).await.0).0.len(), 1, "the third is served");
    tokio::time::sleep(Duration::from_millis(400)).await;
    let mut raw = Raw::connect(editor.port()).await;
    raw.request(1, "get-version", json!({})).await;
    assert_eq!(raw.bytes(QUIET).await, (vec![], End::Quiet), "dropped once the rule is active");
    assert_eq!((by_connection.fired(), by_time.fired()), (1, 1));
}

#[tokio::test]
async fn the_control_api_adds_lists_replaces_and_removes_rules() {
    let editor = TestEditor::start().await;
    let control = editor.fake.control();
    let added = control
        .post(
            "/faults",
            json!([{"name": "slow", "match": {"method": "ping"}, "fault": {"kind": "latency", "ms": 10}},
                   {"name": "lost", "on": "toEditor", "match": {"method": "get-logs"}, "fault": {"kind": "drop"}}]),
        )
        .await
        .unwrap();
    assert_eq!(added, json!({"added": ["slow", "lost"]}));
    editor.connect().await.ok("ping", none()).await;
    let stats = control.get("/stats").await.unwrap();
    let fired: Vec<(String, u64)> = stats["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap().to_owned(), r["fired"].as_u64().unwrap()))
        .collect();
    assert_eq!(fired, [("slow".to_owned(), 1), ("lost".to_owned(), 0)]);

    // Refusals name the problem.
    let duplicate = control.post("/faults", json!({"name": "slow", "fault": {"kind": "drop"}})).await.unwrap_err();
    assert!(duplicate.to_string().contains("409"), "{duplicate}");
    let typo = control.post("/faults", json!({"fault": {"kind": "latency", "ms": 1, "jiter": 2}})).await.unwrap_err();
    assert!(typo.to_string().contains("jiter"), "{typo}");
    let wrong_trigger =
        control.post("/faults", json!({"on": "connect", "fault": {"kind": "slicer", "bytes": 4}})).await.unwrap_err();
    assert!(wrong_trigger.to_string().contains("cannot be triggered on connect"), "{wrong_trigger}");

    // The bulk load is idempotent: the unchanged rule keeps its counter.
    let rules = json!([{"name": "slow", "match": {"method": "ping"}, "fault": {"kind": "latency", "ms": 10}}]);
    control.put("/faults", rules.clone()).await.unwrap();
    control.put("/faults", rules).await.unwrap();
    let listed = control.get("/faults").await.unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["fired"], 1);
    control.delete("/faults/slow").await.unwrap();
    assert!(control.delete("/faults/slow").await.unwrap_err().to_string().contains("404"));
    control.post("/faults", json!({"fault": {"kind": "drop"}})).await.unwrap();
    control.delete("/faults").await.unwrap();
    assert_eq!(control.get("/faults").await.unwrap(), json!([]));
}

#[tokio::test]
async fn the_same_seed_gives_the_same_bytes_on_the_wire() {
    async fn run() -> Vec<u8> {
        let editor = TestEditor::start_with(|c| c.clock = fake_unity::Clock::Virtual).await;
        let mut guards = Vec::new();
        for spec in [
            RuleSpec::new(Fault::Garbage(fake_unity::faults::Garbage { bytes: 16 })).method("ping"),
            RuleSpec::new(Fault::Corrupt(fake_unity::faults::Corrupt {})).method("get-logs"),
            RuleSpec::new(Fault::Slicer(fake_unity::faults::Slicer { bytes: 16, size_variation: 8, delay_ms: 1 }))
                .method("clear-console"),
            RuleSpec::new(Fault::Latency(fake_unity::faults::Latency { ms: 5, jitter_ms: 5 }))
                .frame(FrameKind::Notification),
        ] {
            guards.push(editor.fake.add_fault(spec).unwrap());
        }
        let mut raw = Raw::connect(editor.port()).await;
        let calls = [
            ("ping", json!({"Message": "same"})),
            ("get-logs", json!({})),
            ("clear-console", json!({})),
            ("get-logs", json!({})),
            ("compile", json!({})),
        ];
        let mut wire = Vec::new();
        for (id, (method, params)) in calls.into_iter().enumerate() {
            raw.request(id as u64 + 1, method, params).await;
            let (bytes, _) = raw.bytes(Duration::from_millis(150)).await;
            wire.extend(bytes);
        }
        wire
    }
    let (first, second) = (run().await, run().await);
    assert!(first.len() > 1000);
    assert!(
        first == second,
        "two runs differ:\n{}\n---\n{}",
        String::from_utf8_lossy(&first),
        String::from_utf8_lossy(&second)
    );
}

#[tokio::test]
async fn a_start_delay_keeps_the_editor_away_while_the_control_api_answers() {
    let project = tempfile::tempdir().unwrap();
    crate::support::copy_dir(&crate::support::fixture_project(), project.path());
    let mut config = fake_unity::Config::new(project.path());
    config.scenario.start_delay_ms = 300;
    config.scenario.faults =
        vec![RuleSpec::new(Fault::StaleDiscovery(fake_unity::faults::StaleDiscovery {})).on(Trigger::Start)];
    let mut fake = fake_unity::FakeUnity::start(config).await.unwrap();
    assert_eq!(fake.port(), 0);
    let stale = DiscoveryFile::read(project.path()).unwrap();
    assert_eq!(stale.pid, fake_unity::editor::DEAD_PID, "only a stale file so far");
    let state = fake.control().get("/state").await.unwrap();
    assert_eq!(state["state"], "starting");
    let port = fake.listening().await.unwrap();
    assert_eq!(DiscoveryFile::read(project.path()).unwrap().port, port);
    let token = DiscoveryFile::read(project.path()).unwrap().token;
    Client::connect(port, Framing::Header).await.with_token(token).ok("ping", none()).await;
}
