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
    /// **Extension** `token`: what every request to this Editor carries as
    /// `x-token`. Made once per Editor process; the file is readable by its
    /// user only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
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
    /// False once the Editor quit or its server was stopped
    /// (`McpEditorSettings.ClearServerSession`); a crash leaves it true.
    #[serde(default)]
    pub is_server_running: Option<bool>,
    /// True from `beforeAssemblyReload` until the server listens again.
    #[serde(default)]
    pub is_domain_reload_in_progress: Option<bool>,
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
    /// never sees a partial file. On Unix it is readable by its user only
    /// (it holds the token); on Windows it inherits the project folder's ACL.
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

/// Writes `bytes` to `path` through a temporary sibling and a rename: a
/// reader sees the old file or the new one, never part of one. Not flushed
/// to the disk: what is written this way (discovery files, the tool cache,
/// saved results) is made again when lost, and an `fsync` on a disk busy
/// with other writes (a build beside) can take seconds, which a process
/// serving calls cannot spend. [`write_durable`] is for what must survive
/// a power cut.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |file| io::Write::write_all(file, bytes))
}

/// [`write_atomic`], `write` filling the temporary file (a large file
/// written as it is made).
pub fn write_atomic_with(path: &Path, write: impl FnOnce(&mut fs::File) -> io::Result<()>) -> io::Result<()> {
    write_replacing(path, write, false)
}

/// [`write_atomic`], flushed to the disk before the rename (a user's
/// configuration file: after a power cut it is the old one or the new one,
/// not an empty one). Slow on a busy disk: never on a path that serves calls.
pub fn write_durable(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_replacing(path, |file| io::Write::write_all(file, bytes), true)
}

fn write_replacing(path: &Path, write: impl FnOnce(&mut fs::File) -> io::Result<()>, durable: bool) -> io::Result<()> {
    crate::blocking(|| write_replacing_now(path, write, durable))
}

fn write_replacing_now(
    path: &Path,
    write: impl FnOnce(&mut fs::File) -> io::Result<()>,
    durable: bool,
) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)));
    let result = (|| {
        let mut file = private_file(&tmp)?;
        write(&mut file)?;
        if durable {
            file.sync_all()?;
        }
        drop(file);
        rename_over(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Renames `from` over `to`. On Windows the rename fails (access denied,
/// sharing violation) while another process has `to` open: a bridge reading
/// it, an indexer, an antivirus scan. They hold it for moments, so it is
/// tried again, often (a reader that polls keeps it open much of the time:
/// the gaps are short), for up to a second: a discovery file left
/// unpublished keeps every bridge waiting for an Editor already listening.
fn rename_over(from: &Path, to: &Path) -> io::Result<()> {
    const PATIENCE: std::time::Duration = std::time::Duration::from_secs(1);
    const ERROR_ACCESS_DENIED: i32 = 5;
    const ERROR_SHARING_VIOLATION: i32 = 32;
    let started = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        match fs::rename(from, to) {
            Err(e)
                if cfg!(windows)
                    && matches!(e.raw_os_error(), Some(ERROR_ACCESS_DENIED | ERROR_SHARING_VIOLATION))
                    && started.elapsed() < PATIENCE =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(4));
            }
            done => return done,
        }
    }
}

/// Creates `path` new, readable and writable by its owner only where the
/// platform has modes (Unix: 0600, set at creation, so the bytes written
/// next are never readable by others).
fn private_file(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Now as an ISO 8601 UTC timestamp with milliseconds, the form every
/// timestamp on the editor link takes (`2026-01-31T12:34:56.789Z`).
pub fn iso_timestamp(at: SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

/// Where a candidate port came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `--port` or `UNITY_TCP_PORT`.
    ExplicitPort,
    /// The project's `Library/MCPInstance.json`.
    DiscoveryFile,
    /// uLoopMCP's `UserSettings/UnityMcpSettings.json`.
    UloopSettings,
    /// The protocol's default port, 8700.
    DefaultPort,
    /// The oldest seeds' scan of well-known ports.
    LegacyScan,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Source::ExplicitPort => "explicit port",
            Source::DiscoveryFile => DISCOVERY_FILE,
            Source::UloopSettings => ULOOP_SETTINGS_FILE,
            Source::DefaultPort => "default port",
            Source::LegacyScan => "legacy port scan",
        })
    }
}

