//! `fake-unity`: a simulated Unity Editor that speaks the editor link
//! (`docs/editor-link-protocol.md`) exactly, answered from a simulated editor state,
//! so the bridge, the conformance suite and the benchmarks need no Unity.
//!
//! Map of the modules:
//!
//! - [`editor`] — the Editor: which one it plays ([`editor::model`]), its
//!   project's state file ([`editor::state`]), what it remembers across
//!   reloads ([`editor::simulation`]), clients, lifecycle, journal, counters.
//! - [`params`] — schema-driven tool parameters: one declaration gives the
//!   `get-tool-details` schema and the validation.
//! - [`tools`] — the tool catalogue of protocol §6, one file per area.
//! - [`serving`] — the Editor at work: the lifecycle driver, connections,
//!   requests, and the one place the faults' effects are carried out.
//! - [`journal`] — the resume journal (`x-resume`, protocol §5).
//! - [`transport`] — what a server listens on: a TCP port, or uLoopMCP 3's
//!   Unix domain socket or named pipe.
//! - [`server`] — the one server of everything that listens: binding, the
//!   accept loop, connection tracking, listening again; each listener's
//!   behaviour is a [`server::Responder`] (the Editor, a replay, the proxy,
//!   the recorder).
//! - [`faults`] — fault rules: what they match, what they do, their counters.
//! - [`stall`] — conditions that hold the whole Editor: a hang, a dead listener.
//! - [`scenario`] — scenario files: state, faults, timeline, exercise.
//! - [`record`] — a transparent proxy that records the editor link.
//! - [`proxy`] — the wire faults in front of any Editor (`fake-unity proxy`).
//! - [`replay`] — plays the Editor side of a transcript to a live client.
//! - [`control`] — the HTTP control API and its client.
//! - [`defect`] — deliberate protocol defects, to prove conformance checks fail.
//! - [`cli`] — the command line (`serve`, `replay`, `record`, `defects`).
//!
//! [`FakeUnity::start`] runs one fake Editor in-process; the `fake-unity`
//! binary wraps it for the command line.

pub mod cli;
pub mod control;
pub mod defect;
pub mod editor;
pub mod events;
pub mod faults;
pub mod journal;
pub mod params;
pub mod proxy;
pub mod record;
pub mod replay;
pub mod scenario;
pub mod server;
pub mod serving;
pub mod silent_package;
pub mod stall;
pub mod tools;
pub mod transport;

use std::{
    net::{Ipv4Addr, SocketAddr},
    path::PathBuf,
    sync::Arc,
    time::SystemTime,
};

