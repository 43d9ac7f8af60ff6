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
    framing::{DEFAULT_RESPONSE_LIMIT, Framing, encode_frame},
    jsonrpc::{Id, TOKEN_MEMBER},
};
use fake_unity::{ControlClient, Defect, EditorKind, FakeUnity};
use serde_json::{Value, json};
use tokio::net::TcpStream;

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
    /// Any Editor listening at this address.
    Tcp(Remote),
}

/// An Editor over TCP: one already running, or one the suite starts
/// ([`crate::launch`]) and reaches the same way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remote {
    /// Which Editor it is.
    pub kind: RemoteKind,
    pub addr: SocketAddr,
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
    /// `tcp://HOST:PORT`: any Editor already running.
    Tcp,
    /// `mono`: our C# server headless under mono (started by the suite).
    Mono,
    /// `unity`: a real Unity Editor in batch mode (started by the suite).
    Unity,
}

impl Remote {
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
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Fake { editor: EditorKind::Package, defect: None } => f.write_str("fake"),
            Target::Fake { editor, defect: None } => write!(f, "fake:{editor}"),
            Target::Fake { editor: EditorKind::Package, defect: Some(d) } => write!(f, "fake (defect {d})"),
            Target::Fake { editor, defect: Some(d) } => write!(f, "fake:{editor} (defect {d})"),
            Target::Tcp(remote) => match remote.kind {
                RemoteKind::Tcp => write!(f, "tcp://{}", remote.addr),
                RemoteKind::Mono => write!(f, "mono (the package's C# server, headless, at tcp://{})", remote.addr),
                RemoteKind::Unity => write!(f, "unity (a Unity Editor in batch mode, at tcp://{})", remote.addr),
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
                    .map_err(|_| format!("unknown Editor {name:?} (expected fake:package or fake:uloop-2.1.1)"))
            }
            // Started before the run, which fills in where they listen.
            "mono" | "unity" => Ok(Target::Tcp(Remote {
                kind: if s == "mono" { RemoteKind::Mono } else { RemoteKind::Unity },
                addr: SocketAddr::from(([127, 0, 0, 1], 0)),
                control: None,
                project: None,
                token: None,
            })),
            other => match other.strip_prefix("tcp://") {
                Some(addr) => addr
                    .parse()
                    .map(|addr| {
                        Target::Tcp(Remote { kind: RemoteKind::Tcp, addr, control: None, project: None, token: None })
                    })
                    .map_err(|e| format!("invalid address {addr:?}: {e}")),
                None => Err(format!(
                    "unknown target {other:?} (expected fake, fake:uloop-2.1.1, mono, unity or tcp://HOST:PORT)"
                )),
            },
        }
    }
}

/// One case's view of the target.
pub struct Session {
    addr: SocketAddr,
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
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session").field("addr", &self.addr).finish_non_exhaustive()
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
                Ok(Session {
                    addr: remote.addr,
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
                let fake = start_fake(project.path(), *editor, *defect, |_| {}).await?;
                let addr = SocketAddr::from(([127, 0, 0, 1], fake.port()));
                Ok(Session {
                    addr,
                    control: Some(fake.control()),
                    project: Some(fake.editor().project.clone()),
                    token: None,
                    log,
                    bridge: bridge.clone(),
                    fake: Some(EmbeddedFake { fake, editor: *editor, defect: *defect, project }),
                })
            }
        }
    }
}

