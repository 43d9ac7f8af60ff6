//! One server for everything in this crate that listens on the editor link:
//! the simulated Editor ([`crate::editor`]), a replayed recording
//! ([`crate::replay`]), the fault proxy ([`crate::proxy`]) and the recorder
//! ([`crate::record`]). Each is a [`Responder`]; the [`Server`] binds,
//! accepts, numbers and tracks connections, stops accepting and listens
//! again (a domain reload, a port move, a restart) the same way for all.
//!
//! Like mini-redis, the accept loop takes its listener and its stop signal
//! from outside, so a lifecycle driver restarts it through the same entry
//! point after a reload.

use std::{
    future::Future,
    io,
    net::Ipv4Addr,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use editor_link::endpoint::Endpoint;
use tokio::{io::AsyncReadExt, net::TcpListener, task::JoinHandle};
use tokio_util::{sync::CancellationToken, task::TaskTracker};

pub use crate::transport::{Listener, Peer, Stream};

/// How many ports after the preferred one are tried (protocol §1).
pub const FALLBACK_PORTS: u16 = 10;

/// How long a closing connection keeps reading what the peer still sends:
/// closing a socket with unread input sends a reset, which can destroy the
/// last frames before the peer reads them.
pub(crate) const LINGER: Duration = Duration::from_millis(100);

/// An accepted connection.
#[derive(Debug)]
pub struct Accepted {
    /// 1 for the server's first connection, and on across reloads: what
    /// the fault rules' `match.connection` counts.
    pub number: u64,
    pub stream: Stream,
    pub peer: Peer,
}

/// What answers the connections a [`Server`] accepts.
pub trait Responder: Send + Sync + 'static {
    /// Resolves once a connection may be accepted. Until then the server
    /// accepts nothing and connections wait in the kernel's backlog (a
    /// hung Editor, a dead listener).
    fn ready(&self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Runs in the accept loop, which waits for it: the connection to
    /// serve, or `None` when it was refused or dealt with here.
    fn admit(&self, accepted: Accepted) -> impl Future<Output = Option<Accepted>> + Send {
        async { Some(accepted) }
    }

    /// Serves one admitted connection until it closes; runs beside the
    /// others, and [`Server::wait_closed`] waits for it.
    fn serve(self: Arc<Self>, accepted: Accepted) -> impl Future<Output = ()> + Send + 'static;
}

/// Binds `127.0.0.1` on `preferred` or, if taken, the next ports (protocol §1);
/// port 0 asks the system for one. `avoid` is never chosen (a port move).
/// `all_interfaces` is the `all-interfaces` defect.
pub async fn bind(preferred: u16, avoid: Option<u16>, all_interfaces: bool) -> io::Result<TcpListener> {
    let loopback = if all_interfaces { Ipv4Addr::UNSPECIFIED } else { Ipv4Addr::LOCALHOST };
    if preferred == 0 {
        for _ in 0..16 {
            let listener = TcpListener::bind((loopback, 0)).await?;
            if Some(listener.local_addr()?.port()) != avoid {
                return Ok(listener);
            }
        }
        return Err(io::Error::new(io::ErrorKind::AddrInUse, "no free port different from the current one"));
    }
    let mut last = None;
    for port in preferred..=preferred.saturating_add(FALLBACK_PORTS) {
        if Some(port) == avoid {
            continue;
        }
        match TcpListener::bind((loopback, port)).await {
            Ok(listener) => return Ok(listener),
            Err(err) => last = Some(err),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::AddrInUse, "no port to try")))
}

/// Where to listen again after a reload or a restart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextPort {
    /// The port listened on before.
    Same,
    /// Any port but that one: the next ones after it, or the system's
    /// choice when the first port was.
    Move,
}

/// A running server: its responder, its connections, and the listener it
/// accepts on while it does.
pub struct Server<R: Responder> {
    responder: Arc<R>,
    /// Every connection's task, so closing can wait for them.
    connections: TaskTracker,
    numbers: Arc<AtomicU64>,
    /// The port asked for at the start (0: any).
    preferred: u16,
    /// The port listened on last (0 on a local socket).
    port: u16,
    /// Where it listened last.
    endpoint: Option<Endpoint>,
    all_interfaces: bool,
    accepting: Option<Accepting>,
}

impl<R: Responder> std::fmt::Debug for Server<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("port", &self.port)
            .field("accepted", &self.accepted())
            .field("accepting", &self.accepting.is_some())
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
struct Accepting {
    stop: CancellationToken,
    /// Gives the listener back when stopped.
    task: JoinHandle<Listener>,
}

impl<R: Responder> Server<R> {
    /// Starts accepting on `listener` (see [`bind`]). `preferred` is the
    /// port first asked for, and `all_interfaces` whether [`bind`] was
    /// asked for every interface: a [`NextPort::Move`] keeps to both.
    pub fn start(responder: Arc<R>, listener: impl Into<Listener>, preferred: u16, all_interfaces: bool) -> Self {
        let mut server = Server {
            responder,
            connections: TaskTracker::new(),
            numbers: Arc::new(AtomicU64::new(1)),
            preferred,
            port: 0,
            endpoint: None,
            all_interfaces,
            accepting: None,
        };
        server.listen(listener.into());
        server
    }

