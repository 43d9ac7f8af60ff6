//! What opens every connection to the Editor ([`Dialer`]: the link's, its
//! lanes, a watchdog's probe; each numbered, recorded where the link
//! records, each request with an id of the link's), and the handshake with
//! one candidate Editor: connect in a framing, ask `get-version` (is it this
//! project's Editor, which Editor process, what can it do), then, to this
//! project's Editor only, `set-client-name`.
//!
//! uLoopMCP 3 (a local socket or pipe) has no handshake of its own: it gets
//! `get-version` alone, in header framing, carrying `x-uloop` as every
//! request to it does; an Editor of another project refuses it.
//!
//! Framing: header framing first; the legacy newline framing only when the
//! Editor gave a verdict against header framing (it closed the connection
//! or sent something that is not a header). An Editor that says nothing is
//! busy or hung, not old: a timeout changes nothing.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use serde_json::json;
use tokio::sync::{broadcast, oneshot};

use super::{
    EditorInfo, FramingChoice, LinkConfig, LinkEvent,
    socket::{CloseReason, DialError, EditorConnection, ExchangeError, Reply, lock},
    target::Target,
    whereabouts::{self, Place},
};
use editor_link::{
    dialect::Dialect,
    discovery::same_folder,
    framing::Framing,
    jsonrpc::{ErrorKind, Id, Request},
    methods,
    transcript::Recorder,
    version::Version,
};

/// What opens connections to the Editor, for the link and its tasks.
#[derive(Debug)]
pub(super) struct Dialer {
    pub config: LinkConfig,
    /// Which Editor the link is for (a project chosen outside any changes it).
    place: Mutex<Place>,
    recorder: Option<Arc<Recorder>>,
    events: broadcast::Sender<LinkEvent>,
    next_id: AtomicU64,
    next_connection: AtomicU64,
}

/// Why one candidate could not be used.
#[derive(Debug)]
pub(super) enum ConnectError {
    /// The connection could not be opened.
    Dial(DialError),
    /// The connection failed otherwise, or was given up.
    Unreachable(String),
    /// Connected, and the Editor has not answered `get-version`: its main
    /// thread held (a modal dialog, an import), or hung. The handshake is
    /// kept, to go on waiting for.
    Silent(Box<Unanswered>),
    /// Another project's Editor.
    OtherProject(String),
    /// It answered in a way that rules this framing out.
    WrongFraming(String),
    /// It wants a token (extension `token`) this bridge does not have: it
    /// cannot be used, and whether it has this project open cannot be told.
    Unauthorized(String),
}

/// A handshake the Editor has not answered: its connection kept open, its
/// `get-version` still awaited. An Editor whose main thread is held answers
/// nothing until it is free, and a new connection every few seconds would
/// only pile handshakes into it.
#[derive(Debug)]
pub(super) struct Unanswered {
    pub candidate: Target,
    framing: Framing,
    connection: Arc<EditorConnection>,
    reply: oneshot::Receiver<Reply>,
    /// When `get-version` was sent.
    pub since: Instant,
}

impl Unanswered {
    /// `get-version`'s answer, if it comes within `window` more (the
    /// handshake kept when it does not).
    pub(super) async fn answer(&mut self, window: Duration) -> Option<Result<serde_json::Value, ExchangeError>> {
        self.connection.answer_within(methods::GET_VERSION, &mut self.reply, window).await
    }

    /// Gives up on it.
    pub(super) fn close(self) {
        self.connection.close(CloseReason::Stopped);
    }
}

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "connected, but no answer to get-version for {} s: Unity is open, and its main thread is likely blocked (a modal dialog, an import) or Unity is hung",
            self.since.elapsed().as_secs()
        )
    }
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Silent(held) => f.write_str(&held.to_string()),
            ConnectError::Dial(e) => write!(f, "{e}"),
            ConnectError::Unreachable(why)
            | ConnectError::OtherProject(why)
            | ConnectError::WrongFraming(why)
            | ConnectError::Unauthorized(why) => f.write_str(why),
        }
    }
}

impl Dialer {
    pub(super) fn new(config: LinkConfig, recorder: Option<Recorder>, events: broadcast::Sender<LinkEvent>) -> Dialer {
        Dialer {
            place: Mutex::new(config.place()),
            config,
            recorder: recorder.map(Arc::new),
            events,
            next_id: AtomicU64::new(1),
            next_connection: AtomicU64::new(1),
        }
    }

