//! Where an Editor says it listens (protocol §7).

/// The discovery file an Editor writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiscoveryFileKind {
    /// `Library/MCPInstance.json` (protocol §7): port, pid, session, state.
    InstanceFile,
    /// uLoopMCP's `UserSettings/UnityMcpSettings.json` only: `customPort`,
    /// `isServerRunning`, `projectRootPath`, `serverSessionId` and its other
    /// settings; no `Library/MCPInstance.json`.
    UloopSettings,
    /// uLoopMCP 3: no discovery file (the endpoint is derived from the
    /// project path); only its lock files in `Temp/` say what it is doing.
    Uloop3Locks,
}

impl DiscoveryFileKind {
    /// A session id as this Editor writes it: a GUID with dashes (protocol
    /// §7), or uLoopMCP's 32 hex digits (`Guid.ToString("N")`).
    pub fn session_id(self, guid: &str) -> String {
        match self {
            DiscoveryFileKind::InstanceFile => guid.to_owned(),
            DiscoveryFileKind::UloopSettings | DiscoveryFileKind::Uloop3Locks => guid.replace('-', ""),
        }
    }
}

/// The pid the instance file names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiscoveryPid {
    /// The Editor's own (protocol §7).
    Own,
    /// A dead process's (`discovery-dead-pid`).
    Dead,
}

/// How the instance file is rewritten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writes {
    /// Atomically: a temporary file renamed over it (protocol §7).
    Atomic,
    /// Truncated and written in two halves, so a reader can find it empty
    /// or cut (`discovery-in-place`).
    InPlace,
}

/// Who may read the instance file, which holds the token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Readers {
    /// Its user only: mode 0600 on Unix (protocol §7).
    Owner,
    /// Everyone: mode 0644 (`discovery-world-readable`).
    Everyone,
}

/// Where the Editor says it listens, and how truthfully. Both Editors keep
/// their file true; the lies are the deliberate defects' (`serve
/// --defect`), set by `Defect::shape`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiscoveryPolicy {
    pub file: DiscoveryFileKind,
    pub pid: DiscoveryPid,
    /// `serverSessionId` and `protocolVersion` in the instance file; off for
    /// `discovery-without-session`.
    pub names_session: bool,
    /// `reloading` while the domain reloads; off for `discovery-stays-ready`.
    pub says_reloading: bool,
    /// `stopped` after a quit; off for `quit-leaves-ready`.
    pub says_stopped: bool,
    /// The new port after the Editor moves; off for `stale-discovery-port`.
    pub follows_port: bool,
    pub writes: Writes,
    pub readers: Readers,
}

impl DiscoveryPolicy {
    pub const fn truthful(file: DiscoveryFileKind) -> DiscoveryPolicy {
        DiscoveryPolicy {
            file,
            pid: DiscoveryPid::Own,
            names_session: true,
            says_reloading: true,
            says_stopped: true,
            follows_port: true,
            writes: Writes::Atomic,
            readers: Readers::Owner,
        }
    }

    pub fn session_id(self, guid: &str) -> String {
        self.file.session_id(guid)
    }
}

use std::path::Path;

use editor_link::discovery::{EditorState, ULOOP_SETTINGS_FILE, write_atomic};
use serde_json::{Value, json};

/// uLoopMCP 2.1.1's settings file as `JsonUtility.ToJson(settings, true)`
/// writes it (every field, in declaration order, 4-space indents) for an
/// Editor in `phase` (`Config/McpEditorSettings.cs`, `McpServerController.cs`):
/// running and ready with its session; running, reloading, the session
/// stale; stopped, the session cleared.
pub fn uloop_settings(phase: EditorState, port: u16, project_root: &str, session_id: &str) -> Value {
    let reloading = phase == EditorState::Reloading;
    let running = !matches!(phase, EditorState::Stopped);
    json!({
        "customPort": port,
        "projectRootPath": project_root,
        "serverSessionId": if running { session_id } else { "" },
        "showDeveloperTools": false,
        "enableMcpLogs": false,
        "enableCommunicationLogs": false,
        "enableDevelopmentMode": false,
        "lastUsedConfigPath": "",
        "lastSeenSetupWizardVersion": "",
        "suppressSetupWizardAutoShow": false,
        "showSecuritySettings": true,
        "showToolSettings": true,
        "addRepositoryRoot": false,
        "installSkillsFlat": true,
        "isServerRunning": running,
        "isAfterCompile": reloading,
        "isDomainReloadInProgress": reloading,
        "isReconnecting": reloading,
        "showReconnectingUI": reloading,
        "showPostCompileReconnectingUI": reloading,
        "selectedEditorType": 0,
        "connectionMode": 0,
        "communicationLogHeight": 300.0,
        "communicationLogsJson": "[]",
        "pendingRequestsJson": "{}",
        "compileWindowHasData": false,
        "pendingCompileRequestIds": [],
        "compileRequests": [],
        "connectedLLMTools": [],
    })
}

/// Writes `settings` to `project`'s `UserSettings/UnityMcpSettings.json`, atomically.
pub fn write_uloop_settings(project: &Path, settings: &Value) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    serde::Serialize::serialize(settings, &mut serializer).map_err(std::io::Error::other)?;
    write_atomic(&project.join(ULOOP_SETTINGS_FILE), &bytes)
}
