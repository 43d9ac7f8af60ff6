//! The bridge's hold on the Editor (protocol §1–§5, §7): one persistent
//! connection, found through discovery and re-established after every domain
//! reload; pipelined calls matched by id; calls cut off by a reload resumed
//! (`x-resume`) on the same Editor process, sent again when they only read,
//! and reported honestly otherwise; a watchdog for an Editor that goes silent.
//!
//! - [`socket`] — one connection (TCP, Unix socket or named pipe): framing, matching answers to requests,
//!   and how far each request got.
//! - [`call`] — one call, answered once, by its deadline, honestly.
//! - [`lanes`] — a connection per call for an Editor that answers one
//!   request at a time per connection (uLoopMCP), so no call waits behind
//!   another.
//! - [`target`] — where the Editor may be: the ports discovery finds, and
//!   uLoopMCP 3's local socket or pipe (`--endpoint`, or made from the
//!   project), checked before it is trusted.
//! - [`handshake`] — what opens every connection (the [`Dialer`]), and
//!   connecting to one candidate: framing, `get-version` (is it this
//!   project's Editor), `set-client-name`.
//! - [`supervisor`] — the link's task: finding the Editor (discovery),
//!   reconnecting, and following it through reloads.
//! - [`whereabouts`] — which Editor the link is for (a project, a port,
//!   or anywhere: the open Editors decide, never a guess), and what a look
//!   that found nothing can say for certain (not running, none open,
//!   several, refused), so a call is answered at once.
//! - [`open_editors`] — every open Editor of this user, looked for from
//!   outside any project.
//! - [`watchdog`] — a task a connection: noticing an Editor that stopped
//!   answering.
//!
//! A [`Link`] is a handle over what it owns: the supervisor's task (spawned
//! by [`Link::start`]), the lanes, a watchdog on each connection, and the
//! state they share (where the link stands, what it remembers).
//! [`Link::call`] is the one way requests reach the Editor.

mod call;
mod folder_watch;
mod handshake;
mod lanes;
pub mod open_editors;
mod socket;
mod supervisor;
mod target;
mod watchdog;
pub mod whereabouts;

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant, SystemTime},
};

use serde::Serialize;
use tokio::sync::{broadcast, watch};
use tokio_util::sync::CancellationToken;

pub use self::call::{CallError, CallOptions, CutOff, NotSent};
use self::{
    handshake::Dialer,
    socket::{CloseReason, EditorConnection, lock},
};
use self::{
    open_editors::LookOutside,
    whereabouts::{Absence, Place, ProjectFrom, Verdict},
};
use editor_link::{
    dialect::Dialect,
    discovery::{Locator, iso_timestamp},
    endpoint::Endpoint,
    framing::{DEFAULT_RESPONSE_LIMIT, Framing},
    methods,
    transcript::Recorder,
    version::Version,
};

/// Which framing to speak to the Editor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FramingChoice {
    /// Header framing, falling back to newline framing for an Editor that
    /// does not answer it (the seeds' legacy Editors).
    #[default]
    Auto,
    Header,
    Newline,
}

impl std::str::FromStr for FramingChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(FramingChoice::Auto),
            other => other.parse::<Framing>().map(|f| match f {
                Framing::Header => FramingChoice::Header,
                Framing::Newline => FramingChoice::Newline,
            }),
        }
    }
}

/// How the link behaves.
#[derive(Clone, Debug)]
pub struct LinkConfig {
    pub locator: Locator,
    /// `--endpoint`: the one place to reach the Editor (a uLoopMCP 3 socket
    /// or pipe, or a TCP address), instead of finding it.
    pub endpoint: Option<Endpoint>,
    pub framing: FramingChoice,
    /// Largest response accepted (protocol §2: 64 MiB by default).
    pub response_limit: usize,
    /// Limit for connecting and for the handshake.
    pub connect_timeout: Duration,
    /// While calls wait and nothing arrives for this long, ping the Editor.
    pub silence_before_ping: Duration,
    /// A ping not answered within this is a dead connection.
    pub ping_deadline: Duration,
    /// Retry interval while the Editor reloads.
    pub reload_retry: Duration,
    /// Longest retry interval while the Editor is absent.
    pub absent_retry_max: Duration,
    /// Prefix of every request id: unique across reconnects and bridge
    /// restarts (protocol §5); a transcript redacts it to `${RUN}`.
    pub id_prefix: String,
    /// How `locator.project` was given: `--project`, or found from the
    /// working directory.
    pub project_from: ProjectFrom,
    /// Where to look for open Editors outside any project.
    pub look_outside: LookOutside,
}

