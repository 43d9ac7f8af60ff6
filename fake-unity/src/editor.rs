//! The simulated Editor: its mutable simulation, its connected clients, its
//! lifecycle (ready, reloading, stopped), the resume journal, the counters, and
//! the processing of one request (protocol §3, §5): checks, dispatch to the
//! tool catalogue, deadlines, and the journal.

use std::{
    collections::BTreeMap,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex, MutexGuard,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, SystemTime},
};

use bytes::Bytes;
pub use editor_link::connection::Ending;
use editor_link::{
    connection::Outgoing,
    discovery::{DiscoveryFile, EditorState, PROTOCOL_VERSION, iso_timestamp},
    framing::Framing,
    jsonrpc::{ErrorKind, ErrorObject, Id, Message, Notification, Request, Response, notifications},
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{
    defect::Defect,
    faults::{Fault, Faults, Fired, FrameKind, ReloadPoint, Wire},
    journal::{Journal, Key, Lookup},
    params::Args,
    stall::Stall,
    state::{EditorStateFile, GameObject, LogEntry, Settings},
    tools::{self, Gate, Outcome, Progress, ToolCall},
};

/// Console entries remembered, as Unity's console keeps a bounded log.
const CONSOLE_CAPACITY: usize = 10_000;

/// Why the Editor closes its connections (`notifications/server/shutdown`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownReason {
    DomainReload,
    EditorQuit,
}

impl ShutdownReason {
    pub fn as_str(self) -> &'static str {
        match self {
            ShutdownReason::DomainReload => "DomainReload",
            ShutdownReason::EditorQuit => "EditorQuit",
        }
    }
}

/// Lifecycle requests handled by the server's driver loop.
#[derive(Debug)]
pub enum Command {
    Reload {
        options: ReloadOptions,
        done: Option<oneshot::Sender<ReloadReport>>,
    },
    /// The Editor process dies (and, with `restart_after`, a new one opens
    /// the project); `done` receives where the new one listens.
    Crash {
        options: CrashOptions,
        done: Option<oneshot::Sender<ReloadReport>>,
    },
    /// A new Editor process opens the project after a crash.
    Restart {
        move_port: bool,
        done: Option<oneshot::Sender<ReloadReport>>,
    },
    Quit {
        done: Option<oneshot::Sender<()>>,
    },
}

/// How a crash goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CrashOptions {
    /// When a new Editor process listens again; `None`: only when told
    /// (`POST /restart`).
    pub restart_after: Option<Duration>,
    /// The new process listens on another port.
    pub move_port: bool,
}

/// How a domain reload goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReloadOptions {
    /// How long the Editor stays away; `None` uses the state's default.
    pub downtime: Option<Duration>,
    /// Come back on another port.
    pub move_port: bool,
}

/// Where the Editor came back after a reload.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadReport {
    pub port: u16,
    pub session_id: String,
    pub previous_port: u16,
    pub previous_session_id: String,
    /// When the Editor was listening again (for in-process measurements).
    #[serde(skip)]
    pub listening_at: Option<std::time::Instant>,
}

/// Everything the simulated Editor remembers across domain reloads.
#[derive(Debug)]
pub struct Simulation {
    pub console: Vec<ConsoleEntry>,
    pub scene_roots: Vec<GameObject>,
    pub playing: bool,
    pub paused: bool,
    pub settings: Settings,
    /// Fingerprint of the scripts as last compiled.
    pub compiled_scripts: tools::compile::Fingerprint,
    pub next_instance_id: i64,
}

impl Simulation {
    /// The Editor as it opens the project: the recorded console, then the
    /// messages of the compile that ran at opening; the scene as saved; the
    /// scripts as they are on disk, compiled.
    pub fn opened(state: &EditorStateFile, project: &Path) -> Simulation {
        let mut console: Vec<ConsoleEntry> =
            state.console.iter().map(|e| ConsoleEntry { entry: e.clone(), from_compile: false }).collect();
        console.extend(state.compile.diagnostics.iter().map(|d| ConsoleEntry {
            entry: LogEntry {
                log_type: match d.severity {
                    crate::state::Severity::Error => crate::state::LogType::Error,
                    crate::state::Severity::Warning => crate::state::LogType::Warning,
                },
                message: d.unity_message(),
                stack_trace: String::new(),
            },
            from_compile: true,
        }));
        Simulation {
            console,
            scene_roots: state.scene.roots.clone(),
            playing: false,
            paused: false,
            settings: state.settings.clone(),
            compiled_scripts: tools::compile::Fingerprint::of_project(project),
            next_instance_id: -1000,
        }
    }
}

/// A console line; `from_compile` marks compiler messages, which the next
/// compile replaces, as Unity does.
#[derive(Clone, Debug)]
pub struct ConsoleEntry {
    pub entry: LogEntry,
    pub from_compile: bool,
}

/// One connected client.
#[derive(Debug)]
pub struct Client {
    pub id: u64,
    pub peer: SocketAddr,
    pub connected_at: SystemTime,
    name: Mutex<String>,
    /// Its connection, as faults see it (the sender of its frames).
    pub wire: Wire,
    stats: Arc<Stats>,
    defect: Option<Defect>,
}

impl Client {
    /// Queued bytes above which a client's requests are no longer read.
    pub const QUEUE_LIMIT: usize = 8 * 1024 * 1024;
    /// Queued bytes above which notifications are no longer queued for a
    /// client (it is not reading; its requests already wait).
    pub const NOTIFICATION_LIMIT: usize = 64 * 1024 * 1024;

    /// Bytes queued and not yet written.
    pub fn queued_bytes(&self) -> usize {
        self.wire.sender.queued_bytes()
    }

    /// Waits until at most `limit` bytes are queued.
    pub(crate) async fn room(&self, limit: usize) {
        self.wire.sender.room(limit).await;
    }

    /// The name set with `set-client-name`.
    pub fn name(&self) -> String {
        lock(&self.name).clone()
    }

    pub fn set_name(&self, name: &str) {
        *lock(&self.name) = name.to_owned();
    }