/// Starts a fake Editor on `project` as the suite configures it (fast
/// reloads, a fixed seed), adjusted by `adjust`.
async fn start_fake(
    project: &std::path::Path,
    editor: EditorKind,
    defect: Option<Defect>,
    adjust: impl FnOnce(&mut fake_unity::Config),
) -> Result<FakeUnity, Finding> {
    let mut config = fake_unity::Config::new(project);
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
        let port = match &self.fake {
            Some(embedded) => embedded.fake.port(),
            None => self.addr.port(),
        };
        // The bridge reads the token from the project, as for users, unless one was given.
        McpProcess::spawn(&self.bridge, self.project.as_deref(), port, self.token.clone(), self.log.clone())
    }

    /// [`Session::mcp`] with the Editor's internal tools offered too
    /// (`UNITY_MCP_DEV=1`, the bridge's `--dev`: `debug-sleep` among them).
    /// A bridge that does not know the variable offers what it offers.
    pub async fn mcp_with_internal_tools(&self) -> Result<McpProcess, Finding> {
        let port = match &self.fake {
            Some(embedded) => embedded.fake.port(),
            None => self.addr.port(),
        };
        let env = [("UNITY_MCP_DEV", "1")];
        McpProcess::spawn_with_env(
            &self.bridge,
            self.project.as_deref(),
            port,
            self.token.clone(),
            self.log.clone(),
            &env,
        )
    }

    /// Replaces the embedded fake by one started with `adjust` applied to its
    /// configuration (a fault scenario, a held port); a harness finding on
    /// any other target.
    pub async fn restart_fake(&mut self, adjust: impl FnOnce(&mut fake_unity::Config)) -> Result<(), Finding> {
        let embedded =
            self.fake.take().ok_or_else(|| Finding::Harness("only the embedded fake can be restarted".into()))?;
        embedded.fake.quit().await;
        let fake = start_fake(embedded.project.path(), embedded.editor, embedded.defect, adjust).await?;
        self.addr = SocketAddr::from(([127, 0, 0, 1], fake.port()));
        self.control = Some(fake.control());
        self.fake = Some(EmbeddedFake { fake, ..embedded });
        Ok(())
    }

    /// Whether the Editor is the fake this suite embeds (faults go into it
    /// directly; any other Editor gets them through `fake-unity proxy`).
    pub fn is_embedded_fake(&self) -> bool {
        self.fake.is_some()
    }

    /// The Editor's current address.
    pub async fn editor_addr(&self) -> SocketAddr {
        match &self.fake {
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
                        break published.map_or(self.addr, |c| SocketAddr::new(self.addr.ip(), c.port));
                    }
                }
                None => self.addr,
            },
        }
    }

    /// Connects to the Editor's current port.
    pub async fn link(&self, framing: Framing) -> Result<EditorClient, Finding> {
        let addr = self.editor_addr().await;
        Ok(EditorClient::connect(addr, framing, self.log.clone()).await?.with_token(self.token()))
    }

    /// Connects without the token, as a client that cannot read the
    /// discovery file (`1.token-required`).
    pub async fn link_without_token(&self, framing: Framing) -> Result<EditorClient, Finding> {
        let addr = self.editor_addr().await;
        EditorClient::connect(addr, framing, self.log.clone()).await
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
    addr: SocketAddr,
    /// Put into every request this client sends (extension `token`).
    token: Option<String>,
}

impl EditorClient {
    async fn connect(addr: SocketAddr, framing: Framing, log: WireLog) -> Result<EditorClient, Finding> {
        let stream = tokio::time::timeout(READ_TIMEOUT, TcpStream::connect(addr))
            .await
            .map_err(|_| Finding::Unreachable(format!("timed out after {READ_TIMEOUT:?} connecting to {addr}")))?
            .map_err(|e| Finding::Unreachable(format!("cannot connect to {addr}: {e}")))?;
        log.push(format!("connect {addr} ({framing} framing)"));
        let Connection { sender, receiver, .. } =
            Connection::tcp(stream, Options::client(framing, DEFAULT_RESPONSE_LIMIT));
        Ok(EditorClient { framing, sender, receiver, log, next_id: 1, addr, token: None })
    }

    fn with_token(mut self, token: Option<String>) -> Self {
        self.token = token;
        self
    }

    /// The token this client sends, if any.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// `body` as this client sends a request: a JSON object with a `method`
    /// gets the token as its first member, every other byte unchanged (ids
    /// and numbers keep their exact text). Anything else is returned as it
    /// is: a batch, a body that is not JSON, a notification-less fragment.
    pub fn signed(&self, body: &[u8]) -> Vec<u8> {
        let Some(token) = &self.token else { return body.to_vec() };
        let is_request = serde_json::from_slice::<Value>(body)
            .is_ok_and(|v| v.get("method").is_some() && v.get(TOKEN_MEMBER).is_none());
        let Some(open) = body.iter().position(|b| *b == b'{').filter(|_| is_request) else {
            return body.to_vec();
        };
        let member = format!("{}:{},", json!(TOKEN_MEMBER), json!(token));
        let empty = body[open + 1..].iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'}');
        let member = if empty { member.trim_end_matches(',').to_owned() } else { member };
        [&body[..=open], member.as_bytes(), &body[open + 1..]].concat()
    }

    /// The same connection as bytes, for checks of the exact bytes sent.
    pub fn into_raw(self) -> RawClient {
        let (read, buffered) = self.receiver.into_inner();
        RawClient { read, sender: self.sender, buffered: buffered.to_vec(), log: self.log, token: self.token }
    }

    /// The Editor's port this client is connected to.
    pub fn peer_port(&self) -> u16 {
        self.addr.port()
    }

    /// The Editor's address this client is connected to.
    pub fn peer_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Sends bytes exactly as given.
    pub async fn send_raw(&mut self, bytes: &[u8]) -> Result<(), Finding> {
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
}

impl std::fmt::Debug for RawClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawClient").field("buffered", &self.buffered.len()).finish_non_exhaustive()
    }
}

impl RawClient {
    pub async fn send(&mut self, bytes: &[u8]) -> Result<(), Finding> {
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