    /// Which Editor the link is for now.
    pub(super) fn place(&self) -> Place {
        lock(&self.place).clone()
    }

    pub(super) fn set_place(&self, place: Place) {
        *lock(&self.place) = place;
    }

    /// Sets `place` unless it changed since it was `seen` (the agent chose
    /// meanwhile); whether it was set.
    pub(super) fn replace_place(&self, seen: &Place, place: Place) -> bool {
        let mut now = lock(&self.place);
        if *now != *seen {
            return false;
        }
        *now = place;
        true
    }

    /// The project whose Editor the link connects to now, if one is known.
    pub(super) fn project(&self) -> Option<std::path::PathBuf> {
        lock(&self.place).project().map(std::path::Path::to_path_buf)
    }

    /// The configuration with the project known now (outside any project,
    /// the one chosen).
    pub(super) fn config_now(&self) -> LinkConfig {
        let mut config = self.config.clone();
        let place = self.place();
        config.locator.project = place.project().map(std::path::Path::to_path_buf);
        if let Place::Anywhere { chosen: Some(whereabouts::Chosen { local: Some(local), .. }) } = place {
            // Reached where it was found (uLoopMCP 3's socket).
            config.endpoint = Some(local);
        }
        config
    }

    /// An id no request of this bridge had: its prefix is unique across
    /// reconnects and bridge restarts (protocol §5).
    pub(super) fn fresh_id(&self) -> Id {
        Id::String(format!("{}-{}", self.config.id_prefix, self.next_id.fetch_add(1, Ordering::Relaxed)))
    }

    /// A connection to `target` in `framing`, recorded, its events told.
    pub(super) async fn open(&self, target: &Target, framing: Framing) -> Result<Arc<EditorConnection>, DialError> {
        let number = self.next_connection.fetch_add(1, Ordering::Relaxed);
        EditorConnection::open(target, framing, number, &self.config, self.recorder.clone(), self.events.clone()).await
    }

    /// A connection of its own, unrecorded, whose events nobody hears (a
    /// watchdog's probe: how many there are is the machine's, not the
    /// session's).
    pub(super) async fn open_quiet(
        &self,
        target: &Target,
        framing: Framing,
    ) -> Result<Arc<EditorConnection>, DialError> {
        let number = self.next_connection.fetch_add(1, Ordering::Relaxed);
        EditorConnection::open(target, framing, number, &self.config, None, broadcast::channel(1).0).await
    }

    /// The framings to try, in order: what the dialect of an Editor known
    /// by where it listens speaks (uLoopMCP 3's socket: header framing
    /// only); otherwise as configured, the last that worked first.
    pub(super) fn framings(&self, target: &Target, last: Option<Framing>) -> Vec<Framing> {
        let dialect = Dialect::speaking(&target.endpoint, &Version::default());
        if dialect.on_project_socket() {
            return dialect.framings.to_vec();
        }
        match self.config.framing {
            FramingChoice::Header => vec![Framing::Header],
            FramingChoice::Newline => vec![Framing::Newline],
            FramingChoice::Auto => match last {
                Some(Framing::Newline) => vec![Framing::Newline, Framing::Header],
                _ => vec![Framing::Header, Framing::Newline],
            },
        }
    }

    /// Connects to one candidate and shakes hands (in the framing that
    /// worked `last`, first); checks it is this project's Editor, and tells
    /// it `client_name`, when the client named itself yet.
    pub(super) async fn connect(
        &self,
        candidate: &Target,
        last: Option<Framing>,
        client_name: Option<&str>,
    ) -> Result<Arc<EditorConnection>, ConnectError> {
        let mut wrong = None;
        for framing in self.framings(candidate, last) {
            match self.connect_with(candidate, framing, client_name).await {
                Err(ConnectError::WrongFraming(why)) => wrong = Some(ConnectError::WrongFraming(why)),
                other => return other,
            }
        }
        Err(wrong.unwrap_or_else(|| ConnectError::Unreachable("no framing to try".into())))
    }

