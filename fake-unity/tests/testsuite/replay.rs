//! Recording through the proxy, and replaying: the same client gets the same
//! answers from the replay as from the Editor it was recorded against; a
//! request that differs gets the mismatch report; reloads, matching modes,
//! unused records and unexpected connections.

use std::{path::Path, time::Duration};

use editor_link::{
    discovery::{DiscoveryFile, EditorState},
    framing::Framing,
    jsonrpc::{Message, Notification, notifications},
    redaction::blank_timestamps,
    transcript::Transcript,
};
use fake_unity::{
    record::{RecordConfig, RecordProxy},
    replay::{MatchMode, OnUnexpected, Outcome, Replay, ReplayConfig},
};
use serde_json::{Value, json};

use crate::support::{Client, TestEditor, eventually, none};

/// Timestamps differ between a run and its replay (they are `${TIME}` in
/// the transcript); everything else must be identical.
fn normalised(mut value: Value) -> Value {
    blank_timestamps(&mut value, "<time>");
    value
}

/// A typical session on one connection; everything the client received.
async fn session(port: u16) -> Vec<Value> {
    let mut client = Client::connect(port, Framing::Header).await;
    let mut seen = Vec::new();
    seen.push(client.ok("set-client-name", json!({"ClientName": "replay-test"})).await);
    seen.push(client.ok("get-version", none()).await);
    client.notify("notifications/initialized", none()).await;
    seen.push(client.ok("get-logs", json!({"MaxCount": 3})).await);
    let id = client.request("compile", none()).await;
    let progress = client.notification(notifications::PROGRESS).await;
    seen.push(progress.params.unwrap_or_default());
    seen.push(client.response(&id).await.outcome.unwrap());
    seen.push(client.ok("find-game-objects", json!({"NamePattern": "Player*"})).await);
    let error = client.err("no-such-tool", none()).await;
    seen.push(json!({"code": error.code, "message": error.message}));
    seen.into_iter().map(normalised).collect()
}

async fn record(editor: &TestEditor, out: &Path) -> RecordProxy {
    RecordProxy::start(RecordConfig {
        upstream: format!("127.0.0.1:{}", editor.port()),
        port: 0,
        out: out.to_owned(),
        project: Some(editor.path().to_owned()),
        no_redact: false,
    })
    .await
    .unwrap()
}

fn replay_config(path: &Path, project: &Path) -> ReplayConfig {
    let mut config = ReplayConfig::new(path.to_owned(), Transcript::read(path).unwrap());
    config.project = Some(project.to_owned());
    config.idle_timeout = Duration::from_millis(500);
    config
}

async fn finish(replay: Replay) -> Outcome {
    tokio::time::timeout(Duration::from_secs(20), replay.finished()).await.expect("the replay ends")
}

#[tokio::test]
async fn a_proxy_recording_replays_with_identical_answers() {
    let editor = TestEditor::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.jsonl");
    let proxy = record(&editor, &file).await;
    let live = session(proxy.port()).await;
    assert_eq!(proxy.stop().await, 1);

    let transcript = Transcript::read(&file).unwrap();
    assert_eq!(transcript.header.producer, "fake-unity record");
    let text = std::fs::read_to_string(&file).unwrap();
    let project = std::fs::canonicalize(editor.path()).unwrap();
    assert!(!text.contains(project.to_str().unwrap()), "the project path is redacted");
    assert!(text.contains("${PROJECT}/Assets"));

    // The Editor is gone; the replay answers in its place, on its project.
    let TestEditor { fake, project } = editor;
    fake.quit().await;
    let replay = Replay::start(replay_config(&file, project.path())).await.unwrap();
    assert_eq!(DiscoveryFile::read(project.path()).unwrap().port, replay.port());
    let replayed = session(replay.port()).await;
    assert_eq!(replayed, live, "the same answers, field for field");
    let outcome = finish(replay).await;
    assert!(outcome.ok, "{outcome:#?}");
    assert_eq!((outcome.matched, outcome.requests), (6, 6));
}