    /// The framing this client speaks, once its first byte has arrived;
    /// header framing (the primary one) until then.
    pub fn framing(&self) -> Framing {
        if self.defect == Some(Defect::WrongReplyFraming) {
            return Framing::Newline;
        }
        self.wire.sender.framing()
    }

    /// Ends the connection: gracefully (what is queued goes out first), or
    /// at once.
    pub fn end(&self, ending: Ending) {
        self.wire.end(ending);
    }

    /// How the connection is ending.
    pub fn ending(&self) -> Ending {
        self.wire.sender.ending()
    }

    /// Resolves once the connection is closing.
    pub async fn closed(&self) {
        self.wire.sender.closed().await;
    }

    /// Queues a message for this client; false when the connection is gone.
    pub fn send(&self, message: &Message) -> bool {
        let method = match message {
            Message::Notification(n) => Some(n.method.as_str()),
            Message::Request(r) => Some(r.method.as_str()),
            Message::Response(_) => None,
        };
        self.send_for(message, method)
    }

    /// Queues the response to a `method` request.
    pub fn reply(&self, method: &str, response: Response) -> bool {
        self.send_for(&Message::Response(response), Some(method))
    }

    fn send_for(&self, message: &Message, method: Option<&str>) -> bool {
        if let (Some(Defect::IdsAsFloats), Message::Response(r)) = (self.defect, message) {
            if let Some(Id::Number(n)) = &r.id {
                let exact = n.as_str().parse::<i64>().is_ok() || n.as_str().parse::<u64>().is_ok();
                let float = n.as_str().parse::<f64>().ok().and_then(serde_json::Number::from_f64);
                if let (false, Some(float)) = (exact, float.filter(|f| f.to_string() != n.as_str())) {
                    let mut r = r.clone();
                    r.id = Some(Id::Number((&float).into()));
                    return self.send_for(&Message::Response(r), method);
                }
            }
        }
        if let (Some(Defect::IdsAsStrings), Message::Response(r)) = (self.defect, message) {
            if let Some(Id::Number(n)) = &r.id {
                let mut r = r.clone();
                r.id = Some(Id::String(n.as_str().to_owned()));
                return self.send_for(&Message::Response(r), method);
            }
        }
        let (kind, is_error) = match message {
            Message::Response(r) => {
                self.stats.responses_sent.fetch_add(1, Ordering::Relaxed);
                if let Err(e) = &r.outcome {
                    self.stats.count_error(e.kind());
                }
                (FrameKind::Response, r.outcome.is_err())
            }
            Message::Notification(_) => {
                self.stats.notifications_sent.fetch_add(1, Ordering::Relaxed);
                (FrameKind::Notification, false)
            }
            Message::Request(_) => (FrameKind::Request, false),
        };
        let body = match (self.defect, message) {
            (Some(Defect::ErrorsWithoutData), Message::Response(r)) if r.outcome.is_err() => {
                let mut r = r.clone();
                if let Err(e) = &mut r.outcome {
                    e.data = None;
                }
                Message::Response(r).to_bytes()
            }
            _ => message.to_bytes(),
        };
        if kind == FrameKind::Notification && self.queued_bytes() > Client::NOTIFICATION_LIMIT {
            tracing::warn!(
                client = self.id,
                queued = self.queued_bytes(),
                "client is not reading: notification dropped"
            );
            return false;
        }
        if self.wire.sender.is_closed() {
            return false;
        }
        let mut outgoing = Outgoing::message(message, method);
        outgoing.body = Bytes::from(body);
        debug_assert_eq!((outgoing.kind, outgoing.is_error), (kind, is_error));
        self.wire.sender.send(outgoing);
        true
    }
}

/// Counters, shown by `GET /stats`.
#[derive(Debug, Default)]
pub struct Stats {
    pub connections_accepted: AtomicU64,
    pub requests: AtomicU64,
    pub responses_sent: AtomicU64,
    pub notifications_received: AtomicU64,
    pub notifications_sent: AtomicU64,
    pub responses_received: AtomicU64,
    pub frames_too_large: AtomicU64,
    pub framing_errors: AtomicU64,
    pub parse_errors: AtomicU64,
    pub bytes_received: AtomicU64,
    pub bytes_sent: AtomicU64,
    pub reloads: AtomicU64,
    pub resumed: AtomicU64,
    pub crashes: AtomicU64,
    pub restarts: AtomicU64,
    /// Connections by the framing their first bytes chose.
    pub header_connections: AtomicU64,
    pub newline_connections: AtomicU64,
    /// Requests received, per method.
    calls: Mutex<BTreeMap<String, u64>>,
    /// Tool bodies started, per tool: what the Editor actually did (a
    /// request refused, answered from the journal or never reached does not
    /// count; one cut off after it started does).
    runs: Mutex<BTreeMap<String, u64>>,
    errors: Mutex<BTreeMap<&'static str, u64>>,
}

impl Stats {
    fn count_call(&self, method: &str) {
        *lock(&self.calls).entry(method.to_owned()).or_default() += 1;
    }

