//! §6 Tools at work: what they answer, compared with invariants any Editor
//! keeps and with what the project's own files say.

use std::{path::Path, time::Duration};

use editor_link::{framing::Framing, jsonrpc::RESUME_MEMBER, methods};
use serde_json::{Value, json};

use crate::{
    case::{Case, CheckResult, Level, Needs, Requires, check},
    editor_client::{EditorClient, Read},
    ensure,
    finding::{Finding, violation},
    target::Session,
};

const REF: &str = "docs/editor-link-protocol.md §6";

pub fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    cases.push(Case {
        id: "6.compile.new-errors".into(),
        requirement: "compile reports an error the project gained since it opened (a script with an #error in the second assembly, Assets/Gameplay), naming the script; with the script removed, none.".into(),
        reference: REF,
        level: Level::Must,
        needs: Needs::Project,
        requires: Requires::tools(&["compile"]),
        check: check(|s| Box::pin(compile_new_errors(s))),
    });
    cases.push(Case {
        id: "5.play-mode-keeps-domain-when-settings-say".into(),
        requirement: "With the project's Enter Play Mode settings turning domain reload off, a PlayMode run enters play mode without a domain reload (Unity reads ProjectSettings/EditorSettings.asset when it enters play mode).".into(),
        reference: "docs/editor-link-protocol.md §5; Unity manual: Enter Play Mode settings",
        level: Level::Must,
        needs: Needs::Control("the Editor's count of domain reloads"),
        requires: Requires::tools(&["run-tests"]),
        check: check(|s| Box::pin(play_mode_keeps_domain(s))),
    });
    cases.push(Case {
        id: "4.progress-grows".into(),
        requirement: "A call's notifications/progress carry a progress that only grows, also for a tool held up before its own steps (a slowTool fault reporting its seconds, then compile's steps).".into(),
        reference: "docs/editor-link-protocol.md §4",
        level: Level::Must,
        needs: Needs::Faults,
        requires: Requires::extension(crate::case::Extension::Progress).and_tool("compile"),
        check: check(|s| Box::pin(progress_grows(s))),
    });
    for log_type in ["Error", "Warning", "Log"] {
        cases.push(Case {
            id: format!("6.get-logs.filter-{}", log_type.to_lowercase()).into(),
            requirement: format!(
                "get-logs with LogType {log_type} returns only {log_type} entries, DisplayedCount of them, at most MaxCount."
            )
            .into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::catalogue_tool("get-logs"),
            check: check(move |s| Box::pin(log_filter(s, log_type))),
        });
    }
    cases.push(Case {
        id: "6.get-logs.totals-add-up".into(),
        requirement: "get-logs' TotalCount for All is the sum of those for Error, Warning and Log.".into(),
        reference: REF,
        level: Level::Must,
        needs: Needs::Link,
        requires: Requires::catalogue_tool("get-logs"),
        check: check(|s| Box::pin(log_totals(s))),
    });
    for mode in ["EditMode", "PlayMode"] {
        cases.push(Case {
            id: format!("6.run-tests.counts-{}", mode.to_lowercase()).into(),
            requirement: format!(
                "run-tests in {mode} runs the project's {mode} tests: TestCount is the number of [Test] and [UnityTest] methods under Assets/Tests/{mode}, SkippedCount those that call Assert.Ignore, and the counts add up{}.",
                if mode == "PlayMode" {
                    " (the answer resumed with x-resume when the domain reload of entering play mode closes the connection)"
                } else {
                    ""
                }
            )
            .into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Project,
            requires: Requires::catalogue_tool("run-tests"),
            check: check(move |s| Box::pin(test_counts(s, mode))),
        });
    }
    cases
}

async fn log_filter(s: Session, log_type: &'static str) -> CheckResult {
    let mut link = s.link(Framing::Header).await?;
    let result = link.result("get-logs", json!({"LogType": log_type, "MaxCount": 50})).await?;
    let logs = result["Logs"].as_array().cloned().unwrap_or_default();
    let others: Vec<&Value> = logs.iter().filter(|l| l["Type"] != log_type).collect();
    ensure!(others.is_empty(), "LogType {log_type} returned other entries: {others:?}");
    ensure!(
        result["DisplayedCount"] == logs.len(),
        "DisplayedCount {} for {} entries",
        result["DisplayedCount"],
        logs.len()
    );
    ensure!(logs.len() <= 50, "{} entries for MaxCount 50", logs.len());
    Ok(())
}

