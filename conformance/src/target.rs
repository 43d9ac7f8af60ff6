//! What is tested, and the raw wire client the cases use.
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

use bytes::{Bytes, BytesMut};
use editor_link::{
    connection::{Connection, Options, Outgoing, Received, Receiver, Sender},
    discovery::DiscoveryFile,
    endpoint::Endpoint,
    framing::{DEFAULT_RESPONSE_LIMIT, Framing, encode_frame},
    jsonrpc::{Id, TOKEN_MEMBER},
};
use fake_unity::{ControlClient, Defect, EditorKind, FakeUnity};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncRead, AsyncWrite},
    net::TcpStream,
};

use crate::{
    bridge::{BridgeCommand, McpProcess},
    finding::Finding,
    wire_log::{WireLog, excerpt},
};

/// How long a case waits for any one thing from the target.
pub const READ_TIMEOUT: Duration = Duration::from_secs(5);

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

    /// Why cases that control the Editor cannot run, if they cannot.
    pub fn cannot_control(&self) -> Option<&'static str> {
        match (&self.control, &self.project) {
            (Some(_), Some(_)) => None,
            (None, Some(_)) => Some(
                "not applicable: this case reloads the Editor or gives it faults through a control API (--control URL, which `fake-unity serve` prints; a real Editor has none)",
            ),
            (None, None) => Some(
                "not applicable: this case reloads the Editor or gives it faults through a control API (--control URL, which `fake-unity serve` prints), and reads its project's discovery file (--project DIR)",
            ),
            (Some(_), None) => Some("not applicable: the discovery file needs the Editor's project (--project DIR)"),
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

    /// Whether the Editor is uLoopMCP 3, or another that listens on a Unix
    /// socket or named pipe (only uLoopMCP 3 does) rather than a TCP port.
    pub fn is_uloop3(&self) -> bool {
        match self {
            Target::Fake { editor, .. } => *editor == EditorKind::Uloop3,
            Target::Tcp(remote) => !matches!(remote.endpoint, Endpoint::Tcp(_)),
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
    project: tempfile::TempDir,
    /// The socket it listens on (uLoopMCP 3), in a folder of its own.
    local: Option<(Endpoint, tempfile::TempDir)>,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session").field("endpoint", &self.endpoint).finish_non_exhaustive()
    }
}

/// `fixtures/unity-project` of this repository.
pub fn fixture_project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/unity-project")
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
                    lacks: Lacks::of(self),
                    control,
                    project: remote.project.clone(),
                    token: remote.token.clone(),
                    log,
                    bridge: bridge.clone(),
                    fake: None,
                })
            }
            Target::Fake { editor, defect } => {
                let project = fixture_copy().map_err(Finding::Harness)?;
                let local = local_socket(*editor)?;
                let endpoint = local.as_ref().map(|(endpoint, _)| endpoint.clone());
                let fake = start_fake(project.path(), *editor, *defect, endpoint, |_| {}).await?;
                let identity = (*editor == EditorKind::Uloop3)
                    .then(|| editor_link::endpoint::canonical_project_root(&fake.editor().project).ok())
                    .flatten();
                Ok(Session {
                    endpoint: fake.endpoint(),
                    identity,
                    lacks: Lacks::of(self),
                    control: Some(fake.control()),
                    project: Some(fake.editor().project.clone()),
                    token: None,
                    log,
                    bridge: bridge.clone(),
                    fake: Some(EmbeddedFake { fake, editor: *editor, defect: *defect, project, local }),
                })
            }
        }
    }
}

/// Where an embedded uLoopMCP 3 listens: a socket in a temporary folder of
/// its own (not `/tmp/uloop`, which every user of the machine shares), or
/// a named pipe of a random name on Windows. `None` for a TCP Editor.
fn local_socket(editor: EditorKind) -> Result<Option<(Endpoint, tempfile::TempDir)>, Finding> {
    if editor != EditorKind::Uloop3 {
        return Ok(None);
    }
    let dir = tempfile::tempdir().map_err(|e| Finding::Harness(format!("a folder for the socket: {e}")))?;
    let endpoint = if cfg!(windows) {
        let name = dir.path().file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Endpoint::Pipe(format!(r"\\.\pipe\uloop-conformance-{}-{name}", std::process::id()))
    } else {
        Endpoint::Unix(dir.path().join("uloop-3.sock"))
    };
    Ok(Some((endpoint, dir)))
}

