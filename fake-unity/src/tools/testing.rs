//! `run-tests`: runs the state's tests through the filter, takes their time,
//! reports progress, counts outcomes, and writes NUnit 3 XML on request. A
//! PlayMode run enters play mode, as Unity's Test Framework does: where the
//! project's settings reload the domain then, the run goes on in the new
//! domain and its answer is journaled for `x-resume` (the package's
//! `PlayModeRuns`).

use std::{fmt::Write as _, sync::Arc, time::Duration};

use serde_json::{Value, json};

use super::{BoxFuture, GoesOn, Outcome, Progress, ToolCall, invalid_param, result};
use crate::editor::{
    Editor,
    state::{TestCase, TestMode, TestOutcome},
};

pub const FILTER_TYPES: &[(&str, i64)] = &[("all", 0), ("exact", 1), ("regex", 2), ("assembly", 3)];
pub const TEST_MODES: &[(&str, i64)] = &[("EditMode", 0), ("PlayMode", 1)];

/// The tests a filter selects, in the state's order.
pub(crate) fn select<'a>(
    tests: &'a [TestCase],
    mode: TestMode,
    filter_type: &str,
    value: &str,
) -> Result<Vec<&'a TestCase>, Outcome> {
    let in_mode = tests.iter().filter(|t| t.mode == mode);
    Ok(match filter_type {
        "exact" => in_mode.filter(|t| t.full_name == value).collect(),
        "assembly" => in_mode.filter(|t| t.assembly == value).collect(),
        "regex" => {
            let re = regex::Regex::new(value).map_err(|err| {
                invalid_param(
                    "FilterValue",
                    format!("Parameter 'FilterValue' is not a valid regular expression: {err}"),
                )
            })?;
            in_mode.filter(|t| re.is_match(&t.full_name)).collect()
        }
        _ => in_mode.collect(),
    })
}

pub fn run_tests(call: ToolCall) -> BoxFuture {
    Box::pin(async move {
        let args = &call.args;
        let filter_type = args.str("FilterType").to_owned();
        let filter_value = args.str("FilterValue").to_owned();
        let mode = if args.str("TestMode") == "PlayMode" { TestMode::PlayMode } else { TestMode::EditMode };
        if filter_type != "all" && filter_value.is_empty() {
            return invalid_param(
                "FilterValue",
                format!("Parameter 'FilterValue' is required when FilterType is {filter_type}"),
            );
        }
        let editor = call.editor.clone();
        let selected: Vec<TestCase> = match select(&editor.base.tests, mode, &filter_type, &filter_value) {
            Ok(selected) => selected.into_iter().cloned().collect(),
            Err(outcome) => return outcome,
        };
        let run = Run {
            editor,
            selected,
            mode_name: args.str("TestMode").to_owned(),
            filter_type,
            filter_value,
            save_xml: args.bool("SaveXml"),
            started: call.editor.now(),
        };
        if mode == TestMode::EditMode {
            return run.tests(&call.progress).await;
        }
        // A PlayMode run enters play mode first (the Test Framework's
        // EnterPlayMode step) and leaves it once its result is in.
        let entered = enter_play_mode(&run.editor);
        if entered && run.editor.entering_play_mode_reloads() {
            // The domain reloads; the Test Framework goes on in the new one.
            return Outcome::GoesOnAfterReload(GoesOn(Box::new(move |progress| {
                Box::pin(async move { run.tests(&progress).await.then_exit_play_mode(entered, &run.editor) })
            })));
        }
        let outcome = run.tests(&call.progress).await;
        outcome.then_exit_play_mode(entered, &run.editor)
    })
}

/// Enters play mode for a PlayMode run; false when it was on already.
fn enter_play_mode(editor: &Editor) -> bool {
    let mut sim = editor.sim();
    let entering = !sim.playing;
    sim.playing = true;
    sim.paused = false;
    entering
}

impl Outcome {
    /// The Test Framework leaves play mode after the run's result (when
    /// the run entered it).
    fn then_exit_play_mode(self, entered: bool, editor: &Editor) -> Outcome {
        if entered {
            let mut sim = editor.sim();
            sim.playing = false;
            sim.paused = false;
        }
        self
    }
}

