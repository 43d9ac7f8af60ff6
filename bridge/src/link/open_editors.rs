//! Every open Editor of this user, looked for from outside any project:
//!
//! - the package's entries in the user's registry of open Editors
//!   (`editor_link::registry`), each checked against its project's own
//!   discovery file;
//! - uLoopMCP 3's sockets (`/tmp/uloop/UnityCliLoop-*.sock`, only those
//!   [`check_socket`](editor_link::endpoint::check_socket) trusts) and, on
//!   Windows, its pipes, each asked `get-version` (its `DataPath` names the
//!   project; no `x-uloop` is sent, so it checks nothing);
//! - the ports uLoopMCP 2.1.1 and the oldest Editors listen on (8700, and
//!   the legacy scan), asked the same.
//!
//! Nothing found this way is connected to for a call: the project it names
//! becomes the link's, and the Editor is then found in that project as
//! always (its token from its discovery file, its project checked).

use std::{
    collections::BTreeMap,
    net::{Ipv4Addr, SocketAddr},
    path::{Path, PathBuf},
    sync::Arc,
};

use serde_json::json;

use editor_link::{
    discovery::{DEFAULT_PORT, DiscoveryFile, LEGACY_SCAN},
    endpoint::Endpoint,
    methods, registry,
    version::Version,
    wsl,
};

pub use super::whereabouts::OpenEditor;
use super::{
    Link,
    handshake::Dialer,
    socket::{CloseReason, DialError, ExchangeError},
    target::Target,
    whereabouts::Round,
};

/// Where to look outside a project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LookOutside {
    /// The registry of open Editors (`None`: no folder for this user).
    pub registry: Option<PathBuf>,
    /// Where uLoopMCP 3 Editors' sockets are (Unix).
    pub uloop3_sockets: Option<PathBuf>,
    /// Ports asked `get-version`.
    pub ports: Vec<u16>,
}

/// The variable that moves where uLoopMCP 3's sockets are looked for
/// outside a project (tests: a folder of their own).
pub const ULOOP3_SOCKETS_VARIABLE: &str = "UNITY_MCP_ULOOP3_SOCKETS";

/// The variable that names the ports asked outside a project, comma
/// separated (an Editor on a port of its own; empty: none), instead of
/// 8700 and the legacy scan.
pub const SCAN_PORTS_VARIABLE: &str = "UNITY_MCP_SCAN_PORTS";

impl LookOutside {
    /// Where this user's Editors are.
    pub fn users() -> LookOutside {
        let ports = match std::env::var(SCAN_PORTS_VARIABLE) {
            Ok(list) => list.split(',').filter_map(|p| p.trim().parse().ok()).collect(),
            Err(_) => {
                let mut ports = vec![DEFAULT_PORT];
                ports.extend(LEGACY_SCAN.into_iter().filter(|p| *p != DEFAULT_PORT));
                ports
            }
        };
        let sockets = std::env::var_os(ULOOP3_SOCKETS_VARIABLE).filter(|d| !d.is_empty()).map(PathBuf::from);
        LookOutside {
            registry: registry::folder(),
            uloop3_sockets: sockets
                .or_else(|| cfg!(unix).then(|| PathBuf::from(editor_link::endpoint::ULOOP3_SOCKET_DIR))),
            ports,
        }
    }
}

/// What a look found.
#[derive(Debug, Default)]
pub struct Looked {
    /// One per project, in the order of their paths.
    pub editors: Vec<OpenEditor>,
    /// What was passed over, and why.
    pub notes: Vec<String>,
    pub round: Round,
}

impl Link {
    /// Every open Editor of this user (module doc).
    pub(super) async fn look_outside(&self) -> Looked {
        let look = &self.config().look_outside;
        let mut looked = Looked::default();
        let mut found: BTreeMap<PathBuf, OpenEditor> = BTreeMap::new();
        let mut listed = look.registry.as_deref().map(registry::list).unwrap_or_default();
        if wsl::Wsl::detect().is_some() {
            for dir in windows_registries() {
                let windows = registry::list_from_wsl(&dir);
                listed.entries.extend(windows.entries);
                listed.notes.extend(windows.notes);
            }
        }
        looked.notes.extend(listed.notes);
        for entry in listed.entries {
            let project = wsl::local_path(&entry.project_path);
            match DiscoveryFile::read(&project) {
                Ok(file) if file.pid == entry.pid => {}
                _ => {
                    looked.notes.push(format!(
                        "the registry names process {} for {}, whose Library/MCPInstance.json does not: passed over",
                        entry.pid, entry.project_path
                    ));
                    continue;
                }
            }
            found.entry(project.clone()).or_insert(OpenEditor {
                project,
                unity_version: entry.unity_version,
                pid: Some(entry.pid),
                endpoint: format!("port {}", entry.port),
                found_by: "registry".into(),
                local: None,
            });
        }
        let known_ports: Vec<String> = found.values().map(|e| e.endpoint.clone()).collect();
        let mut asked = tokio::task::JoinSet::new();
        for target in self.probe_targets(look, &known_ports, &mut looked.notes) {
            let dialer = self.dialer.clone();
            asked.spawn(async move {
                let answer = ask_version(&dialer, &target).await;
                (target, answer)
            });
        }
        while let Some(Ok((target, answer))) = asked.join_next().await {
            let label = target.label();
            match answer {
                Ok(version) => match version.data_path.as_deref().map(project_of) {
                    Some(project) => {
                        found.entry(project.clone()).or_insert(OpenEditor {
                            project,
                            unity_version: version.unity_version.clone(),
                            pid: None,
                            endpoint: label,
                            found_by: target.source.clone(),
                            local: match &target.endpoint {
                                Endpoint::Tcp(_) => None,
                                local => Some(local.clone()),
                            },
                        });
                    }
                    None => {
                        looked.notes.push(format!("{label}: an Editor that does not say which project it has open"))
                    }
                },
                Err(Probe::Nothing) => {}
                Err(Probe::Denied(why)) => {
                    looked.notes.push(format!("{label}: {why}"));
                    looked.round.denied.get_or_insert(format!("{label}: {why}"));
                }
                Err(Probe::Maybe(why)) => {
                    looked.notes.push(format!("{label}: {why}"));
                    looked.round.maybe_there = true;
                }
            }
        }
        looked.editors = found.into_values().collect();
        looked
    }