/// Starts a fake Editor on `project` as the suite configures it (fast
/// reloads, a fixed seed; a local socket at `local`), adjusted by `adjust`.
async fn start_fake(
    project: &std::path::Path,
    editor: EditorKind,
    defect: Option<Defect>,
    local: Option<Endpoint>,
    adjust: impl FnOnce(&mut fake_unity::Config),
) -> Result<FakeUnity, Finding> {
    let mut config = fake_unity::Config::new(project);
    config.endpoint = local;
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
        let port = self.editor_port();
        let local = self.local_endpoint().await;
        let env: Vec<(&str, &str)> = local.iter().map(|e| ("UNITY_MCP_ENDPOINT", e.as_str())).collect();
        // The bridge reads the token from the project, as for users, unless one was given.
        McpProcess::spawn_with_env(
            &self.bridge,
            self.project.as_deref(),
            port,
            self.token.clone(),
            self.log.clone(),
            &env,
        )
    }

    /// The Editor's Unix socket or named pipe, as the bridge's `--endpoint`
    /// takes it (`UNITY_MCP_ENDPOINT`): the suite's v3 Editors listen in a
    /// folder of their own, not where the bridge would look from the project.
    /// `None` for an Editor on TCP (the bridge finds it as a user's would).
    async fn local_endpoint(&self) -> Option<String> {
        match self.editor_endpoint().await {
            Endpoint::Tcp(_) => None,
            local => Some(local.to_string()),
        }
    }

    /// [`Session::mcp`] with the Editor's internal tools offered too
    /// (`UNITY_MCP_DEV=1`, the bridge's `--dev`: `debug-sleep` among them).
    /// A bridge that does not know the variable offers what it offers.
    pub async fn mcp_with_internal_tools(&self) -> Result<McpProcess, Finding> {
        let port = self.editor_port();
        let local = self.local_endpoint().await;
        let mut env = vec![("UNITY_MCP_DEV", "1")];
        env.extend(local.iter().map(|e| ("UNITY_MCP_ENDPOINT", e.as_str())));
        McpProcess::spawn_with_env(
            &self.bridge,
            self.project.as_deref(),
            port,
            self.token.clone(),
            self.log.clone(),
            &env,
        )
    }

    /// The Editor's TCP port as first known (0 on a local socket, which the
    /// bridge is given as its endpoint: [`Session::local_endpoint`]).
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
        let fake = start_fake(embedded.project.path(), embedded.editor, embedded.defect, local, adjust).await?;
        self.endpoint = fake.endpoint();
        self.control = Some(fake.control());
        self.fake = Some(EmbeddedFake { fake, ..embedded });
        Ok(())
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
        connect_stream(&endpoint).await.map_err(|e| Finding::Unreachable(format!("cannot connect to {endpoint}: {e}")))
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
        self.log.push(line.into());
    }
}

/// What a read produced.
#[derive(Debug)]
pub enum Read {
    Message(Value),
    /// A frame whose body is not JSON.
    NotJson(String),
    /// The Editor closed the connection (or reset it).
    Closed,
    /// Nothing within the timeout.
    Silence,
    /// The Editor's bytes do not follow the framing.
    BadFraming(String),
}

/// A client of the editor link for the cases: sends frames (or raw bytes)
/// through the editor-link [`Connection`], reads frames, logs both.
#[derive(Debug)]
pub struct EditorClient {
    pub framing: Framing,
    sender: Sender,
    receiver: Receiver,
    log: WireLog,
    next_id: u64,
    endpoint: Endpoint,
    /// Put into every request this client sends (extension `token`).
    token: Option<String>,
    /// `x-uloop.expectedProjectRoot` put into every request (uLoopMCP 3).
    identity: Option<String>,
    /// Tools the Editor lacks: a request for one is not sent.
    lacks: Lacks,
    /// The last bytes sent, where a request's method is looked for.
    sent_tail: Vec<u8>,
}

