//! The fault scenarios of `fixtures/scenarios/` through the bridge: the
//! embedded fake starts with the scenario loaded (durations scaled down),
//! the bridge in front of it makes the scenario's exercise calls. Each call
//! gets exactly one answer, the one the scenario expects; nothing is lost,
//! the bridge keeps serving, and every fault rule fired (a rule that never
//! fired would make the case a false pass).

use std::path::PathBuf;

use fake_unity::{
    EditorStateFile, Scenario,
    scenario::{ExerciseStep, Expect},
};
use serde_json::Value;

use crate::{
    case::{Case, Finding, Level, Needs, check, violation},
    target::{Session, fixture_project},
};

/// Every scenario file (a test keeps this in step with the folder).
pub const SCENARIOS: &[&str] = &[
    "broken-responses",
    "compile-errors",
    "deadlocked-test-run",
    "flaky-link",
    "half-open",
    "huge-response",
    "long-compile",
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

/// `fixtures/scenarios` of this repository.
pub fn scenarios_dir() -> PathBuf {
    fixture_project().join("../scenarios")
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
                "Through the fault scenario {name}.toml, every call the scenario makes gets exactly one answer, the one it expects; nothing is lost and the bridge keeps serving."
            )
            .into(),
            reference: "editor-link-protocol.md §5; mcp-stdio.md (tools/call)",
            level: Level::Must,
            needs: Needs::Faults,
            check: check(move |s| Box::pin(run(s, name))),
        })
        .collect()
}

async fn run(mut s: Session, name: &str) -> Result<(), Finding> {
    let path = scenarios_dir().join(format!("{name}.toml"));
    let scenario = Scenario::load(&path).map_err(|e| Finding::Harness(e.to_string()))?;
    let state = match &scenario.state {
        Some(state) => Some(EditorStateFile::load(state).map_err(|e| Finding::Harness(e.to_string()))?),
        None => None,
    };
    let port = free_port()?;
    let exercise = scenario.exercise.clone();
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
    s.note(format!("scenario {name} loaded"));

    let mut mcp = s.mcp().await?;
    mcp.initialize().await?;
    for (n, ExerciseStep { call: tool, args, expect }) in exercise.iter().enumerate() {
        let answer = mcp.call(tool, args.clone()).await.map_err(|e| match e {
            Finding::Violation(why) => Finding::Violation(format!("step {} ({tool}): {why}", n + 1)),
            other => other,
        })?;
        let failed = answer.get("error").is_some() || answer["result"]["isError"] == Value::Bool(true);
        let ok = match expect {
            Expect::Success => !failed,
            Expect::Error => failed,
            Expect::Any => true,
        };
        if !ok {
            return violation(format!(
                "step {} ({tool}) expected {expect:?}, got {}",
                n + 1,
                crate::target::excerpt(answer.to_string().as_bytes())
            ));
        }
    }
    let tools = mcp.list_tools().await?;
    if tools.is_empty() {
        return violation("after the scenario the bridge lists no tools");
    }
    mcp.finish().await?;

    let stats = s.control()?.get("/stats").await.map_err(|e| Finding::Harness(format!("the control API: {e}")))?;
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