async fn log_totals(s: Session) -> CheckResult {
    let mut link = s.link(Framing::Header).await?;
    let total = |v: &Value| v["TotalCount"].as_u64().ok_or_else(|| Finding::Violation(format!("no TotalCount: {v}")));
    let mut sum = 0;
    for log_type in ["Error", "Warning", "Log"] {
        sum += total(&link.result("get-logs", json!({"LogType": log_type})).await?)?;
    }
    let all = total(&link.result("get-logs", json!({"LogType": "All"})).await?)?;
    ensure!(all == sum, "TotalCount for All is {all}; Error + Warning + Log make {sum}");
    Ok(())
}

/// Test methods and ignored ones in the C# files under `dir`.
pub(crate) fn tests_in(dir: &Path) -> std::io::Result<(usize, usize)> {
    let (mut tests, mut ignored) = (0, 0);
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            let (t, i) = tests_in(&path)?;
            (tests, ignored) = (tests + t, ignored + i);
        } else if path.extension().is_some_and(|e| e == "cs") {
            let text = std::fs::read_to_string(&path)?;
            tests += text.matches("[Test]").count() + text.matches("[UnityTest]").count();
            ignored += text.matches("Assert.Ignore(").count();
        }
    }
    Ok((tests, ignored))
}

async fn test_counts(s: Session, mode: &'static str) -> CheckResult {
    let project = s.project.clone().ok_or_else(|| Finding::Harness("the project folder is not known".into()))?;
    let (tests, ignored) = tests_in(&project.join("Assets/Tests").join(mode))
        .map_err(|e| Finding::Harness(format!("reading the project's {mode} tests: {e}")))?;
    let result = result_across_reload(&s, "run-tests", json!({"TestMode": mode})).await?;
    let n = |field: &str| result[field].as_u64().unwrap_or(u64::MAX) as usize;
    ensure!(n("TestCount") == tests, "TestCount {} but the project has {tests} {mode} tests", n("TestCount"));
    ensure!(
        n("SkippedCount") == ignored,
        "SkippedCount {} but {ignored} {mode} tests call Assert.Ignore",
        n("SkippedCount")
    );
    ensure!(
        n("PassedCount") + n("FailedCount") + n("SkippedCount") == n("TestCount"),
        "the counts do not add up: {result}"
    );
    Ok(())
}

/// How long a call that goes on across a domain reload may take (entering
/// play mode and running a project's PlayMode tests in a real Editor).
const ACROSS_RELOAD: Duration = Duration::from_secs(120);

/// Calls `method` and returns its result, as a client of the protocol
/// must: when a domain reload closes the connection before the answer (a
/// PlayMode run: entering play mode reloads by Unity's default) and the
/// Editor resumes (`resume` in its capabilities), the same request resent
/// with `x-resume` to the same Editor process once it is back. An Editor
/// that does not resume, or one whose journal lost the call, fails.
pub(crate) async fn result_across_reload(s: &Session, method: &str, params: Value) -> Result<Value, Finding> {
    let mut link = s.link(Framing::Header).await?;
    let version = link.result(methods::GET_VERSION, json!({})).await?;
    let resumes = version["Capabilities"].as_array().is_some_and(|c| c.iter().any(|c| c == "resume"));
    let request = json!({"jsonrpc": "2.0", "id": "across-reload-1", "method": method, "params": params});
    link.send_json(&request).await?;
    if let Some(answer) = answer_before_close(&mut link, &request["id"]).await? {
        return result_of(method, answer);
    }
    if !resumes {
        return violation(format!(
            "a domain reload closed the connection before {method} was answered, and this Editor does not resume: the answer is lost"
        ));
    }
    let (mut again, back) = answered_once_back(s, methods::GET_VERSION, json!({})).await?;
    let back = result_of(methods::GET_VERSION, back)?;
    ensure!(
        back["EditorInstanceId"] == version["EditorInstanceId"],
        "a new Editor process after the reload ({} then {}): nothing to resume",
        version["EditorInstanceId"],
        back["EditorInstanceId"]
    );
    let mut resumed = request.clone();
    resumed[RESUME_MEMBER] = json!(true);
    again.send_json(&resumed).await?;
    match answer_before_close(&mut again, &request["id"]).await? {
        Some(answer) => result_of(method, answer),
        None => violation(format!("the connection closed again before the resumed {method} was answered")),
    }
}

