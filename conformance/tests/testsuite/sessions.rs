//! Recorded sessions (`fixtures/sessions/`, written by `unity-conformance
//! record-sessions`): each is replayed by fake-unity's replay to the bridge
//! making the same tool calls; every call must be answered, the replay must
//! find every recorded request and no mismatch, and the answers must be the
//! workflow's snapshot in `fixtures/snapshots/mcp/`, the same the suite
//! holds every live Editor to.
//!
//! Also here: a fresh recording replays with answers identical to the live
//! run (through a reload that moves the port), a changed call makes the
//! replay fail with its report, and two runs with the same seed record the
//! same transcript.

use std::path::Path;

use editor_link::transcript::Transcript;
use fake_unity::{Fault, RuleSpec, Scenario};
use serde_json::{Value, json};
use unity_conformance::{
    cases::mcp::snapshots::{snapshot_of, workflows},
    sessions::{RECORDED, as_snapshot, record, replay, sessions_dir},
    snapshot,
    target::fixture_copy,
    workflow::Workflow,
};

use crate::embedded_bridge;

fn workflow(name: &str) -> Workflow {
    workflows().into_iter().find(|w| w.name == name).unwrap_or_else(|| panic!("{name} is not a workflow"))
}

/// Answers made comparable between two runs: redacted, timestamps blanked.
fn comparable(answers: &[Value], project: &Path) -> Vec<Value> {
    let mut redactor = snapshot::redactor(Some(project));
    answers.iter().map(|a| snapshot::comparable(a.clone(), &mut redactor)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_recorded_session_replays_with_the_answers_of_its_snapshot() {
    for name in RECORDED {
        let path = sessions_dir().join(format!("{name}.jsonl"));
        let transcript = Transcript::read(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(transcript.header.producer, "unity-mcp-bridge");
        let calls = Transcript::tool_calls(&transcript);
        assert_eq!(calls.first().map(|c| c.0.as_str()), Some("clear-console"), "{name}: recorded as the suite runs it");
        let project = fixture_copy().unwrap();
        let (answers, outcome) = replay(&path, &calls, &embedded_bridge(), project.path()).await.unwrap();
        assert!(outcome.ok, "{name}: {outcome:#?}");
        // Every request was matched but, perhaps, the bridge's background
        // tool-list fetch after a reload, which a client that leaves at once
        // can outrun: the replay reports it not reached (after a message the
        // client left before) or a background request not made.
        let fetch = |u: &&fake_unity::replay::Unused| u.summary.starts_with("get-tool-details");
        let not_reached = outcome.not_reached.iter().filter(fetch).count();
        assert_eq!(outcome.not_reached.len(), not_reached, "{name}: {outcome:#?}");
        let background = not_reached + outcome.background_unused.iter().filter(fetch).count();
        assert_eq!(outcome.matched + background, outcome.requests, "{name}: {outcome:#?}");
        for (answer, (tool, _)) in answers.iter().zip(&calls) {
            assert!(!answer.to_string().contains("not in the transcript"), "{name}: {tool} was not replayed: {answer}");
        }
        let expected = snapshot::parse_insta(snapshot_of(&editor_link::dialect::PACKAGE, name).unwrap()).unwrap();
        let actual = as_snapshot(&calls[1..], &answers[1..], project.path());
        let differences = snapshot::differences(&expected, &actual, 8);
        assert!(differences.is_empty(), "{name}: the replayed answers differ from its snapshot: {differences:?}");
    }
}

#[test]
fn every_session_file_is_a_recorded_workflow() {
    let mut files: Vec<String> = std::fs::read_dir(sessions_dir())
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.strip_suffix(".jsonl").map(str::to_owned))
        .collect();
    files.sort();
    let mut recorded: Vec<String> = RECORDED.iter().map(|n| n.to_string()).collect();
    recorded.sort();
    assert_eq!(files, recorded, "a session file not recorded by record-sessions, or one missing");
    for name in RECORDED {
        workflow(name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_recording_replays_with_identical_answers() {
    for name in ["edit-compile-fix", "reload-moves-port"] {
        let live_project = fixture_copy().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let transcript = dir.path().join("session.jsonl");
        let live = record(&workflow(name), &embedded_bridge(), live_project.path(), &transcript, Scenario::default())
            .await
            .unwrap();
        let text = std::fs::read_to_string(&transcript).unwrap();
        let root = std::fs::canonicalize(live_project.path()).unwrap();
        assert!(!text.contains(root.to_str().unwrap()), "{name}: the project path is redacted");

        let replay_project = fixture_copy().unwrap();
        let calls = Transcript::tool_calls(&Transcript::read(&transcript).unwrap());
        let (replayed, outcome) = replay(&transcript, &calls, &embedded_bridge(), replay_project.path()).await.unwrap();
        assert!(outcome.ok, "{name}: {outcome:#?}");
        assert_eq!(
            comparable(&replayed[1..], replay_project.path()),
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
    // clear-console, get-hierarchy, then find-game-objects.
    assert_eq!(calls[2].0, "find-game-objects");
    calls[2].1["NamePattern"] = json!("Turret");
    let project = fixture_copy().unwrap();
    let (answers, outcome) = replay(&path, &calls, &embedded_bridge(), project.path()).await.unwrap();
    assert_eq!(answers[2]["result"]["isError"], true, "{:#}", answers[2]);
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
    let workflow = workflow("run-tests-read-failures");
    let mut runs = Vec::new();
    for seed in [7, 7] {
        let project = fixture_copy().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run.jsonl");
        record(&workflow, &embedded_bridge(), project.path(), &file, scenario(seed)).await.unwrap();
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
    assert_eq!(runs[0].len(), runs[1].len());
}
