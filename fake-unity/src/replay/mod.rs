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

pub mod matching;
pub mod script;

use std::{
    collections::{BTreeMap, HashMap},
    net::SocketAddr,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use editor_link::{
    connection::{Connection, Ending, Options, Outgoing, Received, Sender},
    discovery::{DiscoveryFile, EditorState, PROTOCOL_VERSION, iso_timestamp},
    framing::DEFAULT_RESPONSE_LIMIT,
    jsonrpc::{ErrorKind, ErrorObject, Id, Message, Response},
    transcript::{Payload, Redactor, Substitution, Transcript, numbered},
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde_json::{Value, json};
use tokio::{
    io::AsyncReadExt,
    net::{TcpListener, TcpStream},
    sync::{mpsc, watch},
};
use tokio_util::sync::CancellationToken;

use crate::editor::lock;

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
            commands: commands.clone(),
        }));
        lock(&engine).listening(port);
        let (port_tx, port_rx) = watch::channel(port);
        let stop = CancellationToken::new();
        let done = tokio::spawn(drive(engine.clone(), listener, port_tx, stop.clone(), (commands, commands_rx)));
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
    (commands_tx, mut commands): (mpsc::UnboundedSender<Command>, mpsc::UnboundedReceiver<Command>),
) -> Outcome {
    let mut accepting = CancellationToken::new();
    tokio::spawn(accept_loop(listener, engine.clone(), commands_tx.clone(), accepting.clone()));
    let idle_timeout = lock(&engine).config.idle_timeout;
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
                accepting.cancel();
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
                let (want, avoid) = lock(&engine).next_port(period);
                let listener = match crate::server::bind(want, avoid, false).await {
                    Ok(listener) => listener,
                    Err(err) => {
                        tracing::error!(%err, "cannot listen again");
                        break;
                    }
                };
                let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
                {
                    let mut engine = lock(&engine);
                    engine.away = false;
                    engine.listening(port);
                }
                let _ = port_tx.send(port);
                accepting = CancellationToken::new();
                tokio::spawn(accept_loop(listener, engine.clone(), commands_tx.clone(), accepting.clone()));
            }
        }
    }
    accepting.cancel();
    let engine = lock(&engine);
    for live in engine.live.values() {
        live.sender.end(Ending::Graceful);
    }
    engine.publish(EditorState::Stopped);
    engine.outcome()
}

impl Engine {
    fn scaled(&self, ms: u64) -> Duration {
        let wait = editor_link::duration::saturating_seconds(ms as f64 / 1000.0 / self.config.speed.max(1e-6));
        match self.config.max_gap {
            Some(cap) => wait.min(cap),
            None => wait,
        }
    }

    /// Bound on `port` for the current period: the substitution and the
    /// discovery file follow.
    fn listening(&mut self, port: u16) {
        self.port = port;
        let placeholder =
            self.script.period_port(self.period).and_then(Value::as_str).and_then(|p| numbered(p, "PORT"));
        if let Some(n) = placeholder {
            if self.substitution.ports.len() < n {
                self.substitution.ports.resize(n, 0);
            }
            self.substitution.ports[n - 1] = u64::from(port);
            self.redactor.ports = self.substitution.ports.clone();
        }
        self.publish(EditorState::Ready);
    }

    /// Where to listen in `period`: the same port unless the recording's
    /// connections went elsewhere.
    fn next_port(&self, period: usize) -> (u16, Option<u16>) {
        let before = self.script.period_port(period - 1);
        let now = self.script.period_port(period);
        match (before, now) {
            (Some(a), Some(b)) if a != b => (0, Some(self.port)),
            _ => (self.port, None),
        }
    }