/// The answer to `id` on `link`, notifications skipped; `None` when the
/// Editor closes the connection first.
async fn answer_before_close(link: &mut EditorClient, id: &Value) -> Result<Option<Value>, Finding> {
    let deadline = tokio::time::Instant::now() + ACROSS_RELOAD;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match link.receive(left).await {
            Read::Message(message) if message.get("id") == Some(id) => return Ok(Some(message)),
            Read::Message(_) => {}
            Read::Closed => return Ok(None),
            Read::Silence => return violation(format!("no answer within {ACROSS_RELOAD:?}")),
            Read::NotJson(e) | Read::BadFraming(e) => return violation(format!("a broken answer: {e}")),
        }
    }
}

/// Once the Editor is back after a reload, `method` on a fresh link and
/// its answer (with the link). A connection accepted just before the old
/// domain went (closed with it), or a call cut off by a reload that call
/// itself brings (a clean compile), is not an answer: tried again, up to
/// ten times.
async fn answered_once_back(s: &Session, method: &str, params: Value) -> Result<(EditorClient, Value), Finding> {
    let mut refused = None;
    for _ in 0..10 {
        let mut link = reconnect(s).await?;
        match link.request(method, params.clone()).await {
            Ok(id) => {
                if let Some(answer) = answer_before_close(&mut link, &id).await? {
                    return Ok((link, answer));
                }
            }
            // Accepted as the old domain went, and closed with it.
            Err(finding) => refused = Some(finding),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(refused
        .unwrap_or_else(|| Finding::Violation(format!("{method} was cut off by a domain reload ten times in a row"))))
}

/// A link to the Editor once it listens again after a reload.
async fn reconnect(s: &Session) -> Result<EditorClient, Finding> {
    let deadline = tokio::time::Instant::now() + ACROSS_RELOAD;
    loop {
        match s.link(Framing::Header).await {
            Ok(link) => return Ok(link),
            Err(_) if tokio::time::Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(finding) => return Err(finding),
        }
    }
}

fn result_of(method: &str, mut answer: Value) -> Result<Value, Finding> {
    match answer.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => violation(format!("{method} failed: {answer}")),
    }
}

/// §4: progress only grows. A slowTool fault on compile reports its own
/// seconds first (0, 1, …), then compile reports its steps (0/2, 1/2, 2/2):
/// an Editor that passes each report on as it comes sends progress that
/// goes back.
async fn progress_grows(s: Session) -> CheckResult {
    let Some(control) = s.control.clone() else {
        return Err(Finding::NotApplicable(
            "not applicable: the slowed tool is a fault this Editor's control API gives".into(),
        ));
    };
    let rule =
        json!({"name": "slowed-compile", "match": {"method": "compile"}, "fault": {"kind": "slowTool", "ms": 1500}});
    control.post("/faults", json!([rule])).await.map_err(|e| match e {
        fake_unity::control::ControlError::Status { status: 400, body } => {
            Finding::NotApplicable(format!("not applicable: this Editor's control API cannot slow a tool: {body}"))
        }
        other => Finding::Harness(format!("the control API: {other}")),
    })?;
    let checked = async {
        let mut link = s.link(Framing::Header).await?;
        let id = link.request("compile", json!({})).await?;
        let mut progress = Vec::new();
        let answer = loop {
            let message = link.message().await?;
            if message["method"] == "notifications/progress" && message["params"]["requestId"] == id {
                progress.push(message["params"].clone());
            } else if message.get("id") == Some(&id) {
                break message;
            }
        };
        ensure!(answer.get("result").is_some(), "compile failed: {answer}");
        let values: Vec<f64> = progress.iter().filter_map(|p| p["progress"].as_f64()).collect();
        ensure!(
            values.len() >= 2,
            "compile slowed 1.5 s sent {} progress notification(s), not its seconds and its steps",
            values.len()
        );
        if let Some(w) = values.windows(2).find(|w| w[1] <= w[0]) {
            return violation(format!("progress went from {} to {}: {progress:?}", w[0], w[1]));
        }
        s.note(format!("progress: {values:?}"));
        Ok(())
    }
    .await;
    let _ = control.delete("/faults/slowed-compile").await;
    checked
}

/// The script `6.compile.new-errors` breaks the second assembly with.
const BROKEN_SCRIPT: &str = "Assets/Gameplay/UnityConformanceNewError.cs";

async fn compile_new_errors(s: Session) -> CheckResult {
    let project = s.project.clone().ok_or_else(|| Finding::Harness("the project folder is not known".into()))?;
    if !project.join("Assets/Gameplay").is_dir() {
        return Err(Finding::NotApplicable(
            "not applicable: the project has no Assets/Gameplay assembly (the fixture project's second one)".into(),
        ));
    }
    let broken = project.join(BROKEN_SCRIPT);
    std::fs::write(&broken, "// Written by unity-conformance (6.compile.new-errors) and removed by it.\n#error unity-conformance breaks this assembly on purpose\n")
        .map_err(|e| Finding::Harness(format!("writing {BROKEN_SCRIPT}: {e}")))?;
    let failed = async {
        let mut link = s.link(Framing::Header).await?;
        let id = link.request("compile", json!({})).await?;
        match answer_before_close(&mut link, &id).await? {
            Some(answer) => Ok(answer["result"].clone()),
            None => violation(format!(
                "compile with {BROKEN_SCRIPT} (an #error) was followed by a domain reload, as a clean compile is: the Editor saw no error"
            )),
        }
    }
    .await;
    let _ = std::fs::remove_file(&broken);
    let _ = std::fs::remove_file(project.join(format!("{BROKEN_SCRIPT}.meta")));
    // The clean compile brings a domain reload, which may cut its answer
    // off: compiled again once the Editor answers (nothing changed since,
    // so no reload), until one compile is answered.
    let fixed = answered_once_back(&s, "compile", json!({})).await.map(|(_, answer)| answer["result"].clone());
    let failed = failed?;
    ensure!(
        failed["ErrorCount"].as_u64().is_some_and(|n| n >= 1),
        "compile with {BROKEN_SCRIPT} (an #error) reported no error: {failed}"
    );
    ensure!(
        failed.to_string().contains("UnityConformanceNewError.cs"),
        "compile's errors do not name {BROKEN_SCRIPT}: {failed}"
    );
    let fixed = fixed?;
    ensure!(
        fixed["ErrorCount"].as_u64() == Some(0),
        "with {BROKEN_SCRIPT} removed, compile still reports errors: {fixed}"
    );
    Ok(())
}

async fn play_mode_keeps_domain(s: Session) -> CheckResult {
    use fake_unity::editor::project_settings::{EDITOR_SETTINGS, with_domain_reload};
    let project = s.project.clone().ok_or_else(|| Finding::Harness("the project folder is not known".into()))?;
    let control = s.control()?.clone();
    let settings = project.join(EDITOR_SETTINGS);
    let original = std::fs::read_to_string(&settings).unwrap_or_default();
    std::fs::write(&settings, with_domain_reload(&original, false))
        .map_err(|e| Finding::Harness(format!("writing {EDITOR_SETTINGS}: {e}")))?;
    let reloads = || async { control.get("/state").await.ok().and_then(|state| state["reloads"].as_u64()) };
    let before = reloads().await;
    let ran = async {
        let mut link = s.link(Framing::Header).await?;
        let id = link.request("run-tests", json!({"TestMode": "PlayMode"})).await?;
        match answer_before_close(&mut link, &id).await? {
            Some(answer) => Ok(answer),
            None => violation(
                "a domain reload closed the connection during the PlayMode run, though the project's settings turn it off",
            ),
        }
    }
    .await;
    let after = reloads().await;
    let _ = std::fs::write(&settings, &original);
    let answer = ran?;
    ensure!(answer.get("result").is_some(), "the PlayMode run was not answered with its result: {answer}");
    match (before, after) {
        (Some(before), Some(after)) => {
            ensure!(
                after == before,
                "{} domain reload(s) during the run though the project's settings turn it off",
                after - before
            );
            Ok(())
        }
        _ => Err(Finding::NotApplicable("not applicable: the control API does not count reloads".into())),
    }
}