impl EditorClient {
    async fn connect(
        endpoint: Endpoint,
        framing: Framing,
        log: WireLog,
        lacks: Lacks,
    ) -> Result<EditorClient, Finding> {
        let options = Options::client(framing, DEFAULT_RESPONSE_LIMIT);
        let connecting = async {
            Ok::<_, std::io::Error>(match &endpoint {
                Endpoint::Tcp(addr) => Connection::tcp(TcpStream::connect(addr).await?, options),
                #[cfg(unix)]
                Endpoint::Unix(path) => Connection::unix(tokio::net::UnixStream::connect(path).await?, options),
                #[cfg(windows)]
                Endpoint::Pipe(name) => {
                    Connection::pipe(tokio::net::windows::named_pipe::ClientOptions::new().open(name)?, options)
                }
                #[allow(unreachable_patterns)]
                other => return Err(std::io::Error::other(format!("{other}: not on this platform"))),
            })
        };
        let connection = tokio::time::timeout(READ_TIMEOUT, connecting)
            .await
            .map_err(|_| Finding::Unreachable(format!("timed out after {READ_TIMEOUT:?} connecting to {endpoint}")))?
            .map_err(|e| Finding::Unreachable(format!("cannot connect to {endpoint}: {e}")))?;
        log.push(format!("connect {endpoint} ({framing} framing)"));
        let Connection { sender, receiver, .. } = connection;
        Ok(EditorClient {
            framing,
            sender,
            receiver,
            log,
            next_id: 1,
            endpoint,
            token: None,
            identity: None,
            lacks,
            sent_tail: Vec::new(),
        })
    }

    fn with_token(mut self, token: Option<String>) -> Self {
        self.token = token;
        self
    }

    fn with_identity(mut self, identity: Option<String>) -> Self {
        self.identity = identity;
        self
    }

    /// The token this client sends, if any.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// `body` as this client sends a request: a JSON object with a `method`
    /// gets the token (and, to uLoopMCP 3, `x-uloop` with the project's
    /// root, as its CLI sends) as its first members, unless it has them,
    /// every other byte unchanged (ids and numbers keep their exact text).
    /// Anything else is returned as it is: a batch, a body that is not
    /// JSON, a notification-less fragment.
    pub fn signed(&self, body: &[u8]) -> Vec<u8> {
        let Ok(Value::Object(request)) = serde_json::from_slice::<Value>(body) else { return body.to_vec() };
        if !request.contains_key("method") {
            return body.to_vec();
        }
        let mut members = Vec::new();
        if let Some(token) = self.token.as_ref().filter(|_| !request.contains_key(TOKEN_MEMBER)) {
            members.push(format!("{}:{}", json!(TOKEN_MEMBER), json!(token)));
        }
        if let Some(root) = self.identity.as_ref().filter(|_| !request.contains_key(ULOOP_MEMBER)) {
            members.push(format!("{}:{}", json!(ULOOP_MEMBER), json!({"expectedProjectRoot": root})));
        }
        let Some(open) = body.iter().position(|b| *b == b'{').filter(|_| !members.is_empty()) else {
            return body.to_vec();
        };
        let member = format!("{},", members.join(","));
        let empty = body[open + 1..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'}');
        let member = if empty { member.trim_end_matches(',').to_owned() } else { member };
        [&body[..=open], member.as_bytes(), &body[open + 1..]].concat()
    }

    /// The same connection as bytes, for checks of the exact bytes sent.
    pub fn into_raw(self) -> RawClient {
        let (read, buffered) = self.receiver.into_inner();
        RawClient {
            read,
            sender: self.sender,
            buffered: buffered.to_vec(),
            log: self.log,
            token: self.token,
            lacks: self.lacks,
            sent_tail: self.sent_tail,
        }
    }

    /// The Editor's TCP port this client is connected to; not applicable
    /// for an Editor on a Unix socket or pipe (uLoopMCP 3).
    pub fn peer_port(&self) -> Result<u16, Finding> {
        match &self.endpoint {
            Endpoint::Tcp(addr) => Ok(addr.port()),
            other => Err(no_tcp_port(other)),
        }
    }

    /// Where the Editor this client is connected to listens.
    pub fn peer_endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Sends bytes exactly as given (unless they call a tool the Editor
    /// lacks: [`Lacks`]).
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), Finding> {
        self.lacks.check(&mut self.sent_tail, bytes)?;
        self.log.push(format!("> {}", redacted(excerpt(bytes), self.token.as_deref())));
        sent(&self.sender, Outgoing::raw(Bytes::copy_from_slice(bytes))).await
    }

