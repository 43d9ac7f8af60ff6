//! `fake-unity replay`: plays the Editor side of a transcript to a live
//! client. Requests are matched to recorded ones ([`matching`]); each match
//! sets off what the Editor did after it in the recording ([`script`]) —
//! answers, notifications, closes, reloads — at the recorded delays (scaled
//! by the speed factor, each gap capped). Placeholders are filled in with
//! this run's values, and the client's ids replace the recorded ones.
//!
//! Live connections play the recorded ones in order: the first connection
//! accepted plays recorded connection 1, and so on. A reload in the
//! recording (the shutdown notification, then the Editor closing) is a
//! reload here: the discovery file says `reloading`, nothing listens for the
//! recorded down time, then the Editor listens again — on another port when
//! the recording's next connection went to another port.

mod connection;
mod engine;
pub mod matching;
pub mod script;

use std::{
    collections::{BTreeMap, HashMap},
    future::Future,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use editor_link::{
    connection::{Connection, Ending, Options, Outgoing, Received, Sender},
    discovery::{DiscoveryFile, EditorState, PROTOCOL_VERSION, iso_timestamp},
    framing::DEFAULT_RESPONSE_LIMIT,
    jsonrpc::{ErrorKind, ErrorObject, Id, Message, Response},
    methods,
    redaction::{Redactor, Substitution, numbered},
    transcript::{Payload, Transcript},
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::{
    net::TcpListener,
    sync::{mpsc, watch},
};
use tokio_util::sync::CancellationToken;

use crate::{
    editor::lock,
    server::{Accepted, NextPort, Responder, Server},
};

use self::script::{Action, Away, Emission, Expected};
pub use self::{
    matching::{Candidate, Difference, IgnorePath, MatchMode, Mismatch},
    script::Script,
};

/// What happens to a request the transcript does not have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnUnexpected {
    /// Answer it with a JSON-RPC error saying so.
    #[default]
    Error,
    /// Close the connection.
    Close,
}

/// How to replay.
#[derive(Clone, Debug)]
pub struct ReplayConfig {
    /// The transcript's path, for reports and the re-run command.
    pub path: PathBuf,
    pub transcript: Transcript,
    /// Where to write the discovery file; `${PROJECT}` becomes this (or the
    /// current folder).
    pub project: Option<PathBuf>,
    /// Preferred port (then the next ten); 0 for any.
    pub port: u16,
    pub mode: MatchMode,
    /// Paths never compared (`id` always is not).
    pub ignore: Vec<IgnorePath>,
    /// 2.0 plays twice as fast as recorded.
    pub speed: f64,
    /// No single wait longer than this.
    pub max_gap: Option<Duration>,
    pub on_unexpected: OnUnexpected,
    /// How long to wait for a client to come back while records remain.
    pub idle_timeout: Duration,
    /// Records never used are not a failure.
    pub allow_unused: bool,
    /// Seed of the session ids this run makes up.
    pub seed: u64,
    /// Answer a `ping` the recording does not have, as the Editor would:
    /// clients probe liveness when the machine, not the session, says so.
    /// Off in strict mode.
    pub answer_pings: bool,
    /// Methods the client sends on its own schedule (a tool-list refresh
    /// after `list_changed`): one more than recorded is answered with the
    /// connection's last recorded answer to that method, one fewer is not
    /// a failure. (VCR's playback repeats, for named methods only.)
    pub background: Vec<String>,
}

impl ReplayConfig {
    pub fn new(path: PathBuf, transcript: Transcript) -> Self {
        ReplayConfig {
            path,
            transcript,
            project: None,
            port: 0,
            mode: MatchMode::Ordered,
            ignore: Vec::new(),
            speed: 1.0,
            max_gap: None,
            on_unexpected: OnUnexpected::Error,
            idle_timeout: Duration::from_secs(10),
            allow_unused: false,
            seed: 0,
            answer_pings: true,
            background: Vec::new(),
        }
    }

    /// The command that replays the same way.
    pub fn command_line(&self, port: u16) -> String {
        let mut parts = vec![
            "fake-unity replay".to_owned(),
            quote(&self.path.to_string_lossy()),
            format!("--port {port}"),
            format!("--match {}", self.mode.as_str()),
        ];
        if let Some(project) = &self.project {
            parts.push(format!("--project {}", quote(&project.to_string_lossy())));
        }
        for path in &self.ignore {
            parts.push(format!("--ignore {}", quote(&path.to_string())));
        }
        if self.speed != 1.0 {
            parts.push(format!("--speed {}", self.speed));
        }
        if let Some(gap) = self.max_gap {
            parts.push(format!("--max-gap {}", gap.as_millis()));
        }
        if self.on_unexpected == OnUnexpected::Close {
            parts.push("--on-unexpected close".into());
        }
        for method in &self.background {
            parts.push(format!("--background {}", quote(method)));
        }
        if !self.answer_pings {
            parts.push("--no-answer-pings".into());
        }
        parts.join(" ")
    }
}

fn quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-:=+,".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A recorded client frame that was never received.
#[derive(Clone, Debug, Serialize)]
pub struct Unused {
    pub seq: u64,
    pub line: usize,
    pub connection: u64,
    pub summary: String,
}

/// How a replay went.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub requests: usize,
    pub matched: usize,
    pub connections: u64,
    pub unused: Vec<Unused>,
    /// Recorded after an Editor message the client left before: the replay
    /// could not get there (reported, not a failure).
    pub not_reached: Vec<Unused>,
    pub mismatches: Vec<Mismatch>,
    /// Connections beyond the recorded ones (each closed at once).
    pub extra_connections: u64,
    /// Liveness pings the recording does not have, answered all the same.
    pub pings_answered: u64,
    /// Background requests beyond the recorded ones, answered again.
    pub background_repeats: u64,
    /// Recorded background requests the client did not make (not a failure).
    pub background_unused: Vec<Unused>,
    pub ok: bool,
}

