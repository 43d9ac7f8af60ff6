//! `fake-unity proxy`: the wire faults in front of any Editor — the mono
//! host, a real Unity, a uLoopMCP Editor. Clients connect to the proxy; each
//! connection is relayed, frame by frame, to a connection of its own to the
//! upstream Editor, through the same fault rules, scenario files and control
//! API as the simulated Editor's: `toEditor` rules act on what the client
//! sends before it is forwarded, `fromEditor` rules on what the Editor sends
//! before it reaches the client, `connect` rules on each accepted
//! connection, and a `hang` holds everything the proxy relays.
//!
//! Only wire faults run here: an Editor fault (a slow tool, a reload, a
//! crash …) changes what the Editor does, which a proxy cannot; a rule or
//! scenario that names one is refused, saying so.

use std::{
    collections::HashMap,
    future::Future,
    io,
    net::{Ipv4Addr, SocketAddr},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use editor_link::lock;
use editor_link::{
    connection::{Connection, Ending, Flow, FrameSink, Options, Outgoing, Received, WriteLayer},
    framing::{DEFAULT_RESPONSE_LIMIT, Framing},
    jsonrpc::{Id, Message},
};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

use crate::{
    control::{self, Host},
    faults::{BoxFuture, Effect, Faults, Inbound, RuleSpec, Scope, Silence, Subject, Trigger, Wire},
    scenario::{Action, Scenario},
    server::{Accepted, Responder, Server},
    serving::effects::refuse,
    stall::Stall,
};

/// How long the upstream Editor has to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How to start a proxy.
#[derive(Clone, Debug)]
pub struct ProxyConfig {
    /// The Editor: `HOST:PORT`.
    pub upstream: String,
    /// Port clients connect to; 0 for any free port.
    pub port: u16,
    /// Control API port; 0 for any free port.
    pub control_port: u16,
    /// Its faults and timeline (wire faults only).
    pub scenario: Scenario,
    pub seed: Option<u64>,
    /// Multiplies every fault and timeline duration.
    pub time_scale: f64,
    /// Where it tells each fault that fires (`events`).
    pub events: crate::events::Events,
}

/// Why a proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind { port: u16, source: io::Error },
    #[error("{0}")]
    Unsupported(String),
    #[error(transparent)]
    Fault(#[from] crate::faults::FaultError),
}

/// Counters, shown by `GET /stats`.
#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    to_editor: AtomicU64,
    from_editor: AtomicU64,
    upstream_refused: AtomicU64,
}

/// A running proxy's shared state: the control API's host.
#[derive(Debug)]
pub struct ProxyState {
    upstream: String,
    seed: u64,
    faults: Arc<Faults>,
    hang: Arc<Stall>,
    counters: Counters,
    quit: CancellationToken,
    port: std::sync::atomic::AtomicU16,
}

impl Host for ProxyState {
    fn faults(&self) -> &Arc<Faults> {
        &self.faults
    }

    fn hang(&self) -> &Arc<Stall> {
        &self.hang
    }

    fn state_json(&self) -> Value {
        json!({
            "proxy": true,
            "port": self.port.load(Ordering::Relaxed),
            "upstream": self.upstream,
            "hung": self.hang.is_on(),
            "seed": self.seed,
        })
    }

    fn stats_json(&self) -> Value {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        json!({
            "connectionsAccepted": n(&self.counters.connections),
            "framesToEditor": n(&self.counters.to_editor),
            "framesFromEditor": n(&self.counters.from_editor),
            "upstreamRefused": n(&self.counters.upstream_refused),
        })
    }

    fn refuses(&self, spec: &RuleSpec) -> Option<String> {
        refuses(spec)
    }

    fn reset(&self) {
        self.faults.clear();
        self.hang.end();
    }

    fn quit(&self) {
        self.quit.cancel();
    }

    fn seed(&self) -> u64 {
        self.seed
    }
}

/// Why a proxy cannot carry out `spec`.
fn refuses(spec: &RuleSpec) -> Option<String> {
    let fault = &spec.fault;
    (fault.scope() == Scope::Editor).then(|| {
        format!(
            "the fault {} changes what the Editor does; a proxy in front of an Editor can carry out only wire faults",
            fault.name()
        )
    })
}

