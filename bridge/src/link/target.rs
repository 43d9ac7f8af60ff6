//! Where the Editor may be reached: the ports the project's discovery files
//! (or `--port`) name, and uLoopMCP 3's local socket or pipe (`--endpoint`,
//! or the one its name is made from the project's canonical root,
//! `docs/uloop-3-wire.md` §2), each a [`Target`] with what goes with it: a
//! token, the session a discovery file named, and for uLoopMCP 3 the root
//! every request names in `x-uloop`.
//!
//! uLoopMCP 3 sends no token and its sockets live in `/tmp/uloop`, which
//! every user of the machine shares: a socket another user owns or could
//! have put there ([`check_socket`]) is refused, never connected to, and the
//! reason is in what the link tried (`bridge-status`, errors) and the log.

use std::{
    net::{Ipv4Addr, SocketAddr},
    path::{Path, PathBuf},
};

use editor_link::{
    dialect::{Dialect, ReloadSignal, ULOOP_3},
    discovery::{Candidate, Source},
    endpoint::{Endpoint, canonical_project_root, uloop3_endpoint},
};

use super::LinkConfig;

/// One place an Editor may listen, and what to send it there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Target {
    pub endpoint: Endpoint,
    /// Where it came from, for messages.
    pub source: String,
    /// The session the discovery file names, when it names one.
    pub session_id: Option<String>,
    /// Sent as `x-token` with every request (extension `token`).
    pub token: Option<String>,
    /// uLoopMCP 3: the canonical project root, sent with every request as
    /// `x-uloop.expectedProjectRoot`. `None` when the project is not known
    /// (`--endpoint` outside a project): nothing is sent, and the Editor
    /// checks nothing.
    pub project_root: Option<String>,
}

impl Target {
    fn tcp(candidate: &Candidate) -> Target {
        Target {
            endpoint: Endpoint::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, candidate.port))),
            source: candidate.source.to_string(),
            session_id: candidate.session_id.clone(),
            token: candidate.token.clone(),
            project_root: None,
        }
    }

    /// The TCP port, for a TCP endpoint.
    pub fn port(&self) -> Option<u16> {
        match &self.endpoint {
            Endpoint::Tcp(addr) => Some(addr.port()),
            _ => None,
        }
    }

    /// How messages name it: `port 8700` on this machine, else the endpoint.
    pub fn label(&self) -> String {
        match &self.endpoint {
            Endpoint::Tcp(addr) if addr.ip().is_loopback() => format!("port {}", addr.port()),
            other => other.to_string(),
        }
    }
}

/// What a look for the Editor found.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// In order.
    pub targets: Vec<Target>,
    /// The Editor is reloading (a discovery file, or uLoopMCP 3's lock files
    /// with its socket gone): look again at the fast pace.
    pub reloading: bool,
    /// What was looked at and why it was passed over.
    pub notes: Vec<String>,
    /// A uLoopMCP 3 socket refused as untrusted, and why.
    pub refused: Option<String>,
}

impl LinkConfig {
    /// Where to look for the Editor now: `--endpoint` alone when given;
    /// otherwise the ports discovery finds and, when the project is known
    /// and no port was given, uLoopMCP 3's endpoint for it, tried after the
    /// ports the project's files publish and before the default port.
    pub(super) fn targets(&self) -> Found {
        let locator = &self.locator;
        let root = || locator.project.as_deref().and_then(|p| canonical_project_root(p).ok());
        let mut found = Found::default();
        if let Some(endpoint) = &self.endpoint {
            match endpoint {
                Endpoint::Tcp(_) => found.targets.push(Target {
                    endpoint: endpoint.clone(),
                    source: "--endpoint".into(),
                    session_id: None,
                    token: locator.explicit_token.clone(),
                    project_root: None,
                }),
                local => self.local_target(local, "--endpoint", root(), &mut found),
            }
            return found;
        }
        let discovered = locator.candidates();
        found.reloading = discovered.reloading;
        found.notes = discovered.notes;
        let mut uloop3 = match (&locator.explicit_port, &locator.project) {
            (None, Some(project)) => Some(project),
            _ => None,
        };
        for candidate in &discovered.ports {
            if matches!(candidate.source, Source::DefaultPort | Source::LegacyScan) {
                if let Some(project) = uloop3.take() {
                    self.derived_target(project, &mut found);
                }
            }
            found.targets.push(Target::tcp(candidate));
        }
        if let Some(project) = uloop3 {
            self.derived_target(project, &mut found);
        }
        found
    }