use editor_link::{discovery::EditorState, endpoint::Endpoint, framing::DEFAULT_REQUEST_LIMIT};
use tokio::{
    sync::{oneshot, watch},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;

pub use crate::{
    control::ControlClient,
    defect::Defect,
    editor::{
        Clock, CrashOptions, Editor, ReloadOptions, ReloadReport,
        model::{EditorKind, EditorModel},
        state::EditorStateFile,
    },
    faults::{Expected, Fault, FaultError, FaultGuard, FrameKind, RuleSpec, Trigger},
    scenario::Scenario,
};

/// The default editor state, modelling `fixtures/unity-project`; embedded so
/// the binary works from anywhere.
pub const DEFAULT_STATE_JSON: &str = include_str!("../../fixtures/editor-states/default.json");

/// The default editor state, parsed.
pub fn default_state() -> EditorStateFile {
    // Checked by a unit test; the file is part of this crate's source.
    let state: EditorStateFile = serde_json::from_str(DEFAULT_STATE_JSON).expect("embedded default state is valid");
    state
}

/// Copies a project folder (the fake writes into the project it serves, so
/// tests and benchmarks serve a copy of `fixtures/unity-project`).
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// How to start a fake Editor.
#[derive(Clone, Debug)]
pub struct Config {
    /// The Unity project it pretends to have open (the discovery file is
    /// written there, outputs go under `.uloop/outputs/`).
    pub project: PathBuf,
    pub state: EditorStateFile,
    /// Preferred editor-link port (then the next ten); 0 for any free port.
    pub port: u16,
    /// Control API port; 0 for any free port.
    pub control_port: u16,
    /// Seed of every random choice; `None` picks one (and reports it).
    pub seed: Option<u64>,
    /// Largest request frame accepted, bytes.
    pub max_request_bytes: usize,
    /// The Editor it plays (`serve --editor`).
    pub editor: EditorKind,
    /// A protocol rule to break on purpose.
    pub defect: Option<Defect>,
    /// Keep a resume journal and advertise `resume` (protocol §5). Without
    /// it the fake behaves like uLoopMCP: `x-resume` is ignored and a resent
    /// request runs again.
    pub resume: bool,
    /// Real or virtual time (for byte-identical runs).
    pub clock: editor::Clock,
    /// Faults, timeline and start delay (its `state` and `seed` are the
    /// caller's to apply to the fields above).
    pub scenario: Scenario,
    /// Multiplies every fault and timeline duration.
    pub time_scale: f64,
    /// Where an Editor that listens on a local socket (uLoopMCP 3) listens
    /// instead of the socket or pipe its project names
    /// (`editor_link::endpoint::uloop3_endpoint`): tests give one in a
    /// temporary folder so that they never meet in `/tmp/uloop`. Ignored by
    /// the Editors that listen on a TCP port.
    pub endpoint: Option<Endpoint>,
    /// The user's registry of open Editors to enter this Editor in
    /// (`editor_link::registry`; the package only). `None` here, so tests
    /// never meet there; `serve` enters the user's own unless told not to.
    pub registry: Option<PathBuf>,
    /// Where it tells what it does (`events`): a watcher subscribed before
    /// the start sees it all, across restarts that reuse the same one.
    pub events: events::Events,
}

impl Config {
    /// Defaults for tests: the embedded state, any free ports.
    pub fn new(project: impl Into<PathBuf>) -> Self {
        Config {
            project: project.into(),
            state: default_state(),
            port: 0,
            control_port: 0,
            seed: None,
            max_request_bytes: DEFAULT_REQUEST_LIMIT,
            editor: EditorKind::Package,
            defect: None,
            resume: true,
            clock: editor::Clock::Real,
            scenario: Scenario::default(),
            time_scale: 1.0,
            endpoint: None,
            registry: None,
            events: events::Events::default(),
        }
    }
}

/// Why a fake Editor could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("the project folder {path} does not exist or is not a folder")]
    NoProject { path: PathBuf },
    #[error("cannot listen on 127.0.0.1:{port} or the {} ports after it: {source}", server::FALLBACK_PORTS)]
    Bind { port: u16, source: std::io::Error },
    #[error("cannot listen on {endpoint}: {source}")]
    BindLocal { endpoint: Endpoint, source: std::io::Error },
    #[error("cannot find the endpoint of project {path}: {source}")]
    NoEndpoint { path: PathBuf, source: std::io::Error },
    #[error("cannot listen for the control API on 127.0.0.1:{port}: {source}")]
    ControlBind { port: u16, source: std::io::Error },
    #[error(transparent)]
    Fault(#[from] FaultError),
    #[error("invalid scenario settings: {0}")]
    Settings(String),
    #[error("cannot make the project look open in Unity: {source}")]
    Silent { source: std::io::Error },
}

/// Whether the Editor listens yet (it may start late: `startDelayMs`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listening {
    NotYet,
    /// On a TCP port.
    Port(u16),
    /// On a local socket (uLoopMCP 3).
    Local(Endpoint),
    Failed(String),
}

/// A running fake Editor.
#[derive(Debug)]
pub struct FakeUnity {
    editor: Arc<Editor>,
    /// The local socket it listens on (`None`: a TCP port).
    local: Option<Endpoint>,
    listening: watch::Receiver<Listening>,
    control_addr: SocketAddr,
    driver: JoinHandle<()>,
    control: JoinHandle<()>,
    control_stop: CancellationToken,
}