/// Why a replay could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind { port: u16, source: std::io::Error },
}

/// A live connection.
#[derive(Debug)]
struct Live {
    /// Index of the recorded connection it plays, if any.
    plays: Option<usize>,
    /// Its connection's sending half (in the framing the client spoke).
    sender: Sender,
    frames: u64,
    /// The recorded Editor is about to close this connection as it goes
    /// away (reload, quit): requests arriving now get no answer, as in Unity.
    going_away: bool,
}

/// What became of a received frame.
#[derive(Debug)]
enum Pairing {
    /// Expected frame `i` of recorded connection `c`.
    Matched(usize, usize),
    /// A client notification the recording does not have: let be.
    Ignored,
    /// Arrived while the Editor goes away: unanswered, like Unity.
    Held,
    Mismatch(Box<Mismatch>),
}

/// The shared state of a replay.
#[derive(Debug)]
struct Engine {
    config: ReplayConfig,
    script: Script,
    /// used[conn][i]: expected frame i of recorded connection conn was received.
    used: Vec<Vec<bool>>,
    live: BTreeMap<u64, Live>,
    next_live: u64,
    /// The listening period (one more after each reload).
    period: usize,
    port: u16,
    substitution: Substitution,
    redactor: Redactor,
    /// Recorded request id (as JSON text) → the live id.
    ids: HashMap<String, Value>,
    mismatches: Vec<Mismatch>,
    matched: usize,
    /// Emission tasks still running.
    running: usize,
    /// The recorded Editor has gone away (reload, quit): connections made
    /// now are closed at once, as if nothing listened.
    away: bool,
    /// Connections beyond the recorded ones (only the first is reported).
    extra_connections: u64,
    pings_answered: u64,
    background_repeats: u64,
    /// Per recorded connection: the first Editor message the client left
    /// before (what the recording has after it could not happen).
    cut_at: Vec<Option<u64>>,
    commands: mpsc::UnboundedSender<Command>,
}

/// What the driver is asked to do.
#[derive(Debug)]
enum Command {
    /// The Editor goes away (reload or quit) and, if it comes back, after `downtime`.
    Away { away: Away },
    /// Something changed that may end the replay.
    Check,
}

/// A running replay.
#[derive(Debug)]
pub struct Replay {
    engine: Arc<Mutex<Engine>>,
    port: watch::Receiver<u16>,
    done: tokio::task::JoinHandle<Outcome>,
    stop: CancellationToken,
}

