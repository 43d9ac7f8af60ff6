//! What is tested, and the session each case gets (its wire clients are
//! [`crate::editor_client`]'s).
//!
//! Every case gets a fresh [`Session`]: with the embedded fake that is a new
//! fake Editor on an empty project, so cases cannot disturb one another.

use std::{
    fmt,
    net::SocketAddr,
    path::{Path, PathBuf},
    str::FromStr,
    time::Duration,
};

use editor_link::{dialect::Dialect, discovery::DiscoveryFile, endpoint::Endpoint, framing::Framing};
use fake_unity::{ControlClient, Defect, EditorKind, FakeUnity};

use crate::{
    bridge::{BridgeCommand, McpProcess},
    editor_client::{EditorClient, Lacks, Probe, Stream, connect_stream, no_tcp_port},
    finding::Finding,
    wire_log::WireLog,
};

/// How long a case waits for a remote Editor to be ready again after a reload.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// What the suite runs against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A fake Editor in this process, playing `editor` (optionally with a
    /// deliberate defect).
    Fake { editor: EditorKind, defect: Option<Defect> },
    /// Any Editor listening at this endpoint: a TCP address (uLoopMCP 2.x,
    /// the package), a Unix domain socket or a named pipe (uLoopMCP 3).
    /// (Named `Tcp` from before there were others.)
    Tcp(Remote),
}

/// An Editor reached over the wire: one already running, or one the suite
/// starts ([`crate::launch`]) and reaches the same way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remote {
    /// Which Editor it is.
    pub kind: RemoteKind,
    /// Where it listens: `tcp://HOST:PORT`, `unix:PATH` or `pipe:NAME`.
    pub endpoint: Endpoint,
    /// Its control API (`fake-unity serve` prints it), for the cases that
    /// reload the Editor.
    pub control: Option<String>,
    /// Its project folder, for the discovery file (and the port after a move).
    pub project: Option<PathBuf>,
    /// The token to send (`--token`), for an Editor whose discovery file
    /// the suite cannot read; else the discovery file's.
    pub token: Option<String>,
}

/// What a [`Remote`] Editor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteKind {
    /// `tcp://HOST:PORT`, `unix:PATH` or `pipe:NAME`: any Editor already running.
    Tcp,
    /// `mono`: our C# server headless under mono (started by the suite).
    Mono,
    /// `unity`: a real Unity Editor in batch mode (started by the suite).
    Unity,
}

impl Remote {
    /// Any Editor already running at `endpoint`, nothing else known yet.
    pub fn at(endpoint: Endpoint) -> Remote {
        Remote { kind: RemoteKind::Tcp, endpoint, control: None, project: None, token: None }
    }

    /// Its TCP address, when it listens on one.
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        match &self.endpoint {
            Endpoint::Tcp(addr) => Some(*addr),
            _ => None,
        }
    }

    /// Why a case that needs `what`, which only a control API gives, cannot
    /// run, if it cannot.
    pub fn cannot_control(&self, what: &str) -> Option<String> {
        match (&self.control, &self.project) {
            (Some(_), Some(_)) => None,
            (None, _) => Some(format!(
                "not applicable: this case needs {what}, which only a control API gives (--control URL, which `fake-unity serve` and the headless host print; a real Editor has none)"
            )),
            (Some(_), None) => {
                Some("not applicable: the discovery file needs the Editor's project (--project DIR)".into())
            }
        }
    }

    /// Why a case that reloads the Editor cannot run, if it cannot: it
    /// reads the project's discovery file, and without a control API the
    /// project is where the reload script goes ([`crate::reload`]).
    pub fn cannot_reload(&self) -> Option<String> {
        match (&self.control, &self.project) {
            (_, Some(_)) => None,
            (Some(_), None) => {
                Some("not applicable: the discovery file needs the Editor's project (--project DIR)".into())
            }
            (None, None) => Some(CANNOT_RELOAD.to_owned()),
        }
    }

    /// Why a case that compares the Editor with `fixtures/unity-project`
    /// does not apply to this Editor, if it does not.
    pub fn not_the_fixture_project(&self) -> Option<String> {
        match &self.project {
            None => Some("not applicable: this case compares the Editor with fixtures/unity-project, and without --project DIR it cannot tell whether that project is open".into()),
            Some(project) if !is_fixture_project(project) => Some(format!(
                "not applicable: the Editor's project ({}) is not fixtures/unity-project, whose scene, scripts and tests this case compares it with",
                project.display()
            )),
            Some(_) => None,
        }
    }
}