/// Why a proxy cannot play `scenario`, if it cannot.
pub fn unsupported(scenario: &Scenario) -> Option<String> {
    if let Some(why) = scenario.faults.iter().find_map(refuses) {
        return Some(why);
    }
    if scenario.start_delay_ms > 0 || scenario.state.is_some() || scenario.settings.is_some() {
        return Some("a start delay, an editor state or settings belong to the simulated Editor".into());
    }
    scenario.timeline.iter().find_map(|t| match &t.action {
        Action::RemoveFault { .. } | Action::ClearFaults | Action::Hang { .. } | Action::EndHang | Action::Quit => None,
        other => Some(format!("the timeline action {other:?} needs the simulated Editor")),
    })
}

/// A running proxy.
#[derive(Debug)]
pub struct Proxy {
    state: Arc<ProxyState>,
    port: u16,
    control_addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    pub async fn start(config: ProxyConfig) -> Result<Proxy, ProxyError> {
        if let Some(why) = unsupported(&config.scenario) {
            return Err(ProxyError::Unsupported(why));
        }
        let seed = config.seed.or(config.scenario.seed).unwrap_or(1);
        let faults = Arc::new(Faults::new(seed, config.time_scale).reporting_to(config.events.clone()));
        faults.add(config.scenario.faults.clone())?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, config.port))
            .await
            .map_err(|source| ProxyError::Bind { port: config.port, source })?;
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        let state = Arc::new(ProxyState {
            upstream: config.upstream.clone(),
            seed,
            faults,
            hang: Stall::new("hang"),
            counters: Counters::default(),
            quit: CancellationToken::new(),
            port: std::sync::atomic::AtomicU16::new(port),
        });
        let control_listener = TcpListener::bind((Ipv4Addr::LOCALHOST, config.control_port))
            .await
            .map_err(|source| ProxyError::Bind { port: config.control_port, source })?;
        let control_addr =
            control_listener.local_addr().map_err(|source| ProxyError::Bind { port: config.control_port, source })?;
        let router = control::loopback_only_routes(control::host_routes::<ProxyState>()).with_state(state.clone());
        let stop = state.quit.clone();
        tokio::spawn(async move {
            let serve = axum::serve(control_listener, router).with_graceful_shutdown(stop.cancelled_owned());
            if let Err(err) = serve.await {
                tracing::error!(%err, "control API stopped");
            }
        });
        play_timeline(&state, config.scenario.timeline);
        let task = tokio::spawn(serve(listener, state.clone()));
        Ok(Proxy { state, port, control_addr, task })
    }

    /// The port clients connect to.
    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn control_url(&self) -> String {
        format!("http://{}", self.control_addr)
    }

    pub fn seed(&self) -> u64 {
        self.state.seed
    }

    pub fn faults(&self) -> &Arc<Faults> {
        &self.state.faults
    }

    /// Counters and rules, as `GET /stats` shows them.
    pub fn stats(&self) -> Value {
        let mut stats = self.state.stats_json();
        stats["faults"] = self.state.faults.to_json();
        stats
    }

    /// Stops accepting and relaying.
    pub fn stop(&self) {
        self.state.quit.cancel();
    }

    /// Waits until the proxy stops (`POST /quit`, [`Proxy::stop`]).
    pub async fn wait(mut self) {
        let _ = (&mut self.task).await;
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.state.quit.cancel();
    }
}

fn play_timeline(state: &Arc<ProxyState>, mut timeline: Vec<crate::scenario::TimedAction>) {
    if timeline.is_empty() {
        return;
    }
    let state = state.clone();
    tokio::spawn(async move {
        let started = tokio::time::Instant::now();
        timeline.sort_by_key(|t| t.at_ms);
        for timed in timeline {
            tokio::time::sleep_until(started + state.faults.scaled(timed.at_ms)).await;
            match timed.action {
                Action::RemoveFault { name } => {
                    let _ = state.faults.remove(&name);
                }
                Action::ClearFaults => state.faults.clear(),
                Action::Hang { ms } => state.hang.start(&state.faults, ms.map(|ms| state.faults.scaled(ms)), None),
                Action::EndHang => state.hang.end(),
                Action::Quit => state.quit.cancel(),
                other => tracing::warn!(?other, "not a proxy's action; ignored"),
            }
        }
    });
}