    async fn connect_with(
        &self,
        candidate: &Target,
        framing: Framing,
        client_name: Option<&str>,
    ) -> Result<Arc<EditorConnection>, ConnectError> {
        let connection = self.open(candidate, framing).await.map_err(ConnectError::Dial)?;
        let id = self.fresh_id();
        let (reply, _sent) = connection.request(Request::new(id, methods::GET_VERSION, json!({})), None, true);
        let mut held = Unanswered { candidate: candidate.clone(), framing, connection, reply, since: Instant::now() };
        match held.answer(self.config.connect_timeout).await {
            Some(answered) => self.conclude(held, answered, client_name).await,
            None => Err(ConnectError::Silent(Box::new(held))),
        }
    }

    /// The handshake once `get-version` is answered: is it this project's
    /// Editor, may this bridge use it; then the client named.
    pub(super) async fn conclude(
        &self,
        held: Unanswered,
        answered: Result<serde_json::Value, ExchangeError>,
        client_name: Option<&str>,
    ) -> Result<Arc<EditorConnection>, ConnectError> {
        let Unanswered { candidate, framing, connection, .. } = held;
        let candidate = &candidate;
        match answered {
            Ok(version) => {
                let info = EditorInfo::at(&candidate.endpoint, Version::read(&version));
                if let (Some(project), Some(data_path)) = (self.project(), &info.version.data_path) {
                    if !same_folder(&editor_link::wsl::local_path(data_path), &project.join("Assets")) {
                        connection.close(CloseReason::Stopped);
                        return Err(ConnectError::OtherProject(format!(
                            "that Editor has another project open ({data_path})"
                        )));
                    }
                }
                *lock(&connection.info) = info;
            }
            // An Editor without get-version, or one that refuses it: it
            // speaks this framing; serve it all the same.
            // uLoopMCP 3 always answers get-version (an internal command)
            // unless it refuses the request: this project is not the one it
            // has open, or it cannot tell which it has.
            Err(ExchangeError::Editor(e)) if connection.info().dialect.on_project_socket() => {
                connection.close(CloseReason::Stopped);
                let root = candidate.project_root.as_deref().unwrap_or("");
                return Err(if e.kind() == ErrorKind::ProjectMismatch {
                    ConnectError::OtherProject(format!(
                        "that Editor has another project open: it refused this project's root ({root}) with \"{}\"",
                        e.message
                    ))
                } else {
                    ConnectError::Unreachable(format!("that Editor refused get-version: {e}"))
                });
            }
            Err(ExchangeError::Editor(e)) => {
                if e.kind() == ErrorKind::Unauthorized {
                    connection.close(CloseReason::Stopped);
                    let why = format!(
                        "that Editor wants the token from its project's Library/MCPInstance.json, and {}",
                        match candidate.token {
                            Some(_) => "refused the one sent (give the right one with --token or UNITY_MCP_TOKEN)",
                            None => "none was found (run the bridge in the project, or give --project or --token)",
                        }
                    );
                    tracing::warn!(endpoint = %candidate.endpoint, "{why}");
                    return Err(ConnectError::Unauthorized(why));
                }
                if e.kind() != ErrorKind::MethodNotFound {
                    tracing::warn!(%e, "the Editor answered get-version with an error");
                }
            }
            Err(e @ (ExchangeError::NoAnswer | ExchangeError::Closed(_) | ExchangeError::Unusable(_))) => {
                connection.close(CloseReason::Stopped);
                return Err(ConnectError::WrongFraming(format!("{e} ({framing} framing)")));
            }
        }
        lock(&connection.session_id).clone_from(&candidate.session_id);
        if let Some(name) = client_name {
            self.name_at_connect(&connection, name).await;
        }
        Ok(connection)
    }

    /// Tells the Editor just found the client's name, where its dialect
    /// knows `set-client-name` (uLoopMCP 3 is not sent what it does not
    /// know): after `get-version`, so only this project's Editor is told,
    /// and before any call is sent, so a call is journaled as this
    /// client's. One request at a time: the answers' order, and so a
    /// recorded session, is the same whatever the Editor's scheduling.
    async fn name_at_connect(&self, connection: &EditorConnection, name: &str) {
        if !connection.info().dialect.names_client {
            return;
        }
        let id = self.fresh_id();
        let request = Request::new(id.clone(), methods::SET_CLIENT_NAME, json!({"ClientName": name}));
        let (reply, delivery) = connection.request(request, None, true);
        let _ = connection.answer(&id, methods::SET_CLIENT_NAME, reply, delivery, self.config.connect_timeout).await;
        connection.told(Some(name.to_owned()));
    }
}
