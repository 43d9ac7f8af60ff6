//! Scenario files (`fake-unity serve --scenario FILE`): a named situation a
//! real Editor gets into, as TOML or JSON — the editor state to start from,
//! fault rules, timed actions, and how to exercise it through the bridge.
//!
//! ```toml
//! description = "A domain reload in the middle of a compile"
//! seed = 7                       # optional; --seed wins
//! state = "../editor-states/compile-errors.json"   # optional, relative to this file
//! startDelayMs = 0               # how long the Editor is absent at startup
//! silentPackage = "compileErrors" # optional: Unity open, its package never answers
//!
//! [[faults]]                     # see crate::faults for every field
//! name = "reload-in-compile"
//! on = "toEditor"
//! match = { method = "compile" }
//! fault = { kind = "reload", at = "afterRun" }
//! times = 1
//!
//! [[timeline]]                   # actions at a time after the Editor listens
//! atMs = 5000
//! action = "reload"
//! movePort = true
//!
//! [[exercise]]                   # MCP tool calls that run into the faults
//! call = "compile"
//! args = { ForceRecompile = true }
//! expect = "success"             # success | error | any
//! meaning = "mayHaveRun"         # an error must say so (or "didNotRun")
//!
//! [runs]                         # what the Editor did, counted at the end
//! compile = 1                    # tool bodies started (GET /stats "runs")
//! ```

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{
    editor::{CrashOptions, Editor, ReloadOptions},
    faults::RuleSpec,
};

/// A scenario file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    /// What situation this is, in words.
    #[serde(default)]
    pub description: String,
    /// Seed of every random choice (the command line's `--seed` wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// An editor state file, relative to the scenario file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<PathBuf>,
    /// How long the Editor stays absent before it listens (Unity not open yet).
    #[serde(default)]
    pub start_delay_ms: u64,
    /// Unity is open but its package never answers, and why
    /// ([`crate::silent_package`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub silent_package: Option<crate::silent_package::SilentPackage>,
    /// A partial settings object applied at start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<Value>,
    #[serde(default)]
    pub faults: Vec<RuleSpec>,
    #[serde(default)]
    pub timeline: Vec<TimedAction>,
    #[serde(default)]
    pub exercise: Vec<ExerciseStep>,
    /// How many times the Editor ran each tool by the end (its run counter):
    /// a mutating call that runs twice, or one reported as not run that ran,
    /// shows here.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub runs: std::collections::BTreeMap<String, u64>,
}

/// An action at a time after the Editor first listens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimedAction {
    pub at_ms: u64,
    #[serde(flatten)]
    pub action: Action,
}

/// What a timed action does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// Unknown fields are refused here: `TimedAction` flattens this enum, so
// only the fields it did not take reach it.
#[serde(tag = "action", rename_all = "camelCase", rename_all_fields = "camelCase", deny_unknown_fields)]
pub enum Action {
    /// A domain reload.
    Reload {
        #[serde(default)]
        downtime_ms: Option<u64>,
        #[serde(default)]
        move_port: bool,
    },
    /// The Editor quits.
    Quit,
    /// The Editor process crashes; a new one opens the project after
    /// `restartAfterMs` (never, when absent).
    Crash {
        #[serde(default)]
        restart_after_ms: Option<u64>,
        #[serde(default)]
        move_port: bool,
    },
    /// A new Editor process after a crash.
    Restart {
        #[serde(default)]
        move_port: bool,
    },
    /// The whole Editor hangs, for `ms` or until `endHang`.
    Hang {
        #[serde(default)]
        ms: Option<u64>,
    },
    /// The hang ends.
    EndHang,
    /// Settings change (a partial settings object).
    Settings { settings: Value },
    /// A fault rule is removed (a modal dialog closed, focus came back).
    RemoveFault { name: String },
    /// Every fault rule is removed.
    ClearFaults,
}

/// One MCP tool call that runs into the scenario's faults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExerciseStep {
    pub call: String,
    #[serde(default = "empty_object")]
    pub args: Value,
    #[serde(default)]
    pub expect: Expect,
    /// What an error answer must say about whether the Editor may have run
    /// the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meaning: Option<Meaning>,
}

/// What an error says about the call: the truth, as the scenario knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Meaning {
    /// It reached the Editor, which may have run it.
    MayHaveRun,
    /// It never reached the Editor.
    DidNotRun,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

/// What a bridge must answer to an exercise call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Expect {
    Success,
    Error,
    /// One answer, either way.
    #[default]
    Any,
}