impl Responder for ProxyState {
    /// A hung proxy accepts nothing.
    fn ready(&self) -> impl Future<Output = ()> + Send {
        self.hang.cleared()
    }

    fn admit(&self, accepted: Accepted) -> impl Future<Output = Option<Accepted>> + Send {
        self.counters.connections.fetch_add(1, Ordering::Relaxed);
        let admitted = match self.faults.connect(accepted.number) {
            Some(fired) => {
                // The wire faults that fire on `connect` are refusals.
                match fired.effect() {
                    Some(Effect::Refuse(refusal)) => refuse(accepted.stream, refusal, &self.quit),
                    effect => tracing::warn!(fault = fired.fault().name(), ?effect, "not a refusal; dropped"),
                }
                None
            }
            None => Some(accepted),
        };
        std::future::ready(admitted)
    }

    fn serve(self: Arc<Self>, accepted: Accepted) -> impl Future<Output = ()> + Send + 'static {
        relay(accepted.stream, accepted.number, self)
    }
}

/// Serves until the proxy quits, then waits a little for its connections.
async fn serve(listener: TcpListener, state: Arc<ProxyState>) {
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let server = Server::start(state.clone(), listener, port, false);
    state.quit.cancelled().await;
    server.shutdown(Some(Duration::from_secs(2))).await;
}

/// The methods of the client's requests in flight, by id (what `fromEditor`
/// rules match an answer on).
type Methods = Arc<Mutex<HashMap<Id, Arc<str>>>>;

/// One client connection, relayed to one upstream connection.
async fn relay(client: crate::server::Stream, number: u64, state: Arc<ProxyState>) {
    let wire_cell = Arc::new(std::sync::OnceLock::new());
    let layer = ProxyFaults { state: state.clone(), client: number, wire: wire_cell.clone() };
    let Connection { sender: to_client, receiver: mut from_client, writer: client_writer } =
        client.connection(Options::editor(DEFAULT_RESPONSE_LIMIT).layer(layer));
    let wire = Wire::new(to_client.clone(), state.hang.clone(), state.faults.clone());
    let _ = wire_cell.set(wire.clone());
    let methods: Methods = Arc::default();
    // The upstream connection opens once the client's framing is known.
    let mut upstream: Option<(editor_link::connection::Sender, tokio::task::JoinHandle<()>)> = None;
    loop {
        tokio::select! {
            _ = state.hang.cleared() => {}
            _ = to_client.closed() => break,
        }
        let received = tokio::select! {
            _ = to_client.closed() => break,
            _ = state.quit.cancelled() => break,
            received = from_client.recv() => received,
        };
        let body = match received {
            Received::Body(body) => body,
            Received::TooLarge { .. } => continue,
            Received::Closed | Received::Lost(_) | Received::Broken(_) => break,
        };
        if wire.silence() == Silence::BlackHole {
            continue;
        }
        if upstream.is_none() {
            let framing = from_client.framing().unwrap_or(Framing::Header);
            match open_upstream(&state, framing, to_client.clone(), methods.clone()).await {
                Some(opened) => upstream = Some(opened),
                None => break,
            }
        }
        let Some((to_editor, _)) = &upstream else { break };
        state.counters.to_editor.fetch_add(1, Ordering::Relaxed);
        let parsed = Message::parse(&body);
        let frames = match state.faults.frame(Trigger::ToEditor, Subject::of_frame(number, &parsed)) {
            None => vec![body],
            Some(fired) => match fired.fault().behaviour().inbound(&fired, &wire, body).await {
                Inbound::Frames(frames) => frames,
                // Editor faults are refused at install.
                Inbound::WithFault(body) => vec![body],
                Inbound::Stop => break,
            },
        };
        // A hang that began at this frame holds it until it ends.
        tokio::select! {
            _ = state.hang.cleared() => {}
            _ = to_client.closed() => break,
        }
        for frame in frames {
            if let Ok(Message::Request(r)) = Message::parse(&frame) {
                lock(&methods).insert(r.id.clone(), Arc::from(r.method.as_str()));
            }
            to_editor.send(Outgoing::body(frame));
        }
    }
    to_client.end(Ending::Graceful);
    if let Some((to_editor, writer)) = upstream {
        to_editor.end(Ending::Graceful);
        let _ = tokio::time::timeout(Duration::from_secs(2), writer).await;
    }
    let _ = tokio::time::timeout(Duration::from_secs(2), client_writer).await;
}