    /// The port listened on (last).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Where it listens (last).
    pub fn endpoint(&self) -> Option<&Endpoint> {
        self.endpoint.as_ref()
    }

    /// How many connections were accepted.
    pub fn accepted(&self) -> u64 {
        self.numbers.load(Ordering::Relaxed) - 1
    }

    /// Starts accepting on another listener.
    pub fn listen(&mut self, listener: Listener) {
        debug_assert!(self.accepting.is_none(), "listening twice");
        self.port = listener.port();
        self.endpoint = Some(listener.endpoint());
        let stop = CancellationToken::new();
        let task = tokio::spawn(accept_loop(
            listener,
            self.responder.clone(),
            self.connections.clone(),
            self.numbers.clone(),
            stop.clone(),
        ));
        self.accepting = Some(Accepting { stop, task });
    }

    /// Stops accepting and gives the listener back (a fault may keep it
    /// open); connections already accepted go on.
    pub async fn stop_accepting(&mut self) -> Option<Listener> {
        let accepting = self.accepting.take()?;
        accepting.stop.cancel();
        accepting.task.await.ok()
    }

    /// Binds again ([`NextPort`]); on any port when that fails. A local
    /// socket is bound again where it was (it has no port to move).
    pub async fn rebind(&self, next: NextPort) -> io::Result<Listener> {
        if let Some(endpoint) = self.endpoint.as_ref().filter(|e| !matches!(e, Endpoint::Tcp(_))) {
            return Listener::bind_local(endpoint);
        }
        let (want, avoid) = match next {
            NextPort::Same => (self.port, None),
            NextPort::Move if self.preferred == 0 => (0, Some(self.port)),
            NextPort::Move => (self.port.saturating_add(1), Some(self.port)),
        };
        match bind(want, avoid, self.all_interfaces).await {
            Ok(listener) => Ok(listener.into()),
            Err(err) => {
                tracing::warn!(%err, port = want, "cannot bind again; trying any port");
                bind(0, avoid, self.all_interfaces).await.map(Listener::from)
            }
        }
    }

    /// Waits for every connection to close, up to `grace` (`None`: as long
    /// as they take); those accepted afterwards are tracked again. False
    /// when some were still open at the end of the grace.
    pub async fn wait_closed(&self, grace: Option<Duration>) -> bool {
        self.connections.close();
        let closed = match grace {
            Some(grace) => tokio::time::timeout(grace, self.connections.wait()).await.is_ok(),
            None => {
                self.connections.wait().await;
                true
            }
        };
        if !closed {
            tracing::warn!(?grace, "connections still closing");
        }
        self.connections.reopen();
        closed
    }

    /// Stops accepting, closing the listener, and waits for the
    /// connections ([`Server::wait_closed`]).
    pub async fn shutdown(mut self, grace: Option<Duration>) {
        drop(self.stop_accepting().await);
        self.wait_closed(grace).await;
    }
}

async fn accept_loop<R: Responder>(
    mut listener: Listener,
    responder: Arc<R>,
    connections: TaskTracker,
    numbers: Arc<AtomicU64>,
    stop: CancellationToken,
) -> Listener {
    loop {
        tokio::select! {
            _ = stop.cancelled() => return listener,
            _ = responder.ready() => {}
        }
        let next = numbers.load(Ordering::Relaxed);
        let accepted = tokio::select! {
            _ = stop.cancelled() => return listener,
            accepted = listener.accept(next) => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(err) => {
                // Out of file descriptors and the like: back off, keep serving.
                tracing::warn!(%err, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Accepted just as the responder stopped being ready (a hang
        // began): held, as the backlog is.
        tokio::select! {
            _ = stop.cancelled() => return listener,
            _ = responder.ready() => {}
        }
        let number = numbers.fetch_add(1, Ordering::Relaxed);
        if let Some(accepted) = responder.admit(Accepted { number, stream, peer }).await {
            connections.spawn(responder.clone().serve(accepted));
        }
    }
}

/// Reads and discards until the peer closes or `until` is cancelled.
pub(crate) async fn swallow<S: tokio::io::AsyncRead + Unpin>(mut stream: S, until: CancellationToken) {
    let mut sink = vec![0u8; 16 * 1024];
    loop {
        tokio::select! {
            _ = until.cancelled() => return,
            read = stream.read(&mut sink) => if !matches!(read, Ok(n) if n > 0) { return },
        }
    }
}

/// Reads (and drops) what the peer still sends, for [`LINGER`]: the last
/// step of a graceful close.
pub(crate) async fn linger<S: tokio::io::AsyncRead + Unpin>(read: &mut S) {
    let _ = tokio::time::timeout(LINGER, async {
        let mut sink = [0u8; 4096];
        while matches!(read.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
}