    fn publish(&self, state: EditorState) {
        let Some(project) = &self.config.project else { return };
        let file = DiscoveryFile {
            port: self.port,
            pid: std::process::id(),
            project_path: std::fs::canonicalize(project).unwrap_or(project.clone()).to_string_lossy().into_owned(),
            unity_version: self.script.unity_version.clone(),
            package_version: self.script.package_version.clone(),
            protocol_version: Some(PROTOCOL_VERSION),
            server_session_id: self.substitution.sessions.get(self.period).cloned(),
            state: Some(state),
            updated_at: Some(iso_timestamp(std::time::SystemTime::now())),
        };
        if let Err(err) = file.write_atomic(project) {
            tracing::error!(%err, "cannot write the discovery file");
        }
    }

    /// Every recorded request received (every client frame, in strict mode).
    fn complete(&self) -> bool {
        self.script.conns.iter().enumerate().all(|(c, conn)| {
            conn.expected
                .iter()
                .enumerate()
                .all(|(i, e)| self.used[c][i] || (self.config.mode != MatchMode::Strict && !e.is_request()))
        })
    }

    fn is_background(&self, payload: &Payload) -> bool {
        let Payload::Message(m) = payload else { return false };
        let method = m.get("method").and_then(Value::as_str);
        m.get("id").is_some() && method.is_some_and(|method| self.config.background.iter().any(|b| b == method))
    }

    /// For a background request beyond the recorded ones: the latest
    /// recorded request of that method on the connection this one plays
    /// (or, before any, the earliest), whose answer it gets again.
    fn background_answer(&self, live_no: u64, payload: &Payload) -> Option<(usize, Emission)> {
        if !self.is_background(payload) {
            return None;
        }
        let Payload::Message(received) = payload else { return None };
        let c = self.live.get(&live_no)?.plays?;
        let same = |e: &&Expected| e.message().is_some_and(|m| m.get("method") == received.get("method"));
        let expected = &self.script.conns[c].expected;
        let mut used = expected.iter().enumerate().rev().filter(|(i, _)| self.used[c][*i]).map(|(_, e)| e);
        let pick = used.find(same).or_else(|| expected.iter().find(same))?;
        Some((c, pick.response.clone()?))
    }

    fn answers_ping(&self, payload: &Payload) -> bool {
        let Payload::Message(m) = payload else { return false };
        self.config.answer_pings
            && self.config.mode != MatchMode::Strict
            && m.get("method").and_then(Value::as_str) == Some("ping")
            && m.get("id").is_some_and(|id| Id::from_value(id).ok().flatten().is_some())
    }

    fn outcome(&self) -> Outcome {
        let strict = self.config.mode == MatchMode::Strict;
        let mut unused = Vec::new();
        let mut not_reached = Vec::new();
        let mut background_unused = Vec::new();
        for (c, conn) in self.script.conns.iter().enumerate() {
            for (i, e) in conn.expected.iter().enumerate() {
                if self.used[c][i] || !(strict || e.is_request()) {
                    continue;
                }
                let record = Unused { seq: e.seq, line: e.line, connection: e.conn, summary: e.describe() };
                // After the point where the client left, the recording could not be reached.
                match self.cut_at[c] {
                    Some(cut) if e.seq >= cut => not_reached.push(record),
                    _ if self.is_background(&e.payload) => background_unused.push(record),
                    _ => unused.push(record),
                }
            }
        }
        let ok = self.mismatches.is_empty() && (unused.is_empty() || self.config.allow_unused);
        Outcome {
            requests: self.script.request_count(),
            matched: self.matched,
            connections: self.next_live - 1,
            unused,
            not_reached,
            mismatches: self.mismatches.clone(),
            extra_connections: self.extra_connections,
            pings_answered: self.pings_answered,
            background_repeats: self.background_repeats,
            background_unused,
            ok,
        }
    }