/// Whether `project` is `fixtures/unity-project` (a copy, or the Editor
/// that has it open), by a fingerprint that the suite's own edits leave
/// alone: the names of its assembly definitions (`FixtureProject.Runtime`,
/// `.Editor`, `.Tests.EditMode`, `.Tests.PlayMode`), found under `Assets/`.
pub fn is_fixture_project(project: &Path) -> bool {
    fn asmdefs(dir: &Path, found: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                asmdefs(&path, found);
            } else if path.extension().is_some_and(|e| e == "asmdef") {
                found.extend(path.file_stem().and_then(|n| n.to_str()).map(str::to_owned));
            }
        }
    }
    let names = |root: &Path| {
        let mut found = Vec::new();
        asmdefs(&root.join("Assets"), &mut found);
        found.sort();
        found
    };
    let expected = names(&fixture_project());
    !expected.is_empty() && names(project) == expected
}

impl Target {
    /// Whether every case gets an Editor of its own (the embedded fake), so
    /// that cases may run side by side; an Editor reached over TCP is shared.
    pub fn gives_each_case_its_own_editor(&self) -> bool {
        matches!(self, Target::Fake { .. })
    }

    /// Whether every case meets the same Editor (one reached over TCP, a
    /// local socket or a pipe, or started once for the run), which must
    /// recover from one case before the next.
    pub fn is_shared_editor(&self) -> bool {
        matches!(self, Target::Tcp(_))
    }

    /// The dialect the Editor speaks, where the target alone tells it: the
    /// fake's; on a Unix socket or named pipe, uLoopMCP 3's. `None` for an
    /// Editor on a TCP port, which only its `get-version` tells.
    pub fn dialect(&self) -> Option<&'static Dialect> {
        match self {
            Target::Fake { editor, .. } => Some(editor.dialect()),
            Target::Tcp(remote) => match &remote.endpoint {
                Endpoint::Tcp(_) => None,
                local => Some(Dialect::speaking(local, &Default::default())),
            },
        }
    }

    /// What its Editor lacks: a case asking for it is not applicable.
    fn lacks(&self) -> Lacks {
        match self.dialect() {
            Some(dialect) => Lacks::of(dialect),
            None => Lacks::default(),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Fake { editor: EditorKind::Package, defect: None } => f.write_str("fake"),
            Target::Fake { editor, defect: None } => write!(f, "fake:{editor}"),
            Target::Fake { editor: EditorKind::Package, defect: Some(d) } => write!(f, "fake (defect {d})"),
            Target::Fake { editor, defect: Some(d) } => write!(f, "fake:{editor} (defect {d})"),
            Target::Tcp(remote) => match remote.kind {
                RemoteKind::Tcp => write!(f, "{}", remote.endpoint),
                RemoteKind::Mono => write!(f, "mono (the package's C# server, headless, at {})", remote.endpoint),
                RemoteKind::Unity => write!(f, "unity (a Unity Editor in batch mode, at {})", remote.endpoint),
            },
        }
    }
}