/// Connects to the Editor in `framing`, and relays what it sends to the
/// client; the sender toward the Editor and the relay's task.
async fn open_upstream(
    state: &Arc<ProxyState>,
    framing: Framing,
    to_client: editor_link::connection::Sender,
    methods: Methods,
) -> Option<(editor_link::connection::Sender, tokio::task::JoinHandle<()>)> {
    let stream = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&state.upstream)).await {
        Ok(Ok(stream)) => stream,
        outcome => {
            tracing::warn!(upstream = state.upstream, ?outcome, "cannot reach the Editor");
            state.counters.upstream_refused.fetch_add(1, Ordering::Relaxed);
            return None;
        }
    };
    let Connection { sender: to_editor, receiver: mut from_editor, writer } =
        Connection::tcp(stream, Options::client(framing, DEFAULT_RESPONSE_LIMIT));
    let state = state.clone();
    let closer = to_editor.clone();
    let task = tokio::spawn(async move {
        loop {
            let received = tokio::select! {
                _ = to_client.closed() => break,
                received = from_editor.recv() => received,
            };
            let body = match received {
                Received::Body(body) => body,
                Received::TooLarge { .. } => continue,
                Received::Closed | Received::Lost(_) | Received::Broken(_) => break,
            };
            state.counters.from_editor.fetch_add(1, Ordering::Relaxed);
            to_client.send(outgoing(&body, &methods));
        }
        // The Editor closed its side: so does the client's.
        to_client.end(Ending::Graceful);
        closer.end(Ending::Graceful);
        let _ = writer.await;
    });
    Some((to_editor, task))
}

/// An Editor's frame for the client, with what `fromEditor` rules match on.
fn outgoing(body: &Bytes, methods: &Methods) -> Outgoing {
    match Message::parse(body) {
        Ok(message) => {
            let answering = match &message {
                Message::Response(r) => r.id.as_ref().and_then(|id| lock(methods).remove(id)),
                _ => None,
            };
            let mut out = Outgoing::message(&message, answering.as_deref());
            // The Editor's bytes as they came.
            out.body = body.clone();
            out
        }
        Err(_) => Outgoing::body(body.clone()),
    }
}

/// The `fromEditor` rules on what the Editor sends, as the client
/// connection's write layer.
struct ProxyFaults {
    state: Arc<ProxyState>,
    client: u64,
    wire: Arc<std::sync::OnceLock<Wire>>,
}

impl WriteLayer for ProxyFaults {
    fn write<'a>(&'a mut self, out: &'a Outgoing, sink: &'a mut FrameSink) -> BoxFuture<'a, io::Result<(bool, Flow)>> {
        Box::pin(async move {
            tokio::select! {
                biased;
                _ = self.state.hang.cleared() => {}
                _ = sink.closing() => return Ok((false, Flow::Continue)),
            }
            let Some(wire) = self.wire.get() else { return Ok((false, Flow::Continue)) };
            if wire.silence() != Silence::None {
                return Ok((false, Flow::Continue));
            }
            let subject = Subject {
                connection: Some(self.client),
                frame: Some(out.kind),
                is_error: out.is_error,
                method: out.method.as_deref(),
            };
            match self.state.faults.frame(Trigger::FromEditor, subject) {
                None => sink.frame(&out.body).await.map(|()| (true, Flow::Continue)),
                Some(fired) => fired.fault().behaviour().outbound(&fired, wire, out, sink).await,
            }
        })
    }
}