/// A port to try.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub port: u16,
    pub source: Source,
    /// The session the discovery file names, when it names one.
    pub session_id: Option<String>,
    /// What to send as `x-token`: the explicit token, else the discovery
    /// file's when this is the port it names.
    pub token: Option<String>,
}

impl Candidate {
    fn new(port: u16, source: Source) -> Candidate {
        Candidate { port, source, session_id: None, token: None }
    }
}

/// What a look for the Editor found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Candidates {
    /// Ports to try, in order.
    pub ports: Vec<Candidate>,
    /// The discovery file says the Editor (alive) is reloading: retry fast.
    pub reloading: bool,
    /// What was looked at and why it was passed over, for error messages.
    pub notes: Vec<String>,
}

/// The default port of the protocol (§1).
pub const DEFAULT_PORT: u16 = 8700;

/// Ports of the oldest seeds' scan (§7).
pub const LEGACY_SCAN: [u16; 6] = [8700, 8800, 8900, 9000, 9100, 8600];

/// How to find the Editor (protocol §7): an explicit port, else the project's
/// discovery files, else the default port, else the legacy scan.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Locator {
    pub explicit_port: Option<u16>,
    pub project: Option<PathBuf>,
    /// The token to send (`--token`, `UNITY_MCP_TOKEN`), for an Editor whose
    /// discovery file this client cannot read.
    pub explicit_token: Option<String>,
}

impl Locator {
    /// The nearest folder at or above `start` that has both `Assets/` and
    /// `ProjectSettings/`: a Unity project.
    pub fn find_project(start: &Path) -> Option<PathBuf> {
        start
            .ancestors()
            .find(|dir| dir.join("Assets").is_dir() && dir.join("ProjectSettings").is_dir())
            .map(Path::to_path_buf)
    }

    /// The files an Editor of the project publishes itself in (ours and
    /// uLoopMCP's), to watch for it coming back; none without a project.
    pub fn published_files(&self) -> Vec<PathBuf> {
        match &self.project {
            Some(project) => vec![DiscoveryFile::path_in(project), UloopSettings::path_in(project)],
            None => Vec::new(),
        }
    }

    /// The ports to try now, reading the discovery files afresh.
    pub fn candidates(&self) -> Candidates {
        let mut found = self.ports();
        // The token goes with the port it was published for; a restarted
        // Editor has a new one, so it is read afresh with the ports.
        let published = match (&self.explicit_token, &self.project) {
            (Some(_), _) | (None, None) => None,
            (None, Some(project)) => DiscoveryFile::read(project)
                .ok()
                .filter(|file| process_alive(project, file.pid))
                .and_then(|file| Some((file.port, file.token?))),
        };
        for candidate in &mut found.ports {
            candidate.token = match (&self.explicit_token, &published) {
                (Some(token), _) => Some(token.clone()),
                (None, Some((port, token))) if *port == candidate.port => Some(token.clone()),
                _ => None,
            };
        }
        found
    }