impl FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "fake" => Ok(Target::Fake { editor: EditorKind::Package, defect: None }),
            // The embedded fake playing another Editor: `fake:uloop-2.1.1`.
            other if other.starts_with("fake:") => {
                let name = &other["fake:".len()..];
                <EditorKind as clap::ValueEnum>::from_str(name, false)
                    .map(|editor| Target::Fake { editor, defect: None })
                    .map_err(|_| {
                        format!("unknown Editor {name:?} (expected fake:package, fake:uloop-2.1.1 or fake:uloop-3)")
                    })
            }
            // Started before the run, which fills in where they listen.
            "mono" | "unity" => Ok(Target::Tcp(Remote {
                kind: if s == "mono" { RemoteKind::Mono } else { RemoteKind::Unity },
                endpoint: Endpoint::Tcp(SocketAddr::from(([127, 0, 0, 1], 0))),
                control: None,
                project: None,
                token: None,
            })),
            // uLoopMCP 3 listens on a Unix socket (Windows: a named pipe).
            other if other.starts_with("unix:") && cfg!(windows) => {
                Err(format!("{other}: a Unix domain socket; on Windows uLoopMCP 3 listens on a named pipe (pipe:NAME)"))
            }
            other if other.starts_with("pipe:") && !cfg!(windows) => {
                Err(format!("{other}: named pipes are Windows'; here uLoopMCP 3 listens on a Unix socket (unix:PATH)"))
            }
            other if other.starts_with("tcp://") || other.starts_with("unix:") || other.starts_with("pipe:") => {
                other.parse::<Endpoint>().map(|endpoint| Target::Tcp(Remote::at(endpoint)))
            }
            other => Err(format!(
                "unknown target {other:?} (expected fake, fake:uloop-2.1.1, fake:uloop-3, mono, unity, \
                 tcp://HOST:PORT, unix:PATH or pipe:NAME)"
            )),
        }
    }
}

/// One case's view of the target.
pub struct Session {
    /// Where the Editor listens (a remote Editor's may move: [`Session::editor_endpoint`]).
    endpoint: Endpoint,
    /// What `x-uloop.expectedProjectRoot` says in every request (uLoopMCP
    /// 3, whose CLI always sends it): the project's canonical root.
    identity: Option<String>,
    /// Tools the Editor does not have, which a case calling them is not
    /// applicable for ([`Lacks`]).
    lacks: Lacks,
    /// The fake's control API, when the target has one.
    pub control: Option<ControlClient>,
    /// The project folder, when known (for its discovery file).
    pub project: Option<PathBuf>,
    /// The token given on the command line, if any.
    token: Option<String>,
    log: WireLog,
    /// The bridge the `mcp` cases start in front of the Editor.
    bridge: BridgeCommand,
    fake: Option<EmbeddedFake>,
}

/// A fake Editor this suite started, on its own copy of the project.
struct EmbeddedFake {
    fake: FakeUnity,
    editor: EditorKind,
    defect: Option<Defect>,
    project: TempFolder,
    /// The socket it listens on (uLoopMCP 3), in a folder of its own.
    local: Option<(Endpoint, TempFolder)>,
    /// What the fake does (reloads, crashes, faults fired), given to each
    /// fake the session starts, and written into the case's wire log as it
    /// happens ([`watch_events`]) until the session ends.
    events: fake_unity::events::Events,
    _watching: tokio_util::task::AbortOnDropHandle<()>,
}

/// Writes what the fake does into the wire log, between the messages, as
/// it happens: the report draws a scenario's time line from them.
fn watch_events(events: &fake_unity::events::Events, log: &WireLog) -> tokio_util::task::AbortOnDropHandle<()> {
    use tokio::sync::broadcast::error::RecvError;
    let mut watcher = events.subscribe();
    let log = log.clone();
    tokio_util::task::AbortOnDropHandle::new(tokio::spawn(async move {
        loop {
            match watcher.recv().await {
                Ok(event) => log.push(&event.to_string()),
                Err(RecvError::Lagged(missed)) => log.push(&format!("unity: {missed} events not shown (too many)")),
                Err(RecvError::Closed) => return,
            }
        }
    }))
}

/// A temporary folder that, dropped, is removed without holding up the
/// runtime's other tasks ([`editor_link::blocking`]): on a disk busy with
/// other writes, removing a project's copy took up to 9 s, and the case
/// beside it read its bridge's answer that much late (issue 34).
struct TempFolder(Option<tempfile::TempDir>);

impl TempFolder {
    fn path(&self) -> &Path {
        self.0.as_ref().map_or(Path::new(""), |dir| dir.path())
    }
}

impl Drop for TempFolder {
    fn drop(&mut self) {
        if let Some(dir) = self.0.take() {
            editor_link::blocking(move || drop(dir));
        }
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session").field("endpoint", &self.endpoint).finish_non_exhaustive()
    }
}

/// Why a case that reloads the Editor cannot run ([`crate::reload`]).
pub const CANNOT_RELOAD: &str = "not applicable: this case reloads the Editor, through a control API (--control URL) or as an agent does, by writing a script into its project's Assets/ and compiling it, for which the suite needs the project (--project DIR)";