impl FakeUnity {
    /// Binds, writes the discovery file and starts serving — at once, or
    /// after the scenario's start delay (the control API answers meanwhile).
    pub async fn start(config: Config) -> Result<FakeUnity, StartError> {
        let project = std::fs::canonicalize(&config.project)
            .ok()
            .filter(|p| p.is_dir())
            .ok_or_else(|| StartError::NoProject { path: config.project.clone() })?;
        let seed = config.seed.unwrap_or_else(|| {
            let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
            nanos ^ u64::from(std::process::id()).rotate_left(32)
        });
        let (editor, commands) = Editor::new(editor::EditorConfig {
            project,
            state: config.state,
            seed,
            max_request_bytes: config.max_request_bytes,
            model: EditorModel::of(config.editor, config.resume),
            defect: config.defect,
            clock: config.clock,
            time_scale: config.time_scale,
            registry: config.registry,
            events: config.events,
        });
        let scenario = config.scenario;
        if let Some(patch) = scenario.settings {
            editor.update_settings(patch).map_err(StartError::Settings)?;
        }
        editor.faults.add(scenario.faults)?;
        serving::effects::at_lifecycle(&editor, Trigger::Start, serving::effects::Port::Preferred(config.port)).await;
        // Unity opens the project before anything listens (the start delay
        // is its start-up); a silent package's Unity writes its own below.
        editor.unity_opened();
        let delay = match scenario.silent_package {
            Some(why) => {
                silent_package::open_silently(&editor.project, why, &editor.base.editor.unity_version)
                    .map_err(|source| StartError::Silent { source })?;
                tracing::info!(?why, "Unity is open and its package never answers");
                // Never listens: a century.
                std::time::Duration::from_secs(100 * 365 * 24 * 3600)
            }
            None => scenario::start_delay(&editor, scenario.start_delay_ms),
        };
        let local = match editor.model.listener.transport {
            editor::model::listener::Transport::TcpPort => None,
            editor::model::listener::Transport::ProjectSocket => Some(match config.endpoint {
                Some(endpoint) => endpoint,
                None => editor_link::endpoint::canonical_project_root(&editor.project)
                    .map(|root| editor_link::endpoint::uloop3_endpoint(&root))
                    .map_err(|source| StartError::NoEndpoint { path: editor.project.clone(), source })?,
            }),
        };
        let listener =
            if delay.is_zero() { Some(bind_editor(&editor, config.port, local.as_ref()).await?) } else { None };
        let control_listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, config.control_port))
            .await
            .map_err(|source| StartError::ControlBind { port: config.control_port, source })?;
        let control_addr = control_listener
            .local_addr()
            .map_err(|source| StartError::ControlBind { port: config.control_port, source })?;
        let control_stop = CancellationToken::new();
        let stop = control_stop.clone();
        let router = control::router(editor.clone());
        let control = tokio::spawn(async move {
            let serve = axum::serve(control_listener, router).with_graceful_shutdown(stop.cancelled_owned());
            if let Err(err) = serve.await {
                tracing::error!(%err, "control API stopped");
            }
        });
        let (listening_tx, listening) = watch::channel(Listening::NotYet);
        let preferred = config.port;
        let timeline = scenario.timeline;
        let driving = editor.clone();
        let local_endpoint = local.clone();
        let driver = tokio::spawn(async move {
            let listener = match listener {
                Some(listener) => listener,
                None => {
                    tracing::info!(?delay, "the Editor is not open yet");
                    tokio::time::sleep(delay).await;
                    match bind_editor(&driving, preferred, local_endpoint.as_ref()).await {
                        Ok(listener) => listener,
                        Err(err) => {
                            tracing::error!(%err, "cannot listen after the start delay");
                            listening_tx.send_replace(Listening::Failed(err.to_string()));
                            return;
                        }
                    }
                }
            };
            let port = listener.port();
            driving.listening(port);
            listening_tx.send_replace(match local_endpoint {
                Some(endpoint) => Listening::Local(endpoint),
                None => Listening::Port(port),
            });
            scenario::play_timeline(&driving, timeline);
            serving::driver::drive(driving, listener, preferred, commands).await;
        });
        let mut fake = FakeUnity { editor, local, listening, control_addr, driver, control, control_stop };
        if delay.is_zero() {
            fake.listening().await?;
        }
        Ok(fake)
    }

    /// Waits until the Editor listens (after a start delay); its port (0
    /// on a local socket: see [`FakeUnity::endpoint`]).
    pub async fn listening(&mut self) -> Result<u16, StartError> {
        let state = self.listening.wait_for(|l| *l != Listening::NotYet).await.map(|l| l.clone());
        match state {
            Ok(Listening::Port(port)) => Ok(port),
            Ok(Listening::Local(_)) => Ok(0),
            Ok(Listening::Failed(message)) => {
                Err(StartError::Bind { port: 0, source: std::io::Error::new(std::io::ErrorKind::AddrInUse, message) })
            }
            _ => Err(StartError::Bind {
                port: 0,
                source: std::io::Error::other("the Editor stopped before it listened"),
            }),
        }
    }

    /// The editor-link port it listens on now (it moves on some reloads; 0
    /// before it first listens).
    pub fn port(&self) -> u16 {
        self.editor.port()
    }

    /// Whether the Editor listens yet (not during a start delay).
    pub fn is_listening(&self) -> bool {
        matches!(*self.listening.borrow(), Listening::Port(_) | Listening::Local(_))
    }

    /// Where the Editor listens: its local socket (uLoopMCP 3; the same
    /// path across reloads, absent while one runs), or `tcp://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> Endpoint {
        match &self.local {
            Some(endpoint) => endpoint.clone(),
            None => Endpoint::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, self.port()))),
        }
    }

    /// Installs a fault rule for as long as the guard lives; dropping the
    /// guard checks that the rule fired (at least once, or as many times as
    /// [`FaultGuard::expect`] says), as wiremock's mocks check their calls.
    pub fn add_fault(&self, spec: RuleSpec) -> Result<FaultGuard, FaultError> {
        FaultGuard::install(&self.editor.faults, spec)
    }

    pub fn control_addr(&self) -> SocketAddr {
        self.control_addr
    }

    /// `http://127.0.0.1:N`.
    pub fn control_url(&self) -> String {
        format!("http://{}", self.control_addr)
    }

    pub fn control(&self) -> ControlClient {
        ControlClient::new(self.control_addr)
    }

    pub fn editor(&self) -> &Arc<Editor> {
        &self.editor
    }

    pub fn seed(&self) -> u64 {
        self.editor.seed
    }

    /// Reloads the domain and waits until the Editor listens again.
    pub async fn reload(&self, options: ReloadOptions) -> Option<ReloadReport> {
        let (tx, rx) = oneshot::channel();
        self.editor.request_reload(options, Some(tx));
        rx.await.ok()
    }

    /// Crashes the Editor process; with `restart_after`, waits until a new
    /// one listens and says where (without, returns at once: see
    /// [`FakeUnity::restart`]).
    pub async fn crash(&self, options: CrashOptions) -> Option<ReloadReport> {
        let (tx, rx) = oneshot::channel();
        let restarts = options.restart_after.is_some();
        self.editor.request_crash(options, Some(tx));
        if restarts { rx.await.ok() } else { None }
    }

    /// Starts a new Editor process after a crash; where it listens.
    pub async fn restart(&self, move_port: bool) -> Option<ReloadReport> {
        let (tx, rx) = oneshot::channel();
        self.editor.request_restart(move_port, Some(tx));
        rx.await.ok()
    }

    /// Hangs the whole Editor for `duration` (or until [`FakeUnity::end_hang`]).
    pub fn hang(&self, duration: Option<std::time::Duration>) {
        self.editor.hang.start(&self.editor.faults, duration, None);
    }

    pub fn end_hang(&self) {
        self.editor.hang.end();
    }

    /// Quits the Editor (shutdown notification, sockets closed, discovery
    /// `stopped`) and stops the control API.
    pub async fn quit(self) {
        let (tx, rx) = oneshot::channel();
        self.editor.request_quit(Some(tx));
        let _ = rx.await;
        self.wait().await;
    }

    /// Waits until the Editor quits (through `POST /quit`, say).
    pub async fn wait(mut self) {
        let _ = (&mut self.driver).await;
        self.control_stop.cancel();
        let _ = (&mut self.control).await;
    }

    /// True once the Editor has quit.
    pub fn has_quit(&self) -> bool {
        self.driver.is_finished() || self.editor.phase() == EditorState::Stopped
    }
}

/// Binds the Editor's listener: its project's local socket (`local`), or a
/// TCP port from `port` on. uLoopMCP 3 writes `Temp/serverstarting.lock`
/// first ([`Editor::starting_server`]).
async fn bind_editor(editor: &Editor, port: u16, local: Option<&Endpoint>) -> Result<server::Listener, StartError> {
    editor.starting_server();
    match local {
        Some(endpoint) => server::Listener::bind_local(endpoint)
            .map_err(|source| StartError::BindLocal { endpoint: endpoint.clone(), source }),
        None => server::bind(port, None, editor.listens_everywhere())
            .await
            .map(server::Listener::from)
            .map_err(|source| StartError::Bind { port, source }),
    }
}

impl Drop for FakeUnity {
    fn drop(&mut self) {
        self.driver.abort();
        self.control.abort();
        // The Editor's process is gone: its files say so (in-process, the
        // process lives on, so Unity's file is taken away instead).
        self.editor.unity_closed();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn embedded_state_is_valid() {
        let state = super::default_state();
        state.validate().unwrap();
        assert_eq!(state.format_version, super::editor::state::FORMAT_VERSION);
    }
}