    pub(crate) fn count_framing(&self, framing: Framing) {
        let counter = match framing {
            Framing::Header => &self.header_connections,
            Framing::Newline => &self.newline_connections,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    fn count_run(&self, tool: &str) {
        *lock(&self.runs).entry(tool.to_owned()).or_default() += 1;
    }

    /// How many times `tool` ran.
    pub fn runs(&self, tool: &str) -> u64 {
        lock(&self.runs).get(tool).copied().unwrap_or(0)
    }

    fn count_error(&self, kind: ErrorKind) {
        *lock(&self.errors).entry(kind.type_name()).or_default() += 1;
    }

    pub fn to_json(&self) -> Value {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        json!({
            "connectionsAccepted": n(&self.connections_accepted),
            "requests": n(&self.requests),
            "responsesSent": n(&self.responses_sent),
            "notificationsReceived": n(&self.notifications_received),
            "notificationsSent": n(&self.notifications_sent),
            "responsesReceived": n(&self.responses_received),
            "framesTooLarge": n(&self.frames_too_large),
            "framingErrors": n(&self.framing_errors),
            "parseErrors": n(&self.parse_errors),
            "bytesReceived": n(&self.bytes_received),
            "bytesSent": n(&self.bytes_sent),
            "reloads": n(&self.reloads),
            "resumed": n(&self.resumed),
            "crashes": n(&self.crashes),
            "restarts": n(&self.restarts),
            "framings": {"header": n(&self.header_connections), "newline": n(&self.newline_connections)},
            "calls": *lock(&self.calls),
            "runs": *lock(&self.runs),
            "errors": *lock(&self.errors),
        })
    }
}

#[derive(Debug)]
struct Lifecycle {
    phase: EditorState,
    port: u16,
    session_id: String,
    /// This Editor process: the same across domain reloads, new after a
    /// crash (`EditorInstanceId` in get-version; the resume journal is its).
    instance_id: String,
    /// The process has crashed and no new one has started yet.
    crashed: bool,
}

/// The current domain: cancelled at every reload, which aborts the tool calls
/// running in it (their requests get no response, as in Unity).
#[derive(Debug)]
struct Domain {
    generation: u64,
    token: CancellationToken,
}

/// Where the Editor's time comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// The system clock.
    #[default]
    Real,
    /// Starts at 2026-01-01T00:00:00.000Z and advances 1 ms per reading, so
    /// the same seed and scenario give the same bytes on the wire.
    Virtual,
}

impl std::str::FromStr for Clock {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "real" => Ok(Clock::Real),
            "virtual" => Ok(Clock::Virtual),
            other => Err(format!("unknown clock {other:?} (real or virtual)")),
        }
    }
}

/// The virtual clock's first reading: 2026-01-01T00:00:00Z.
const VIRTUAL_EPOCH_SECS: u64 = 1_767_225_600;

/// Static configuration of one fake Editor.
#[derive(Clone, Debug)]
pub struct EditorConfig {
    pub project: PathBuf,
    pub state: EditorStateFile,
    pub seed: u64,
    /// Largest request frame accepted.
    pub max_request_bytes: usize,
    pub defect: Option<Defect>,
    pub resume: bool,
    pub clock: Clock,
    /// Multiplies every fault duration (a 20-minute compile in a test).
    pub time_scale: f64,
}

/// The simulated Editor.
#[derive(Debug)]
pub struct Editor {
    /// The `serializes-clients` defect: one connection served at a time.
    pub(crate) serial: Arc<tokio::sync::Semaphore>,
    pub project: PathBuf,
    pub base: EditorStateFile,
    pub seed: u64,
    pub max_request_bytes: usize,
    pub defect: Option<Defect>,
    /// Keeps a resume journal and answers `x-resume` from it.
    pub resume: bool,
    pub clock: Clock,
    /// Readings of the virtual clock so far.
    ticks: AtomicU64,
    pub stats: Arc<Stats>,
    pub faults: Arc<Faults>,
    /// Tools taken away by a `toolsChange` fault.
    removed_tools: Mutex<Vec<String>>,
    /// Cancelled to release what faults hold (zombie listeners, held ports)
    /// on `POST /reset` and on quit.
    holds: Mutex<CancellationToken>,
    sim: Mutex<Simulation>,
    lifecycle: Mutex<Lifecycle>,
    clients: Mutex<BTreeMap<u64, Arc<Client>>>,
    journal: Mutex<Journal>,
    domain: Mutex<Domain>,
    rng: Mutex<ChaCha8Rng>,
    next_client_id: AtomicU64,
    commands: mpsc::UnboundedSender<Command>,
    /// Every connection task, so a reload can wait for them to close.
    pub(crate) connections: TaskTracker,
    started: SystemTime,
    /// The `hang` fault: nothing read, written, accepted or run.
    pub hang: Arc<Stall>,
    /// The `deadListener` fault: nothing accepted.
    pub dead_listener: Arc<Stall>,
}