    /// The live form of a recorded message: placeholders filled, recorded
    /// ids replaced by the client's.
    fn live_message(&mut self, mut message: Value, reply_to: Option<&Value>) -> Value {
        self.substitution.now = iso_timestamp(std::time::SystemTime::now());
        self.substitution.fill(&mut message);
        if let Some(id) = reply_to {
            message["id"] = id.clone();
        }
        if let Some(request_id) = message.pointer_mut("/params/requestId") {
            if let Some(live) = self.ids.get(&request_id.to_string()) {
                *request_id = live.clone();
            }
        }
        message
    }

    /// Pairs a received frame with a recorded one: (recorded conn, index), or
    /// the mismatch.
    fn pair(&self, live_no: u64, received: &Payload) -> Pairing {
        let live = &self.live[&live_no];
        let mode = self.config.mode;
        let mut ignore = self.config.ignore.clone();
        // Ids are the client's to choose; how it resends across a reload
        // (`x-resume`) matters only in strict mode.
        ignore.push("id".parse().expect("a valid path"));
        if mode != MatchMode::Strict {
            ignore.push("x-resume".parse().expect("a valid path"));
        }
        let redacted = match received {
            Payload::Message(m) => {
                let mut m = m.clone();
                let mut redactor = self.redactor.clone();
                redactor.redact(&mut m);
                Some(m)
            }
            Payload::Raw(_) => None,
        };
        let is_request =
            redacted.as_ref().is_some_and(|m| m.get("method").is_some() && m.get("id").is_some_and(|id| !id.is_null()));
        let differences = |e: &Expected| -> Vec<Difference> {
            match (&e.payload, &redacted, received) {
                (Payload::Message(r), Some(g), _) => matching::diff(r, g, &ignore),
                (Payload::Raw(r), None, Payload::Raw(g)) if r == g => Vec::new(),
                (r, _, g) => vec![Difference {
                    path: "(root)".into(),
                    recorded: Some(payload_value(r)),
                    received: Some(payload_value(g)),
                }],
            }
        };
        let unused =
            |c: usize| self.script.conns[c].expected.iter().enumerate().filter(move |(i, _)| !self.used[c][*i]);
        // The frame that is due, and where a match may be looked for.
        let plays = live.plays;
        let received_method = redacted.as_ref().and_then(|m| m.get("method")).and_then(Value::as_str);
        let due: Option<(usize, usize)> = plays.and_then(|c| match mode {
            MatchMode::Strict => unused(c).next().map(|(i, _)| (c, i)),
            _ if !is_request => None,
            // Each method in order; methods interleave as the client's own
            // concurrency has them.
            _ => unused(c).find(|(_, e)| e.is_request() && e.method() == received_method).map(|(i, _)| (c, i)),
        });
        if !is_request && mode != MatchMode::Strict {
            // Client notifications may come anywhere: paired when recorded, else let be.
            let found = plays.and_then(|c| {
                unused(c).find(|(_, e)| !e.is_request() && differences(e).is_empty()).map(|(i, _)| (c, i))
            });
            return found.map_or(Pairing::Ignored, |(c, i)| Pairing::Matched(c, i));
        }
        let found = match mode {
            MatchMode::Strict | MatchMode::Ordered => {
                due.filter(|(c, i)| differences(&self.script.conns[*c].expected[*i]).is_empty())
            }
            MatchMode::Key => plays.and_then(|c| {
                unused(c).find(|(_, e)| e.is_request() && differences(e).is_empty()).map(|(i, _)| (c, i))
            }),
            MatchMode::Any => (0..self.script.conns.len()).find_map(|c| {
                unused(c).find(|(_, e)| e.is_request() && differences(e).is_empty()).map(|(i, _)| (c, i))
            }),
        };
        if let Some((c, i)) = found {
            return Pairing::Matched(c, i);
        }
        if live.going_away {
            return Pairing::Held;
        }
        // The report: what was due, the nearest candidates, why.
        let candidate = |c: usize, i: usize| {
            let e = &self.script.conns[c].expected[i];
            Candidate {
                seq: e.seq,
                line: e.line,
                connection: e.conn,
                summary: e.describe(),
                differences: differences(e),
            }
        };
        let mut candidates: Vec<Candidate> = (0..self.script.conns.len())
            .flat_map(|c| unused(c).filter(|(_, e)| e.is_request() == is_request).map(move |(i, _)| (c, i)))
            .map(|(c, i)| candidate(c, i))
            .collect();
        candidates.sort_by_key(|c| {
            let same_method = received_method.is_some() && c.summary.split(' ').next() == received_method;
            (!same_method, c.differences.len(), c.seq)
        });
        candidates.truncate(3);
        let expected = match mode {
            MatchMode::Strict | MatchMode::Ordered => due.map(|(c, i)| candidate(c, i)),
            MatchMode::Key | MatchMode::Any => candidates.first().cloned(),
        };
        let reason = match (&expected, plays) {
            (_, None) => format!(
                "connection {live_no} is not in the recording, which has {} connection(s)",
                self.script.conns.len()
            ),
            (expected, _) => matching::reason(mode, expected.as_ref(), received_method),
        };
        let first_difference = expected.as_ref().and_then(|e| e.differences.first()).map(|d| d.path.clone());
        let mut rerun = self.config.command_line(self.port);
        if let Some(path) = &first_difference {
            if path != "method" && path != "(root)" {
                rerun.push_str(&format!("   (to accept this difference, add --ignore {path})"));
            }
        }
        if matches!(mode, MatchMode::Strict | MatchMode::Ordered)
            && candidates.first().is_some_and(|c| c.differences.is_empty())
        {
            rerun.push_str("   (it is recorded later: --match key accepts another order)");
        }
        Pairing::Mismatch(Box::new(Mismatch {
            connection: live_no,
            recorded_connection: plays.map(|c| self.script.conns[c].conn),
            frame: live.frames,
            received: payload_value(received),
            expected,
            reason,
            first_difference,
            candidates,
            rerun,
            answered_with: match self.config.on_unexpected {
                OnUnexpected::Error => "an error response".into(),
                OnUnexpected::Close => "closing the connection".into(),
            },
        }))
    }
}

