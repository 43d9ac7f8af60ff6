//! Discovery files (protocol §7): where an Editor publishes its port.
//!
//! Ours is `<project>/Library/MCPInstance.json`, written atomically;
//! uLoopMCP 2.x keeps its port in `<project>/UserSettings/UnityMcpSettings.json`.

use std::{
    fmt, fs, io,
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
    time::SystemTime,
};

use serde::{Deserialize, Serialize};

/// Where our discovery file lives, relative to the project.
pub const DISCOVERY_FILE: &str = "Library/MCPInstance.json";

/// Where uLoopMCP 2.x keeps its settings, relative to the project.
pub const ULOOP_SETTINGS_FILE: &str = "UserSettings/UnityMcpSettings.json";

/// The protocol version this crate implements (`ProtocolVersion` in
/// `get-version`, `protocolVersion` in the discovery file).
pub const PROTOCOL_VERSION: u32 = 1;

/// The Editor's lifecycle state as published.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EditorState {
    Starting,
    Ready,
    Reloading,
    Stopped,
}

impl EditorState {
    pub fn as_str(self) -> &'static str {
        match self {
            EditorState::Starting => "starting",
            EditorState::Ready => "ready",
            EditorState::Reloading => "reloading",
            EditorState::Stopped => "stopped",
        }
    }
}

impl fmt::Display for EditorState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The contents of `Library/MCPInstance.json`. Fields after `projectPath` are
/// optional when reading, because the seeds' older Editors wrote only the
/// first three.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveryFile {
    pub port: u16,
    pub pid: u32,
    pub project_path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unity_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<EditorState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// The fields of uLoopMCP's `UserSettings/UnityMcpSettings.json` a client
/// needs; the file holds many more, which are ignored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UloopSettings {
    #[serde(default)]
    pub custom_port: Option<u16>,
    #[serde(default)]
    pub project_root_path: Option<String>,
    #[serde(default)]
    pub server_session_id: Option<String>,
}

/// Why a discovery file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}: not a valid discovery file: {source}")]
    Invalid { path: PathBuf, source: serde_json::Error },
}

impl DiscoveryError {
    /// True when the file simply does not exist (no Editor has published yet).
    pub fn is_missing(&self) -> bool {
        matches!(self, DiscoveryError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

impl DiscoveryFile {
    /// The discovery file's path inside `project`.
    pub fn path_in(project: &Path) -> PathBuf {
        project.join(DISCOVERY_FILE)
    }

    /// Reads the discovery file of `project`.
    pub fn read(project: &Path) -> Result<DiscoveryFile, DiscoveryError> {
        read_json(&Self::path_in(project))
    }

    /// Writes the discovery file of `project` atomically: a temporary file in
    /// the same folder, flushed, then renamed over the old one, so a reader
    /// never sees a partial file.
    pub fn write_atomic(&self, project: &Path) -> io::Result<()> {
        let mut bytes = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        bytes.push(b'\n');
        write_atomic(&Self::path_in(project), &bytes)
    }
}

impl UloopSettings {
    pub fn path_in(project: &Path) -> PathBuf {
        project.join(ULOOP_SETTINGS_FILE)
    }

    pub fn read(project: &Path) -> Result<UloopSettings, DiscoveryError> {
        read_json(&Self::path_in(project))
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, DiscoveryError> {
    let bytes = fs::read(path).map_err(|source| DiscoveryError::Io { path: path.to_owned(), source })?;
    serde_json::from_slice(&bytes).map_err(|source| DiscoveryError::Invalid { path: path.to_owned(), source })
}

/// Writes `bytes` to `path` through a temporary sibling and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)));
    let result = (|| {
        use io::Write;
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Now as an ISO 8601 UTC timestamp with milliseconds, the form every
/// timestamp on the editor link takes (`2026-01-31T12:34:56.789Z`).
pub fn iso_timestamp(at: SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> DiscoveryFile {
        DiscoveryFile {
            port: 8700,
            pid: 12345,
            project_path: "/abs/path/to/project".into(),
            unity_version: Some("6000.0.65f1".into()),
            package_version: Some("1.0.0".into()),
            protocol_version: Some(1),
            server_session_id: Some("9f1c".into()),
            state: Some(EditorState::Ready),
            updated_at: Some("2026-01-31T12:34:56.789Z".into()),
        }
    }

    #[test]
    fn field_names_match_section_7() {
        let value = serde_json::to_value(sample()).unwrap();
        let keys: Vec<_> = value.as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            keys,
            [
                "port",
                "pid",
                "projectPath",
                "unityVersion",
                "packageVersion",
                "protocolVersion",
                "serverSessionId",
                "state",
                "updatedAt"
            ]
        );
        assert_eq!(value["state"], "ready");
    }

    #[test]
    fn atomic_write_then_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = sample();
        file.write_atomic(dir.path()).unwrap();
        assert_eq!(DiscoveryFile::read(dir.path()).unwrap(), file);
        let mut next = file.clone();
        next.state = Some(EditorState::Reloading);
        next.write_atomic(dir.path()).unwrap();
        assert_eq!(DiscoveryFile::read(dir.path()).unwrap().state, Some(EditorState::Reloading));
        // No temporary files are left behind.
        let names: Vec<_> = fs::read_dir(dir.path().join("Library")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["MCPInstance.json"]);
    }

    #[test]
    fn older_files_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let err = DiscoveryFile::read(dir.path()).unwrap_err();
        assert!(err.is_missing(), "{err}");
        fs::create_dir_all(dir.path().join("Library")).unwrap();
        fs::write(DiscoveryFile::path_in(dir.path()), r#"{"port":8700,"pid":1,"projectPath":"/p"}"#).unwrap();
        let old = DiscoveryFile::read(dir.path()).unwrap();
        assert_eq!((old.port, old.state), (8700, None));
        fs::write(DiscoveryFile::path_in(dir.path()), "{").unwrap();
        let err = DiscoveryFile::read(dir.path()).unwrap_err();
        assert!(!err.is_missing() && err.to_string().contains("not a valid discovery file"), "{err}");
    }

    #[test]
    fn timestamps_are_iso_with_millis() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_769_862_896_789);
        assert_eq!(iso_timestamp(t), "2026-01-31T12:34:56.789Z");
    }
}