    fn ports(&self) -> Candidates {
        let mut found = Candidates::default();
        if let Some(port) = self.explicit_port {
            found.ports.push(Candidate::new(port, Source::ExplicitPort));
            return found;
        }
        let Some(project) = &self.project else {
            found.notes.push("no Unity project (no --project, and no folder with Assets/ and ProjectSettings/ at or above the working directory)".into());
            found.ports.push(Candidate::new(DEFAULT_PORT, Source::DefaultPort));
            for port in LEGACY_SCAN.into_iter().filter(|p| *p != DEFAULT_PORT) {
                found.ports.push(Candidate::new(port, Source::LegacyScan));
            }
            return found;
        };
        match DiscoveryFile::read(project) {
            Ok(file) => {
                let alive = process_alive(project, file.pid);
                match (alive, file.state) {
                    (false, _) => {
                        found.notes.push(format!("{}: stale (process {} is not running)", DISCOVERY_FILE, file.pid))
                    }
                    (true, Some(EditorState::Stopped)) => {
                        found.notes.push(format!("{DISCOVERY_FILE}: the Editor has quit"));
                    }
                    (true, state) => {
                        if state == Some(EditorState::Reloading) {
                            found.reloading = true;
                            found.notes.push(format!("{DISCOVERY_FILE}: the Editor is reloading"));
                        }
                        found.ports.push(Candidate {
                            session_id: file.server_session_id,
                            ..Candidate::new(file.port, Source::DiscoveryFile)
                        });
                    }
                }
            }
            Err(err) if err.is_missing() => found.notes.push(format!("{DISCOVERY_FILE}: not there")),
            Err(err) => found.notes.push(err.to_string()),
        }
        match UloopSettings::read(project) {
            Ok(settings) if settings.is_server_running == Some(false) => {
                found
                    .notes
                    .push(format!("{ULOOP_SETTINGS_FILE}: the Editor's server is stopped (it quit, or was stopped)"));
            }
            Ok(settings) => match settings.custom_port {
                Some(port) if !found.ports.iter().any(|c| c.port == port) => {
                    if settings.is_domain_reload_in_progress == Some(true) {
                        found.reloading = true;
                        found.notes.push(format!("{ULOOP_SETTINGS_FILE}: the Editor is reloading"));
                    }
                    found.ports.push(Candidate {
                        session_id: settings.server_session_id,
                        ..Candidate::new(port, Source::UloopSettings)
                    });
                }
                Some(_) => {}
                None => found.notes.push(format!("{ULOOP_SETTINGS_FILE}: no customPort")),
            },
            Err(err) if err.is_missing() => {}
            Err(err) => found.notes.push(err.to_string()),
        }
        // With a project, the project decides: the default port is tried last,
        // and the connection checks that the Editor there has this project.
        if !found.ports.iter().any(|c| c.port == DEFAULT_PORT) {
            found.ports.push(Candidate::new(DEFAULT_PORT, Source::DefaultPort));
        }
        found
    }
}

/// Whether the Editor process `pid` a file in `project` names is running:
/// [`pid_alive`], except that inside WSL a project on a Windows drive names
/// a Windows process, which cannot be seen from here (assumed alive: the
/// connection decides; see [`crate::wsl`]).
pub fn process_alive(project: &Path, pid: u32) -> bool {
    crate::wsl::on_windows_drive(project) || pid_alive(pid)
}

/// Whether a process is running (a discovery file with a dead pid is stale).
/// Where this cannot be told, the process is assumed alive and the
/// connection attempt decides.
pub fn pid_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        use nix::{errno::Errno, sys::signal::kill, unistd::Pid};
        let Ok(raw) = i32::try_from(pid) else { return false };
        if raw <= 0 {
            return false;
        }
        // Signal 0 checks existence; EPERM means it exists but is not ours.
        !matches!(kill(Pid::from_raw(raw), None), Err(Errno::ESRCH))
    }
    #[cfg(windows)]
    #[allow(unsafe_code)]
    {
        use windows_sys::Win32::{
            Foundation::{CloseHandle, ERROR_ACCESS_DENIED, GetLastError, STILL_ACTIVE},
            System::Threading::{GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION},
        };
        // SAFETY: plain Win32 calls; the handle is checked, used and closed here.
        unsafe {
            let handle = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
            if handle.is_null() {
                // Access denied: it exists but is not ours (an elevated Editor).
                // Anything else (ERROR_INVALID_PARAMETER): no such process.
                return GetLastError() == ERROR_ACCESS_DENIED;
            }
            let mut code = 0u32;
            let asked = GetExitCodeProcess(handle, &mut code) != 0;
            CloseHandle(handle);
            // A process that has exited but whose handle someone still holds
            // has an exit code; STILL_ACTIVE means running.
            !asked || code == STILL_ACTIVE as u32
        }
    }
    #[cfg(not(any(unix, windows)))]
    {
        let _ = pid;
        true
    }
}

