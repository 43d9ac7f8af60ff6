//! uLoopMCP 2.1.1's `run-tests` (`RunTestsUseCase`, `SerializableTestResult`)
//! on the simulated tests: its checks, its counts, its message, and NUnit XML
//! under `.uloop/outputs/TestResults/` only when a test failed. A PlayMode
//! run turns domain reload off while it runs (`DomainReloadDisableScope`,
//! 2.1.1 and v3 alike), so entering play mode reloads nothing.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::super::{
    BoxFuture, Outcome, ToolCall,
    testing::{nunit_xml, select},
};
use crate::editor::model::lifecycle::{COMPILING_LOCK, lock_stamp};
use crate::editor::{
    model::errors::uloop_internal,
    state::{TestMode, TestOutcome},
};

fn answer(success: bool, message: &str, completed_at: &str, counts: [usize; 4], xml_path: Value) -> Outcome {
    let fields = [
        ("Success", json!(success)),
        ("Message", json!(message)),
        ("CompletedAt", json!(completed_at)),
        ("TestCount", json!(counts[0])),
        ("PassedCount", json!(counts[1])),
        ("FailedCount", json!(counts[2])),
        ("SkippedCount", json!(counts[3])),
        ("XmlPath", xml_path),
    ];
    Outcome::Reply(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<Map<String, Value>>())
}

pub fn run_tests(call: ToolCall) -> BoxFuture {
    Box::pin(async move {
        let editor = call.editor.clone();
        let args = &call.args;
        // PlayMode is 2; any other value runs EditMode.
        let mode = if args.int("TestMode") == 2 { TestMode::PlayMode } else { TestMode::EditMode };
        let filter_type = match args.int("FilterType") {
            0 => "all",
            1 => "exact",
            2 => "regex",
            3 => "assembly",
            other => return Outcome::Fail(uloop_internal(format!("Unsupported filter type: {other}"))),
        };
        let refused = |message: &str| answer(false, message, &lock_stamp(editor.now()), [0; 4], Value::Null);
        if editor.project.join(COMPILING_LOCK).exists() {
            return refused("Tests cannot run while compilation is in progress");
        }
        if mode == TestMode::EditMode && editor.sim().playing {
            return refused("EditMode tests cannot run during play mode");
        }
        // An invalid pattern selects nothing (NUnit's group filter matches no test).
        let selected = select(&editor.base.tests, mode, filter_type, args.str("FilterValue")).unwrap_or_default();
        let started = editor.now();
        // A PlayMode run enters play mode inside a `DomainReloadDisableScope`:
        // domain reload off whatever the project says, so nothing reloads;
        // the Test Framework leaves play mode after the result.
        let entered = mode == TestMode::PlayMode && {
            let mut sim = editor.sim();
            let entering = !sim.playing;
            sim.playing = true;
            entering
        };
        for test in &selected {
            tokio::time::sleep(Duration::from_millis(test.duration_ms)).await;
        }
        if entered {
            editor.sim().playing = false;
        }
        let count = |o| selected.iter().filter(|t| t.outcome == o).count();
        let (passed, failed, skipped) =
            (count(TestOutcome::Passed), count(TestOutcome::Failed), count(TestOutcome::Skipped));
        let counts = [selected.len(), passed, failed, skipped];
        let completed_at = lock_stamp(editor.now());
        if selected.is_empty() {
            return answer(
                false,
                "No tests found matching the specified filter criteria",
                &completed_at,
                counts,
                Value::Null,
            );
        }
        let status = match (failed, passed) {
            (f, _) if f > 0 => "Failed",
            (_, p) if p > 0 => "Passed",
            _ => "Skipped",
        };
        let xml_path = if failed > 0 {
            let text = humantime::format_rfc3339_seconds(editor.now()).to_string();
            let digits: String = text.chars().filter(char::is_ascii_digit).collect();
            let path =
                editor.project.join(format!(".uloop/outputs/TestResults/{}_{}.xml", &digits[..8], &digits[8..14]));
            let xml = nunit_xml(&selected, started, editor.now());
            let written =
                path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(&path, xml));
            match written {
                Ok(()) => json!(editor_link::discovery::unity_path(&path)),
                Err(err) => return Outcome::Fail(uloop_internal(format!("Failed to write test results: {err}"))),
            }
        } else {
            Value::Null
        };
        answer(
            status == "Passed",
            &format!("Test execution completed with status: {status}"),
            &completed_at,
            counts,
            xml_path,
        )
    })
}
