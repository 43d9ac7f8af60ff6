//! The simulated Editor, the one name for everything it is: which Editor it
//! plays ([`model`]), what its project holds ([`state`], the fixture
//! file), what it remembers across reloads ([`Simulation`]), its connected
//! clients, its lifecycle (ready, reloading, stopped), the resume journal,
//! the counters, and what faults hold. The tools act on it;
//! [`crate::serving`] serves it (connections, requests, the lifecycle
//! driver, the faults' effects).
//!
//! - [`model`] — the Editor it plays (the package, uLoopMCP 2.1.1, uLoopMCP
//!   3): its dialect, catalogue and wire policies, chosen at start.
//! - [`state`] — the editor state file: scene, console, tests, settings.
//! - [`simulation`] — what the Editor remembers across domain reloads.
//! - [`client`] — one connected client and what it is sent.
//! - [`stats`] — the counters (`GET /stats`).
//! - [`lifecycle`] — reloads, crashes, restarts and the discovery file.
//! - [`main_thread`] — what holds the main thread, as `get-editor-state` says.
//! - [`project_settings`] — what it reads of `ProjectSettings/` (whether
//!   entering play mode reloads the domain).

mod client;
mod lifecycle;
pub mod main_thread;
pub mod model;
pub mod project_settings;
pub mod simulation;
pub mod state;
mod stats;
mod unity_process;
pub use unity_process::leave_crashed_discovery;

pub use client::Client;
pub use stats::Stats;

pub use self::simulation::{ConsoleEntry, Simulation};

