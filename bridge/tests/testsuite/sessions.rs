//! Recorded sessions: `fixtures/sessions/*.jsonl` are transcripts of typical
//! agent workflows, recorded with `unity-mcp-bridge --record` in front of
//! fake-unity. Each is replayed by `fake-unity`'s replay to the real bridge
//! binary driven by an MCP client making the same tool calls: every call
//! must be answered, the replay must find every recorded request and no
//! mismatch, and the answers must be the snapshotted ones.
//!
//! Also here: a fresh recording replays with answers identical to the live
//! run (through a reload that moves the port), a changed call makes the
//! replay fail with its report, and two runs with the same seed record the
//! same transcript.
//!
//! The fixtures are regenerated with
//! `cargo test -p unity-mcp-bridge --test testsuite regenerate_session_fixtures -- --ignored`.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use editor_link::transcript::{Step, Transcript, Workflow, blank_timestamps};
use fake_unity::{
    Config, FakeUnity, Fault, ReloadOptions, RuleSpec, Scenario,
    replay::{Outcome, Replay, ReplayConfig},
};
use serde_json::{Value, json};

use crate::e2e::{bridge, call, project};

/// The agent workflows (`fixtures/workflows.json`); the ones recorded in
/// `fixtures/sessions/` are replayed here.
fn workflows() -> Vec<Workflow> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/workflows.json");
    Workflow::parse_all(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn sessions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sessions")
}

async fn start_fake(project: &Path, scenario: Scenario) -> FakeUnity {
    let mut config = Config::new(project);
    config.seed = Some(scenario.seed.unwrap_or(11));
    config.clock = fake_unity::Clock::Virtual;
    config.state.editor.reload_downtime_ms = 200;
    config.state.editor.tools_ready_delay_ms = 20;
    config.state.compile.duration_ms = 50;
    config.scenario = scenario;
    FakeUnity::start(config).await.unwrap()
}

/// Runs a workflow against a fake Editor through the bridge, recording the
/// editor link to `transcript`; the MCP answers.
async fn run_live(workflow: &Workflow, project: &Path, transcript: &Path, scenario: Scenario) -> Vec<Value> {
    let fake = start_fake(project, scenario).await;
    let (client, _) = bridge(project, &["--record", transcript.to_str().unwrap()]).await;
    let mut answers = Vec::new();
    for step in &workflow.steps {
        match step {
            Step::Call { call: tool, arguments } => answers.push(call(client.peer(), tool, arguments.clone()).await),
            Step::Write { write: path, text } => std::fs::write(project.join(path), text).unwrap(),
            Step::ListTools { .. } => panic!("{}: a recorded workflow makes tool calls", workflow.name),
            Step::Reload { reload } => {
                let move_port = &reload.move_port;
                let before = tool_fetches(client.peer()).await;
                let options = ReloadOptions { downtime: None, move_port: *move_port };
                fake.reload(options).await.unwrap();
                // The bridge reconnects and fetches the tools again in the
                // background; the recording must hold that fetch, always.
                tool_fetches_reach(client.peer(), before + 1).await;
            }
        }
    }
    client.cancel().await.unwrap();
    fake.quit().await;
    answers
}

/// How many tool lists the bridge has fetched from the Editor (its status tool).
async fn tool_fetches(client: &rmcp::Peer<rmcp::RoleClient>) -> u64 {
    let status = call(client, unity_mcp_bridge::bridge::STATUS_TOOL, json!({})).await;
    status["structuredContent"]["tools"]["fetches"].as_u64().expect("the status tool counts tool-list fetches")
}