impl LinkConfig {
    pub fn new(locator: Locator) -> Self {
        LinkConfig {
            locator,
            endpoint: None,
            framing: FramingChoice::Auto,
            response_limit: DEFAULT_RESPONSE_LIMIT,
            connect_timeout: Duration::from_secs(2),
            silence_before_ping: Duration::from_secs(3),
            ping_deadline: Duration::from_secs(3),
            reload_retry: Duration::from_millis(10),
            absent_retry_max: Duration::from_secs(1),
            id_prefix: {
                let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
                format!("b{:x}{:05x}", std::process::id(), nanos & 0xfffff)
            },
            project_from: ProjectFrom::Given,
            look_outside: LookOutside::users(),
        }
    }

    /// Which Editor the link is for, as configured: the project; else the
    /// port or endpoint given; else anywhere (outside every project).
    pub fn place(&self) -> Place {
        match &self.locator.project {
            Some(project) => Place::Project { project: project.clone(), how: self.project_from },
            None if self.endpoint.is_some() || self.locator.explicit_port.is_some() => Place::Pinned,
            None => Place::Anywhere { chosen: None },
        }
    }
}

/// The Editor at the other end of a connection: what it said of itself
/// (`get-version`), and the dialect it speaks, which says how to talk to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditorInfo {
    pub version: Version,
    pub dialect: &'static Dialect,
}

impl EditorInfo {
    /// The Editor reached at `endpoint` that said `version`.
    fn at(endpoint: &Endpoint, version: Version) -> EditorInfo {
        EditorInfo { dialect: Dialect::speaking(endpoint, &version), version }
    }

    /// Its resume journal can take up a call cut off by a reload: its
    /// dialect may keep one, and its `get-version` says it does, and for
    /// which Editor process.
    pub fn can_resume(&self) -> bool {
        self.dialect.resumes && self.version.can_resume()
    }

    /// The Editor process, when it names it: its resume journal belongs to it.
    pub fn instance(&self) -> Option<&str> {
        self.version.editor_instance_id.as_deref()
    }
}

/// An open Editor that accepted the link's connection and has not answered
/// its `get-version`: where, and since when.
#[derive(Clone, Debug)]
pub struct Silence {
    /// How messages name where it listens (`port 8700`).
    pub endpoint: String,
    pub since: Instant,
}

/// The link's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkState {
    /// Looking for the Editor for the first time.
    Searching,
    Connected,
    /// The Editor is reloading its domain; it will be back.
    Reloading,
    /// No Editor answers.
    Absent,
    /// The bridge is shutting down.
    Stopped,
}

/// The last domain reload the link went through.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReloadRecord {
    /// When the Editor announced it (or the connection dropped).
    pub started_at: String,
    /// How long until the link was connected again.
    pub reconnected_after_ms: u64,
}

/// A snapshot of the link, for status reports.
#[derive(Clone, Debug)]
pub struct LinkStatus {
    pub state: LinkState,
    pub port: Option<u16>,
    /// Where the Editor was reached (`tcp://…`, `unix:…`, `pipe:…`).
    pub endpoint: Option<String>,
    pub framing: Option<&'static str>,
    pub session_id: Option<String>,
    pub editor: Option<EditorInfo>,
    pub connected_since: Option<String>,
    pub reloads: u64,
    pub last_reload: Option<ReloadRecord>,
    /// Calls waiting for the Editor now.
    pub calls_in_flight: u64,
    /// What was tried, when not connected.
    pub tried: Vec<String>,
    /// Which Editor the link is for.
    pub place: Place,
    /// What the last look that connected nowhere could say for certain.
    pub absence: Option<Absence>,
    /// Outside any project: the Editors the last look found open.
    pub open_editors: Vec<open_editors::OpenEditor>,
}

/// What the link tells the rest of the bridge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkEvent {
    /// Connected (again): tools may have changed.
    Connected,
    /// The Editor said its tools changed.
    ToolsChanged,
    /// The connection closed.
    Disconnected,
}

