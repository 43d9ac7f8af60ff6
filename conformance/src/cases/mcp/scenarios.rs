//! The fault scenarios of `fixtures/scenarios/` through the bridge: the
//! embedded fake starts with the scenario loaded (durations scaled down),
//! the bridge in front of it makes the scenario's exercise calls. Each call
//! gets exactly one answer, the one the scenario expects, by its deadline;
//! an error says truthfully whether the Editor may have run the call; the
//! Editor ran each tool as often as the scenario says (never a mutating call
//! twice); nothing is lost, the bridge keeps serving, and every fault rule
//! fired (a rule that never fired would make the case a false pass).

use std::path::PathBuf;

use fake_unity::{
    ControlClient, EditorStateFile, Scenario, Trigger,
    faults::Scope,
    proxy::{Proxy, ProxyConfig},
    scenario::{Action, ExerciseStep, Expect},
};
use serde_json::{Value, json};

use crate::{
    case::{Case, Level, Needs, Requires, check},
    did_it_run::{check_meaning, claims},
    finding::{Finding, violation},
    stall_meter,
    target::{Session, fixture_project},
};

/// Every scenario file (a test keeps this in step with the folder).
pub const SCENARIOS: &[&str] = &[
    "broken-responses",
    "compile-errors",
    "crash-and-restart",
    "dead-listener",
    "deadlocked-test-run",
    "flaky-link",
    "half-open",
    "hang",
    "huge-response",
    "long-compile",
    "long-import",
    "modal-dialog",
    "port-held-at-startup",
    "port-moves",
    "reload-during-call",
    "stale-discovery",
    "throttled-main-thread",
    "tools-changed-after-reload",
    "unity-absent-at-startup",
    "zombie-listener",
];

/// Scenario durations are scaled by this: a 20-minute compile takes 2.4 s.
const TIME_SCALE: f64 = 0.002;

/// How late after its `TimeoutSeconds` a call may be answered: the bridge's
/// own margin (ours allows Unity 1 s to send its timeout answer) and a
/// machine's ordinary scheduling, never the 30 s of a bridge that waits for
/// something else (`misses-deadlines`). Stalls measured meanwhile
/// ([`stall_meter`]: the task that waits for the answer held up, and the
/// bridge's waits for a CPU) add to it.
///
/// It was 3 s, then 5 s, then 8 s: on CI (2 cores, builds beside) answers
/// came up to 7 s past their deadline while the bridge's log showed them
/// written in time and the stall meter read almost nothing. The cause (issue
/// 34, found under a writing load with `strace`, thread sampling and `perf`):
/// every case was polled in one task, so a case blocked in a file removal on
/// the busy disk (up to 9 s) or the fake serialising 16 MB held every other
/// case's reading of its bridge's answers, and the meter, a task of its own,
/// ran on elsewhere. Now each case is a task, blocking work leaves the
/// runtime's threads ([`editor_link::blocking`]), and the meter runs in the
/// waiting task itself; under the same load the worst answer came 0.6 s past
/// the bridge's deadline. 4 s keeps room for a machine worse than that one.
pub const DEADLINE_MARGIN: f64 = 4.0;

/// `fixtures/scenarios` of this repository.
pub fn scenarios_dir() -> PathBuf {
    fixture_project().join("../scenarios")
}