/// `std::sync::Mutex::lock`, ignoring poisoning: a panicking tool must not
/// wedge the Editor (the panic is answered as an error elsewhere).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Editor {
    pub fn new(config: EditorConfig) -> (Arc<Editor>, mpsc::UnboundedReceiver<Command>) {
        let (commands, rx) = mpsc::unbounded_channel();
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let session_id = new_session_id(&mut rng);
        let instance_id = new_session_id(&mut rng);
        let sim = Simulation::opened(&config.state, &config.project);
        let editor = Arc::new(Editor {
            serial: Arc::new(tokio::sync::Semaphore::new(1)),
            project: config.project,
            seed: config.seed,
            max_request_bytes: config.max_request_bytes,
            defect: config.defect,
            resume: config.resume,
            clock: config.clock,
            ticks: AtomicU64::new(0),
            stats: Arc::default(),
            faults: Arc::new(Faults::new(config.seed, config.time_scale)),
            removed_tools: Mutex::new(Vec::new()),
            holds: Mutex::new(CancellationToken::new()),
            sim: Mutex::new(sim),
            lifecycle: Mutex::new(Lifecycle {
                phase: EditorState::Starting,
                port: 0,
                session_id,
                instance_id,
                crashed: false,
            }),
            clients: Mutex::new(BTreeMap::new()),
            journal: Mutex::new(Journal::default()),
            domain: Mutex::new(Domain { generation: 0, token: CancellationToken::new() }),
            rng: Mutex::new(rng),
            next_client_id: AtomicU64::new(1),
            commands,
            connections: TaskTracker::new(),
            started: match config.clock {
                Clock::Real => SystemTime::now(),
                Clock::Virtual => SystemTime::UNIX_EPOCH + Duration::from_secs(VIRTUAL_EPOCH_SECS),
            },
            base: config.state,
            hang: Stall::new("hang"),
            dead_listener: Stall::new("dead listener"),
        });
        (editor, rx)
    }

    /// True when this Editor breaks `defect`'s rule on purpose.
    pub fn has_defect(&self, defect: Defect) -> bool {
        self.defect == Some(defect)
    }

    /// The simulation, locked. Keep the guard short and never across `.await`.
    pub fn sim(&self) -> MutexGuard<'_, Simulation> {
        lock(&self.sim)
    }

    pub fn now(&self) -> SystemTime {
        match self.clock {
            Clock::Real => SystemTime::now(),
            Clock::Virtual => {
                let tick = self.ticks.fetch_add(1, Ordering::Relaxed);
                SystemTime::UNIX_EPOCH + Duration::from_secs(VIRTUAL_EPOCH_SECS) + Duration::from_millis(tick)
            }
        }
    }

    /// Milliseconds since `started`, as the Editor reports durations (0 on
    /// the virtual clock, which does not measure).
    pub fn elapsed_ms(&self, started: std::time::Instant) -> u64 {
        match self.clock {
            Clock::Real => started.elapsed().as_millis() as u64,
            Clock::Virtual => 0,
        }
    }

    pub fn timestamp(&self) -> String {
        iso_timestamp(self.now())
    }

    pub fn package_version(&self) -> &str {
        &self.base.editor.package_version
    }

    pub fn port(&self) -> u16 {
        lock(&self.lifecycle).port
    }

    pub fn session_id(&self) -> String {
        lock(&self.lifecycle).session_id.clone()
    }

    pub fn phase(&self) -> EditorState {
        lock(&self.lifecycle).phase
    }

    /// This Editor process's id (new after a crash).
    pub fn instance_id(&self) -> String {
        lock(&self.lifecycle).instance_id.clone()
    }

    /// The Editor process has crashed and none has started since.
    pub fn is_crashed(&self) -> bool {
        lock(&self.lifecycle).crashed
    }

    /// Asks the driver to reload the domain; `done` receives where it came back.
    pub fn request_reload(&self, options: ReloadOptions, done: Option<oneshot::Sender<ReloadReport>>) {
        let _ = self.commands.send(Command::Reload { options, done });
    }

    /// Asks the driver to quit the Editor.
    pub fn request_quit(&self, done: Option<oneshot::Sender<()>>) {
        let _ = self.commands.send(Command::Quit { done });
    }

    /// Asks the driver to crash the Editor; `done` receives where a new
    /// process listens, once one does.
    pub fn request_crash(&self, options: CrashOptions, done: Option<oneshot::Sender<ReloadReport>>) {
        let _ = self.commands.send(Command::Crash { options, done });
    }

    /// Asks the driver to start a new Editor process after a crash.
    pub fn request_restart(&self, move_port: bool, done: Option<oneshot::Sender<ReloadReport>>) {
        let _ = self.commands.send(Command::Restart { move_port, done });
    }

    /// Waits while the Editor hangs.
    pub(crate) async fn unhung(&self) {
        self.hang.cleared().await;
    }

    // ---- clients ----

    /// Numbers an accepted connection (1, 2, …): its client id, and what
    /// the fault rules' `match.connection` counts.
    pub(crate) fn next_connection(&self) -> u64 {
        self.stats.connections_accepted.fetch_add(1, Ordering::Relaxed);
        self.next_client_id.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn add_client(&self, id: u64, peer: SocketAddr, wire: Wire) -> Arc<Client> {
        let client = Arc::new(Client {
            id,
            peer,
            connected_at: self.now(),
            name: Mutex::new("Unknown Client".into()),
            wire,
            stats: self.stats.clone(),
            defect: self.defect,
        });
        lock(&self.clients).insert(id, client.clone());
        client
    }

    pub(crate) fn remove_client(&self, id: u64) {
        lock(&self.clients).remove(&id);
    }

    pub fn clients(&self) -> Vec<Arc<Client>> {
        lock(&self.clients).values().cloned().collect()
    }

    /// Sends a notification to every connected client.
    pub fn broadcast(&self, method: &str, params: Value) {
        let message = Message::Notification(Notification::new(method, params));
        for client in self.clients() {
            client.send(&message);
        }
    }

    /// Tells every client the tool set changed (protocol §4).
    pub fn notify_tools_changed(&self) {
        self.broadcast(
            notifications::TOOLS_LIST_CHANGED,
            json!({"timestamp": self.timestamp(), "message": "Unity tools have been updated"}),
        );
    }

    // ---- lifecycle (called by the server's driver) ----

    fn discovery(&self, link: &Lifecycle) -> DiscoveryFile {
        DiscoveryFile {
            port: link.port,
            pid: if self.has_defect(Defect::DiscoveryDeadPid) || link.crashed { DEAD_PID } else { std::process::id() },
            project_path: self.project.to_string_lossy().into_owned(),
            unity_version: Some(self.base.editor.unity_version.clone()),
            package_version: Some(self.base.editor.package_version.clone()),
            protocol_version: Some(PROTOCOL_VERSION).filter(|_| !self.has_defect(Defect::DiscoveryWithoutSession)),
            server_session_id: Some(link.session_id.clone())
                .filter(|_| !self.has_defect(Defect::DiscoveryWithoutSession)),
            state: Some(link.phase),
            updated_at: Some(self.timestamp()),
        }
    }

    fn publish(&self, phase: EditorState, port: Option<u16>, new_session: bool) {
        let file = {
            let mut link = lock(&self.lifecycle);
            link.phase = phase;
            if let Some(port) = port {
                link.port = port;
            }
            if new_session {
                link.session_id = new_session_id(&mut lock(&self.rng));
            }
            self.discovery(&link)
        };
        let mut file = file;
        if phase == EditorState::Reloading && self.has_defect(Defect::DiscoveryStaysReady) {
            file.state = Some(EditorState::Ready);
        }
        let written = match self.has_defect(Defect::DiscoveryInPlace) {
            true => write_in_place(&DiscoveryFile::path_in(&self.project), &file),
            false => file.write_atomic(&self.project),
        };
        if let Err(err) = written {
            tracing::error!(%err, "cannot write the discovery file");
        }
    }

    /// Bound and listening: discovery `ready`.
    pub fn listening(&self, port: u16) {
        self.publish(EditorState::Ready, Some(port), false);
    }

    /// Steps 1–3 of a domain reload (protocol §5): discovery `reloading`, the
    /// shutdown notification, every connection closed, tool calls in flight
    /// abandoned.
    pub(crate) fn begin_shutdown(&self, reason: ShutdownReason) {
        let reloading = reason == ShutdownReason::DomainReload;
        if reloading {
            self.publish(EditorState::Reloading, None, false);
        }
        {
            let mut domain = lock(&self.domain);
            domain.token.cancel();
            domain.generation += 1;
            domain.token = CancellationToken::new();
        }
        if !self.has_defect(Defect::NoShutdownNotification) {
            self.broadcast(notifications::SERVER_SHUTDOWN, json!({"reason": reason.as_str()}));
        }
        if self.has_defect(Defect::AnswersAfterShutdown) {
            // Calls in flight get their answers out before the sockets close.
            let clients = self.clients();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                clients.iter().for_each(|c| c.end(Ending::Graceful));
            });
        } else {
            for client in self.clients() {
                client.end(Ending::Graceful);
            }
        }
        if !reloading && !self.has_defect(Defect::QuitLeavesReady) {
            self.publish(EditorState::Stopped, None, false);
        }
    }

    /// Step 4: listening again with a new session.
    pub(crate) fn finish_reload(&self, port: u16) {
        let published = if self.has_defect(Defect::StaleDiscoveryPort) { None } else { Some(port) };
        self.publish(EditorState::Ready, published, !self.has_defect(Defect::SameSessionAfterReload));
        lock(&self.lifecycle).port = port;
        self.stats.reloads.fetch_add(1, Ordering::Relaxed);
    }

    /// The Editor process dies: tool calls in flight abandoned, no shutdown
    /// notification, every connection closed by the "kernel" at once, the
    /// discovery file left saying `ready` for a process that is gone.
    pub(crate) fn crash(&self) {
        {
            let mut domain = lock(&self.domain);
            domain.token.cancel();
            domain.generation += 1;
            domain.token = CancellationToken::new();
        }
        for client in self.clients() {
            client.end(Ending::Close);
        }
        self.hang.end();
        let file = {
            let mut link = lock(&self.lifecycle);
            link.crashed = true;
            self.discovery(&link)
        };
        if let Err(err) = file.write_atomic(&self.project) {
            tracing::error!(%err, "cannot leave the discovery file of the crashed Editor");
        }
        self.stats.crashes.fetch_add(1, Ordering::Relaxed);
    }

    /// A new Editor process has opened the project and listens on `port`:
    /// a new instance and session, an empty journal (Unity's SessionState
    /// died with the process), the scene and console as on disk; settings
    /// (in `UserSettings/`) are kept.
    pub(crate) fn restart(&self, port: u16) {
        *lock(&self.journal) = Journal::default();
        {
            let fresh = Simulation::opened(&self.base, &self.project);
            let mut sim = self.sim();
            let settings = sim.settings.clone();
            *sim = Simulation { settings, ..fresh };
        }
        {
            let mut link = lock(&self.lifecycle);
            link.crashed = false;
            link.instance_id = new_session_id(&mut lock(&self.rng));
        }
        self.publish(EditorState::Ready, Some(port), true);
        self.stats.restarts.fetch_add(1, Ordering::Relaxed);
    }

    /// The current domain's generation and token.
    fn domain(&self) -> (u64, CancellationToken) {
        let domain = lock(&self.domain);
        (domain.generation, domain.token.clone())
    }

    pub fn generation(&self) -> u64 {
        lock(&self.domain).generation
    }

    /// The `GET /state` document.
    pub fn state_json(&self) -> Value {
        let (phase, port, session, instance) = {
            let link = lock(&self.lifecycle);
            let phase = if link.crashed { "crashed" } else { link.phase.as_str() };
            (phase, link.port, link.session_id.clone(), link.instance_id.clone())
        };
        let clients: Vec<Value> = self
            .clients()
            .iter()
            .map(|c| {
                json!({"id": c.id, "name": c.name(), "peer": c.peer.to_string(), "framing": c.framing().as_str(),
                       "connectedAt": iso_timestamp(c.connected_at), "queuedBytes": c.queued_bytes()})
            })
            .collect();
        let sim = self.sim();
        let count = |t| sim.console.iter().filter(|e| e.entry.log_type == t).count();
        json!({
            "state": phase,
            "port": port,
            "sessionId": session,
            "instanceId": instance,
            "hung": self.hang.is_on(),
            "deadListener": self.dead_listener.is_on(),
            "pid": std::process::id(),
            "project": self.project.to_string_lossy(),
            "seed": self.seed,
            "startedAt": iso_timestamp(self.started),
            "reloads": self.stats.reloads.load(Ordering::Relaxed),
            "connections": clients,
            "playMode": {"isPlaying": sim.playing, "isPaused": sim.paused},
            "console": {"total": sim.console.len(), "errors": count(crate::state::LogType::Error),
                        "warnings": count(crate::state::LogType::Warning), "logs": count(crate::state::LogType::Log)},
            "sceneRootCount": sim.scene_roots.len(),
            "journalEntries": lock(&self.journal).len(),
            "settings": serde_json::to_value(&sim.settings).unwrap_or(Value::Null),
        })
    }

    /// Replaces settings (the control API's `POST /settings`); tells clients
    /// when the visible tool set changed.
    pub fn update_settings(&self, patch: Value) -> Result<Settings, String> {
        let (before, after) = {
            let mut sim = self.sim();
            let mut value = serde_json::to_value(&sim.settings).map_err(|e| e.to_string())?;
            crate::state::merge(&mut value, patch);
            let settings: Settings = serde_json::from_value(value).map_err(|e| format!("invalid settings: {e}"))?;
            let before = std::mem::replace(&mut sim.settings, settings.clone());
            (before, settings)
        };
        if before.disabled_tools != after.disabled_tools {
            self.notify_tools_changed();
        }
        Ok(after)
    }

    /// Appends console entries, keeping the console bounded.
    pub fn log(&self, entries: impl IntoIterator<Item = ConsoleEntry>) {
        let mut sim = self.sim();
        sim.console.extend(entries);
        let excess = sim.console.len().saturating_sub(CONSOLE_CAPACITY);
        sim.console.drain(..excess);
    }

    /// Writes a new file under `.uloop/outputs/<kind>/` (protocol §6: large
    /// outputs go to files) named `<stem>_<time>.<extension>`, and returns its
    /// project-relative path. The name is reserved atomically, so concurrent
    /// calls never share a file; the error is a message for the tool's result.
    pub fn write_output(
        &self,
        kind: &str,
        stem: &str,
        extension: &str,
        contents: &[u8],
    ) -> Result<String, ErrorObject> {
        let stamp =
            iso_timestamp(self.now()).replace([':', '.'], "-").replace('T', "_").trim_end_matches('Z').to_owned();
        let dir = self.project.join(".uloop/outputs").join(kind);
        let failed = |rel: &str, err: std::io::Error| {
            ErrorObject::new(ErrorKind::InternalError, format!("Could not write {rel}: {err}"))
        };
        std::fs::create_dir_all(&dir).map_err(|err| failed(&format!(".uloop/outputs/{kind}"), err))?;
        for n in 0.. {
            let suffix = if n == 0 { String::new() } else { format!("_{n}") };
            let name = format!("{stem}_{stamp}{suffix}.{extension}");
            let rel = format!(".uloop/outputs/{kind}/{name}");
            match std::fs::OpenOptions::new().write(true).create_new(true).open(dir.join(&name)) {
                Ok(mut file) => {
                    std::io::Write::write_all(&mut file, contents).map_err(|err| failed(&rel, err))?;
                    return Ok(rel);
                }
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(err) => return Err(failed(&rel, err)),
            }
        }
        unreachable!("an unbounded range always yields")
    }

    // ---- faults ----

    /// Whether `name` is offered (a `toolsChange` fault may have removed it).
    pub fn tool_available(&self, name: &str) -> bool {
        !lock(&self.removed_tools).iter().any(|t| t == name)
    }

    /// Takes tools away (an empty list brings them all back).
    pub(crate) fn set_removed_tools(&self, names: Vec<String>) {
        *lock(&self.removed_tools) = names;
    }

    /// A token that is cancelled when what faults hold must be let go.
    pub(crate) fn hold_token(&self) -> CancellationToken {
        lock(&self.holds).child_token()
    }

    /// `POST /reset`: every fault removed, every tool back, held ports and
    /// zombie listeners released.
    pub fn reset_faults(&self) {
        self.faults.clear();
        self.set_removed_tools(Vec::new());
        let old = std::mem::replace(&mut *lock(&self.holds), CancellationToken::new());
        old.cancel();
    }

    /// Lets go of everything faults hold (on quit).
    pub(crate) fn release_holds(&self) {
        lock(&self.holds).cancel();
    }

    /// The `staleDiscovery` fault: a discovery file saying `ready` for a
    /// process that no longer exists, as a crashed Editor leaves behind.
    pub(crate) fn write_stale_discovery(&self, port: u16) {
        let mut file = self.discovery(&lock(&self.lifecycle));
        file.pid = DEAD_PID;
        file.port = port;
        file.state = Some(EditorState::Ready);
        if let Err(err) = file.write_atomic(&self.project) {
            tracing::error!(%err, "cannot write the stale discovery file");
        }
    }

    // ---- requests ----

    /// Handles one request and sends its response, if any (none when the
    /// domain reloaded under it, as in Unity). `fault` is a request-level
    /// fault that fired on it (stall, slow tool, reload, response size).
    pub(crate) async fn handle_request(self: &Arc<Self>, client: &Arc<Client>, request: Request, fault: Option<Fired>) {
        let method = request.method.clone();
        let (response, after) = self.process(client, request, fault).await;
        if let Some(response) = response {
            client.reply(&method, response);
        }
        // Only once the response is queued: a reload that follows it must
        // not overtake it.
        if let Some(after) = after {
            let editor = self.clone();
            tokio::spawn(async move { tools::after_reply(&editor, after).await });
        }
    }

    async fn process(
        self: &Arc<Self>,
        client: &Arc<Client>,
        request: Request,
        fault: Option<Fired>,
    ) -> (Option<Response>, Option<tools::After>) {
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        self.stats.count_call(&request.method);
        let id = request.id.clone();
        let fail = |error: ErrorObject| (Some(Response::error(Some(id.clone()), error)), None);
        let fault = fault.map(|fired| (fired.fault().clone(), fired));
        // A hung Editor runs nothing until the hang ends (then it does).
        let (generation, _) = self.domain();
        self.unhung().await;
        if self.generation() != generation {
            // It crashed or reloaded meanwhile: this request died with it.
            return (None, None);
        }
        if let Some((Fault::MainThreadStall(crate::faults::MainThreadStall { ms }), fired)) = &fault {
            // The main thread is busy: nothing runs, not even the checks.
            tokio::time::sleep(fired.duration(*ms)).await;
        }
        match &fault {
            Some((
                Fault::Reload(crate::faults::Reload { downtime_ms, move_port, at: ReloadPoint::BeforeRun }),
                fired,
            )) => {
                self.request_reload(
                    ReloadOptions { downtime: downtime_ms.map(|ms| fired.duration(ms)), move_port: *move_port },
                    None,
                );
                return (None, None);
            }
            Some((
                Fault::Crash(crate::faults::Crash { restart_after_ms, move_port, at: ReloadPoint::BeforeRun }),
                fired,
            )) => {
                self.request_crash(crash_options(fired, *restart_after_ms, *move_port), None);
                return (None, None);
            }
            _ => {}
        }

        if self.has_defect(Defect::RejectsExtraFields) {
            if let Some(field) = request.extra.keys().find(|k| !k.starts_with("x-")) {
                return fail(ErrorObject::new(ErrorKind::InvalidRequest, format!("unknown field {field}")));
            }
        }
        if !self.has_defect(Defect::IgnoresExpectations) {
            if let Err(error) = self.check_uloop(&request) {
                return fail(error);
            }
        }
        if self.has_defect(Defect::StrictParams) && request.params.as_ref().is_none_or(Value::is_null) {
            return fail(ErrorObject::new(ErrorKind::InvalidParams, "params must be an object"));
        }
        let params = match request.params_object() {
            Ok(params) => params,
            Err(why) => return fail(ErrorObject::new(ErrorKind::InvalidParams, why)),
        };
        let key = Key { client: client.name(), id: id.clone() };
        let params_value = Value::Object(params.clone());
        let (generation, domain) = self.domain();

        if request.is_resume() && self.resume && !self.has_defect(Defect::ResumeReruns) {
            let lookup = lock(&self.journal).lookup(&key, &request.method, &params_value, generation);
            match lookup {
                Lookup::NotSeen => {}
                Lookup::Completed(response) => {
                    self.stats.resumed.fetch_add(1, Ordering::Relaxed);
                    return (Some(response), None);
                }
                Lookup::Running(mut done) => {
                    self.stats.resumed.fetch_add(1, Ordering::Relaxed);
                    return tokio::select! {
                        _ = domain.cancelled() => (None, None),
                        result = done.wait_for(Option::is_some) => match result {
                            Ok(response) => (response.clone(), None),
                            Err(_) => fail(interrupted(&request.method)),
                        },
                    };
                }
                Lookup::Interrupted => {
                    self.stats.resumed.fetch_add(1, Ordering::Relaxed);
                    return fail(interrupted(&request.method));
                }
                Lookup::Mismatch { method } => {
                    return fail(ErrorObject::new(
                        ErrorKind::InvalidRequest,
                        format!("x-resume: id {id} was used for a different request ({method})"),
                    ));
                }
            }
        }

        let Some(tool) = tools::find(&request.method).filter(|t| self.tool_available(t.name)) else {
            let kind = if self.has_defect(Defect::UnknownToolWrongCode) {
                ErrorKind::InvalidParams
            } else {
                ErrorKind::MethodNotFound
            };
            return fail(
                ErrorObject::new(kind, format!("Unknown tool: {}", request.method))
                    .with_data("method", request.method.clone()),
            );
        };
        if let Err(error) = self.check_allowed(tool) {
            return fail(error);
        }
        if self.has_defect(Defect::NoTimeoutParameter)
            && params.keys().any(|k| k.eq_ignore_ascii_case("TimeoutSeconds"))
        {
            return fail(ErrorObject::new(ErrorKind::InvalidParams, "unknown parameter TimeoutSeconds"));
        }
        let case_sensitive = self.has_defect(Defect::StrictParams);
        if let Some(key) = params.keys().find(|k| case_sensitive && !tool.params.iter().any(|p| p.name == k.as_str())) {
            let known = tool.params.iter().any(|p| p.name.eq_ignore_ascii_case(key));
            if known {
                return fail(ErrorObject::new(ErrorKind::InvalidParams, format!("unknown parameter {key}")));
            }
        }
        let args = match Args::parse(&tool.params, &params) {
            Ok(args) => args,
            Err(_) if self.has_defect(Defect::AcceptsWrongTypes) => {
                Args::parse(&tool.params, &Map::new()).unwrap_or_default()
            }
            Err(error) => return fail(error),
        };

        lock(&self.journal).start(key.clone(), &request.method, params_value, generation);
        self.stats.count_run(tool.name);
        let deadline = editor_link::duration::saturating_seconds(args.float("TimeoutSeconds").max(0.001));
        let call = ToolCall {
            editor: self.clone(),
            client: client.clone(),
            args,
            progress: Progress::new(client.clone(), id.clone()),
        };
        // The tool runs in its own task so that a panic becomes an error reply
        // and a reload or deadline can abort it.
        let slow = match &fault {
            Some((Fault::SlowTool(crate::faults::SlowTool { ms, progress }), fired)) => {
                Some((fired.duration(*ms), *progress))
            }
            _ => None,
        };
        let mut task = tokio::spawn(async move {
            if let Some((extra, progress)) = slow {
                work_for(&call, extra, progress).await;
            }
            tools::run(tool, call).await
        });
        let outcome = tokio::select! {
            _ = domain.cancelled() => {
                task.abort();
                if self.has_defect(Defect::AnswersAfterShutdown) {
                    return fail(interrupted(tool.name));
                }
                return (None, None);
            }
            _ = tokio::time::sleep(deadline) => {
                task.abort();
                Outcome::Fail(ErrorObject::new(
                    ErrorKind::Timeout,
                    format!("Tool '{}' timed out after {} seconds", tool.name, format_seconds(deadline)),
                ))
            }
            joined = &mut task => match joined {
                Ok(outcome) => outcome,
                Err(err) => {
                    tracing::error!(tool = tool.name, %err, "tool panicked");
                    Outcome::Fail(ErrorObject::new(ErrorKind::InternalError, format!("Tool '{}' failed: {err}", tool.name)))
                }
            },
        };

        let pad_to = match &fault {
            Some((Fault::ResponseSize(crate::faults::ResponseSize { bytes }), _)) => Some(*bytes),
            _ => None,
        };
        let ok = |result: Map<String, Value>| {
            let mut response = Response::ok(id.clone(), self.with_ver(result));
            if let Some(bytes) = pad_to {
                pad(&mut response, bytes);
            }
            response
        };
        let (response, mut after) = match outcome {
            Outcome::Reply(result) => (ok(result), None),
            Outcome::Fail(error) => (Response::error(Some(id.clone()), error), None),
            Outcome::ReplyThen(result, after) => (ok(result), Some(after)),
            Outcome::ReloadBeforeReply(result) => {
                // Journaled first, so a resumed request gets it; then the
                // domain reloads and this connection never sees the answer.
                let response = ok(result);
                lock(&self.journal).complete(&key, &response);
                self.request_reload(ReloadOptions::default(), None);
                return (None, None);
            }
        };
        lock(&self.journal).complete(&key, &response);
        if let Some((Fault::Crash(crate::faults::Crash { restart_after_ms, move_port, at }), fired)) = &fault {
            // Ran (and, after the reply, answered) before the process died.
            let options = crash_options(fired, *restart_after_ms, *move_port);
            if *at == ReloadPoint::AfterRun {
                self.request_crash(options, None);
                return (None, None);
            }
            after = Some(tools::After::CrashWith(options));
        }
        if let Some((Fault::Reload(crate::faults::Reload { downtime_ms, move_port, at }), fired)) = &fault {
            let options = ReloadOptions { downtime: downtime_ms.map(|ms| fired.duration(ms)), move_port: *move_port };
            if *at == ReloadPoint::AfterRun {
                self.request_reload(options, None);
                return (None, None);
            }
            after = Some(tools::After::ReloadWith(options));
        }
        (Some(response), after)
    }

    fn with_ver(&self, mut result: Map<String, Value>) -> Value {
        if !self.has_defect(Defect::NoVer) {
            result.insert("Ver".into(), self.package_version().into());
        }
        Value::Object(result)
    }

    /// uLoopMCP's `x-uloop` guard (protocol §3).
    fn check_uloop(&self, request: &Request) -> Result<(), ErrorObject> {
        let Some(uloop) = request.uloop() else { return Ok(()) };
        if let Some(expected) = uloop.get("expectedProjectRoot").and_then(Value::as_str) {
            if !same_path(Path::new(expected), &self.project) {
                return Err(ErrorObject::new(
                    ErrorKind::ProjectMismatch,
                    format!("This Editor has project {}, not {expected}", self.project.display()),
                )
                .with_data("actualProjectRoot", self.project.to_string_lossy().into_owned()));
            }
        }
        if let Some(expected) = uloop.get("expectedServerSessionId").and_then(Value::as_str) {
            let actual = self.session_id();
            if expected != actual {
                return Err(ErrorObject::new(
                    ErrorKind::SessionChanged,
                    format!("The Editor's session changed (now {actual}, expected {expected})"),
                )
                .with_data("actualServerSessionId", actual));
            }
        }
        Ok(())
    }

    /// Disabled tools and the security checker (protocol §3, §6).
    fn check_allowed(&self, tool: &tools::ToolSpec) -> Result<(), ErrorObject> {
        let settings = self.sim().settings.clone();
        if !tool.dev_only && settings.disabled_tools.iter().any(|t| t == tool.name) {
            return Err(ErrorObject::new(
                ErrorKind::ToolDisabled,
                format!("Tool '{}' is disabled in settings", tool.name),
            )
            .with_data("command", tool.name));
        }
        let reason = match tool.gate {
            Gate::None => None,
            Gate::Tests if !settings.enable_tests_execution => {
                Some("Test execution is disabled. Enable 'Enable Tests Execution' in the security settings.")
            }
            Gate::MenuItems if !settings.allow_menu_item_execution => {
                Some("Menu item execution is disabled. Enable 'Allow Menu Item Execution' in the security settings.")
            }
            Gate::DynamicCode if settings.dynamic_code_security_level == crate::state::SecurityLevel::Disabled => {
                Some("Dynamic code execution is disabled (security level Disabled).")
            }
            _ => None,
        };
        match reason {
            Some(reason) => Err(ErrorObject::new(ErrorKind::SecurityBlocked, reason)
                .with_data("command", tool.name)
                .with_data("reason", reason)),
            None => Ok(()),
        }
    }
}