    /// Sends one frame holding `body` (with the token, when it is a
    /// request: [`EditorClient::signed`]), in this client's framing.
    pub async fn send_body(&mut self, body: &[u8]) -> Result<(), Finding> {
        let body = self.signed(body);
        let mut buf = BytesMut::new();
        encode_frame(self.framing, &body, &mut buf).map_err(|e| Finding::Harness(e.to_string()))?;
        self.send_raw(&buf).await
    }

    pub async fn send_json(&mut self, value: &Value) -> Result<(), Finding> {
        self.send_body(value.to_string().as_bytes()).await
    }

    /// Sends a request with a fresh id (`c-N`); returns the id.
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Value, Finding> {
        let id = json!(format!("c-{}", self.next_id));
        self.next_id += 1;
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await?;
        Ok(id)
    }

    /// The next frame, whatever it holds.
    pub async fn receive(&mut self, timeout: Duration) -> Read {
        let received = match tokio::time::timeout(timeout, self.receiver.recv()).await {
            Err(_) => return Read::Silence,
            Ok(received) => received,
        };
        let read = match received {
            Received::Body(body) => {
                self.log.push(format!("< {}", excerpt(&body)));
                match serde_json::from_slice(&body) {
                    Ok(value) => Read::Message(value),
                    Err(e) => Read::NotJson(format!("{e}: {}", excerpt(&body))),
                }
            }
            Received::TooLarge { size, .. } => Read::BadFraming(format!("a frame of {size} bytes")),
            Received::Closed | Received::Lost(_) => Read::Closed,
            Received::Broken(e) => Read::BadFraming(e.to_string()),
        };
        if matches!(read, Read::Closed) {
            self.log.push("< (closed)".into());
        }
        read
    }

    /// The next frame's body as it came (for checks of exact bytes).
    pub async fn body(&mut self) -> Result<Vec<u8>, Finding> {
        match tokio::time::timeout(READ_TIMEOUT, self.receiver.recv()).await {
            Err(_) => Err(Finding::Violation(format!("no answer within {READ_TIMEOUT:?}"))),
            Ok(Received::Body(body)) => {
                self.log.push(format!("< {}", excerpt(&body)));
                Ok(body.to_vec())
            }
            Ok(Received::TooLarge { size, .. }) => {
                Err(Finding::Violation(format!("the Editor sent a frame of {size} bytes")))
            }
            Ok(Received::Broken(e)) => Err(Finding::Violation(format!("bad framing: {e}"))),
            Ok(Received::Closed | Received::Lost(_)) => {
                Err(Finding::Violation("the Editor closed the connection".into()))
            }
        }
    }

    /// The next message; anything else is a violation.
    pub async fn message(&mut self) -> Result<Value, Finding> {
        match self.receive(READ_TIMEOUT).await {
            Read::Message(m) => Ok(m),
            Read::NotJson(e) => Err(Finding::Violation(format!("the Editor sent a body that is not JSON: {e}"))),
            Read::Closed => Err(Finding::Violation("the Editor closed the connection".into())),
            Read::Silence => Err(Finding::Violation(format!("no answer within {READ_TIMEOUT:?}"))),
            Read::BadFraming(e) => {
                Err(Finding::Violation(format!("the Editor's reply is not in {} framing: {e}", self.framing)))
            }
        }
    }

    /// Reads until the response whose id equals `id` (notifications skipped).
    pub async fn response(&mut self, id: &Value) -> Result<Value, Finding> {
        loop {
            let message = self.message().await?;
            if message.get("id") == Some(id) && (message.get("result").is_some() || message.get("error").is_some()) {
                return Ok(message);
            }
            if message.get("method").is_none() {
                return Err(Finding::Violation(format!("expected the answer to id {id}, got {message}")));
            }
        }
    }

    /// Calls a tool and returns the whole response.
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value, Finding> {
        let id = self.request(method, params).await?;
        self.response(&id).await
    }

    /// Calls a tool that must succeed; returns its result.
    pub async fn result(&mut self, method: &str, params: Value) -> Result<Value, Finding> {
        let response = self.call(method, params).await?;
        match response.get("result") {
            Some(result) => Ok(result.clone()),
            None => Err(Finding::Violation(format!("{method} failed: {response}"))),
        }
    }