/// A path as Unity writes it (`Application.dataPath`, and so the package's
/// `projectPath`): on Windows with forward slashes and without the `\\?\`
/// prefix `canonicalize` adds (`C:/Users/me/Game`); elsewhere unchanged (a
/// backslash is a file name's character there).
pub fn unity_path(path: &Path) -> String {
    unity_form(&path.to_string_lossy(), cfg!(windows))
}

fn unity_form(text: &str, windows: bool) -> String {
    if !windows {
        return text.to_owned();
    }
    let plain = match text.strip_prefix(r"\\?\UNC\") {
        Some(share) => format!(r"\\{share}"),
        None => text.strip_prefix(r"\\?\").unwrap_or(text).to_owned(),
    };
    plain.replace('\\', "/")
}

/// Whether two paths name the same folder.
pub fn same_folder(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    canon(a) == canon(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_written_in_unitys_form() {
        assert_eq!(unity_form(r"\\?\C:\Users\me\My Game", true), "C:/Users/me/My Game");
        assert_eq!(unity_form(r"\\?\UNC\server\share\Game", true), "//server/share/Game");
        assert_eq!(unity_form(r"D:\Game", true), "D:/Game");
        assert_eq!(unity_form(r"/home/me/odd\name", false), r"/home/me/odd\name");
    }

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
            token: Some("dG9rZW4".into()),
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
                "updatedAt",
                "token"
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

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("Assets")).unwrap();
        fs::create_dir_all(dir.path().join("ProjectSettings")).unwrap();
        dir
    }

    #[test]
    fn the_project_is_the_nearest_folder_with_assets_and_project_settings() {
        let dir = project();
        let deep = dir.path().join("Assets/Scripts/Deep");
        fs::create_dir_all(&deep).unwrap();
        assert_eq!(Locator::find_project(&deep).as_deref(), Some(dir.path()));
        assert_eq!(Locator::find_project(Path::new("/")), None);
    }

    #[test]
    fn candidates_follow_section_7() {
        let explicit = Locator { explicit_port: Some(9999), ..Locator::default() }.candidates();
        assert_eq!(explicit.ports.iter().map(|c| c.port).collect::<Vec<_>>(), [9999]);

        let nothing = Locator::default().candidates();
        assert_eq!(nothing.ports.iter().map(|c| c.port).collect::<Vec<_>>(), [8700, 8800, 8900, 9000, 9100, 8600]);

        let dir = project();
        let none_yet = Locator { project: Some(dir.path().to_owned()), ..Locator::default() }.candidates();
        assert_eq!(
            none_yet.ports.iter().map(|c| (c.port, c.source)).collect::<Vec<_>>(),
            [(8700, Source::DefaultPort)]
        );
        assert!(none_yet.notes[0].contains("not there"), "{:?}", none_yet.notes);

        let mut file = sample();
        file.pid = std::process::id();
        file.port = 8705;
        file.state = Some(EditorState::Reloading);
        file.write_atomic(dir.path()).unwrap();
        fs::create_dir_all(dir.path().join("UserSettings")).unwrap();
        fs::write(UloopSettings::path_in(dir.path()), r#"{"customPort":8702,"other":1}"#).unwrap();
        let found = Locator { project: Some(dir.path().to_owned()), ..Locator::default() }.candidates();
        assert!(found.reloading);
        assert_eq!(
            found.ports.iter().map(|c| (c.port, c.source)).collect::<Vec<_>>(),
            [(8705, Source::DiscoveryFile), (8702, Source::UloopSettings), (8700, Source::DefaultPort)]
        );
        assert_eq!(found.ports[0].session_id.as_deref(), Some("9f1c"));
    }

    #[test]
    fn stale_and_stopped_discovery_files_are_passed_over() {
        let dir = project();
        let mut file = sample();
        file.pid = u32::MAX - 1;
        file.write_atomic(dir.path()).unwrap();
        let stale = Locator { project: Some(dir.path().to_owned()), ..Locator::default() }.candidates();
        assert!(stale.notes[0].contains("stale"), "{:?}", stale.notes);
        assert!(!stale.ports.iter().any(|c| c.source == Source::DiscoveryFile));
        file.pid = std::process::id();
        file.state = Some(EditorState::Stopped);
        file.write_atomic(dir.path()).unwrap();
        let stopped = Locator { project: Some(dir.path().to_owned()), ..Locator::default() }.candidates();
        assert!(stopped.notes[0].contains("quit"), "{:?}", stopped.notes);
    }

    #[test]
    fn uloop_settings_say_when_the_server_reloads_or_has_stopped() {
        let dir = project();
        fs::create_dir_all(dir.path().join("UserSettings")).unwrap();
        let settings = |json: &str| {
            fs::write(UloopSettings::path_in(dir.path()), json).unwrap();
            Locator { project: Some(dir.path().to_owned()), ..Locator::default() }.candidates()
        };
        let ports = |found: &Candidates| found.ports.iter().map(|c| (c.port, c.source)).collect::<Vec<_>>();

        let running = settings(r#"{"customPort":8702,"isServerRunning":true,"isDomainReloadInProgress":false}"#);
        assert_eq!(ports(&running), [(8702, Source::UloopSettings), (8700, Source::DefaultPort)]);
        assert!(!running.reloading);

        let reloading = settings(r#"{"customPort":8702,"isServerRunning":true,"isDomainReloadInProgress":true}"#);
        assert_eq!(ports(&reloading), [(8702, Source::UloopSettings), (8700, Source::DefaultPort)]);
        assert!(reloading.reloading);
        assert!(reloading.notes.iter().any(|n| n.contains("reloading")), "{:?}", reloading.notes);

        let stopped = settings(r#"{"customPort":8702,"isServerRunning":false,"serverSessionId":""}"#);
        assert_eq!(ports(&stopped), [(8700, Source::DefaultPort)]);
        assert!(stopped.notes.iter().any(|n| n.contains("stopped")), "{:?}", stopped.notes);
    }

    #[test]
    fn the_token_goes_with_the_port_it_was_published_for() {
        let dir = project();
        let mut file = sample();
        file.pid = std::process::id();
        file.port = 8705;
        file.token = Some("published".into());
        file.write_atomic(dir.path()).unwrap();
        fs::create_dir_all(dir.path().join("UserSettings")).unwrap();
        fs::write(UloopSettings::path_in(dir.path()), r#"{"customPort":8702}"#).unwrap();
        let tokens =
            |locator: Locator| locator.candidates().ports.into_iter().map(|c| (c.port, c.token)).collect::<Vec<_>>();
        let project = Some(dir.path().to_owned());
        assert_eq!(
            tokens(Locator { project: project.clone(), ..Locator::default() }),
            [(8705, Some("published".into())), (8702, None), (8700, None)]
        );
        // An explicit port that is the published one gets its token too.
        assert_eq!(
            tokens(Locator { explicit_port: Some(8705), project: project.clone(), ..Locator::default() }),
            [(8705, Some("published".into()))]
        );
        assert_eq!(
            tokens(Locator { explicit_port: Some(8706), project: project.clone(), ..Locator::default() }),
            [(8706, None)]
        );
        // An explicit token is sent wherever the client connects.
        let explicit =
            Locator { explicit_port: Some(8706), explicit_token: Some("given".into()), ..Locator::default() };
        assert_eq!(tokens(explicit), [(8706, Some("given".into()))]);
        // A dead Editor's token is not sent to whoever took its port.
        file.pid = u32::MAX - 1;
        file.write_atomic(dir.path()).unwrap();
        assert_eq!(tokens(Locator { explicit_port: Some(8705), project, ..Locator::default() }), [(8705, None)]);
    }

    #[cfg(unix)]
    #[test]
    fn the_discovery_file_is_readable_by_its_user_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = DiscoveryFile::path_in(dir.path());
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        // Even over a world-readable file left by an older Editor.
        fs::write(&path, "{}").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        sample().write_atomic(dir.path()).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }

    #[test]
    fn pids() {
        assert!(pid_alive(std::process::id()));
        assert!(!pid_alive(0));
    }

    #[test]
    fn timestamps_are_iso_with_millis() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_769_862_896_789);
        assert_eq!(iso_timestamp(t), "2026-01-31T12:34:56.789Z");
    }
}