async fn tool_fetches_reach(client: &rmcp::Peer<rmcp::RoleClient>, n: u64) {
    let deadline = std::time::Instant::now() + crate::e2e::WAIT;
    while tool_fetches(client).await < n {
        assert!(
            std::time::Instant::now() < deadline,
            "the bridge fetched fewer than {n} tool lists within {:?}",
            crate::e2e::WAIT
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Replays `transcript` to the bridge making `calls`; the answers and how
/// the replay went.
async fn run_replayed(transcript: &Path, calls: &[(String, Value)], project: &Path) -> (Vec<Value>, Outcome) {
    let mut config = ReplayConfig::new(transcript.to_owned(), Transcript::read(transcript).unwrap());
    config.project = Some(project.to_owned());
    config.idle_timeout = Duration::from_secs(2);
    // How many times the bridge fetches the tool list depends on whether an
    // Editor's `list_changed` lands before or after a fetch is on its way.
    config.background = vec!["get-tool-details".into()];
    let replay = Replay::start(config).await.unwrap();
    let (client, _) = bridge(project, &[]).await;
    let mut answers = Vec::new();
    for (tool, args) in calls {
        answers.push(call(client.peer(), tool, args.clone()).await);
    }
    client.cancel().await.unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(20), replay.finished()).await.expect("the replay ends");
    (answers, outcome)
}

/// Keys whose values change from run to run.
const VOLATILE: &[&str] = &[
    "CompletedAt",
    "ImagePath",
    "XmlPath",
    "ResultsFilePath",
    "hierarchyFilePath",
    "SearchDurationMs",
    "DataPath",
    "serverSessionId",
    "port",
    "project",
    "connectedSince",
    "uptimeSeconds",
    "fetchedAt",
    "startedAt",
    "timestamp",
];

fn redact(value: &mut Value, project: &str) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if VOLATILE.contains(&k.as_str()) && !v.is_null() && v.as_str() != Some("") {
                    *v = json!(format!("[{k}]"));
                } else {
                    redact(v, project);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact(v, project)),
        Value::String(s) if s.contains(project) => *s = s.replace(project, "[project]"),
        _ => {}
    }
}

/// A result with its text block checked against its structured content.
fn tidy(mut answer: Value, project: &str) -> Value {
    if let Some(result) = answer.get_mut("result") {
        if let (Some(text), Some(structured)) = (result["content"][0]["text"].as_str(), result.get("structuredContent"))
        {
            let parsed: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            if &parsed == structured {
                result["content"][0]["text"] = json!("[the structuredContent, as JSON text]");
            }
        }
    }
    redact(&mut answer, project);
    answer
}