#[tokio::test]
async fn a_changed_request_gets_the_mismatch_report() {
    let editor = TestEditor::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("session.jsonl");
    let proxy = record(&editor, &file).await;
    session(proxy.port()).await;
    proxy.stop().await;

    let replay = Replay::start(replay_config(&file, dir.path())).await.unwrap();
    let mut client = Client::connect(replay.port(), Framing::Header).await;
    client.ok("set-client-name", json!({"ClientName": "replay-test"})).await;
    client.ok("get-version", none()).await;
    let error = client.err("get-logs", json!({"MaxCount": 30})).await;
    assert!(error.detail().contains("not in the transcript"), "{error:?}");
    drop(client);
    let outcome = finish(replay).await;
    assert!(!outcome.ok);
    let [mismatch] = &outcome.mismatches[..] else { panic!("{outcome:#?}") };
    assert_eq!(mismatch.received["params"], json!({"MaxCount": 30}));
    assert_eq!(mismatch.first_difference.as_deref(), Some("params.MaxCount"));
    let expected = mismatch.expected.as_ref().unwrap();
    assert_eq!(expected.summary, r#"get-logs {"MaxCount":3}"#);
    assert!(expected.line > 1 && expected.seq > 0);
    assert_eq!(mismatch.candidates[0].differences[0].describe(), "params.MaxCount: recorded 3, received 30");
    assert!(mismatch.reason.contains("params.MaxCount"), "{}", mismatch.reason);
    assert!(mismatch.rerun.starts_with("fake-unity replay ") && mismatch.rerun.contains("--ignore params.MaxCount"));
    let report = mismatch.report("session.jsonl");
    for part in
        ["MISMATCH", "received:", "expected:  session.jsonl:", "reason:", "nearest recorded candidates", "re-run:"]
    {
        assert!(report.contains(part), "{part} in\n{report}");
    }
    // Everything after the mismatch was never received.
    assert!(outcome.unused.iter().any(|u| u.summary.starts_with("get-logs")));
    assert!(outcome.unused.iter().any(|u| u.summary.starts_with("compile")));
}

#[tokio::test]
async fn matching_modes_and_ignored_paths_decide_what_pairs() {
    let editor = TestEditor::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.jsonl");
    let proxy = record(&editor, &file).await;
    {
        let mut client = Client::connect(proxy.port(), Framing::Header).await;
        client.ok("get-logs", json!({"MaxCount": 1})).await;
        client.ok("get-hierarchy", json!({})).await;
    }
    proxy.stop().await;
    let reversed = |mut client: Client| async move {
        let a = client.call("get-hierarchy", json!({})).await;
        let b = client.call("get-logs", json!({"MaxCount": 2})).await;
        (a.outcome.is_ok(), b.outcome.is_ok())
    };

    let replay = Replay::start(replay_config(&file, dir.path())).await.unwrap();
    let answers = reversed(Client::connect(replay.port(), Framing::Header).await).await;
    // Ordered: each method in its order, so the swap is fine; the changed
    // parameter is not.
    assert_eq!(answers, (true, false));
    assert!(!finish(replay).await.ok);

    let mut config = replay_config(&file, dir.path());
    config.mode = MatchMode::Strict;
    config.ignore = vec!["params.MaxCount".parse().unwrap()];
    let replay = Replay::start(config).await.unwrap();
    let answers = reversed(Client::connect(replay.port(), Framing::Header).await).await;
    assert_eq!(answers, (false, true), "strict: get-hierarchy is not the next frame; get-logs is");
    assert!(!finish(replay).await.ok);

    let mut config = replay_config(&file, dir.path());
    config.mode = MatchMode::Key;
    config.ignore = vec!["params.MaxCount".parse().unwrap()];
    let replay = Replay::start(config).await.unwrap();
    let answers = reversed(Client::connect(replay.port(), Framing::Header).await).await;
    assert_eq!(answers, (true, true));
    let outcome = finish(replay).await;
    assert!(outcome.ok, "{outcome:#?}");
}

#[tokio::test]
async fn strict_matching_wants_client_notifications_in_their_place() {
    let editor = TestEditor::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.jsonl");
    let proxy = record(&editor, &file).await;
    {
        let mut client = Client::connect(proxy.port(), Framing::Header).await;
        client.notify("notifications/initialized", none()).await;
        client.ok("get-logs", json!({"MaxCount": 1})).await;
    }
    proxy.stop().await;
    for (mode, ok) in [(MatchMode::Ordered, true), (MatchMode::Strict, false)] {
        let mut config = replay_config(&file, dir.path());
        config.mode = mode;
        let replay = Replay::start(config).await.unwrap();
        let mut client = Client::connect(replay.port(), Framing::Header).await;
        // The notification is left out.
        let answered = client.call("get-logs", json!({"MaxCount": 1})).await.outcome.is_ok();
        drop(client);
        let outcome = finish(replay).await;
        assert_eq!((answered, outcome.ok), (ok, ok), "{mode:?}: {outcome:#?}");
    }
}

#[tokio::test]
async fn a_recorded_reload_is_replayed_with_its_discovery_file() {
    let editor = TestEditor::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("reload.jsonl");
    let proxy = record(&editor, &file).await;
    {
        let mut client = Client::connect(proxy.port(), Framing::Header).await;
        client.ok("get-logs", json!({"MaxCount": 1})).await;
        editor.fake.control().post("/reload", json!({"downtimeMs": 300})).await.unwrap();
        let seen = client.until_closed().await;
        assert!(matches!(&seen[..], [Message::Notification(n)] if n.method == notifications::SERVER_SHUTDOWN));
        eventually("the Editor back", || editor.fake.editor().phase() == EditorState::Ready).await;
        let mut client = Client::connect(proxy.port(), Framing::Header).await;
        client.ok("get-hierarchy", json!({})).await;
    }
    proxy.stop().await;

    let project = tempfile::tempdir().unwrap();
    let replay = Replay::start(replay_config(&file, project.path())).await.unwrap();
    let port = replay.port();
    let first_session = DiscoveryFile::read(project.path()).unwrap().server_session_id;
    let mut client = Client::connect(port, Framing::Header).await;
    client.ok("get-logs", json!({"MaxCount": 1})).await;
    let seen = client.until_closed().await;
    let [Message::Notification(Notification { method, params, .. })] = &seen[..] else { panic!("{seen:?}") };
    assert_eq!(
        (method.as_str(), params.clone()),
        (notifications::SERVER_SHUTDOWN, Some(json!({"reason": "DomainReload"})))
    );
    let path = project.path().to_owned();
    eventually("the replayed Editor reloading, then ready", || {
        DiscoveryFile::read(&path)
            .is_ok_and(|d| d.state == Some(EditorState::Ready) && d.server_session_id != first_session)
    })
    .await;
    let mut client = Client::connect(port, Framing::Header).await;
    client.ok("get-hierarchy", json!({})).await;
    drop(client);
    let outcome = finish(replay).await;
    assert!(outcome.ok, "{outcome:#?}");
    assert_eq!(outcome.connections, 2);
}

#[tokio::test]
async fn unused_records_and_unexpected_connections_are_reported() {
    let editor = TestEditor::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("short.jsonl");
    let proxy = record(&editor, &file).await;
    {
        let mut client = Client::connect(proxy.port(), Framing::Header).await;
        client.ok("get-logs", json!({"MaxCount": 1})).await;
        client.ok("get-hierarchy", json!({})).await;
    }
    proxy.stop().await;

    let replay = Replay::start(replay_config(&file, dir.path())).await.unwrap();
    {
        let mut client = Client::connect(replay.port(), Framing::Header).await;
        client.ok("get-logs", json!({"MaxCount": 1})).await;
    }
    let outcome = finish(replay).await;
    assert!(!outcome.ok);
    assert_eq!(outcome.unused.len(), 1);
    assert_eq!(outcome.unused[0].summary, "get-hierarchy {}");

    let mut config = replay_config(&file, dir.path());
    config.allow_unused = true;
    config.on_unexpected = OnUnexpected::Close;
    let replay = Replay::start(config).await.unwrap();
    {
        let mut client = Client::connect(replay.port(), Framing::Header).await;
        client.ok("get-logs", json!({"MaxCount": 1})).await;
        // A client retrying in a loop gets each connection closed, and one report.
        for _ in 0..3 {
            let mut extra = Client::connect(replay.port(), Framing::Header).await;
            assert!(extra.until_closed().await.is_empty(), "a connection the recording does not have is closed");
        }
    }
    let outcome = finish(replay).await;
    assert!(!outcome.ok, "an unexpected connection is a mismatch even when unused records are allowed");
    assert_eq!(outcome.extra_connections, 3);
    let [mismatch] = &outcome.mismatches[..] else { panic!("one report for all of them: {outcome:#?}") };
    assert!(mismatch.reason.contains("not in the recording"), "{:?}", mismatch.reason);
}

#[tokio::test]
async fn what_follows_a_client_leaving_early_is_not_reached_rather_than_unused() {
    let editor = TestEditor::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("left.jsonl");
    let proxy = record(&editor, &file).await;
    {
        let mut client = Client::connect(proxy.port(), Framing::Header).await;
        let id = client.request("compile", none()).await;
        client.response(&id).await;
        client.ok("get-logs", json!({"MaxCount": 1})).await;
    }
    proxy.stop().await;

    let replay = Replay::start(replay_config(&file, dir.path())).await.unwrap();
    {
        // The client asks for the compile and leaves before its answer.
        let mut client = Client::connect(replay.port(), Framing::Header).await;
        client.request("compile", none()).await;
    }
    let outcome = finish(replay).await;
    assert!(outcome.unused.is_empty(), "{outcome:#?}");
    let [after] = &outcome.not_reached[..] else { panic!("{outcome:#?}") };
    assert_eq!(after.summary, r#"get-logs {"MaxCount":1}"#);
    assert!(outcome.ok, "{outcome:#?}");
}

#[tokio::test]
async fn the_speed_factor_stretches_recorded_delays() {
    let editor = TestEditor::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("slow.jsonl");
    let proxy = record(&editor, &file).await;
    {
        let mut client = Client::connect(proxy.port(), Framing::Header).await;
        client.ok("debug-sleep", json!({"SleepSeconds": 0.2})).await;
    }
    proxy.stop().await;
    let mut config = replay_config(&file, dir.path());
    config.speed = 0.5;
    let replay = Replay::start(config).await.unwrap();
    let mut client = Client::connect(replay.port(), Framing::Header).await;
    let started = std::time::Instant::now();
    client.ok("debug-sleep", json!({"SleepSeconds": 0.2})).await;
    // At half speed the recorded 200 ms take at least 400 ms.
    assert!(started.elapsed() >= Duration::from_millis(400), "{:?}", started.elapsed());
    drop(client);
    assert!(finish(replay).await.ok);
}

#[tokio::test]
async fn the_same_seed_and_scenario_record_the_same_transcript() {
    use fake_unity::{Fault, FrameKind, RuleSpec};
    async fn run(seed: u64) -> Vec<Value> {
        let editor = TestEditor::start_with(|c| {
            c.seed = Some(seed);
            c.clock = fake_unity::Clock::Virtual;
        })
        .await;
        // The first matching rule of a direction wins, so each fault has a
        // frame of its own (a latency on responses would take them all).
        let _rules: Vec<_> = [
            RuleSpec::new(Fault::Corrupt(fake_unity::faults::Corrupt {})).method("notifications/progress"),
            RuleSpec::new(Fault::Slicer(fake_unity::faults::Slicer { bytes: 64, size_variation: 32, delay_ms: 1 }))
                .frame(FrameKind::Response),
            RuleSpec::new(Fault::Latency(fake_unity::faults::Latency { ms: 5, jitter_ms: 5 }))
                .on(fake_unity::Trigger::ToEditor),
        ]
        .into_iter()
        .map(|rule| editor.fake.add_fault(rule).unwrap())
        .collect();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.jsonl");
        let proxy = record(&editor, &file).await;
        {
            let mut client = Client::connect(proxy.port(), Framing::Header).await;
            client.ok("get-logs", json!({"MaxCount": 2})).await;
            client.request("run-tests", json!({"FilterType": "regex", "FilterValue": "HealthTests"})).await;
            // Some progress notifications arrive corrupted: read frames, not messages.
            client
                .bodies_until(|body| {
                    serde_json::from_slice::<Value>(body).is_ok_and(|m| m["id"] == 2 && m.get("result").is_some())
                })
                .await;
        }
        proxy.stop().await;
        // Everything but the milliseconds, which the machine decides.
        Transcript::read(&file)
            .unwrap()
            .records
            .iter()
            .map(|r| {
                let mut v = r.to_value();
                v.as_object_mut().unwrap().remove("ms");
                v
            })
            .collect()
    }
    let (first, again, other) = (run(5).await, run(5).await, run(6).await);
    assert!(first.iter().any(|r| r.get("raw").is_some()), "the corrupted progress is in the transcript, in base64");
    for (a, b) in first.iter().zip(&again) {
        assert_eq!(a, b, "the two runs differ here");
    }
    assert_eq!(first.len(), again.len());
    assert_ne!(first, other, "another seed corrupts other bytes");
}

#[tokio::test]
async fn an_unrecorded_ping_is_answered_except_in_strict_mode() {
    let editor = TestEditor::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pinged.jsonl");
    let proxy = record(&editor, &file).await;
    {
        let mut client = Client::connect(proxy.port(), Framing::Header).await;
        client.ok("get-logs", json!({"MaxCount": 1})).await;
    }
    proxy.stop().await;

    let replay = Replay::start(replay_config(&file, dir.path())).await.unwrap();
    {
        let mut client = Client::connect(replay.port(), Framing::Header).await;
        let pong = client.ok("ping", json!({"Message": "alive?"})).await;
        assert_eq!(pong["Message"], "Unity MCP Bridge received: alive?");
        client.ok("get-logs", json!({"MaxCount": 1})).await;
    }
    let outcome = finish(replay).await;
    assert!(outcome.ok, "{outcome:#?}");
    assert_eq!((outcome.pings_answered, outcome.matched), (1, 1));

    let mut config = replay_config(&file, dir.path());
    config.mode = MatchMode::Strict;
    let replay = Replay::start(config).await.unwrap();
    {
        let mut client = Client::connect(replay.port(), Framing::Header).await;
        let error = client.err("ping", json!({"Message": "alive?"})).await;
        assert!(error.detail().contains("not in the transcript"), "{error:?}");
    }
    let outcome = finish(replay).await;
    assert!(!outcome.ok);
    assert_eq!(outcome.pings_answered, 0);
    assert!(outcome.mismatches[0].received["method"] == "ping", "{outcome:#?}");
}

#[tokio::test]
async fn background_methods_may_come_more_or_less_often_than_recorded() {
    let editor = TestEditor::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("background.jsonl");
    let proxy = record(&editor, &file).await;
    let recorded = {
        let mut client = Client::connect(proxy.port(), Framing::Header).await;
        let tools = client.ok("get-tool-details", json!({})).await;
        client.ok("get-logs", json!({"MaxCount": 1})).await;
        tools
    };
    proxy.stop().await;

    // Once more than recorded: the same answer again.
    let mut config = replay_config(&file, dir.path());
    config.background = vec!["get-tool-details".into()];
    let replay = Replay::start(config.clone()).await.unwrap();
    {
        let mut client = Client::connect(replay.port(), Framing::Header).await;
        assert_eq!(client.ok("get-tool-details", json!({})).await, recorded);
        assert_eq!(client.ok("get-tool-details", json!({})).await, recorded, "answered again");
        client.ok("get-logs", json!({"MaxCount": 1})).await;
    }
    let outcome = finish(replay).await;
    assert!(outcome.ok, "{outcome:#?}");
    assert_eq!(outcome.background_repeats, 1);

    // Never: listed apart, not a failure.
    let replay = Replay::start(config).await.unwrap();
    {
        let mut client = Client::connect(replay.port(), Framing::Header).await;
        client.ok("get-logs", json!({"MaxCount": 1})).await;
    }
    let outcome = finish(replay).await;
    assert!(outcome.ok, "{outcome:#?}");
    assert!(outcome.unused.is_empty());
    assert_eq!(outcome.background_unused[0].summary, "get-tool-details {}");

    // Without the option, the extra request is a mismatch.
    let replay = Replay::start(replay_config(&file, dir.path())).await.unwrap();
    {
        let mut client = Client::connect(replay.port(), Framing::Header).await;
        client.ok("get-tool-details", json!({})).await;
        client.err("get-tool-details", json!({})).await;
    }
    let outcome = finish(replay).await;
    assert!(!outcome.ok);
    assert_eq!(outcome.background_repeats, 0);
}