fn payload_value(payload: &Payload) -> Value {
    match payload {
        Payload::Message(m) => m.clone(),
        Payload::Raw(bytes) => json!({"raw": String::from_utf8_lossy(bytes)}),
    }
}

async fn accept_loop(
    listener: TcpListener,
    engine: Arc<Mutex<Engine>>,
    commands: mpsc::UnboundedSender<Command>,
    stop: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                tokio::spawn(serve(stream, peer, engine.clone(), commands.clone()));
            }
            Err(err) => {
                tracing::warn!(%err, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn serve(
    stream: TcpStream,
    peer: SocketAddr,
    engine: Arc<Mutex<Engine>>,
    commands: mpsc::UnboundedSender<Command>,
) {
    let Connection { sender, mut receiver, writer } = Connection::tcp(stream, Options::editor(DEFAULT_RESPONSE_LIMIT));
    let (live_no, start) = {
        let mut engine = lock(&engine);
        if engine.away {
            // Between the recorded Editor going away and the listener closing.
            return;
        }
        let plays = (engine.next_live as usize).checked_sub(1).filter(|i| *i < engine.script.conns.len());
        if plays.is_none() {
            // A connection the recording does not have: reported once, closed.
            engine.extra_connections += 1;
            if engine.extra_connections == 1 {
                let (path, port) = (engine.config.path.display().to_string(), engine.port);
                let mismatch = Mismatch {
                    connection: engine.next_live,
                    recorded_connection: None,
                    frame: 0,
                    received: json!(null),
                    expected: None,
                    reason: format!(
                        "connection {} is not in the recording, which has {} connection(s)",
                        engine.next_live,
                        engine.script.conns.len()
                    ),
                    first_difference: None,
                    candidates: Vec::new(),
                    rerun: engine.config.command_line(port),
                    answered_with: "closing the connection".into(),
                };
                eprint!("{}", mismatch.report(&path));
                engine.mismatches.push(mismatch);
            }
            return;
        }
        let live_no = engine.next_live;
        engine.next_live += 1;
        engine.live.insert(live_no, Live { plays, sender: sender.clone(), frames: 0, going_away: false });
        tracing::info!(live = live_no, %peer, plays = ?plays.map(|c| engine.script.conns[c].conn), "client connected");
        (live_no, plays.map(|c| (c, engine.script.conns[c].start.clone())))
    };
    if let Some((conn, emissions)) = start {
        run_emissions(engine.clone(), live_no, conn, emissions, None);
    }
    loop {
        let received = tokio::select! {
            _ = sender.closed() => break,
            received = receiver.recv() => received,
        };
        match received {
            Received::Body(body) => received_frame(&engine, live_no, &body),
            Received::TooLarge { size, .. } => tracing::warn!(size, "a client frame over the limit was dropped"),
            Received::Closed | Received::Lost(_) | Received::Broken(_) => {
                tracing::debug!("client connection ended");
                break;
            }
        }
    }
    // What is queued goes out first (the recorded shutdown notification).
    sender.end(Ending::Graceful);
    let _ = writer.await;
    let (mut read, _) = receiver.into_inner();
    let _ = tokio::time::timeout(Duration::from_millis(100), async {
        let mut sink = [0u8; 4096];
        while matches!(read.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
    lock(&engine).live.remove(&live_no);
    tracing::info!(live = live_no, "client disconnected");
    let _ = commands.send(Command::Check);
}

/// One frame from a live client.
fn received_frame(engine: &Arc<Mutex<Engine>>, live_no: u64, body: &[u8]) {
    let payload = match serde_json::from_slice::<Value>(body) {
        Ok(message) => Payload::Message(message),
        Err(_) => Payload::Raw(body.to_vec()),
    };
    let mut state = lock(engine);
    if let Some(live) = state.live.get_mut(&live_no) {
        live.frames += 1;
    }
    match state.pair(live_no, &payload) {
        Pairing::Matched(c, i) => {
            state.used[c][i] = true;
            let expected = state.script.conns[c].expected[i].clone();
            if expected.is_request() {
                state.matched += 1;
            }
            let live_id = match &payload {
                Payload::Message(m) => m.get("id").cloned().filter(|id| !id.is_null()),
                Payload::Raw(_) => None,
            };
            if let (Some(recorded), Some(live)) = (expected.message().and_then(|m| m.get("id")), &live_id) {
                state.ids.insert(recorded.to_string(), live.clone());
            }
            let mut emissions: Vec<Emission> =
                expected.response.iter().cloned().chain(expected.then.iter().cloned()).collect();
            emissions.sort_by_key(|e| (e.delay_ms, e.seq));
            drop(state);
            run_emissions(engine.clone(), live_no, c, emissions, live_id);
        }
        Pairing::Ignored => {}
        Pairing::Held => {
            tracing::info!(
                live = live_no,
                "a request arrived as the recorded Editor goes away: no answer, as in Unity"
            );
        }
        Pairing::Mismatch(_) if state.background_answer(live_no, &payload).is_some() => {
            let Some((c, mut response)) = state.background_answer(live_no, &payload) else { return };
            // A repeat is not in the recording's order: a client gone
            // before it cuts nothing short.
            response.seq = u64::MAX;
            state.background_repeats += 1;
            let live_id = match &payload {
                Payload::Message(m) => m.get("id").cloned().filter(|id| !id.is_null()),
                Payload::Raw(_) => None,
            };
            tracing::info!(live = live_no, "a background request beyond the recorded ones answered again");
            drop(state);
            run_emissions(engine.clone(), live_no, c, vec![response], live_id);
        }
        Pairing::Mismatch(_) if state.answers_ping(&payload) => {
            let Payload::Message(m) = &payload else { return };
            let Some(id) = Id::from_value(&m["id"]).ok().flatten() else { return };
            let message = m.pointer("/params/Message").and_then(Value::as_str).unwrap_or("");
            let result = json!({"Message": format!("Unity MCP Bridge received: {message}")});
            state.pings_answered += 1;
            tracing::info!(live = live_no, "an unrecorded ping answered");
            if let Some(live) = state.live.get(&live_no) {
                live.sender.send_message(&Message::Response(Response::ok(id, result)), Some("ping"));
            }
        }
        Pairing::Mismatch(mismatch) => {
            let path = state.config.path.display().to_string();
            eprint!("{}", mismatch.report(&path));
            let on_unexpected = state.config.on_unexpected;
            let live = state.live.get(&live_no).map(|l| l.sender.clone());
            state.mismatches.push(*mismatch);
            drop(state);
            let Some(sender) = live else { return };
            match (on_unexpected, &payload) {
                (OnUnexpected::Error, Payload::Message(m)) if m.get("method").is_some() && m.get("id").is_some() => {
                    let id = Id::from_value(&m["id"]).ok().flatten();
                    let error = ErrorObject::new(
                        ErrorKind::InternalError,
                        "fake-unity replay: this request is not in the transcript (see the replay's mismatch report)",
                    );
                    sender.send_message(&Message::Response(Response::error(id, error)), None);
                }
                (OnUnexpected::Error, _) => {}
                (OnUnexpected::Close, _) => sender.end(Ending::Graceful),
            }
        }
    }
}

/// Carries out a matched frame's emissions at their (scaled) delays.
fn run_emissions(
    engine: Arc<Mutex<Engine>>,
    live_no: u64,
    conn: usize,
    emissions: Vec<Emission>,
    reply_to: Option<Value>,
) {
    if emissions.is_empty() {
        return;
    }
    {
        let mut state = lock(&engine);
        state.running += 1;
        let leaves = emissions.iter().any(|e| matches!(e.action, Action::Close { away: Some(_) }));
        if let Some(live) = state.live.get_mut(&live_no).filter(|_| leaves) {
            live.going_away = true;
        }
    }
    tokio::spawn(async move {
        let mut elapsed = 0u64;
        for emission in emissions {
            let wait = lock(&engine).scaled(emission.delay_ms.saturating_sub(elapsed));
            elapsed = emission.delay_ms;
            tokio::time::sleep(wait).await;
            let mut state = lock(&engine);
            let Some(live) = state.live.get(&live_no) else {
                // The client left first: nothing recorded after this can happen.
                let cut = &mut state.cut_at[conn];
                *cut = Some(cut.map_or(emission.seq, |c| c.min(emission.seq)));
                break;
            };
            let sender = live.sender.clone();
            match emission.action {
                Action::Send(Payload::Message(message)) => {
                    let is_response =
                        message.get("method").is_none() && message.get("id").is_some_and(|id| !id.is_null());
                    let reply = if is_response { reply_to.as_ref() } else { None };
                    let message = state.live_message(message, reply);
                    sender.send(Outgoing::body(message.to_string()));
                }
                Action::Send(Payload::Raw(bytes)) => {
                    sender.send(Outgoing::body(bytes));
                }
                Action::Close { away } => {
                    let conn_period = state.script.conns[conn].period;
                    match away.filter(|_| conn_period == state.period && !state.away) {
                        Some(away) => {
                            // No connection is accepted from now on; the
                            // driver closes them all and stops listening.
                            tracing::info!(quit = away.quit, "the recorded Editor goes away");
                            state.away = true;
                            let _ = state.commands.send(Command::Away { away });
                        }
                        None => sender.end(Ending::Graceful),
                    }
                }
            }
        }
        lock(&engine).running -= 1;
    });
}