/// A test run, its tests chosen.
struct Run {
    editor: Arc<Editor>,
    selected: Vec<TestCase>,
    mode_name: String,
    filter_type: String,
    filter_value: String,
    save_xml: bool,
    started: std::time::SystemTime,
}

impl Run {
    /// Runs the tests, each taking its time, telling `progress`; counts
    /// their outcomes.
    async fn tests(&self, progress: &Progress) -> Outcome {
        let Run { editor, selected, mode_name, filter_type, filter_value, .. } = self;
        let total = selected.len();
        for (i, test) in selected.iter().enumerate() {
            tokio::time::sleep(Duration::from_millis(test.duration_ms)).await;
            progress.report(i as u64 + 1, Some(total as u64), &test.full_name);
        }
        let count = |o| selected.iter().filter(|t| t.outcome == o).count();
        let (mut passed, failed, mut skipped) =
            (count(TestOutcome::Passed), count(TestOutcome::Failed), count(TestOutcome::Skipped));
        if editor.has_defect(crate::Defect::WrongTestCounts) {
            (passed, skipped) = (passed + skipped, 0);
        }
        let completed_at = editor.timestamp();
        let message = if total == 0 {
            format!("No {mode_name} tests matched the filter (FilterType={filter_type}, FilterValue={filter_value:?})")
        } else if failed == 0 {
            format!("All {mode_name} tests passed: {passed} passed, {skipped} skipped out of {total}")
        } else {
            format!("{mode_name} tests failed: {passed} passed, {failed} failed, {skipped} skipped out of {total}")
        };
        let xml_path = if self.save_xml {
            let refs: Vec<&TestCase> = selected.iter().collect();
            let xml = nunit_xml(&refs, self.started, editor.now());
            match editor.write_output("TestResults", "TestResults", "xml", xml.as_bytes()) {
                Ok(rel) => rel,
                Err(error) => return Outcome::Fail(error),
            }
        } else {
            String::new()
        };
        let failures: Vec<Value> = selected
            .iter()
            .filter(|t| t.outcome == TestOutcome::Failed)
            .map(|t| json!({"FullName": t.full_name, "Message": t.message}))
            .collect();
        Outcome::Reply(result([
            ("Success", (total > 0 && failed == 0).into()),
            ("Message", message.into()),
            ("CompletedAt", completed_at.into()),
            ("TestCount", total.into()),
            ("PassedCount", passed.into()),
            ("FailedCount", failed.into()),
            ("SkippedCount", skipped.into()),
            ("XmlPath", xml_path.into()),
            ("FailedTests", failures.into()),
        ]))
    }
}