/// Why a scenario file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("cannot read the scenario {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("invalid scenario {path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

impl Scenario {
    /// Reads a `.toml` or `.json` scenario; a relative `state` is resolved
    /// against the scenario's folder.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ScenarioError::Read { path: path.to_owned(), source })?;
        let invalid = |message: String| ScenarioError::Invalid { path: path.to_owned(), message };
        let mut scenario: Scenario = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => serde_json::from_str(&text).map_err(|e| invalid(e.to_string()))?,
            _ => toml::from_str(&text).map_err(|e| invalid(e.to_string()))?,
        };
        if let Some(state) = &scenario.state {
            if state.is_relative() {
                scenario.state = Some(path.parent().unwrap_or(Path::new(".")).join(state));
            }
        }
        // The rules are checked now, not when the Editor starts.
        let probe = crate::faults::Faults::new(0, 1.0);
        probe.add(scenario.faults.clone()).map_err(|e| invalid(e.to_string()))?;
        Ok(scenario)
    }
}

/// Plays the timeline against a running Editor (times are scaled like every
/// fault duration).
pub(crate) fn play_timeline(editor: &Arc<Editor>, timeline: Vec<TimedAction>) {
    if timeline.is_empty() {
        return;
    }
    let editor = editor.clone();
    tokio::spawn(async move {
        let started = tokio::time::Instant::now();
        let mut timeline = timeline;
        timeline.sort_by_key(|t| t.at_ms);
        for timed in timeline {
            tokio::time::sleep_until(started + editor.faults.scaled(timed.at_ms)).await;
            tracing::info!(action = ?timed.action, "scenario timeline");
            match timed.action {
                Action::Reload { downtime_ms, move_port } => editor.request_reload(
                    ReloadOptions {
                        downtime: downtime_ms.map(|ms| editor.faults.scaled(ms)),
                        move_port,
                        ..ReloadOptions::default()
                    },
                    None,
                ),
                Action::Quit => editor.request_quit(None),
                Action::Crash { restart_after_ms, move_port } => editor.request_crash(
                    CrashOptions { restart_after: restart_after_ms.map(|ms| editor.faults.scaled(ms)), move_port },
                    None,
                ),
                Action::Restart { move_port } => editor.request_restart(move_port, None),
                Action::Hang { ms } => editor.hang.start(&editor.faults, ms.map(|ms| editor.faults.scaled(ms)), None),
                Action::EndHang => editor.hang.end(),
                Action::Settings { settings } => {
                    if let Err(err) = editor.update_settings(settings) {
                        tracing::warn!(%err, "scenario settings rejected");
                    }
                }
                Action::RemoveFault { name } => {
                    if let Err(err) = editor.faults.remove(&name) {
                        tracing::warn!(%err, "scenario timeline");
                    }
                }
                Action::ClearFaults => editor.faults.clear(),
            }
        }
    });
}

/// The start delay, scaled.
pub(crate) fn start_delay(editor: &Editor, scenario_ms: u64) -> Duration {
    editor.faults.scaled(scenario_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_toml_scenario_parses_with_every_section() {
        let text = r#"
description = "demo"
seed = 3
startDelayMs = 100
settings = { disabledTools = ["ping"] }

[[faults]]
name = "slow"
match = { method = "compile" }
fault = { kind = "slowTool", ms = 2000 }

[[timeline]]
atMs = 50
action = "reload"
movePort = true

[[timeline]]
atMs = 60
action = "removeFault"
name = "slow"

[[exercise]]
call = "compile"
args = { ForceRecompile = true }
expect = "error"
meaning = "mayHaveRun"

[runs]
compile = 1
"#;
        let scenario: Scenario = toml::from_str(text).unwrap();
        assert_eq!(scenario.faults.len(), 1);
        assert_eq!(scenario.timeline[0].action, Action::Reload { downtime_ms: None, move_port: true });
        assert_eq!(scenario.timeline[1].action, Action::RemoveFault { name: "slow".into() });
        assert_eq!(scenario.exercise[0].expect, Expect::Error);
        assert_eq!(scenario.exercise[0].meaning, Some(Meaning::MayHaveRun));
        assert_eq!(scenario.runs["compile"], 1);
        let unknown = toml::from_str::<Scenario>("descripton = \"typo\"\n");
        assert!(unknown.unwrap_err().to_string().contains("descripton"));
        let unknown = toml::from_str::<Scenario>("[[timeline]]\natMs = 1\naction = \"reload\"\nmovePrt = true\n");
        assert!(unknown.unwrap_err().to_string().contains("movePrt"));
    }
}
