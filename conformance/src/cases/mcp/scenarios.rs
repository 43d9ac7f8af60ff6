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
    EditorStateFile, Scenario,
    proxy::{Proxy, ProxyConfig},
    scenario::{ExerciseStep, Expect},
};
use serde_json::Value;

use crate::{
    case::{Case, Level, Needs, Requires, check},
    did_it_run::check_meaning,
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
            check: check(move |s| Box::pin(run(s, name))),
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
    /// By `fake-unity proxy` in front of the target's Editor.
    Proxy(Proxy),
}

async fn run(mut s: Session, name: &str) -> Result<(), Finding> {
    let path = scenarios_dir().join(format!("{name}.toml"));
    let scenario = Scenario::load(&path).map_err(|e| Finding::Harness(e.to_string()))?;
    let exercise = scenario.exercise.clone();
    let expected_runs = scenario.runs.clone();
    let rig = if s.is_embedded_fake() {
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
        Rig::Fake
    } else {
        if let Some(why) = fake_unity::proxy::unsupported(&scenario) {
            return Err(Finding::NotApplicable(format!(
                "not applicable: {why} (in front of this Editor the scenario runs through fake-unity proxy, which carries out wire faults only)"
            )));
        }
        let upstream = s.editor_addr().await?.to_string();
        let config = ProxyConfig { upstream, port: 0, control_port: 0, scenario, seed: None, time_scale: TIME_SCALE };
        Rig::Proxy(Proxy::start(config).await.map_err(|e| Finding::Harness(format!("fake-unity proxy: {e}")))?)
    };
    s.note(format!("scenario {name} loaded{}", if matches!(rig, Rig::Proxy(_)) { " into a proxy" } else { "" }));

    let mut mcp = match &rig {
        Rig::Fake => s.mcp().await?,
        Rig::Proxy(proxy) => s.mcp_at(proxy.port())?,
    };
    mcp.initialize().await?;
    let (mut overshoot, mut most_stalled) = (None::<f64>, 0f64);
    for (n, ExerciseStep { call: tool, args, expect, meaning }) in exercise.iter().enumerate() {
        let step = |why: String| Finding::Violation(format!("step {} ({tool}): {why}", n + 1));
        let started = std::time::Instant::now();
        let pid = mcp.pid();
        let (answer, stalled) = stall_meter::measure(pid, mcp.call(tool, args.clone())).await;
        let answer = answer.map_err(|e| match e {
            Finding::Violation(why) => step(why),
            other => other,
        })?;
        let took = started.elapsed().as_secs_f64();
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
    }
    let tools = mcp.list_tools().await?;
    if tools.is_empty() {
        return violation("after the scenario the bridge lists no tools");
    }
    mcp.finish().await?;

    let stats = match &rig {
        Rig::Fake => s.control()?.get("/stats").await.map_err(|e| Finding::Harness(format!("the control API: {e}")))?,
        Rig::Proxy(proxy) => proxy.stats(),
    };
    // Only the fake counts what it ran; through a proxy the runs are the
    // Editor's own business.
    let counted = matches!(rig, Rig::Fake);
    if !counted && !expected_runs.is_empty() {
        s.note("runs not counted: this Editor has no run counter");
    }
    let expected_runs = if counted { expected_runs } else { Default::default() };
    let runs: Vec<String> =
        expected_runs.keys().map(|tool| format!("{tool} {}", stats["runs"][tool].as_u64().unwrap_or(0))).collect();
    s.note(format!(
        "scenario {name}: {} calls, {} answers, runs: {}, deadline overshoot max: {} (stalls allowed for: up to {most_stalled:.2} s)",
        exercise.len(),
        exercise.len(),
        if runs.is_empty() { "-".to_owned() } else { runs.join(", ") },
        overshoot.map_or("-".to_owned(), |o| format!("{o:.2} s"))
    ));
    for (tool, expected) in &expected_runs {
        let ran = stats["runs"][tool].as_u64().unwrap_or(0);
        if ran != *expected {
            return violation(format!(
                "Unity ran {tool} {ran} time(s); the scenario allows exactly {expected} (a call sent again after it reached an Editor, or one that ran though reported as not run)"
            ));
        }
    }
    let silent: Vec<&str> = stats["faults"]
        .as_array()
        .into_iter()
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