/// The text of a failed call: its tool result's text, or the JSON-RPC
/// error's message.
fn error_text(answer: &Value) -> String {
    match answer.get("error") {
        Some(error) => error["message"].as_str().unwrap_or("").to_owned(),
        None => answer["result"]["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// A port nothing listens on now.
fn free_port() -> Result<u16, Finding> {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| Finding::Harness(format!("finding a free port: {e}")))
}

pub fn cases() -> Vec<Case> {
    SCENARIOS
        .iter()
        .map(|&name| Case {
            id: format!("mcp.scenario.{name}").into(),
            requirement: format!(
                "Through the fault scenario {name}.toml, every call the scenario makes gets exactly one answer, the one it expects, by its TimeoutSeconds + {DEADLINE_MARGIN} s; an error says truthfully whether Unity may have run the call; Unity runs each tool as often as the scenario says (a mutating call never twice); nothing is lost and the bridge keeps serving."
            )
            .into(),
            reference: "docs/editor-link-protocol.md §5; mcp-stdio.md (tools/call); fixtures/scenarios/README.md",
            level: Level::Must,
            needs: Needs::Faults,
            requires: requires(name),
            check: check(move |s| Box::pin(async move { play(s, name).await.map(drop) })),
        })
        .collect()
}

/// What a scenario needs of the Editor: the Editor tools its exercise
/// calls (the bridge's own are always there), and for `flaky-link`, whose
/// faults delay them, progress notifications.
fn requires(name: &str) -> Requires {
    let mut requires = match name {
        "flaky-link" => Requires::extension(crate::case::Extension::Progress),
        _ => Requires::CORE,
    };
    if let Ok(scenario) = Scenario::load(&scenarios_dir().join(format!("{name}.toml"))) {
        for step in scenario.exercise {
            let bridge_own = ["bridge-status", "wait-for-editor-ready"].contains(&step.call.as_str());
            if !bridge_own && !requires.tools.iter().any(|t| *t == step.call) {
                requires.tools.push(step.call.into());
            }
        }
    }
    requires
}

/// Where a scenario's faults are carried out.
enum Rig {
    /// In the embedded fake itself (its counters are the control API's).
    Fake,
    /// By `fake-unity proxy` in front of the target's Editor (wire faults)
    /// and, for an Editor with a control API (the package's headless host,
    /// `fake-unity serve`), by that Editor (its faults, settings and the
    /// timeline's removals of them).
    Proxy { proxy: Proxy, editor: Option<Controlled>, _watching: tokio_util::task::AbortOnDropHandle<()> },
}

/// An Editor's own part of a scenario, carried out through its control API.
struct Controlled {
    control: ControlClient,
    /// Its settings before the scenario, put back after it.
    settings_before: Option<Value>,
    /// The timeline's removals of its faults, under way.
    timeline: tokio::task::JoinHandle<()>,
}

/// What the client saw of one exercise step: what two Editors playing the
/// same scenario must agree on ([`crate::differential`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub tool: String,
    pub answer: Answered,
    /// What an error said about whether Unity may have run the call.
    pub ran: Claim,
    /// The progress the bridge sent for the call, each message with its
    /// numbers as `N` (seconds and ports differ from run to run), repeats
    /// in a row said once; without the bridge's bare heartbeat ("waiting
    /// for Unity (N s)"), which says how long a wait was, not what the
    /// Editor did (one that names what holds the main thread is kept).
    pub progress: Vec<String>,
    /// The answer's text, numbers as `N`, for the reader.
    pub text: String,
}

/// The kind of an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answered {
    Result,
    /// A result with `isError`.
    ToolError,
    /// A JSON-RPC error.
    ProtocolError,
}

/// What an error's words claim about whether the call ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// A result: nothing to claim.
    Ran,
    MayHaveRun,
    DidNotRun,
    /// An error that says neither (or both).
    Unclear,
}

impl std::fmt::Display for Seen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} → {:?}", self.tool, self.answer)?;
        if self.answer != Answered::Result {
            write!(f, " ({:?})", self.ran)?;
        }
        if !self.progress.is_empty() {
            write!(f, "; progress: {}", self.progress.join(" / "))?;
        }
        Ok(())
    }
}

