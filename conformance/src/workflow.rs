//! Workflows: scripted agent sessions (`fixtures/workflows.json`), what a
//! client does step by step. The suite runs each through the bridge and
//! compares the answers with its snapshot (`cases::mcp::snapshots`); some are
//! also recorded as sessions (`sessions`).

use serde::Deserialize;
use serde_json::Value;

/// A scripted agent session: what a client does, step by step.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Workflow {
    pub name: String,
    /// What it does, in words.
    pub what: String,
    /// The MCP revision its client speaks.
    #[serde(default)]
    pub revision: Revision,
    pub steps: Vec<Step>,
}

/// How a workflow's client speaks MCP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum Revision {
    /// `initialize`, then requests in that session (2024-11-05 … 2025-11-25).
    #[default]
    #[serde(rename = "handshake")]
    Handshake,
    /// MCP 2026-07-28: no handshake; every request carries the version and
    /// the client's capabilities in `_meta`.
    #[serde(rename = "2026-07-28")]
    Stateless,
}

/// One step of a [`Workflow`].
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum Step {
    /// An MCP tool call.
    Call { call: String, arguments: Value },
    /// A file written into the project (the agent editing), relative to it.
    Write { write: String, text: String },
    /// The Editor reloads on its own (a play-mode change, an import).
    Reload { reload: ReloadStep },
    /// `tools/list`, every page.
    ListTools {
        #[serde(rename = "listTools")]
        list_tools: bool,
    },
    /// `server/discover` (2026-07-28).
    Discover { discover: bool },
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadStep {
    #[serde(default)]
    pub move_port: bool,
}

impl Workflow {
    /// The workflows of a `workflows.json` document.
    pub fn parse_all(text: &str) -> Result<Vec<Workflow>, serde_json::Error> {
        #[derive(Deserialize)]
        struct Document {
            workflows: Vec<Workflow>,
        }
        serde_json::from_str::<Document>(text).map(|d| d.workflows)
    }

    /// The tool calls, in order.
    pub fn tool_calls(&self) -> Vec<(String, Value)> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Call { call, arguments } => Some((call.clone(), arguments.clone())),
                _ => None,
            })
            .collect()
    }
}