/// Why no connection could be had.
#[derive(Debug)]
pub(crate) enum Wait {
    /// The deadline passed; what was tried meanwhile.
    Deadline {
        tried: Vec<String>,
    },
    /// The deadline passed while an open Editor, connected, did not answer
    /// the handshake.
    Unanswered {
        silence: Silence,
    },
    /// The deadline passed with the Editor connected but every connection
    /// the bridge may open to it busy with another call (lanes.rs).
    Busy {
        connections: usize,
    },
    /// A look begun after the call asked found, for certain, nothing to
    /// wait for.
    Absent(Absence),
    Cancelled,
}

/// Where the link stands: one state, from which its status is derived.
#[derive(Clone, Debug)]
enum Phase {
    /// Looking for the Editor for the first time.
    Searching,
    Connected {
        connection: Arc<EditorConnection>,
        since: SystemTime,
    },
    /// The connection closed without the Editor saying it quits (a reload,
    /// a crash): it is expected back, and looked for at the fast pace for
    /// a while.
    Away {
        since: Instant,
        at: SystemTime,
    },
    /// The Editor quit: looked for at the slow pace.
    Absent,
    /// The bridge is shutting down.
    Stopped,
}

/// What the link remembers besides its phase.
#[derive(Debug, Default)]
struct Memory {
    client_name: Option<String>,
    /// The last connection (its port, framing and Editor stay in the status
    /// while the Editor is away; its framing is tried first next time).
    last: Option<Arc<EditorConnection>>,
    /// What was tried, while not connected.
    tried: Vec<String>,
    /// The discovery file says the Editor is reloading.
    discovery_reloading: bool,
    /// A uLoopMCP 3 socket refused as untrusted (logged once).
    refused: Option<String>,
    /// An Editor that accepted the connection and has not answered the
    /// handshake, while the link waits on it.
    silent: Option<Silence>,
    reloads: u64,
    last_reload: Option<ReloadRecord>,
    /// Outside any project: the Editors the last look found open.
    open_editors: Vec<open_editors::OpenEditor>,
}

/// The bridge's link to the Editor: a handle over the task that keeps the
/// connection, the lanes, and what they share.
#[derive(Debug)]
pub struct Link {
    /// Opens connections (the link's, lanes, probes); holds the configuration.
    dialer: Arc<Dialer>,
    phase: watch::Sender<Phase>,
    /// What the last look that connected nowhere could say for certain.
    verdict: watch::Sender<Verdict>,
    /// Wakes the link to look now (a call asks, and wants a fresh verdict).
    look_now: tokio::sync::Notify,
    memory: Mutex<Memory>,
    events: broadcast::Sender<LinkEvent>,
    /// Connections of their own for calls to an Editor that answers one
    /// request at a time per connection.
    lanes: lanes::Lanes,
    stopping: CancellationToken,
}

impl Link {
    /// Starts looking for the Editor, and keeps the connection from then on.
    pub fn start(config: LinkConfig, recorder: Option<Recorder>) -> Arc<Link> {
        let (events, _) = broadcast::channel(64);
        let link = Arc::new(Link {
            dialer: Arc::new(Dialer::new(config, recorder, events.clone())),
            phase: watch::channel(Phase::Searching).0,
            verdict: watch::channel(Verdict { absence: None, looked_at: Instant::now() }).0,
            look_now: tokio::sync::Notify::new(),
            memory: Mutex::new(Memory::default()),
            events,
            lanes: lanes::Lanes::default(),
            stopping: CancellationToken::new(),
        });
        tokio::spawn(supervisor::run(link.clone()));
        link
    }