/// `fixtures/unity-project` of this repository.
pub fn fixture_project() -> PathBuf {
    crate::home::repository().join("fixtures/unity-project")
}

/// A copy of the fixture project, which the fake's state models (an empty
/// Unity-shaped folder where the binary runs outside the repository).
pub fn fixture_copy() -> Result<tempfile::TempDir, String> {
    let project = tempfile::tempdir().map_err(|e| format!("temporary project: {e}"))?;
    let fixture = fixture_project();
    if fixture.is_dir() {
        fake_unity::copy_dir(&fixture, project.path()).map_err(|e| format!("copying {}: {e}", fixture.display()))?;
    }
    for dir in ["Assets", "ProjectSettings"] {
        std::fs::create_dir_all(project.path().join(dir)).map_err(|e| format!("temporary project: {e}"))?;
    }
    Ok(project)
}

impl Target {
    /// A fresh session for one case.
    pub async fn open(&self, log: WireLog, bridge: &BridgeCommand) -> Result<Session, Finding> {
        match self {
            Target::Tcp(remote) => {
                let control = match &remote.control {
                    Some(url) => Some(
                        ControlClient::from_url(url)
                            .map_err(|e| Finding::Harness(format!("the control API {url}: {e}")))?,
                    ),
                    None => None,
                };
                // uLoopMCP 3: each request says which project it means, as
                // its CLI does, when the project is known.
                let identity = match (&remote.endpoint, &remote.project) {
                    (Endpoint::Tcp(_), _) | (_, None) => None,
                    (_, Some(project)) => editor_link::endpoint::canonical_project_root(project).ok(),
                };
                Ok(Session {
                    endpoint: remote.endpoint.clone(),
                    identity,
                    lacks: self.lacks(),
                    control,
                    project: remote.project.clone(),
                    token: remote.token.clone(),
                    log,
                    bridge: bridge.clone(),
                    fake: None,
                })
            }
            Target::Fake { editor, defect } => {
                // Off the runtime's threads: on a busy disk a copy takes seconds.
                // Off the runtime's threads: on a busy disk a copy takes seconds.
                let project = TempFolder(Some(editor_link::blocking(fixture_copy).map_err(Finding::Harness)?));
                let local = local_socket(*editor)?;
                let endpoint = local.as_ref().map(|(endpoint, _)| endpoint.clone());
                let events = fake_unity::events::Events::default();
                let watching = watch_events(&events, &log);
                let fake = start_fake(project.path(), *editor, *defect, endpoint, events.clone(), |_| {}).await?;
                // Every request names the project root where the dialect checks it.
                let identity = editor
                    .dialect()
                    .on_project_socket()
                    .then(|| editor_link::endpoint::canonical_project_root(&fake.editor().project).ok())
                    .flatten();
                Ok(Session {
                    endpoint: fake.endpoint(),
                    identity,
                    lacks: self.lacks(),
                    control: Some(fake.control()),
                    project: Some(fake.editor().project.clone()),
                    token: None,
                    log,
                    bridge: bridge.clone(),
                    fake: Some(EmbeddedFake {
                        fake,
                        editor: *editor,
                        defect: *defect,
                        project,
                        local,
                        events,
                        _watching: watching,
                    }),
                })
            }
        }
    }
}

/// Where an embedded uLoopMCP 3 listens: a socket in a temporary folder of
/// its own (not `/tmp/uloop`, which every user of the machine shares), or
/// a named pipe of a random name on Windows. `None` for a TCP Editor.
fn local_socket(editor: EditorKind) -> Result<Option<(Endpoint, TempFolder)>, Finding> {
    if !editor.dialect().on_project_socket() {
        return Ok(None);
    }
    let dir = tempfile::tempdir().map_err(|e| Finding::Harness(format!("a folder for the socket: {e}")))?;
    let endpoint = if cfg!(windows) {
        let name = dir.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Endpoint::Pipe(format!(r"\\.\pipe\uloop-conformance-{}-{name}", std::process::id()))
    } else {
        Endpoint::Unix(dir.path().join("uloop-3.sock"))
    };
    Ok(Some((endpoint, TempFolder(Some(dir)))))
}