    /// True when the Editor closes the connection within `timeout` (messages
    /// before the close are skipped).
    pub async fn closes_within(&mut self, timeout: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.receive(left).await {
                Read::Closed => return true,
                Read::Silence => return false,
                _ => {}
            }
        }
    }
}

/// The tools an Editor does not have, for which a case is not applicable.
///
/// The core cases call `ping` (it echoes its `Message`) and a few call
/// `debug-sleep`, the internal tools every uLoopMCP 2.x Editor has.
/// uLoopMCP 3 (v3-beta c50f54c) has neither (`docs/uloop-3-wire.md` §10),
/// nor the package's `unity-search`, `get-provider-details`,
/// `get-menu-items`, `execute-menu-item` (§7): a request for one is not
/// sent, and the case, wherever it calls it (a helper, a raw frame written
/// a byte at a time), is not applicable, saying which tool is missing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lacks(&'static [&'static str]);

/// What uLoopMCP 3 lacks of the tools the cases call.
pub const ULOOP3_LACKS: &[&str] = &[
    "ping",
    "set-client-name",
    "debug-sleep",
    "focus-window",
    "unity-search",
    "get-provider-details",
    "get-menu-items",
    "execute-menu-item",
];

impl Lacks {
    /// What the target's Editor lacks.
    pub fn of(target: &Target) -> Lacks {
        if target.is_uloop3() { Lacks(ULOOP3_LACKS) } else { Lacks::default() }
    }

    /// Not applicable when `bytes`, after what was sent before (`tail`),
    /// complete a request for a tool the Editor lacks.
    fn check(self, tail: &mut Vec<u8>, bytes: &[u8]) -> Result<(), Finding> {
        if self.0.is_empty() {
            return Ok(());
        }
        tail.extend_from_slice(bytes);
        let text = String::from_utf8_lossy(tail).replace([' ', '\t', '\r', '\n'], "");
        let missing = self.0.iter().find(|tool| text.contains(&format!("\"method\":\"{tool}\"")));
        if let Some(tool) = missing {
            return Err(Finding::NotApplicable(format!(
                "not applicable: this case calls {tool}, which uLoopMCP 3 does not have (v3-beta c50f54c: docs/uloop-3-wire.md §7, §10)"
            )));
        }
        let keep = tail.len().saturating_sub(256);
        tail.drain(..keep);
        Ok(())
    }
}

/// The member of a request uLoopMCP reads the client's expectations from.
pub const ULOOP_MEMBER: &str = "x-uloop";

/// Why a case about a TCP port does not apply to an Editor at `endpoint`.
pub fn no_tcp_port(endpoint: &Endpoint) -> Finding {
    Finding::NotApplicable(format!(
        "not applicable: this case checks the Editor's TCP port, and it has none: it listens on {endpoint} (uLoopMCP 3)"
    ))
}

/// A byte stream to an Editor, over whatever it listens on.
pub trait ByteStream: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> ByteStream for T {}

/// A connection as bytes, for the cases that write below the frames.
pub type Stream = Box<dyn ByteStream>;

/// Connects to `endpoint` as bytes.
pub async fn connect_stream(endpoint: &Endpoint) -> std::io::Result<Stream> {
    match endpoint {
        Endpoint::Tcp(addr) => Ok(Box::new(TcpStream::connect(addr).await?)),
        #[cfg(unix)]
        Endpoint::Unix(path) => Ok(Box::new(tokio::net::UnixStream::connect(path).await?)),
        #[cfg(windows)]
        Endpoint::Pipe(name) => Ok(Box::new(tokio::net::windows::named_pipe::ClientOptions::new().open(name)?)),
        #[allow(unreachable_patterns)]
        other => Err(std::io::Error::other(format!("{other}: not on this platform"))),
    }
}

