//! The editor-link server: binding (preferred port, then fallback; loopback
//! only), the accept loop, and the lifecycle driver that reloads, crashes,
//! restarts and quits; each connection is served by [`connection`]. The
//! lifecycle fault rules (at connect, start, reload and quit) are carried
//! out here.
//!
//! Like mini-redis, [`accept_loop`] takes its listener and a stop signal from
//! outside, so the driver restarts it through the same entry point after a
//! domain reload.

pub mod connection;

use std::{io, net::Ipv4Addr, sync::Arc, time::Duration};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::mpsc,
};
use tokio_util::sync::CancellationToken;

use crate::{
    defect::Defect,
    editor::{Command, Editor, ReloadReport, ShutdownReason},
    faults::{Fault, Fired, Trigger},
};

/// How many ports after the preferred one are tried (protocol §1).
pub const FALLBACK_PORTS: u16 = 10;

/// How long a closing connection keeps reading what the peer still sends.
pub(crate) const LINGER: Duration = Duration::from_millis(100);

/// How long a reload waits for connections to finish closing.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

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

/// Accepts connections until `stop` is cancelled; gives the listener back
/// (a fault may keep it open as a zombie).
pub async fn accept_loop(listener: TcpListener, editor: Arc<Editor>, stop: CancellationToken) -> TcpListener {
    loop {
        // A hung Editor, or a dead listener, accepts nothing: connections
        // wait in the kernel's backlog.
        tokio::select! {
            _ = stop.cancelled() => return listener,
            _ = accepting(&editor) => {}
        }
        let accepted = tokio::select! {
            _ = stop.cancelled() => return listener,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                // Accepted just as a hang began: held like the backlog is.
                tokio::select! {
                    _ = stop.cancelled() => return listener,
                    _ = accepting(&editor) => {}
                }
                let number = editor.next_connection();
                if number > 100 && editor.has_defect(Defect::LeaksConnections) {
                    drop(stream);
                    continue;
                }
                if let Some(fired) = editor.faults.connect(number) {
                    refuse(&editor, stream, &fired);
                    continue;
                }
                if editor.has_defect(Defect::BlockingAccept) {
                    // The framing sniffed in the accept loop itself.
                    let _ = stream.peek(&mut [0u8; 1]).await;
                }
                let editor_for_task = editor.clone();
                editor.connections.spawn(connection::serve(editor_for_task, number, stream, peer));
            }
            Err(err) => {
                // Out of file descriptors and the like: back off, keep serving.
                tracing::warn!(%err, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Resolves once the Editor would accept a connection: neither hung nor
/// with a dead listener.
async fn accepting(editor: &Editor) {
    while editor.hang.is_on() || editor.dead_listener.is_on() {
        editor.hang.cleared().await;
        editor.dead_listener.cleared().await;
    }
}

/// How many requests of one connection run at once; the connection is not
/// read while they all do (the uLoopMCP Editor runs one at a time).
pub(crate) const IN_FLIGHT_LIMIT: usize = 64;

/// A `connect` fault: the connection is never served.
fn refuse(editor: &Editor, stream: TcpStream, fired: &Fired) {
    match fired.fault() {
        Fault::RefuseConnections(_) | Fault::Reset(_) => {
            let _ = stream.set_zero_linger();
        }
        Fault::Close(_) => {}
        Fault::HalfOpen(_) => {
            // Held open, never read: the peer's writes pile up unanswered.
            let release = editor.hold_token();
            tokio::spawn(async move {
                release.cancelled().await;
                drop(stream);
            });
            return;
        }
        // Zombie listener, black hole: accepted, read, never answered.
        _ => {
            let until = hold_until(fired, &editor.hold_token());
            tokio::spawn(swallow(stream, until));
            return;
        }
    }
    drop(stream);
}

/// A token cancelled after the fault's `ms` (if any) or when holds are released.
fn hold_until(fired: &Fired, release: &CancellationToken) -> CancellationToken {
    let ms = match fired.fault() {
        Fault::ZombieListener(f) => f.ms,
        Fault::PortHeld(f) => f.ms,
        Fault::BlackHole(f) => f.close_after_ms,
        _ => None,
    };
    let until = release.child_token();
    if let Some(ms) = ms {
        let timer = until.clone();
        let delay = fired.duration(ms);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            timer.cancel();
        });
    }
    until
}

/// Reads and discards until the peer closes or `until` is cancelled.
async fn swallow(mut stream: TcpStream, until: CancellationToken) {
    let mut sink = vec![0u8; 16 * 1024];
    loop {
        tokio::select! {
            _ = until.cancelled() => return,
            read = stream.read(&mut sink) => if !matches!(read, Ok(n) if n > 0) { return },
        }
    }
}

/// What holds a port after a reload (a `zombieListener` or `portHeld`
/// fault): the old listener stays open, answering nothing or closing every
/// connection, so the Editor comes back on another port.
pub(crate) fn hold_port(listener: TcpListener, fired: &Fired, release: &CancellationToken) {
    let until = hold_until(fired, release);
    let zombie = matches!(fired.fault(), Fault::ZombieListener(_));
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                _ = until.cancelled() => return,
                accepted = listener.accept() => accepted,
            };
            match accepted {
                Ok((stream, _)) if zombie => {
                    tokio::spawn(swallow(stream, until.clone()));
                }
                Ok((mut stream, _)) => {
                    // Another program: it closes at once, reading what it
                    // was sent so the close is clean rather than a reset.
                    tokio::spawn(async move {
                        let _ = stream.shutdown().await;
                        let _ = tokio::time::timeout(LINGER, swallow(stream, CancellationToken::new())).await;
                    });
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    });
}

/// One connection: framing detected from the first byte, requests dispatched
/// concurrently (pipelining), responses written in completion order.
pub async fn drive(
    editor: Arc<Editor>,
    listener: TcpListener,
    preferred_port: u16,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    let mut port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let (mut stop, mut accepting) = start_accepting(listener, &editor);
    loop {
        match commands.recv().await {
            Some(Command::Reload { options, done }) => {
                let previous_session_id = editor.session_id();
                tracing::info!(port, "domain reload");
                // No one new is accepted by the domain that is going away.
                stop.cancel();
                let old_listener = accepting.await.ok();
                editor.begin_shutdown(ShutdownReason::DomainReload);
                // Unless a fault holds it, the old listener closes now.
                reload_faults(&editor, old_listener);
                wait_closed(&editor).await;
                let downtime = options.downtime.unwrap_or(Duration::from_millis(editor.base.editor.reload_downtime_ms));
                tokio::time::sleep(downtime).await;
                let Some(listener) = rebind(&editor, port, preferred_port, options.move_port).await else { return };
                let new_port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
                // Serve as soon as the socket listens; the discovery file follows.
                let listening_at = std::time::Instant::now();
                (stop, accepting) = start_accepting(listener, &editor);
                editor.finish_reload(new_port);
                schedule_tools_ready(&editor);
                tracing::info!(port = new_port, "listening again");
                report(done, &editor, new_port, port, previous_session_id, listening_at);
                port = new_port;
            }
            Some(Command::Crash { options, done }) => {
                let previous_session_id = editor.session_id();
                tracing::info!(port, "the Editor crashes");
                // The process dies whole: its listener first, so nothing
                // connects to the dying Editor.
                stop.cancel();
                drop(accepting.await);
                editor.crash();
                wait_closed(&editor).await;
                // Until a new Editor process starts, only quit and restart mean anything.
                let (move_port, done) = match options.restart_after {
                    Some(after) => {
                        tokio::time::sleep(after).await;
                        (options.move_port, done)
                    }
                    None => loop {
                        match commands.recv().await {
                            Some(Command::Restart { move_port, done }) => break (move_port, done),
                            Some(Command::Quit { done }) => {
                                editor.release_holds();
                                if let Some(done) = done {
                                    let _ = done.send(());
                                }
                                return;
                            }
                            None => return,
                            Some(other) => tracing::warn!(?other, "the Editor has crashed: ignored"),
                        }
                    },
                };
                let Some(listener) = rebind(&editor, port, preferred_port, move_port).await else { return };
                let new_port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
                // The new process is itself (instance, session, journal)
                // before it accepts anyone.
                editor.restart(new_port);
                let listening_at = std::time::Instant::now();
                (stop, accepting) = start_accepting(listener, &editor);
                tracing::info!(port = new_port, "a new Editor process listens");
                report(done, &editor, new_port, port, previous_session_id, listening_at);
                port = new_port;
            }
            Some(Command::Restart { done, .. }) => {
                tracing::warn!("restart asked while the Editor runs: ignored");
                drop(done);
            }
            Some(Command::Quit { done }) => {
                quit(&editor, stop, accepting, port).await;
                if let Some(done) = done {
                    let _ = done.send(());
                }
                return;
            }
            None => {
                quit(&editor, stop, accepting, port).await;
                return;
            }
        }
    }
}

/// Listens again after a reload or a crash: on `port`, or with `move_port`
/// on another; any port when that fails. `None` (and the Editor quits) when
/// it cannot listen at all.
async fn rebind(editor: &Arc<Editor>, port: u16, preferred_port: u16, move_port: bool) -> Option<TcpListener> {
    let (want, avoid) = if move_port {
        (if preferred_port == 0 { 0 } else { port.saturating_add(1) }, Some(port))
    } else {
        (port, None)
    };
    let all = editor.has_defect(Defect::AllInterfaces);
    match bind(want, avoid, all).await {
        Ok(listener) => Some(listener),
        Err(err) => {
            tracing::warn!(%err, port = want, "cannot bind again; trying any port");
            match bind(0, None, all).await {
                Ok(listener) => Some(listener),
                Err(err) => {
                    tracing::error!(%err, "cannot listen again");
                    editor.request_quit(None);
                    None
                }
            }
        }
    }
}

fn report(
    done: Option<tokio::sync::oneshot::Sender<ReloadReport>>,
    editor: &Editor,
    port: u16,
    previous_port: u16,
    previous_session_id: String,
    listening_at: std::time::Instant,
) {
    if let Some(done) = done {
        let _ = done.send(ReloadReport {
            port,
            session_id: editor.session_id(),
            previous_port,
            previous_session_id,
            listening_at: Some(listening_at),
        });
    }
}

async fn quit(
    editor: &Arc<Editor>,
    stop: CancellationToken,
    accepting: tokio::task::JoinHandle<TcpListener>,
    port: u16,
) {
    editor.hang.end();
    editor.begin_shutdown(ShutdownReason::EditorQuit);
    stop.cancel();
    let _ = accepting.await;
    wait_closed(editor).await;
    for fired in editor.faults.lifecycle(Trigger::Quit) {
        if matches!(fired.fault(), Fault::StaleDiscovery(_)) {
            editor.write_stale_discovery(port);
        }
    }
    editor.release_holds();
}

/// The `reload` fault rules, while the Editor is away: the tool set
/// changes, or the old port stays held.
fn reload_faults(editor: &Editor, mut old_listener: Option<TcpListener>) {
    for fired in editor.faults.lifecycle(Trigger::Reload) {
        match fired.fault() {
            Fault::ToolsChange(f) => editor.set_removed_tools(f.remove.clone()),
            Fault::DeadListener(f) => editor.dead_listener.start(
                &editor.faults,
                f.ms.map(|ms| fired.duration(ms)),
                Some(fired.name().to_owned()),
            ),
            Fault::ZombieListener(_) | Fault::PortHeld(_) => {
                if let Some(listener) = old_listener.take() {
                    hold_port(listener, &fired, &editor.hold_token());
                }
            }
            _ => {}
        }
    }
}

type Accepting = tokio::task::JoinHandle<TcpListener>;

fn start_accepting(listener: TcpListener, editor: &Arc<Editor>) -> (CancellationToken, Accepting) {
    let stop = CancellationToken::new();
    let accepting = tokio::spawn(accept_loop(listener, editor.clone(), stop.clone()));
    (stop, accepting)
}

/// Step 5 of a reload: once tools are registered, `list_changed` to every
/// client connected by then (unless another reload started meanwhile).
fn schedule_tools_ready(editor: &Arc<Editor>) {
    let editor = editor.clone();
    let generation = editor.generation();
    let delay = Duration::from_millis(editor.base.editor.tools_ready_delay_ms);
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        if editor.generation() == generation && !editor.has_defect(Defect::NoListChangedAfterReload) {
            editor.notify_tools_changed();
        }
    });
}

async fn wait_closed(editor: &Editor) {
    editor.connections.close();
    if tokio::time::timeout(CLOSE_GRACE, editor.connections.wait()).await.is_err() {
        tracing::warn!("connections still closing after {CLOSE_GRACE:?}");
    }
    editor.connections.reopen();
}