/// Starts a fake Editor on `project` as the suite configures it (fast
/// reloads, a fixed seed; a local socket at `local`), adjusted by `adjust`.
async fn start_fake(
    project: &std::path::Path,
    editor: EditorKind,
    defect: Option<Defect>,
    local: Option<Endpoint>,
    events: fake_unity::events::Events,
    adjust: impl FnOnce(&mut fake_unity::Config),
) -> Result<FakeUnity, Finding> {
    let mut config = fake_unity::Config::new(project);
    config.endpoint = local;
    config.events = events;
    config.editor = editor;
    config.seed = Some(1);
    config.defect = defect;
    config.state.editor.reload_downtime_ms = 100;
    config.state.editor.tools_ready_delay_ms = 20;
    adjust(&mut config);
    FakeUnity::start(config).await.map_err(|e| Finding::Harness(format!("starting the fake: {e}")))
}

impl Session {
    /// Starts the bridge under test in front of the Editor.
    pub async fn mcp(&self) -> Result<McpProcess, Finding> {
        self.mcp_with(&[]).await
    }

    /// [`Session::mcp`] with the Editor's internal tools offered too
    /// (`UNITY_MCP_DEV=1`, the bridge's `--dev`: `debug-sleep` among them).
    /// A bridge that does not know the variable offers what it offers.
    pub async fn mcp_with_internal_tools(&self) -> Result<McpProcess, Finding> {
        self.mcp_with(&[("UNITY_MCP_DEV", "1")]).await
    }

    /// The bridge started with `env` added; told the Editor's socket or pipe
    /// when it listens on one (the suite's v3 Editors listen in a folder of
    /// their own, not where the bridge would look from the project), and
    /// left to find an Editor on TCP as a user's would.
    async fn mcp_with(&self, env: &[(&str, &str)]) -> Result<McpProcess, Finding> {
        let local = match self.editor_endpoint().await {
            Endpoint::Tcp(_) => None,
            local => Some(local.to_string()),
        };
        let mut env = env.to_vec();
        env.extend(local.iter().map(|e| ("UNITY_MCP_ENDPOINT", e.as_str())));
        // The bridge reads the token from the project, as for users, unless one was given.
        McpProcess::spawn_with_env(
            &self.bridge,
            self.project.as_deref(),
            self.editor_port(),
            self.token.clone(),
            self.log.clone(),
            &env,
        )
    }

    /// The Editor's TCP port as first known (0 on a local socket, which the
    /// bridge is given as its endpoint: [`Session::mcp`]).
    fn editor_port(&self) -> u16 {
        match (&self.fake, &self.endpoint) {
            (Some(embedded), _) => embedded.fake.port(),
            (None, Endpoint::Tcp(addr)) => addr.port(),
            (None, _) => 0,
        }
    }

    /// Replaces the embedded fake by one started with `adjust` applied to its
    /// configuration (a fault scenario, a held port); a harness finding on
    /// any other target.
    pub async fn restart_fake(&mut self, adjust: impl FnOnce(&mut fake_unity::Config)) -> Result<(), Finding> {
        let embedded =
            self.fake.take().ok_or_else(|| Finding::Harness("only the embedded fake can be restarted".into()))?;
        embedded.fake.quit().await;
        let local = embedded.local.as_ref().map(|(endpoint, _)| endpoint.clone());
        let events = embedded.events.clone();
        let fake = start_fake(embedded.project.path(), embedded.editor, embedded.defect, local, events, adjust).await?;
        self.endpoint = fake.endpoint();
        self.control = Some(fake.control());
        self.fake = Some(EmbeddedFake { fake, ..embedded });
        Ok(())
    }

    /// Writes what `events` tell (a proxy's faults firing) into the case's
    /// wire log as it happens, until the handle drops.
    pub fn watch(&self, events: &fake_unity::events::Events) -> tokio_util::task::AbortOnDropHandle<()> {
        watch_events(events, &self.log)
    }

    /// Whether the Editor is the fake this suite embeds (faults go into it
    /// directly; any other Editor gets them through `fake-unity proxy`).
    pub fn is_embedded_fake(&self) -> bool {
        self.fake.is_some()
    }