/// NUnit 3 result XML (`test-run` → assembly suites → fixtures → cases).
pub fn nunit_xml(tests: &[&TestCase], start: std::time::SystemTime, end: std::time::SystemTime) -> String {
    let time = |t: std::time::SystemTime| {
        let s = humantime::format_rfc3339_seconds(t).to_string();
        s.replacen('T', " ", 1)
    };
    let seconds = |ms: u64| format!("{:.6}", ms as f64 / 1000.0);
    let totals = |cases: &[&TestCase]| {
        let count = |o| cases.iter().filter(|t| t.outcome == o).count();
        let (p, f, s) = (count(TestOutcome::Passed), count(TestOutcome::Failed), count(TestOutcome::Skipped));
        let result = if f > 0 {
            "Failed"
        } else if p > 0 {
            "Passed"
        } else {
            "Skipped"
        };
        let site = if f > 0 { r#" site="Child""# } else { "" };
        let ms: u64 = cases.iter().map(|t| t.duration_ms).sum();
        format!(
            r#"testcasecount="{}" result="{result}"{site} total="{}" passed="{p}" failed="{f}" inconclusive="0" skipped="{s}" asserts="0" duration="{}""#,
            cases.len(),
            cases.len(),
            seconds(ms)
        )
    };
    let (start, end) = (time(start), time(end));
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    let _ = writeln!(
        xml,
        r#"<test-run id="2" {} engine-version="3.5.0.0" clr-version="4.0.30319.42000" start-time="{start}" end-time="{end}">"#,
        totals(tests)
    );
    let mut id = 1000;
    let mut assemblies: Vec<&str> = tests.iter().map(|t| t.assembly.as_str()).collect();
    assemblies.dedup();
    assemblies.sort_unstable();
    assemblies.dedup();
    for assembly in assemblies {
        let in_assembly: Vec<&TestCase> = tests.iter().copied().filter(|t| t.assembly == assembly).collect();
        id += 1;
        let _ = writeln!(
            xml,
            r#"  <test-suite type="Assembly" id="{id}" name="{0}.dll" fullname="{0}.dll" runstate="Runnable" {1} start-time="{start}" end-time="{end}">"#,
            escape(assembly),
            totals(&in_assembly)
        );
        let mut fixtures: Vec<&str> = in_assembly.iter().map(|t| t.split_name().0).collect();
        fixtures.dedup();
        for fixture in fixtures {
            let cases: Vec<&TestCase> = in_assembly.iter().copied().filter(|t| t.split_name().0 == fixture).collect();
            let short = fixture.rsplit('.').next().unwrap_or(fixture);
            id += 1;
            let _ = writeln!(
                xml,
                r#"    <test-suite type="TestFixture" id="{id}" name="{}" fullname="{}" classname="{}" runstate="Runnable" {} start-time="{start}" end-time="{end}">"#,
                escape(short),
                escape(fixture),
                escape(fixture),
                totals(&cases)
            );
            for case in cases {
                id += 1;
                let (result, label) = match case.outcome {
                    TestOutcome::Passed => ("Passed", ""),
                    TestOutcome::Failed => ("Failed", ""),
                    TestOutcome::Skipped => ("Skipped", r#" label="Ignored""#),
                };
                let runstate = if case.outcome == TestOutcome::Skipped { "Ignored" } else { "Runnable" };
                let (class, method) = case.split_name();
                let _ = write!(
                    xml,
                    r#"      <test-case id="{id}" name="{}" fullname="{}" methodname="{}" classname="{}" runstate="{runstate}" seed="0" result="{result}"{label} start-time="{start}" end-time="{end}" duration="{}" asserts="0""#,
                    escape(method),
                    escape(&case.full_name),
                    escape(method),
                    escape(class),
                    seconds(case.duration_ms)
                );
                match case.outcome {
                    TestOutcome::Passed => xml.push_str(" />\n"),
                    TestOutcome::Failed => {
                        let _ = write!(
                            xml,
                            ">\n        <failure>\n          <message>{}</message>\n          <stack-trace>{}</stack-trace>\n        </failure>\n      </test-case>\n",
                            cdata(&case.message),
                            cdata(&case.stack_trace)
                        );
                    }
                    TestOutcome::Skipped => {
                        let _ = write!(
                            xml,
                            ">\n        <reason>\n          <message>{}</message>\n        </reason>\n      </test-case>\n",
                            cdata(&case.message)
                        );
                    }
                }
            }
            xml.push_str("    </test-suite>\n");
        }
        xml.push_str("  </test-suite>\n");
    }
    xml.push_str("</test-run>\n");
    xml
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn cdata(s: &str) -> String {
    format!("<![CDATA[{}]]>", s.replace("]]>", "]]]]><![CDATA[>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(name: &str, outcome: TestOutcome) -> TestCase {
        TestCase {
            full_name: name.into(),
            assembly: "Tests".into(),
            mode: TestMode::EditMode,
            outcome,
            duration_ms: 12,
            message: "it <broke> ]]> here".into(),
            stack_trace: String::new(),
        }
    }

    #[test]
    fn xml_counts_and_escapes() {
        let tests = [
            case("N.A.Pass", TestOutcome::Passed),
            case("N.A.Fail", TestOutcome::Failed),
            case("N.B.Skip", TestOutcome::Skipped),
        ];
        let refs: Vec<&TestCase> = tests.iter().collect();
        let now = std::time::SystemTime::now();
        let xml = nunit_xml(&refs, now, now);
        assert!(xml.contains(r#"<test-run id="2" testcasecount="3" result="Failed" site="Child" total="3" passed="1" failed="1" inconclusive="0" skipped="1""#));
        assert!(xml.contains(r#"name="Fail" fullname="N.A.Fail" methodname="Fail" classname="N.A""#));
        assert!(xml.contains("<![CDATA[it <broke> ]]]]><![CDATA[> here]]>"));
        assert!(xml.contains(r#"result="Skipped" label="Ignored""#));
        assert_eq!(xml.matches("<test-suite type=\"TestFixture\"").count(), 2);
    }
}