    /// uLoopMCP 3's endpoint for `project`.
    fn derived_target(&self, project: &Path, found: &mut Found) {
        match canonical_project_root(project) {
            Ok(root) => self.local_target(&uloop3_endpoint(&root), "uLoopMCP 3, from the project", Some(root), found),
            Err(e) => found.notes.push(format!("uLoopMCP 3: the project's canonical root cannot be told: {e}")),
        }
    }

    /// A local socket or pipe, if it is there and can be trusted.
    fn local_target(&self, endpoint: &Endpoint, source: &str, root: Option<String>, found: &mut Found) {
        let target = Target {
            endpoint: endpoint.clone(),
            source: source.to_owned(),
            session_id: None,
            token: None,
            project_root: root,
        };
        match endpoint {
            Endpoint::Unix(path) => match trust(path) {
                Ok(()) => found.targets.push(target),
                Err(Refusal::Missing) => {
                    found.notes.push(format!("{endpoint} ({source}): not there"));
                    if let Some(lock) = self.uloop3_busy() {
                        found.reloading = true;
                        found.notes.push(format!("{lock}: the Editor is compiling, reloading or starting"));
                    }
                }
                Err(Refusal::Untrusted(why)) => {
                    let why = format!("{endpoint} ({source}): refused, not connected to: {why}");
                    found.notes.push(why.clone());
                    found.refused = Some(why);
                }
            },
            // A pipe is tried: opening it tells whether it is there (looking
            // at it any other way would open it too).
            Endpoint::Pipe(_) => {
                if let Some(lock) = self.uloop3_busy() {
                    found.reloading = true;
                    found.notes.push(format!("{lock}: the Editor is compiling, reloading or starting"));
                }
                found.targets.push(target);
            }
            Endpoint::Tcp(_) => found.targets.push(Target { project_root: None, ..target }),
        }
    }

    /// The first of uLoopMCP 3's lock files in the project, if any: while
    /// one is there the Editor compiles, reloads or starts its server, and
    /// its socket is (or will be) gone for a while (`docs/uloop-3-wire.md` §8).
    fn uloop3_busy(&self) -> Option<String> {
        let project = self.locator.project.as_deref()?;
        ULOOP_3.busy_locks.iter().find(|lock| project.join(lock).exists()).map(|lock| (*lock).to_owned())
    }

    /// The connection to an Editor of `dialect` that closed now was closed
    /// by a domain reload, as its lock file says (for a dialect that
    /// announces nothing on the wire).
    pub(super) fn reload_lock_says_reloading(&self, dialect: &Dialect) -> bool {
        match dialect.reload {
            ReloadSignal::LockFile(lock) => self.locator.project.as_deref().is_some_and(|p| p.join(lock).exists()),
            ReloadSignal::Announced => false,
        }
    }

    /// What to watch for the Editor coming back: the project's discovery
    /// files, and uLoopMCP 3's socket and lock files.
    pub(super) fn published_files(&self) -> Vec<PathBuf> {
        let locator = &self.locator;
        let mut files = locator.published_files();
        let socket = match &self.endpoint {
            Some(Endpoint::Unix(path)) => Some(path.clone()),
            Some(_) => None,
            None if locator.explicit_port.is_none() => {
                match locator
                    .project
                    .as_deref()
                    .and_then(|p| canonical_project_root(p).ok())
                    .map(|r| uloop3_endpoint(&r))
                {
                    Some(Endpoint::Unix(path)) => Some(path),
                    _ => None,
                }
            }
            None => None,
        };
        if let Some(socket) = socket {
            files.push(socket);
            if let Some(project) = &locator.project {
                files.extend(ULOOP_3.busy_locks.iter().map(|lock| project.join(lock)));
            }
        }
        files
    }
}