    /// The Editor's current TCP address; not applicable, saying so, for an
    /// Editor that has none (uLoopMCP 3 listens on a Unix socket or pipe).
    pub async fn editor_addr(&self) -> Result<SocketAddr, Finding> {
        match self.editor_endpoint().await {
            Endpoint::Tcp(addr) => Ok(addr),
            other => Err(no_tcp_port(&other)),
        }
    }

    /// Where the Editor listens now: its Unix socket or named pipe (the
    /// same path across reloads), or its current TCP address.
    pub async fn editor_endpoint(&self) -> Endpoint {
        let addr = match (&self.fake, &self.endpoint) {
            (Some(embedded), _) => return embedded.fake.endpoint(),
            (None, Endpoint::Tcp(addr)) => *addr,
            (None, local) => return local.clone(),
        };
        Endpoint::Tcp(match &self.fake {
            Some(embedded) => SocketAddr::from(([127, 0, 0, 1], embedded.fake.port())),
            // A remote Editor with a known project: the port it publishes
            // (it moves when a reload finds the old one taken), once it is
            // ready again (an earlier case may have reloaded it). Published
            // as the bridge finds it: the instance file, or uLoopMCP's
            // settings file (its customPort and isDomainReloadInProgress).
            None => match &self.project {
                Some(project) => {
                    use editor_link::discovery::{Locator, Source};
                    let locator = Locator { project: Some(project.clone()), ..Locator::default() };
                    let deadline = tokio::time::Instant::now() + READY_TIMEOUT;
                    loop {
                        let found = locator.candidates();
                        // Only a reload is worth waiting for.
                        if found.reloading && tokio::time::Instant::now() < deadline {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            continue;
                        }
                        let published = found
                            .ports
                            .iter()
                            .find(|c| matches!(c.source, Source::DiscoveryFile | Source::UloopSettings));
                        break published.map_or(addr, |c| SocketAddr::new(addr.ip(), c.port));
                    }
                }
                None => addr,
            },
        })
    }

    /// Connects to the Editor where it listens now (its current port, or
    /// its socket), with the token and `x-uloop` a client sends.
    pub async fn link(&self, framing: Framing) -> Result<EditorClient, Finding> {
        let endpoint = self.editor_endpoint().await;
        Ok(EditorClient::connect(endpoint, framing, self.log.clone(), self.lacks)
            .await?
            .with_token(self.token())
            .with_identity(self.identity.clone()))
    }

    /// Connects without the token, as a client that cannot read the
    /// discovery file (`1.token-required`).
    pub async fn link_without_token(&self, framing: Framing) -> Result<EditorClient, Finding> {
        let endpoint = self.editor_endpoint().await;
        Ok(EditorClient::connect(endpoint, framing, self.log.clone(), self.lacks)
            .await?
            .with_identity(self.identity.clone()))
    }

    /// Connects without `x-uloop`, as a client that does not say which
    /// project it means (uLoopMCP 3 then checks nothing).
    pub async fn link_without_identity(&self, framing: Framing) -> Result<EditorClient, Finding> {
        let endpoint = self.editor_endpoint().await;
        Ok(EditorClient::connect(endpoint, framing, self.log.clone(), self.lacks).await?.with_token(self.token()))
    }

    /// What `x-uloop.expectedProjectRoot` says in each request (uLoopMCP 3
    /// with its project known), if anything.
    pub fn identity(&self) -> Option<&str> {
        self.identity.as_deref()
    }

    /// A raw byte stream to the Editor, for cases that break the framing
    /// below the frame layer.
    pub async fn raw_stream(&self) -> Result<Stream, Finding> {
        let endpoint = self.editor_endpoint().await;
        connect_stream(&endpoint).await.map_err(|e| {
            Finding::Unreachable(crate::finding::Unreachable::connecting(
                format_args!("cannot connect to {endpoint}"),
                &e,
            ))
        })
    }

    /// This suite's own program (whose `fake serve` a case may start): the
    /// program of the embedded bridge, else the one running.
    pub fn suite_program(&self) -> Result<PathBuf, Finding> {
        match self.bridge.args.first().is_some_and(|a| a == "bridge") {
            true => Ok(self.bridge.program.clone()),
            false => std::env::current_exe().map_err(|e| Finding::Harness(format!("this program: {e}"))),
        }
    }