/// Answers with what differs between runs made equal: timestamps, and
/// the project folder.
fn comparable(answers: &[Value], project: &Path) -> Vec<Value> {
    let root = std::fs::canonicalize(project).unwrap().to_string_lossy().into_owned();
    answers
        .iter()
        .map(|a| {
            let mut a = tidy(json!({"result": a}), &root);
            blank_timestamps(&mut a, "[time]");
            a
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes fixtures/sessions; run to regenerate them"]
async fn regenerate_session_fixtures() {
    // The workflows recorded in fixtures/sessions/ (the others are only run
    // live, by the conformance suite).
    for workflow in workflows().into_iter().filter(|w| sessions_dir().join(format!("{}.jsonl", w.name)).exists()) {
        let project = project();
        let out = sessions_dir().join(format!("{}.jsonl", workflow.name));
        run_live(&workflow, project.path(), &out, Scenario::default()).await;
        eprintln!("wrote {}", out.display());
    }
}

async fn replay_fixture(name: &str) {
    let path = sessions_dir().join(format!("{name}.jsonl"));
    let transcript = Transcript::read(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(transcript.header.producer, "unity-mcp-bridge");
    let calls = Transcript::tool_calls(&transcript);
    assert!(!calls.is_empty(), "{name}: no tool calls");
    let project = project();
    let (answers, outcome) = run_replayed(&path, &calls, project.path()).await;
    assert!(outcome.ok, "{name}: {outcome:#?}");
    assert_eq!(outcome.matched, outcome.requests);
    for (answer, (tool, _)) in answers.iter().zip(&calls) {
        let text = answer.to_string();
        assert!(!text.contains("not in the transcript"), "{name}: {tool} was not replayed: {text}");
    }
    insta::assert_json_snapshot!(format!("session_{}", name.replace('-', "_")), comparable(&answers, project.path()));
}

macro_rules! replayed_sessions {
    ($($test:ident => $name:literal,)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $test() {
                replay_fixture($name).await;
            }
        )*

        #[test]
        fn every_workflow_has_a_fixture_and_a_test() {
            let mut files: Vec<String> = std::fs::read_dir(sessions_dir())
                .unwrap()
                .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".jsonl").map(str::to_owned))
                .collect();
            files.sort();
            let mut tested = vec![$($name.to_owned()),*];
            tested.sort();
            assert_eq!(files, tested, "a session file without a test, or a test without its file");
            let workflows: Vec<String> = workflows().iter().map(|w| w.name.clone()).collect();
            for name in &tested {
                assert!(workflows.contains(name), "{name}: each fixture is regenerated from a workflow");
            }
        }
    };
}

replayed_sessions! {
    replays_inspect_scene => "inspect-scene",
    replays_edit_compile_fix => "edit-compile-fix",
    replays_run_tests_read_failures => "run-tests-read-failures",
    replays_search_assets => "search-assets",
    replays_reload_moves_port => "reload-moves-port",
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_recording_replays_with_identical_answers() {
    for name in ["edit-compile-fix", "reload-moves-port"] {
        let workflow = workflows().into_iter().find(|w| w.name == name).unwrap();
        let live_project = project();
        let dir = tempfile::tempdir().unwrap();
        let transcript = dir.path().join("session.jsonl");
        let live = run_live(&workflow, live_project.path(), &transcript, Scenario::default()).await;
        let text = std::fs::read_to_string(&transcript).unwrap();
        let root = std::fs::canonicalize(live_project.path()).unwrap();
        assert!(!text.contains(root.to_str().unwrap()), "{name}: the project path is redacted");

        let replay_project = project();
        let calls = Transcript::tool_calls(&Transcript::read(&transcript).unwrap());
        let (replayed, outcome) = run_replayed(&transcript, &calls, replay_project.path()).await;
        assert!(outcome.ok, "{name}: {outcome:#?}");
        assert_eq!(
            comparable(&replayed, replay_project.path()),
            comparable(&live, live_project.path()),
            "{name}: the replay answers as the Editor did"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_call_fails_the_replay_with_its_report() {
    let path = sessions_dir().join("inspect-scene.jsonl");
    let transcript = Transcript::read(&path).unwrap();
    let mut calls = Transcript::tool_calls(&transcript);
    calls[1].1["NamePattern"] = json!("Turret");
    let project = project();
    let (answers, outcome) = run_replayed(&path, &calls, project.path()).await;
    assert_eq!(answers[1]["isError"], true, "{:#}", answers[1]);
    assert!(!outcome.ok);
    let mismatch = &outcome.mismatches[0];
    assert_eq!(mismatch.first_difference.as_deref(), Some("params.NamePattern"));
    assert_eq!(
        mismatch.candidates[0].differences[0].describe(),
        r#"params.NamePattern: recorded "Enemy", received "Turret""#
    );
    assert!(mismatch.rerun.contains("inspect-scene.jsonl"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_seed_and_scenario_record_the_same_transcript() {
    // A scenario with random choices: jittered latency and sliced writes.
    // (That the seed decides corrupted bytes is shown through the recording
    // proxy in fake-unity's tests: here they would carry the bridge's run id.)
    let scenario = |seed| Scenario {
        seed: Some(seed),
        faults: vec![
            RuleSpec::new(Fault::Latency(fake_unity::faults::Latency { ms: 20, jitter_ms: 15 })).named("jitter"),
            RuleSpec::new(Fault::Slicer(fake_unity::faults::Slicer { bytes: 512, size_variation: 256, delay_ms: 1 }))
                .named("slices")
                .frame(fake_unity::FrameKind::Response),
        ],
        ..Scenario::default()
    };
    // (A workflow without reloads: how soon a reloaded Editor's
    // `list_changed` comes relative to the next call is the machine's choice.)
    let workflow = workflows().into_iter().find(|w| w.name == "run-tests-read-failures").unwrap();
    let mut runs = Vec::new();
    for seed in [7, 7] {
        let project = project();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.jsonl");
        run_live(&workflow, project.path(), &file, scenario(seed)).await;
        // Everything but the milliseconds, which the machine decides.
        let records: Vec<Value> = Transcript::read(&file)
            .unwrap()
            .records
            .iter()
            .map(|r| {
                let mut v = r.to_value();
                v.as_object_mut().unwrap().remove("ms");
                v
            })
            .collect();
        runs.push(records);
    }
    assert!(runs[0].len() > 20);
    for (a, b) in runs[0].iter().zip(&runs[1]) {
        assert_eq!(a, b, "the two runs differ here");
    }
    assert_eq!(
        runs[0].len(),
        runs[1].len(),
        "{:#?}\n---\n{:#?}",
        &runs[0][runs[0].len() - 3..],
        &runs[1][runs[1].len() - 3..]
    );
}