/// Sends `out` and waits until it is written: a violation when the Editor
/// stopped reading or closed the connection first.
async fn sent(sender: &Sender, out: Outgoing) -> Result<(), Finding> {
    let delivery = sender.send(out);
    let written = async {
        while !delivery.reached() || sender.queued_bytes() > 0 {
            if sender.is_closed() {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        true
    };
    match tokio::time::timeout(READ_TIMEOUT, written).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(Finding::Violation("the Editor stopped reading (the connection is closed)".into())),
        Err(_) => Err(Finding::Violation(format!("the Editor stopped reading: nothing written for {READ_TIMEOUT:?}"))),
    }
}

/// `shown` without the token: a credential is never in a report.
fn redacted(shown: String, token: Option<&str>) -> String {
    match token {
        Some(token) => shown.replace(token, "${TOKEN}"),
        None => shown,
    }
}

/// The id as the JSON-RPC types of the bridge library see it.
pub fn id_of(value: &Value) -> Option<Id> {
    Id::from_value(value).ok().flatten()
}

/// A connection read as bytes, not frames.
pub struct RawClient {
    read: std::pin::Pin<Box<dyn tokio::io::AsyncRead + Send>>,
    sender: Sender,
    buffered: Vec<u8>,
    log: WireLog,
    /// Left out of the log.
    token: Option<String>,
    lacks: Lacks,
    sent_tail: Vec<u8>,
}

impl std::fmt::Debug for RawClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawClient").field("buffered", &self.buffered.len()).finish_non_exhaustive()
    }
}

impl RawClient {
    pub async fn send(&mut self, bytes: &[u8]) -> Result<(), Finding> {
        self.lacks.check(&mut self.sent_tail, bytes)?;
        self.log.push(format!("> {}", redacted(excerpt(bytes), self.token.as_deref())));
        sent(&self.sender, Outgoing::raw(Bytes::copy_from_slice(bytes))).await
    }

    /// Everything that arrives until the Editor has been quiet for `quiet`
    /// (waiting up to [`READ_TIMEOUT`] for the first byte).
    pub async fn read_until_quiet(&mut self, quiet: Duration) -> Result<Vec<u8>, Finding> {
        use tokio::io::AsyncReadExt;
        let mut out = std::mem::take(&mut self.buffered);
        let mut chunk = [0u8; 8192];
        let mut wait = if out.is_empty() { READ_TIMEOUT } else { quiet };
        while out.len() < 1 << 20 {
            match tokio::time::timeout(wait, self.read.read(&mut chunk)).await {
                Ok(Ok(0)) | Err(_) => break,
                Ok(Ok(n)) => out.extend_from_slice(&chunk[..n]),
                Ok(Err(e)) => return Err(Finding::Violation(format!("reading: {e}"))),
            }
            wait = quiet;
        }
        self.log.push(format!("< {}", excerpt(&out)));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uloop_3_targets_are_endpoints() {
        let target: Target = "fake:uloop-3".parse().unwrap();
        assert_eq!(target, Target::Fake { editor: EditorKind::Uloop3, defect: None });
        assert!(target.is_uloop3() && !Target::Fake { editor: EditorKind::Uloop211, defect: None }.is_uloop3());
        let tcp: Target = "tcp://127.0.0.1:8700".parse().unwrap();
        assert!(!tcp.is_uloop3());
        assert_eq!(tcp.to_string(), "tcp://127.0.0.1:8700");
        if cfg!(unix) {
            let unix: Target = "unix:/tmp/t/v3.sock".parse().unwrap();
            assert_eq!(unix, Target::Tcp(Remote::at(Endpoint::Unix("/tmp/t/v3.sock".into()))));
            assert!(unix.is_uloop3());
            assert_eq!(unix.to_string(), "unix:/tmp/t/v3.sock");
            assert!("pipe:uloop-x".parse::<Target>().unwrap_err().contains("named pipes are Windows'"));
        }
        assert!("unix:".parse::<Target>().is_err());
    }

    #[test]
    fn a_request_for_a_tool_the_editor_lacks_is_not_sent_however_it_is_cut() {
        let lacks = Lacks(ULOOP3_LACKS);
        let frame = br#"Content-Length: 52\r\n\r\n{"jsonrpc":"2.0","id":1,"method": "ping","params":{}}"#;
        let mut tail = Vec::new();
        let refused = frame.chunks(3).map(|chunk| lacks.check(&mut tail, chunk)).find(Result::is_err);
        let Some(Err(Finding::NotApplicable(why))) = refused else { panic!("{refused:?}") };
        assert!(why.contains("calls ping, which uLoopMCP 3 does not have"), "{why}");
        let mut tail = Vec::new();
        let version = br#"{"jsonrpc":"2.0","id":1,"method":"get-version","params":{}}"#;
        assert!(lacks.check(&mut tail, version).is_ok());
        assert!(Lacks::default().check(&mut Vec::new(), frame).is_ok(), "other Editors lack nothing");
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