/// Numbers as `N`: what differs between two runs of the same thing.
pub fn without_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !out.ends_with('N') {
                out.push('N');
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn seen(tool: &str, answer: &Value, progress: &[String]) -> Seen {
    let kind = if answer.get("error").is_some() {
        Answered::ProtocolError
    } else if answer["result"]["isError"] == Value::Bool(true) {
        Answered::ToolError
    } else {
        Answered::Result
    };
    let text = error_text(answer);
    let ran = match (kind, claims(&text)) {
        (Answered::Result, _) => Claim::Ran,
        (_, (true, false)) => Claim::MayHaveRun,
        (_, (false, true)) => Claim::DidNotRun,
        _ => Claim::Unclear,
    };
    let mut words: Vec<String> = Vec::new();
    for message in progress.iter().map(|m| without_numbers(m)) {
        if message != "waiting for Unity (N s)" && words.last() != Some(&message) {
            words.push(message);
        }
    }
    Seen { tool: tool.to_owned(), answer: kind, ran, progress: words, text: without_numbers(&text) }
}

/// The Editor faults an Editor with a control API is given through it:
/// those that change what it does where it is.
const CONTROLLED_FAULTS: &[&str] = &["slowTool", "mainThreadStall", "responseSize"];

/// Why an Editor with a control API cannot play `scenario`'s own part, if
/// it cannot: what only the simulated Editor's start or its reloads give.
pub fn controlled_cannot_play(scenario: &Scenario) -> Option<String> {
    if scenario.start_delay_ms > 0 {
        return Some("the Editor starts late, which only the simulated Editor plays (a start delay)".into());
    }
    if scenario.state.is_some() {
        return Some(
            "it starts from an editor state of its own, which only the simulated Editor takes (at its start)".into(),
        );
    }
    if scenario.silent_package.is_some() {
        return Some("the package never answers (only the simulated Editor plays a silent package)".into());
    }
    // The Editor's own faults at a reload go to its control API (which says
    // what it cannot do); a start or a quit is the simulated Editor's, and a
    // proxy sees no lifecycle at all.
    let lifecycle = |rule: &&fake_unity::RuleSpec| match rule.on {
        Some(Trigger::Start | Trigger::Quit) => true,
        Some(Trigger::Reload) => rule.fault.scope() == Scope::Wire,
        _ => false,
    };
    if let Some(rule) = scenario.faults.iter().find(lifecycle) {
        return Some(format!(
            "the fault {} fires at the Editor's {}, which only the simulated Editor plays",
            rule.fault.name(),
            rule.on.map_or("", Trigger::as_str)
        ));
    }
    // A reload, a crash, a port that moves: the bridge follows the Editor
    // to its new port, away from the proxy in front of it; only the
    // simulated Editor plays them with the bridge before it.
    if let Some(rule) = scenario
        .faults
        .iter()
        .find(|rule| rule.fault.scope() == Scope::Editor && !CONTROLLED_FAULTS.contains(&rule.fault.name()))
    {
        return Some(format!(
            "the fault {} moves or restarts the Editor, which only the simulated Editor plays with the bridge in front of it (here a proxy stands between them)",
            rule.fault.name()
        ));
    }
    scenario.timeline.iter().find_map(|timed| match &timed.action {
        Action::RemoveFault { .. }
        | Action::ClearFaults
        | Action::Hang { .. }
        | Action::EndHang
        | Action::Settings { .. } => None,
        other => Some(format!("its timeline does {other:?}, which needs the simulated Editor")),
    })
}

/// Plays the scenario `name` against the session's Editor through the
/// bridge; what the client saw, step by step.
pub(crate) async fn play(mut s: Session, name: &str) -> Result<Vec<Seen>, Finding> {
    let path = scenarios_dir().join(format!("{name}.toml"));
    let scenario = Scenario::load(&path).map_err(|e| Finding::Harness(e.to_string()))?;
    let exercise = scenario.exercise.clone();
    let expected_runs = scenario.runs.clone();
    let rig = rig(&mut s, scenario).await?;
    let played = exercise_through(&s, &rig, name, &exercise).await;
    let checked = match played {
        Ok(seen) => after(&s, &rig, name, &exercise, expected_runs).await.map(|()| seen),
        Err(finding) => Err(finding),
    };
    if let Rig::Proxy { editor: Some(editor), .. } = rig {
        editor.restore().await?;
    }
    checked
}

/// Sets the scenario up where it is carried out.
async fn rig(s: &mut Session, scenario: Scenario) -> Result<Rig, Finding> {
    if s.is_embedded_fake() {
        let state = match &scenario.state {
            Some(state) => Some(EditorStateFile::load(state).map_err(|e| Finding::Harness(e.to_string()))?),
            None => None,
        };
        let port = free_port()?;
        s.restart_fake(move |config| {
            if let Some(state) = state {
                config.state = state;
            }
            config.seed = Some(scenario.seed.unwrap_or(1));
            config.port = port;
            config.time_scale = TIME_SCALE;
            config.scenario = scenario;
        })
        .await?;
        return Ok(Rig::Fake);
    }
    let upstream = s.editor_addr().await?.to_string();
    let editor = match s.control.clone() {
        Some(control) => {
            if let Some(why) = controlled_cannot_play(&scenario) {
                return Err(Finding::NotApplicable(format!("not applicable in front of this Editor: {why}")));
            }
            Some(Controlled::set_up(control, &scenario).await?)
        }
        None => {
            if let Some(why) = fake_unity::proxy::unsupported(&scenario) {
                return Err(Finding::NotApplicable(format!(
                    "not applicable: {why} (in front of this Editor the scenario runs through fake-unity proxy, which carries out wire faults only)"
                )));
            }
            None
        }
    };
    let wire = wire_part(scenario);
    // The faults the proxy carries out go into the wire log as they fire.
    let events = fake_unity::events::Events::default();
    let watching = s.watch(&events);
    let config =
        ProxyConfig { upstream, port: 0, control_port: 0, scenario: wire, seed: None, time_scale: TIME_SCALE, events };
    let proxy = match Proxy::start(config).await {
        Ok(proxy) => proxy,
        Err(e) => {
            if let Some(editor) = editor {
                editor.restore().await?;
            }
            return Err(Finding::Harness(format!("fake-unity proxy: {e}")));
        }
    };
    Ok(Rig::Proxy { proxy, editor, _watching: watching })
}

/// The scenario's wire faults and the timeline's actions on them: what a
/// proxy carries out.
fn wire_part(mut scenario: Scenario) -> Scenario {
    scenario.faults.retain(|rule| rule.fault.scope() == Scope::Wire);
    let wire: Vec<String> = scenario.faults.iter().filter_map(|rule| rule.name.clone()).collect();
    scenario.timeline.retain(|timed| match &timed.action {
        Action::RemoveFault { name } => wire.contains(name),
        Action::Settings { .. } => false,
        _ => true,
    });
    scenario.settings = None;
    scenario
}

impl Controlled {
    /// Gives the Editor the scenario's settings and its own faults (their
    /// times scaled as the fake scales them), and starts the timeline's
    /// removals of them.
    async fn set_up(control: ControlClient, scenario: &Scenario) -> Result<Controlled, Finding> {
        let refused = |e: fake_unity::control::ControlError| match e {
            fake_unity::control::ControlError::Status { status: 400, body } => Finding::NotApplicable(format!(
                "not applicable: this Editor's control API cannot carry the scenario out: {body}"
            )),
            other => Finding::Harness(format!("the control API: {other}")),
        };
        let settings_before = match &scenario.settings {
            Some(settings) => {
                let state = control.get("/state").await.map_err(refused)?;
                control.post("/settings", settings.clone()).await.map_err(refused)?;
                Some(state["settings"].clone())
            }
            None => None,
        };
        let mut editor = Controlled { control, settings_before, timeline: tokio::spawn(async {}) };
        let editor_faults: Vec<&fake_unity::RuleSpec> =
            scenario.faults.iter().filter(|rule| rule.fault.scope() == Scope::Editor).collect();
        let rules: Vec<Value> =
            editor_faults.iter().map(|rule| scaled(serde_json::to_value(rule).unwrap_or_default())).collect();
        if !rules.is_empty() {
            if let Err(e) = editor.control.post("/faults", Value::Array(rules)).await {
                editor.restore().await?;
                return Err(refused(e));
            }
        }
        let own: Vec<String> = editor_faults.iter().filter_map(|rule| rule.name.clone()).collect();
        let actions: Vec<(u64, Action)> = scenario
            .timeline
            .iter()
            .filter(|timed| match &timed.action {
                Action::RemoveFault { name } => own.contains(name),
                Action::Settings { .. } | Action::ClearFaults => true,
                _ => false,
            })
            .map(|timed| (timed.at_ms, timed.action.clone()))
            .collect();
        let control = editor.control.clone();
        editor.timeline = tokio::spawn(async move {
            let started = tokio::time::Instant::now();
            for (at_ms, action) in actions {
                let at = started + std::time::Duration::from_secs_f64(at_ms as f64 / 1000.0 * TIME_SCALE);
                tokio::time::sleep_until(at).await;
                let done = match action {
                    Action::RemoveFault { name } => control.delete(&format!("/faults/{name}")).await,
                    Action::Settings { settings } => control.post("/settings", settings).await,
                    _ => control.post("/reset", json!({})).await,
                };
                if let Err(e) = done {
                    tracing::warn!(%e, "the scenario's timeline, through the control API");
                }
            }
        });
        Ok(editor)
    }

    /// The Editor as it was: no faults, its settings back.
    async fn restore(self) -> Result<(), Finding> {
        self.timeline.abort();
        let harness = |e: fake_unity::control::ControlError| Finding::Harness(format!("the control API: {e}"));
        self.control.post("/reset", json!({})).await.map_err(harness)?;
        if let Some(settings) = self.settings_before {
            self.control.post("/settings", settings).await.map_err(harness)?;
        }
        Ok(())
    }
}

/// A rule's durations scaled by [`TIME_SCALE`], as the fake scales its own.
fn scaled(mut rule: Value) -> Value {
    let scale = |v: &mut Value| {
        if let Some(ms) = v.as_u64() {
            *v = json!((ms as f64 * TIME_SCALE).round() as u64);
        }
    };
    if let Some(for_ms) = rule.get_mut("forMs") {
        scale(for_ms);
    }
    if let Some(ms) = rule.get_mut("fault").and_then(|f| f.get_mut("ms")) {
        scale(ms);
    }
    rule
}

/// The scenario's exercise calls through the bridge, each checked as it is
/// answered; what the client saw of each.
async fn exercise_through(s: &Session, rig: &Rig, name: &str, exercise: &[ExerciseStep]) -> Result<Vec<Seen>, Finding> {
    s.note(format!("scenario {name} loaded{}", if matches!(rig, Rig::Proxy { .. }) { " into a proxy" } else { "" }));
    let mut mcp = match rig {
        Rig::Fake => s.mcp().await?,
        Rig::Proxy { proxy, .. } => s.mcp_at(proxy.port())?,
    };
    mcp.initialize().await?;
    let (mut overshoot, mut most_stalled) = (None::<f64>, 0f64);
    let mut seen_steps = Vec::new();
    for (n, ExerciseStep { call: tool, args, expect, meaning }) in exercise.iter().enumerate() {
        let step = |why: String| Finding::Violation(format!("step {} ({tool}): {why}", n + 1));
        let started = std::time::Instant::now();
        let pid = mcp.pid();
        let token = format!("step-{}", n + 1);
        let params = json!({"name": tool, "arguments": args, "_meta": {"progressToken": token}});
        let (answer, stalled) = stall_meter::measure(pid, mcp.call_method("tools/call", params)).await;
        let answer = answer.map_err(|e| match e {
            Finding::Violation(why) => step(why),
            other => other,
        })?;
        let took = started.elapsed().as_secs_f64();
        let progress: Vec<String> = mcp
            .notifications()
            .iter()
            .filter(|n| n["method"] == "notifications/progress" && n["params"]["progressToken"] == json!(token))
            .filter_map(|n| n["params"]["message"].as_str().map(str::to_owned))
            .collect();
        let failed = answer.get("error").is_some() || answer["result"]["isError"] == Value::Bool(true);
        let ok = match expect {
            Expect::Success => !failed,
            Expect::Error => failed,
            Expect::Any => true,
        };
        if !ok {
            return Err(step(format!(
                "expected {expect:?}, got {}",
                crate::wire_log::excerpt(answer.to_string().as_bytes())
            )));
        }
        if let Some(timeout) = args.get("TimeoutSeconds").and_then(Value::as_f64) {
            let late = took - timeout;
            overshoot = Some(overshoot.map_or(late, |o| o.max(late)));
            let stalled = stalled.as_secs_f64();
            most_stalled = most_stalled.max(stalled);
            if late > DEADLINE_MARGIN + stalled {
                return Err(step(format!(
                    "answered after {took:.1} s; TimeoutSeconds was {timeout}, so the answer was due by {:.1} s (the machine held the bridge or the harness off the CPU for {stalled:.1} s of it, allowed for){}",
                    timeout + DEADLINE_MARGIN + stalled,
                    mcp.stderr_tail()
                )));
            }
        }
        if let (Some(meaning), true) = (meaning, failed) {
            let text = error_text(&answer);
            check_meaning(&text, *meaning).map_err(step)?;
        }
        seen_steps.push(seen(tool, &answer, &progress));
    }
    let tools = mcp.list_tools().await?;
    if tools.is_empty() {
        return violation("after the scenario the bridge lists no tools");
    }
    mcp.finish().await?;
    s.note(format!(
        "scenario {name}: {} calls, {} answers, deadline overshoot max: {} (stalls allowed for: up to {most_stalled:.2} s)",
        exercise.len(),
        seen_steps.len(),
        overshoot.map_or("-".to_owned(), |o| format!("{o:.2} s"))
    ));
    Ok(seen_steps)
}

/// After the exercise: the Editor ran each tool as often as the scenario
/// says (where it counts its runs), and every fault rule fired.
async fn after(
    s: &Session,
    rig: &Rig,
    name: &str,
    exercise: &[ExerciseStep],
    expected_runs: std::collections::BTreeMap<String, u64>,
) -> Result<(), Finding> {
    let harness = |e: fake_unity::control::ControlError| Finding::Harness(format!("the control API: {e}"));
    let (stats, editor_rules) = match rig {
        Rig::Fake => (s.control()?.get("/stats").await.map_err(harness)?, Value::Null),
        Rig::Proxy { proxy, editor: None, .. } => (proxy.stats(), Value::Null),
        Rig::Proxy { proxy, editor: Some(editor), .. } => {
            // `fake-unity serve` lists the rules, the headless host has them under `faults`.
            let listed = editor.control.get("/faults").await.map_err(harness)?;
            let rules = match listed {
                Value::Object(mut fields) => fields.remove("faults").unwrap_or_default(),
                other => other,
            };
            (proxy.stats(), rules)
        }
    };
    // Only the fake counts what it ran; elsewhere the runs are the
    // Editor's own business.
    let counted = matches!(rig, Rig::Fake);
    if !counted && !expected_runs.is_empty() {
        s.note("runs not counted: this Editor has no run counter");
    }
    let expected_runs = if counted { expected_runs } else { Default::default() };
    let runs: Vec<String> =
        expected_runs.keys().map(|tool| format!("{tool} {}", stats["runs"][tool].as_u64().unwrap_or(0))).collect();
    s.note(format!(
        "scenario {name}: {} calls, runs: {}",
        exercise.len(),
        if runs.is_empty() { "-".to_owned() } else { runs.join(", ") },
    ));
    for (tool, expected) in &expected_runs {
        let ran = stats["runs"][tool].as_u64().unwrap_or(0);
        if ran != *expected {
            return violation(format!(
                "Unity ran {tool} {ran} time(s); the scenario allows exactly {expected} (a call sent again after it reached an Editor, or one that ran though reported as not run)"
            ));
        }
    }
    let silent: Vec<&str> = [&stats["faults"], &editor_rules]
        .into_iter()
        .filter_map(Value::as_array)
        .flatten()
        .filter(|rule| rule["fired"].as_u64() == Some(0))
        .map(|rule| rule["name"].as_str().unwrap_or("?"))
        .collect();
    if !silent.is_empty() {
        return Err(Finding::Harness(format!(
            "these faults never fired, so the run proves nothing about them: {silent:?}"
        )));
    }
    Ok(())
}
