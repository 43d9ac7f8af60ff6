//! Recorded sessions: `fixtures/sessions/NAME.jsonl` is what the editor link
//! carried while the workflow NAME ran through the bridge (recording with
//! `--record`) in front of the embedded fake. `unity-conformance
//! record-sessions` writes them; the tests replay each with fake-unity's
//! replay to the bridge making the same calls, and compare the answers with
//! the workflow's snapshot in `fixtures/snapshots/mcp/`, the one snapshot
//! set of the bridge's MCP output.
//!
//! A session starts as every workflow of the suite does (`clear-console`,
//! whose answer is not part of the snapshot), so the replayed answers are
//! the live ones.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use editor_link::methods;
use fake_unity::{
    Config, FakeUnity, ReloadOptions, Scenario,
    replay::{Outcome, Replay, ReplayConfig},
};
use serde_json::{Value, json};

use crate::{
    bridge::{BridgeCommand, McpProcess},
    finding::Finding,
    snapshot,
    wire_log::WireLog,
    workflow::{Step, Workflow},
};

/// The workflows recorded in `fixtures/sessions/`.
pub const RECORDED: &[&str] =
    &["inspect-scene", "edit-compile-fix", "run-tests-read-failures", "search-assets", "reload-moves-port"];

/// How long the bridge waits for anything while recording or replaying.
const WAIT: Duration = Duration::from_secs(20);

pub fn sessions_dir() -> PathBuf {
    crate::home::repository().join("fixtures/sessions")
}

fn harness(e: impl std::fmt::Display) -> Finding {
    Finding::Harness(e.to_string())
}

/// The embedded fake as sessions are recorded: seeded, on a virtual clock
/// (the same bytes every time), with short reloads and compiles.
pub async fn recording_fake(project: &Path, scenario: Scenario) -> Result<FakeUnity, Finding> {
    let mut config = Config::new(project);
    config.seed = Some(scenario.seed.unwrap_or(11));
    config.clock = fake_unity::Clock::Virtual;
    config.state.editor.reload_downtime_ms = 200;
    config.state.editor.tools_ready_delay_ms = 20;
    config.state.compile.duration_ms = 50;
    config.scenario = scenario;
    FakeUnity::start(config).await.map_err(harness)
}

/// The bridge `bridge` with `extra` arguments after its own.
fn with_args(bridge: &BridgeCommand, extra: &[&std::ffi::OsStr]) -> BridgeCommand {
    let mut bridge = bridge.clone();
    bridge.args.extend(extra.iter().map(|a| a.to_os_string()));
    bridge
}

/// How many tool lists the bridge has fetched from the Editor (its status tool).
async fn tool_fetches(mcp: &mut McpProcess) -> Result<u64, Finding> {
    let status = mcp.call_ok(unity_mcp_bridge::bridge::STATUS_TOOL, json!({})).await?;
    status["structuredContent"]["tools"]["fetches"]
        .as_u64()
        .ok_or_else(|| Finding::Harness(format!("the status tool does not count tool-list fetches: {status}")))
}

/// Runs `workflow` through `bridge` against a recording fake on `project`,
/// the bridge recording the editor link to `transcript`: the MCP answers.
pub async fn record(
    workflow: &Workflow,
    bridge: &BridgeCommand,
    project: &Path,
    transcript: &Path,
    scenario: Scenario,
) -> Result<Vec<Value>, Finding> {
    // The agent is there before the Editor: the link meets the Editor
    // knowing the client's name, so what it sends (and so the transcript)
    // does not depend on which of the two came first. (The port is found
    // through the project's discovery file.)
    let recording = with_args(bridge, &["--record".as_ref(), transcript.as_os_str()]);
    let mut mcp = McpProcess::spawn(&recording, Some(project), 0, None, WireLog::default())?;
    mcp.initialize().await?;
    let fake = recording_fake(project, scenario).await?;
    mcp.call_ok("clear-console", json!({})).await?;
    let mut answers = Vec::new();
    for step in &workflow.steps {
        match step {
            Step::Call { call: tool, arguments } => answers.push(mcp.call(tool, arguments.clone()).await?),
            Step::Write { write: path, text } => std::fs::write(project.join(path), text).map_err(harness)?,
            Step::ListTools { .. } => answers.push(json!({"tools": mcp.list_tools().await?})),
            Step::Discover { .. } => {
                answers.push(mcp.call_method_in(workflow.revision, "server/discover", json!({})).await?);
            }
            Step::Reload { reload } => {
                let before = tool_fetches(&mut mcp).await?;
                fake.reload(ReloadOptions { move_port: reload.move_port, ..ReloadOptions::default() }).await;
                // The bridge reconnects and fetches the tools again in the
                // background; the recording must hold that fetch, always.
                let deadline = tokio::time::Instant::now() + WAIT;
                while tool_fetches(&mut mcp).await? <= before {
                    if tokio::time::Instant::now() > deadline {
                        return Err(Finding::Harness(format!("the bridge fetched no tool list within {WAIT:?}")));
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    }
    mcp.finish().await?;
    fake.quit().await;
    Ok(answers)
}

/// Replays `transcript` to `bridge` making `calls` (the first,
/// `clear-console`, included): the answers and how the replay went.
pub async fn replay(
    transcript: &Path,
    calls: &[(String, Value)],
    bridge: &BridgeCommand,
    project: &Path,
) -> Result<(Vec<Value>, Outcome), Finding> {
    let recorded = editor_link::transcript::Transcript::read(transcript).map_err(harness)?;
    let mut config = ReplayConfig::new(transcript.to_owned(), recorded);
    config.project = Some(project.to_owned());
    config.idle_timeout = Duration::from_secs(2);
    // How many times the bridge fetches the tool list depends on whether an
    // Editor's `list_changed` lands before or after a fetch is on its way.
    config.background = vec![methods::GET_TOOL_DETAILS.into()];
    let replay = Replay::start(config).await.map_err(harness)?;
    let mut mcp = McpProcess::spawn(bridge, Some(project), replay.port(), None, WireLog::default())?;
    mcp.initialize().await?;
    let mut answers = Vec::new();
    for (tool, arguments) in calls {
        answers.push(mcp.call(tool, arguments.clone()).await?);
    }
    mcp.finish().await?;
    let outcome = tokio::time::timeout(WAIT, replay.finished())
        .await
        .map_err(|_| Finding::Harness(format!("the replay did not end within {WAIT:?}")))?;
    Ok((answers, outcome))
}

/// Answers as a workflow's snapshot has them: each call with its arguments
/// and its redacted answer (`calls` and `answers` without `clear-console`).
pub fn as_snapshot(calls: &[(String, Value)], answers: &[Value], project: &Path) -> Value {
    let mut redactor = snapshot::redactor(Some(project));
    Value::Array(
        calls
            .iter()
            .zip(answers)
            .map(|((tool, arguments), answer)| {
                json!({"call": tool, "arguments": arguments,
                       "answer": snapshot::comparable(answer.clone(), &mut redactor)})
            })
            .collect(),
    )
}