    /// Stops the link: closes the connection, ends the background task.
    pub fn stop(&self) {
        self.stopping.cancel();
        if let Some(c) = self.current() {
            c.close(CloseReason::Stopped);
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<LinkEvent> {
        self.events.subscribe()
    }

    /// The open connection, if any.
    fn current(&self) -> Option<Arc<EditorConnection>> {
        match &*self.phase.borrow() {
            Phase::Connected { connection, .. } if !connection.closed.is_cancelled() => Some(connection.clone()),
            _ => None,
        }
    }

    pub fn status(&self) -> LinkStatus {
        let phase = self.phase.borrow().clone();
        let memory = lock(&self.memory);
        let state = match &phase {
            Phase::Searching => LinkState::Searching,
            Phase::Connected { .. } => LinkState::Connected,
            Phase::Away { since, .. } if memory.discovery_reloading || since.elapsed() < RELOAD_WINDOW => {
                LinkState::Reloading
            }
            Phase::Away { .. } | Phase::Absent => LinkState::Absent,
            Phase::Stopped => LinkState::Stopped,
        };
        let last = memory.last.as_ref();
        let (connected_since, calls_in_flight, tried) = match &phase {
            Phase::Connected { connection, since } => {
                let waiting = connection.calls_waiting() + self.lanes.busy(connection.number);
                (Some(iso_timestamp(*since)), waiting as u64, Vec::new())
            }
            _ => (None, 0, memory.tried.clone()),
        };
        LinkStatus {
            state,
            port: last.and_then(|c| c.target.port()),
            endpoint: last.map(|c| c.target.endpoint.to_string()),
            framing: last.map(|c| c.framing.as_str()),
            session_id: last.and_then(|c| lock(&c.session_id).clone()),
            editor: last.map(|c| c.info()),
            connected_since,
            reloads: memory.reloads,
            last_reload: memory.last_reload.clone(),
            calls_in_flight,
            tried,
            place: self.dialer.place(),
            absence: match &phase {
                Phase::Connected { .. } => None,
                _ => self.verdict.borrow().absence.clone(),
            },
            open_editors: memory.open_editors.clone(),
        }
    }

    /// Whether the bridge was started outside every project (no project, no
    /// port or endpoint given): the open Editors decide.
    pub fn started_outside_project(&self) -> bool {
        matches!(self.config().place(), Place::Anywhere { .. })
    }

    /// A look begun now that finds, for certain, nothing to wait for (by
    /// `deadline`): why. `None` once connected, or when no look is certain
    /// by then.
    pub async fn absence_by(&self, deadline: Instant) -> Option<Absence> {
        match self.connection(deadline, &CancellationToken::new(), false).await {
            Err(Wait::Absent(absence)) => Some(absence),
            _ => None,
        }
    }

    /// The project whose Editor the link is for now, if one is known.
    pub fn project(&self) -> Option<std::path::PathBuf> {
        self.dialer.project()
    }

    /// Outside any project: makes `project` the one whose Editor the link
    /// is for, for the rest of the session (the agent's choice). Refused in
    /// a project, or at a port given.
    pub fn choose(&self, project: std::path::PathBuf) -> Result<(), String> {
        match self.dialer.place() {
            Place::Anywhere { .. } => {
                let local =
                    lock(&self.memory).open_editors.iter().find(|e| e.project == project).and_then(|e| e.local.clone());
                let chosen = whereabouts::Chosen { project, by: whereabouts::ChosenBy::Agent, local };
                self.dialer.set_place(Place::Anywhere { chosen: Some(chosen) });
                if let Some(c) = self.current() {
                    // The Editor of the project used so far is not the one chosen.
                    c.close(CloseReason::Stopped);
                }
                self.look_now.notify_one();
                Ok(())
            }
            Place::Project { project, .. } => Err(format!(
                "the bridge serves the project {} (its --project or working directory): only that project's Editor is used",
                project.display()
            )),
            Place::Pinned => Err("the bridge was given a port or endpoint: only the Editor there is used".into()),
        }
    }

    pub fn is_connected(&self) -> bool {
        self.current().is_some()
    }

    /// The method that asks whether the Editor answers: its dialect's
    /// probe (`ping`; `get-version` for uLoopMCP 3, which has no `ping`).
    pub fn probe_method(&self) -> &'static str {
        self.current().map_or(methods::PING, |c| c.info().dialect.probe)
    }

    /// An open Editor that accepted the link's connection and has not
    /// answered its handshake, while the link waits on it.
    pub fn silence(&self) -> Option<Silence> {
        lock(&self.memory).silent.clone()
    }

    /// The Editor's self-description, once connected.
    pub fn editor_info(&self) -> Option<EditorInfo> {
        self.current().map(|c| c.info())
    }

    /// The name sent with `set-client-name` on every connect.
    pub fn set_client_name(self: &Arc<Self>, name: &str) {
        {
            // A 2026-07-28 client names itself on every request: Unity is
            // told once, and again on each connect.
            let mut memory = lock(&self.memory);
            if memory.client_name.as_deref() == Some(name) {
                return;
            }
            memory.client_name = Some(name.to_owned());
        }
        if let Some(conn) = self.current() {
            // Told now, so the Editor's window names the client; a call
            // made meanwhile waits for it (Link::call).
            let link = self.clone();
            tokio::spawn(async move { link.name_the_client(&conn, Instant::now() + NAMING_WAIT).await });
        }
    }

    /// Tells `connection` the client's name, if there is one it was not
    /// told: before a call, so the call is journaled as this client's. It
    /// waits for the Editor's answer up to [`NAMING_WAIT`], and never past
    /// `deadline` (the call's own: an Editor that hangs while being named
    /// does not hold a call past its TimeoutSeconds).
    async fn name_the_client(&self, connection: &socket::EditorConnection, deadline: Instant) {
        if !connection.info().dialect.names_client {
            // uLoopMCP 3 has no set-client-name (and no client names).
            return;
        }
        let name = {
            let memory = lock(&self.memory);
            match memory.client_name.as_deref() {
                None => return,
                Some(name) if connection.was_told(name) => return,
                Some(name) => name.to_owned(),
            }
        };
        let limit = deadline.saturating_duration_since(Instant::now()).min(NAMING_WAIT);
        connection.ensure_named(&name, || self.dialer.fresh_id(), limit).await;
    }

    fn config(&self) -> &LinkConfig {
        &self.dialer.config
    }

    /// Waits until connected (through reloads), up to the deadline — on
    /// purpose: through "Unity is not running" too, which Unity opening
    /// ends (not through a choice to make or a refusal).
    pub async fn wait_connected(&self, deadline: Instant, cancel: &CancellationToken) -> Result<(), CallError> {
        let started = Instant::now();
        let waited = self.connection(deadline, cancel, true).await;
        let seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
        match waited {
            Ok(_) => Ok(()),
            Err(Wait::Cancelled) => Err(CallError::Cancelled),
            Err(Wait::Busy { connections }) => Err(CallError::NotSent { seconds, why: NotSent::Busy { connections } }),
            Err(Wait::Deadline { tried }) => Err(CallError::NotSent { seconds, why: NotSent::NoEditor { tried } }),
            Err(Wait::Unanswered { silence }) => {
                Err(CallError::NotSent { seconds, why: NotSent::Unanswered { endpoint: silence.endpoint } })
            }
            Err(Wait::Absent(absence)) => Err(CallError::NotSent { seconds, why: NotSent::Absent(absence) }),
        }
    }
}

/// The longest wait for the Editor's answer to `set-client-name`.
const NAMING_WAIT: Duration = Duration::from_secs(5);

/// After a connection closes, how long the link looks for the Editor at the
/// fast reload pace even when no discovery file says it is reloading
/// (uLoopMCP writes none; big projects take a minute or more to reload).
const RELOAD_WINDOW: Duration = Duration::from_secs(120);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_editor_speaks_the_dialect_of_where_it_was_reached_and_what_it_said() {
        let tcp = Endpoint::Tcp(std::net::SocketAddr::from(([127, 0, 0, 1], 8700)));
        let package = EditorInfo::at(
            &tcp,
            Version::read(&json!({"ProtocolVersion": 1, "EditorInstanceId": "e-1", "Capabilities": ["resume"]})),
        );
        assert!(package.can_resume() && package.dialect.concurrent());
        assert_eq!(package.instance(), Some("e-1"));
        let uloop = EditorInfo::at(&tcp, Version::read(&json!({"UnityVersion": "2022.3.1f1", "Ver": "2.1.1"})));
        assert!(!uloop.can_resume() && !uloop.dialect.concurrent() && uloop.dialect.names_client);
        let socket = Endpoint::Unix("/tmp/uloop/x.sock".into());
        let uloop3 = EditorInfo::at(&socket, Version::default());
        assert!(!uloop3.dialect.names_client && uloop3.dialect.probe == methods::GET_VERSION);
    }

    #[test]
    fn framing_choices_parse() {
        assert_eq!("auto".parse::<FramingChoice>(), Ok(FramingChoice::Auto));
        assert_eq!("newline".parse::<FramingChoice>(), Ok(FramingChoice::Newline));
        assert!("xml".parse::<FramingChoice>().is_err());
    }
}