/// A pid no process has: above every platform's pid range (and not a
/// multiple of four, so not a Windows pid either).
pub const DEAD_PID: u32 = i32::MAX as u32;

/// A crash fault's options, its durations scaled.
fn crash_options(fired: &Fired, restart_after_ms: Option<u64>, move_port: bool) -> CrashOptions {
    CrashOptions { restart_after: restart_after_ms.map(|ms| fired.duration(ms)), move_port }
}

/// The `slowTool` fault: the tool works for `extra` before its real work,
/// reporting progress every second unless it is deadlocked.
async fn work_for(call: &ToolCall, extra: Duration, progress: bool) {
    let started = tokio::time::Instant::now();
    let mut tick = 0;
    loop {
        let left = extra.saturating_sub(started.elapsed());
        if left.is_zero() {
            return;
        }
        if progress {
            call.progress.report(tick, None, &format!("Working ({tick} s)"));
        }
        tick += 1;
        tokio::time::sleep(left.min(Duration::from_secs(1))).await;
    }
}

/// The `responseSize` fault: pads the result with a `Padding` string until
/// the response is about `bytes` long.
fn pad(response: &mut Response, bytes: usize) {
    let size = Message::Response(response.clone()).to_bytes().len();
    if let (Some(missing), Ok(Value::Object(result))) = (bytes.checked_sub(size + 14), &mut response.outcome) {
        result.insert("Padding".into(), "x".repeat(missing).into());
    }
}

fn interrupted(method: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorKind::Interrupted,
        format!("'{method}' was interrupted by a domain reload before it completed"),
    )
    .with_data("reason", "DomainReload")
}

fn format_seconds(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs.fract() == 0.0 { format!("{secs:.0}") } else { format!("{secs}") }
}

fn same_path(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    canon(a) == canon(b)
}

/// A session id in GUID form, from the seeded generator.
fn new_session_id(rng: &mut ChaCha8Rng) -> String {
    let bytes: [u8; 16] = rng.random();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// The `DiscoveryInPlace` defect: the file truncated and written in two
/// halves, so a reader can catch it empty or cut.
fn write_in_place(path: &std::path::Path, file: &DiscoveryFile) -> std::io::Result<()> {
    use std::io::Write;
    let bytes = serde_json::to_vec_pretty(file).map_err(std::io::Error::other)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut out = std::fs::File::create(path)?;
    let half = bytes.len() / 2;
    out.write_all(&bytes[..half])?;
    out.flush()?;
    std::thread::sleep(std::time::Duration::from_millis(20));
    out.write_all(&bytes[half..])
}