    /// The sockets and ports to ask (not the ones the registry named).
    fn probe_targets(&self, look: &LookOutside, known: &[String], notes: &mut Vec<String>) -> Vec<Target> {
        let mut targets = Vec::new();
        let anonymous = |endpoint: Endpoint, source: &str| Target {
            endpoint,
            source: source.into(),
            session_id: None,
            token: None,
            project_root: None,
        };
        if let Some(dir) = &look.uloop3_sockets {
            for path in uloop3_sockets(dir) {
                #[cfg(unix)]
                if let Err(why) = editor_link::endpoint::check_socket(&path) {
                    notes.push(format!("{}: refused, not connected to: {why}", path.display()));
                    continue;
                }
                targets.push(anonymous(Endpoint::Unix(path), "uLoopMCP 3 socket"));
            }
        }
        #[cfg(windows)]
        for name in uloop3_pipes() {
            targets.push(anonymous(Endpoint::Pipe(name), "uLoopMCP 3 pipe"));
        }
        for port in &look.ports {
            if known.contains(&format!("port {port}")) {
                continue;
            }
            targets.push(anonymous(Endpoint::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, *port))), "port scan"));
        }
        let _ = notes;
        targets
    }
}

/// Why a probe found no project.
enum Probe {
    /// Nothing there.
    Nothing,
    /// Refused for permission.
    Denied(String),
    /// Something is there that did not say (silent, timed out, refused the question).
    Maybe(String),
}

/// Asks the Editor at `target` its version, on a connection of its own
/// that nothing records (how many there are is the machine's, not the
/// session's).
async fn ask_version(dialer: &Arc<Dialer>, target: &Target) -> Result<Version, Probe> {
    let mut last = Probe::Nothing;
    for framing in dialer.framings(target, None) {
        let connection = match dialer.open_quiet(target, framing).await {
            Ok(c) => c,
            Err(DialError::NothingThere(_)) => return Err(Probe::Nothing),
            Err(DialError::Denied(why)) => return Err(Probe::Denied(why)),
            Err(e) => return Err(Probe::Maybe(e.to_string())),
        };
        let timeout = dialer.config.connect_timeout;
        let answered = connection.exchange(dialer.fresh_id(), methods::GET_VERSION, json!({}), timeout).await;
        connection.close(CloseReason::Stopped);
        match answered {
            Ok(version) => return Ok(Version::read(&version)),
            Err(ExchangeError::NoAnswer) => {
                return Err(Probe::Maybe(
                    "connected, but no answer to get-version: an Editor whose main thread may be blocked".into(),
                ));
            }
            Err(ExchangeError::Editor(e)) => {
                return Err(Probe::Maybe(format!("an Editor that refused get-version: {e}")));
            }
            Err(e) => last = Probe::Maybe(format!("{e} ({framing} framing)")),
        }
    }
    Err(last)
}

/// The project of an Editor whose `Application.dataPath` is `data_path`.
fn project_of(data_path: &str) -> PathBuf {
    let local = wsl::local_path(data_path);
    let project = local.parent().map_or_else(|| local.clone(), Path::to_path_buf);
    std::fs::canonicalize(&project).unwrap_or(project)
}

/// uLoopMCP 3's sockets in `dir`.
fn uloop3_sockets(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut sockets: Vec<PathBuf> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("UnityCliLoop-") && n.ends_with(".sock"))
        })
        .collect();
    sockets.sort();
    sockets
}

/// uLoopMCP 3's pipes (`\\.\pipe\uloop-UnityCliLoop-…`).
#[cfg(windows)]
fn uloop3_pipes() -> Vec<String> {
    let Ok(read) = std::fs::read_dir(r"\\.\pipe\") else { return Vec::new() };
    read.flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|n| n.starts_with("uloop-UnityCliLoop-"))
        .map(|n| format!(r"\\.\pipe\{n}"))
        .collect()
}

/// Inside WSL: the registries of the Windows users (`C:\Users\*\AppData\
/// Local\UnityMcp\Editors`), where Windows Editors enter themselves.
fn windows_registries() -> Vec<PathBuf> {
    let users = Path::new(wsl::MOUNT_ROOT).join("c/Users");
    let Ok(read) = std::fs::read_dir(users) else { return Vec::new() };
    read.flatten().map(|e| e.path().join("AppData/Local/UnityMcp/Editors")).filter(|p| p.is_dir()).collect()
}