    /// Starts the bridge under test in `folder`, finding its Editor from
    /// there as for users (`args` and `env` added): the cases of which
    /// Editor it finds, which start their own.
    pub fn mcp_in(&self, folder: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<McpProcess, Finding> {
        McpProcess::spawn_in(&self.bridge, folder, args, env, self.log.clone())
    }

    /// Starts the bridge under test against the Editor at `port` (say, a
    /// proxy in front of it), without its project: it finds it by the port.
    pub fn mcp_at(&self, port: u16) -> Result<McpProcess, Finding> {
        // Without the project the bridge cannot read the token: it is given.
        McpProcess::spawn(&self.bridge, None, port, self.token(), self.log.clone())
    }

    /// What a client sends as `x-token` now (extension `token`): the one
    /// given, else the one the project's discovery file publishes, read
    /// afresh (a restarted Editor has a new one).
    pub fn token(&self) -> Option<String> {
        if self.token.is_some() {
            return self.token.clone();
        }
        let project = self.project.as_ref()?;
        let file = DiscoveryFile::read(project).ok()?;
        file.token
    }

    /// The harmless request this Editor's catalogue answers ([`Probe`]).
    pub fn probe(&self) -> Probe {
        Probe::of(self.lacks)
    }

    /// The control API, or a harness finding when the target has none.
    pub fn control(&self) -> Result<&ControlClient, Finding> {
        self.control.as_ref().ok_or_else(|| Finding::Harness("this target has no control API".into()))
    }

    /// The discovery file of the project.
    pub fn discovery(&self) -> Result<DiscoveryFile, Finding> {
        let project =
            self.project.as_ref().ok_or_else(|| Finding::Harness("the project folder is not known".into()))?;
        DiscoveryFile::read(project).map_err(|e| Finding::Violation(format!("discovery file: {e}")))
    }

    pub fn note(&self, line: impl Into<String>) {
        self.log.push(&line.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use editor_link::dialect::{ULOOP_2_1_1, ULOOP_3};

    #[test]
    fn uloop_3_targets_are_endpoints() {
        let target: Target = "fake:uloop-3".parse().unwrap();
        assert_eq!(target, Target::Fake { editor: EditorKind::Uloop3, defect: None });
        assert_eq!(target.dialect(), Some(&ULOOP_3));
        assert_eq!(Target::Fake { editor: EditorKind::Uloop211, defect: None }.dialect(), Some(&ULOOP_2_1_1));
        let tcp: Target = "tcp://127.0.0.1:8700".parse().unwrap();
        assert_eq!(tcp.dialect(), None, "over TCP only get-version tells");
        assert_eq!(tcp.to_string(), "tcp://127.0.0.1:8700");
        if cfg!(unix) {
            let unix: Target = "unix:/tmp/t/v3.sock".parse().unwrap();
            assert_eq!(unix, Target::Tcp(Remote::at(Endpoint::Unix("/tmp/t/v3.sock".into()))));
            assert_eq!(unix.dialect(), Some(&ULOOP_3));
            assert_eq!(unix.to_string(), "unix:/tmp/t/v3.sock");
            assert!("pipe:uloop-x".parse::<Target>().unwrap_err().contains("named pipes are Windows'"));
        }
        assert!("unix:".parse::<Target>().is_err());
    }

    #[test]
    fn the_fixture_project_is_told_by_its_assembly_definitions() {
        assert!(is_fixture_project(&fixture_project()));
        let copy = tempfile::tempdir().unwrap();
        fake_unity::copy_dir(&fixture_project(), copy.path()).unwrap();
        // The suite's own edits (a script written, a scene changed) leave it the fixture.
        std::fs::write(copy.path().join("Assets/Scripts/Turret.cs"), "public class Turret {}").unwrap();
        assert!(is_fixture_project(copy.path()));
        let other = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(other.path().join("Assets/Scripts")).unwrap();
        assert!(!is_fixture_project(other.path()), "a project without them");
        std::fs::write(copy.path().join("Assets/Scripts/Game.Runtime.asmdef"), "{\"name\":\"Game.Runtime\"}").unwrap();
        assert!(!is_fixture_project(copy.path()), "a project with more of its own");
    }
}