/// Why a socket is not used.
enum Refusal {
    Missing,
    Untrusted(String),
}

#[cfg(unix)]
fn trust(path: &Path) -> Result<(), Refusal> {
    use editor_link::endpoint::{Untrusted, check_socket};
    match check_socket(path) {
        Ok(()) => Ok(()),
        Err(Untrusted::Missing { .. }) => Err(Refusal::Missing),
        Err(why) => Err(Refusal::Untrusted(why.to_string())),
    }
}

#[cfg(not(unix))]
fn trust(path: &Path) -> Result<(), Refusal> {
    match path.exists() {
        false => Err(Refusal::Missing),
        true => Err(Refusal::Untrusted("Unix domain sockets are not supported on this platform".into())),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use editor_link::discovery::Locator;

    use super::*;

    fn unity_project() -> tempfile::TempDir {
        let project = tempfile::tempdir().unwrap();
        for dir in ["Assets", "ProjectSettings", "Temp"] {
            std::fs::create_dir_all(project.path().join(dir)).unwrap();
        }
        project
    }

    fn link(configure: impl FnOnce(&mut LinkConfig)) -> LinkConfig {
        let mut config = LinkConfig::new(Locator::default());
        configure(&mut config);
        config
    }

    #[tokio::test]
    async fn the_project_names_uloop_3_s_socket_after_the_published_ports() {
        let project = unity_project();
        let link = link(|c| c.locator.project = Some(project.path().to_owned()));
        let root = canonical_project_root(project.path()).unwrap();
        let socket = uloop3_endpoint(&root);
        let found = link.targets();
        let labels: Vec<String> = found.targets.iter().map(Target::label).collect();
        assert_eq!(labels, ["port 8700"], "no socket there: only the default port");
        let absent = format!("{socket} (uLoopMCP 3, from the project): not there");
        assert!(found.notes.contains(&absent), "{:?}", found.notes);
        assert!(!found.reloading);
        assert!(link.published_files().iter().any(|f| Endpoint::Unix(f.clone()) == socket));

        // Its socket gone and a lock file there: a reload, looked for fast.
        std::fs::write(project.path().join("Temp/domainreload.lock"), "").unwrap();
        assert!(link.targets().reloading);

        // An explicit port: only that.
        let explicit = super::tests::link(|c| {
            c.locator.project = Some(project.path().to_owned());
            c.locator.explicit_port = Some(9999);
        });
        let found = explicit.targets();
        assert_eq!(found.targets.iter().map(Target::label).collect::<Vec<_>>(), ["port 9999"]);
        assert!(!found.notes.iter().any(|n| n.contains("uLoopMCP 3")), "{:?}", found.notes);
    }

    #[tokio::test]
    async fn an_explicit_socket_is_used_only_where_it_can_be_trusted() {
        let project = unity_project();
        let sockets = tempfile::tempdir().unwrap();
        let path = sockets.path().join("x.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let link = link(|c| {
            c.locator.project = Some(project.path().to_owned());
            c.endpoint = Some(Endpoint::Unix(path.clone()));
        });
        std::fs::set_permissions(sockets.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let found = link.targets();
        assert_eq!(found.targets.len(), 1, "{found:?}");
        let target = &found.targets[0];
        assert!(target.port().is_none());
        assert_eq!(target.project_root, Some(canonical_project_root(project.path()).unwrap()));
        assert_eq!(target.label(), format!("unix:{}", path.display()));

        std::fs::set_permissions(sockets.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let found = link.targets();
        assert!(found.targets.is_empty(), "{found:?}");
        let refused = found.refused.unwrap();
        assert!(refused.contains("refused, not connected to") && refused.contains("writable by others"), "{refused}");

        // Outside a project: no x-uloop (the Editor then checks nothing).
        let anywhere = super::tests::link(|c| c.endpoint = Some(Endpoint::Unix(path.clone())));
        std::fs::set_permissions(sockets.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(anywhere.targets().targets[0].project_root, None);
    }
}