use std::{
    collections::BTreeMap,
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
    discovery::{DiscoveryFile, EditorState, PROTOCOL_VERSION, iso_timestamp, unity_path},
    framing::Framing,
    jsonrpc::{ErrorKind, ErrorObject, Message, Notification, Response, notifications},
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use self::{
    model::{MessagePolicy, ReplyFraming},
    state::{EditorStateFile, Settings},
};
use crate::{
    defect::Defect,
    faults::{Faults, FrameKind, Wire},
    journal::Journal,
    stall::Stall,
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
    /// A domain reload; `begun` is told once the Editor is down (its
    /// listener closed, clients told, the discovery file saying
    /// reloading), `done` where it listens again.
    Reload {
        options: ReloadOptions,
        begun: Option<oneshot::Sender<()>>,
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
    /// How long after listening again the tools are registered (and
    /// `list_changed` sent); `None` uses the state's default.
    pub tools_ready_delay: Option<Duration>,
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
    /// What every request must carry as `x-token`: made once per process,
    /// like `instance_id`.
    token: String,
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
    /// The Editor it plays.
    pub model: crate::editor::model::EditorModel,
    pub defect: Option<Defect>,
    pub clock: Clock,
    /// Multiplies every fault duration (a 20-minute compile in a test).
    pub time_scale: f64,
    /// The user's registry of open Editors this Editor enters itself in
    /// (this project's package only); `None`: not entered.
    pub registry: Option<PathBuf>,
    /// Where it tells what it does.
    pub events: crate::events::Events,
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
    /// The Editor it plays: catalogue, errors, framing, discovery, extensions.
    pub model: crate::editor::model::EditorModel,
    pub defect: Option<Defect>,
    pub clock: Clock,
    /// The user's registry of open Editors (`EditorConfig::registry`).
    pub registry: Option<PathBuf>,
    /// Readings of the virtual clock so far.
    ticks: AtomicU64,
    pub stats: Arc<Stats>,
    pub faults: Arc<Faults>,
    /// What it does, as it happens, for whoever watches.
    pub events: crate::events::Events,
    /// Tools taken away by a `toolsChange` fault.
    removed_tools: Mutex<Vec<String>>,
    /// Cancelled to release what faults hold (zombie listeners, held ports)
    /// on `POST /reset` and on quit.
    holds: Mutex<CancellationToken>,
    sim: Mutex<Simulation>,
    lifecycle: Mutex<Lifecycle>,
    clients: Mutex<BTreeMap<u64, Arc<Client>>>,
    pub(crate) journal: Mutex<Journal>,
    domain: Mutex<Domain>,
    rng: Mutex<ChaCha8Rng>,
    commands: mpsc::UnboundedSender<Command>,
    started: SystemTime,
    /// The `hang` fault: nothing read, written, accepted or run.
    pub hang: Arc<Stall>,
    /// The `deadListener` fault: nothing accepted.
    pub dead_listener: Arc<Stall>,
    /// Who waits for the main thread, and what holds it.
    pub main_thread: main_thread::MainThread,
}

pub use editor_link::lock;

impl Editor {
    pub fn new(config: EditorConfig) -> (Arc<Editor>, mpsc::UnboundedReceiver<Command>) {
        let (commands, rx) = mpsc::unbounded_channel();
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let session_id = config.model.discovery.session_id(&new_session_id(&mut rng));
        let instance_id = new_session_id(&mut rng);
        let token = new_token(&mut rng);
        let sim = Simulation::opened(&config.state, &config.project);
        let mut model = config.model;
        if let Some(defect) = config.defect {
            defect.shape(&mut model);
        }
        let events = config.events;
        let editor = Arc::new(Editor {
            serial: Arc::new(tokio::sync::Semaphore::new(1)),
            project: config.project,
            seed: config.seed,
            max_request_bytes: model.framing.limit.unwrap_or(config.max_request_bytes),
            model,
            defect: config.defect,
            clock: config.clock,
            registry: config.registry,
            ticks: AtomicU64::new(0),
            stats: Arc::default(),
            faults: Arc::new(Faults::new(config.seed, config.time_scale).reporting_to(events.clone())),
            events,
            removed_tools: Mutex::new(Vec::new()),
            holds: Mutex::new(CancellationToken::new()),
            sim: Mutex::new(sim),
            lifecycle: Mutex::new(Lifecycle {
                phase: EditorState::Starting,
                port: 0,
                session_id,
                instance_id,
                crashed: false,
                token,
            }),
            clients: Mutex::new(BTreeMap::new()),
            journal: Mutex::new(Journal::default()),
            domain: Mutex::new(Domain { generation: 0, token: CancellationToken::new() }),
            rng: Mutex::new(rng),
            commands,
            started: match config.clock {
                Clock::Real => SystemTime::now(),
                Clock::Virtual => SystemTime::UNIX_EPOCH + Duration::from_secs(VIRTUAL_EPOCH_SECS),
            },
            base: config.state,
            hang: Stall::new("hang"),
            main_thread: main_thread::MainThread::default(),
            dead_listener: Stall::new("dead listener"),
        });
        (editor, rx)
    }

    /// True when this Editor listens on every interface, not only loopback.
    pub fn listens_everywhere(&self) -> bool {
        self.model.listener.interfaces == crate::editor::model::listener::Interfaces::All
    }

    /// True when this Editor breaks `defect`'s rule on purpose (for the
    /// defects that break one tool's behaviour; the rest are policies of
    /// the model).
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

    /// The token this Editor process wants in every request, when it has
    /// the token extension.
    pub fn token(&self) -> Option<String> {
        self.model.extensions.token.then(|| lock(&self.lifecycle).token.clone())
    }

    /// Whether requests must carry the token now (the extension, and the
    /// user has not let clients without one in).
    pub fn token_enforced(&self) -> bool {
        self.model.extensions.token && !self.sim().settings.allow_clients_without_token
    }

    /// Whether entering play mode reloads the domain now, as the project's
    /// Enter Play Mode settings say on disk.
    pub fn entering_play_mode_reloads(&self) -> bool {
        self.has_defect(Defect::IgnoresEnterPlayModeSettings)
            || project_settings::enter_play_mode_reloads_domain(&self.project)
    }

    /// The Editor process has crashed and none has started since.
    pub fn is_crashed(&self) -> bool {
        lock(&self.lifecycle).crashed
    }

    /// Asks the driver to reload the domain; `done` receives where it came back.
    pub fn request_reload(&self, options: ReloadOptions, done: Option<oneshot::Sender<ReloadReport>>) {
        let _ = self.commands.send(Command::Reload { options, begun: None, done });
    }

    /// Asks the driver to reload; the receiver resolves once the Editor is
    /// down (an error when it does not reload: it has crashed or quit).
    pub fn request_reload_begun(&self, options: ReloadOptions) -> oneshot::Receiver<()> {
        let (begun, rx) = oneshot::channel();
        let _ = self.commands.send(Command::Reload { options, begun: Some(begun), done: None });
        rx
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

    /// Counts an accepted connection (the server numbers it: its client id).
    pub(crate) fn count_accepted(&self) {
        self.stats.connections_accepted.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add_client(&self, id: u64, peer: crate::server::Peer, wire: Wire) -> Arc<Client> {
        let client = Arc::new(Client {
            id,
            peer,
            connected_at: self.now(),
            name: Mutex::new("Unknown Client".into()),
            wire,
            stats: self.stats.clone(),
            messages: self.model.messages,
            reply_framing: self.model.framing.replies,
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
}

impl Editor {
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
            "project": unity_path(&self.project),
            "seed": self.seed,
            "startedAt": iso_timestamp(self.started),
            "reloads": self.stats.reloads.load(Ordering::Relaxed),
            "connections": clients,
            "playMode": {"isPlaying": sim.playing, "isPaused": sim.paused},
            "console": {"total": sim.console.len(), "errors": count(crate::editor::state::LogType::Error),
                        "warnings": count(crate::editor::state::LogType::Warning), "logs": count(crate::editor::state::LogType::Log)},
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
            crate::editor::state::merge(&mut value, patch);
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
        // The disk may be slow (issue 34): the runtime's other tasks go on meanwhile.
        editor_link::blocking(|| {
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
        })
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
}

/// A pid no process has: above every platform's pid range (and not a
/// multiple of four, so not a Windows pid either).
pub const DEAD_PID: u32 = i32::MAX as u32;

/// A session id in GUID form, from the seeded generator.
/// 32 random bytes as unpadded base64url: 43 characters.
fn new_token(rng: &mut ChaCha8Rng) -> String {
    use base64::Engine;
    let bytes: [u8; 32] = rng.random();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

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