impl Replay {
    /// Listens and starts playing.
    pub async fn start(config: ReplayConfig) -> Result<Replay, ReplayError> {
        let script = Script::from_transcript(&config.transcript);
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let sessions: Vec<String> = (0..script.session_count.max(script.conns.len()).max(1))
            .map(|_| {
                let bytes: [u8; 16] = rng.random();
                let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
            })
            .collect();
        let project_text = config
            .project
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .map(|p| std::fs::canonicalize(&p).unwrap_or(p));
        let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")).map(PathBuf::from);
        let user = std::env::var("USER").or_else(|_| std::env::var("USERNAME")).ok();
        let mut redactor = Redactor::with_values(project_text.as_deref(), home.as_deref(), user.as_deref());
        redactor.sessions = sessions.clone();
        redactor.pids = vec![u64::from(std::process::id())];
        let substitution = Substitution {
            project: project_text.as_ref().map(|p| p.to_string_lossy().into_owned()),
            home: home.map(|h| h.to_string_lossy().into_owned()),
            user,
            sessions,
            ports: Vec::new(),
            pids: vec![u64::from(std::process::id())],
            now: String::new(),
        };
        let listener = crate::server::bind(config.port, None, false)
            .await
            .map_err(|source| ReplayError::Bind { port: config.port, source })?;
        let port = listener.local_addr().map_err(|source| ReplayError::Bind { port: config.port, source })?.port();
        let used = script.conns.iter().map(|c| vec![false; c.expected.len()]).collect();
        let cut_at = vec![None; script.conns.len()];
        let (commands, commands_rx) = mpsc::unbounded_channel();
        let engine = Arc::new(Mutex::new(Engine {
            config,
            script,
            used,
            live: BTreeMap::new(),
            next_live: 1,
            period: 0,
            port,
            substitution,
            redactor,
            ids: HashMap::new(),
            mismatches: Vec::new(),
            matched: 0,
            running: 0,
            away: false,
            extra_connections: 0,
            pings_answered: 0,
            background_repeats: 0,
            cut_at,
            commands,
        }));
        lock(&engine).listening(port);
        let (port_tx, port_rx) = watch::channel(port);
        let stop = CancellationToken::new();
        let done = tokio::spawn(drive(engine.clone(), listener, port_tx, stop.clone(), commands_rx));
        Ok(Replay { engine, port: port_rx, done, stop })
    }

    /// The port it listens on now.
    pub fn port(&self) -> u16 {
        *self.port.borrow()
    }

    pub fn requests(&self) -> usize {
        lock(&self.engine).script.request_count()
    }

    /// Cancelling it stops the replay early (a signal); the outcome counts
    /// what was left unused.
    pub fn stopper(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Waits until the replay ends: every request used and the client gone,
    /// or the client gone for the idle timeout, or [`Replay::stop`].
    pub async fn finished(self) -> Outcome {
        match self.done.await {
            Ok(outcome) => outcome,
            Err(err) => {
                tracing::error!(%err, "the replay failed");
                lock(&self.engine).outcome()
            }
        }
    }
}

async fn drive(
    engine: Arc<Mutex<Engine>>,
    listener: TcpListener,
    port_tx: watch::Sender<u16>,
    stop: CancellationToken,
    mut commands: mpsc::UnboundedReceiver<Command>,
) -> Outcome {
    let (preferred, idle_timeout) = {
        let engine = lock(&engine);
        (engine.config.port, engine.config.idle_timeout)
    };
    let mut server = Server::start(engine.clone(), listener, preferred, false);
    let mut idle_since: Option<tokio::time::Instant> = None;
    loop {
        let command = tokio::select! {
            _ = stop.cancelled() => break,
            command = commands.recv() => command,
            _ = tokio::time::sleep(Duration::from_millis(100)) => Some(Command::Check),
        };
        match command {
            None => break,
            Some(Command::Check) => {
                let (complete, idle) = {
                    let engine = lock(&engine);
                    (engine.complete(), engine.live.is_empty() && engine.running == 0)
                };
                if idle && complete && lock(&engine).next_live > 1 {
                    break;
                }
                match (idle && lock(&engine).next_live > 1, idle_since) {
                    (true, None) => idle_since = Some(tokio::time::Instant::now()),
                    (true, Some(since)) if since.elapsed() >= idle_timeout => {
                        tracing::warn!(?idle_timeout, "no client for the idle timeout; stopping");
                        break;
                    }
                    (false, _) => idle_since = None,
                    _ => {}
                }
            }
            Some(Command::Away { away }) => {
                drop(server.stop_accepting().await);
                let period = {
                    let mut engine = lock(&engine);
                    for live in engine.live.values() {
                        live.sender.end(Ending::Graceful);
                    }
                    engine.period += 1;
                    engine.period
                };
                let state = if away.quit { EditorState::Stopped } else { EditorState::Reloading };
                lock(&engine).publish(state);
                let Some(downtime) = away.downtime_ms else {
                    tracing::info!("the recorded Editor never came back");
                    continue;
                };
                let wait = lock(&engine).scaled(downtime);
                tracing::info!(?wait, quit = away.quit, "the Editor is away");
                tokio::time::sleep(wait).await;
                let next = lock(&engine).next_port(period);
                let listener = match server.rebind(next).await {
                    Ok(listener) => listener,
                    Err(err) => {
                        tracing::error!(%err, "cannot listen again");
                        break;
                    }
                };
                server.listen(listener);
                {
                    let mut engine = lock(&engine);
                    engine.away = false;
                    engine.listening(server.port());
                }
                let _ = port_tx.send(server.port());
            }
        }
    }
    drop(server.stop_accepting().await);
    let engine = lock(&engine);
    for live in engine.live.values() {
        live.sender.end(Ending::Graceful);
    }
    engine.publish(EditorState::Stopped);
    engine.outcome()
}
