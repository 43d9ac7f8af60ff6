//! The MCP output snapshots of `fixtures/snapshots/mcp/`: written and
//! reviewed with insta (`cargo insta test -p unity-conformance`, then
//! `cargo insta review`) from runs against the embedded fake. The suite's
//! `mcp.snapshot.*` cases compare any target with the same files.

use std::collections::BTreeSet;

use editor_link::{
    dialect::{Dialect, PACKAGE, ULOOP_2_1_1},
    transcript::Transcript,
};
use fake_unity::EditorKind;
use unity_conformance::{
    cases::mcp::{
        scenarios::{SCENARIOS, scenarios_dir},
        snapshots::{WITH_SNAPSHOTS, run_workflow, snapshot_folder, snapshot_of, workflows},
    },
    target::{Target, fixture_project},
    wire_log::WireLog,
};

use crate::embedded_bridge;

fn names_in(dir: &std::path::Path, extension: &str) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(extension).map(str::to_owned)
        })
        .collect()
}

#[rstest::rstest]
#[case::package(&PACKAGE)]
#[case::uloop_2_1_1(&ULOOP_2_1_1)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_workflow_gives_its_snapshot_against_the_catalogues_fake(#[case] catalogue: &'static Dialect) {
    let folder = format!("../../../fixtures/snapshots/mcp/{}", snapshot_folder(catalogue));
    for workflow in workflows() {
        let session = Target::Fake { editor: EditorKind::of(catalogue), defect: None }
            .open(WireLog::default(), &embedded_bridge())
            .await
            .unwrap();
        let answers =
            run_workflow(&session, &workflow).await.unwrap_or_else(|e| panic!("{catalogue} {}: {e:?}", workflow.name));
        insta::with_settings!({
            snapshot_path => folder.as_str(),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_json_snapshot!(workflow.name.as_str(), answers);
        });
    }
}

#[test]
fn every_snapshot_file_belongs_to_a_workflow_and_is_built_in() {
    let names: BTreeSet<String> = workflows().iter().map(|w| w.name.clone()).collect();
    for catalogue in WITH_SNAPSHOTS {
        let dir = fixture_project().join("../snapshots/mcp").join(snapshot_folder(catalogue));
        assert_eq!(names_in(&dir, ".snap"), names, "{catalogue}");
        for name in &names {
            let file = std::fs::read_to_string(dir.join(format!("{name}.snap"))).unwrap();
            assert_eq!(snapshot_of(catalogue, name), Some(file.as_str()), "{catalogue} {name}: SNAPSHOTS builds it in");
        }
    }
}

#[test]
fn the_recorded_sessions_are_workflows_of_the_suite() {
    let dir = fixture_project().join("../sessions");
    let sessions = names_in(&dir, ".jsonl");
    assert!(!sessions.is_empty());
    for name in sessions {
        let workflow = workflows().into_iter().find(|w| w.name == name);
        let workflow =
            workflow.unwrap_or_else(|| panic!("fixtures/sessions/{name}.jsonl has no workflow in the suite"));
        let transcript = Transcript::read(&dir.join(format!("{name}.jsonl"))).unwrap();
        // Recorded as the suite runs a workflow: from a cleared console.
        let calls = transcript.tool_calls();
        assert_eq!(calls.first().map(|c| c.0.as_str()), Some("clear-console"), "{name}");
        assert_eq!(calls[1..], workflow.tool_calls(), "{name}: the workflow makes the calls the session recorded");
    }
}

#[test]
fn every_scenario_file_has_a_case() {
    let files = names_in(&scenarios_dir(), ".toml");
    let cases: BTreeSet<String> = SCENARIOS.iter().map(|s| s.to_string()).collect();
    assert_eq!(files, cases, "keep SCENARIOS in step with fixtures/scenarios/");
}
