//! The simulated Editor on the [`Server`]: what it accepts (the `connect`
//! fault rules, the accept defects) and its lifecycle driver, which
//! reloads, crashes, restarts and quits. The lifecycle fault rules (at
//! reload and quit) are carried out here; each connection is served by
//! [`super::connection`].

use std::{future::Future, sync::Arc, time::Duration};

use tokio::{io::AsyncWriteExt, net::TcpListener, sync::mpsc};
use tokio_util::sync::CancellationToken;

use super::{Command, Editor, ReloadReport, ShutdownReason, connection};
use crate::{
    faults::{Fault, Fired, Trigger},
    model::listener::Accepting,
    server::{Accepted, LINGER, NextPort, Responder, Server, swallow},
};

/// How long a reload waits for connections to finish closing.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

impl Responder for Editor {
    /// A hung Editor, or a dead listener, accepts nothing: connections
    /// wait in the kernel's backlog.
    async fn ready(&self) {
        while self.hang.is_on() || self.dead_listener.is_on() {
            self.hang.cleared().await;
            self.dead_listener.cleared().await;
        }
    }

    async fn admit(&self, accepted: Accepted) -> Option<Accepted> {
        self.count_accepted();
        if self.model.listener.connections.is_some_and(|limit| accepted.number > limit) {
            return None;
        }
        if let Some(fired) = self.faults.connect(accepted.number) {
            refuse(self, accepted.stream, &fired);
            return None;
        }
        if self.model.listener.accepting == Accepting::WaitsForFirstByte {
            // The framing sniffed in the accept loop itself.
            let _ = accepted.stream.peek(&mut [0u8; 1]).await;
        }
        Some(accepted)
    }

    fn serve(self: Arc<Self>, accepted: Accepted) -> impl Future<Output = ()> + Send + 'static {
        connection::serve(self, accepted.number, accepted.stream, accepted.peer)
    }
}

/// How many requests of one connection run at once; the connection is not
/// read while they all do (the uLoopMCP Editor runs one at a time).
pub(super) const IN_FLIGHT_LIMIT: usize = 64;

/// A `connect` fault: the connection is never served.
fn refuse(editor: &Editor, stream: tokio::net::TcpStream, fired: &Fired) {
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

/// What holds a port after a reload (a `zombieListener` or `portHeld`
/// fault): the old listener stays open, answering nothing or closing every
/// connection, so the Editor comes back on another port.
pub(crate) fn hold_port(listener: TcpListener, fired: &Fired, release: &CancellationToken) {
    let until = hold_until(fired, release);
    let held = HeldPort { zombie: matches!(fired.fault(), Fault::ZombieListener(_)), until: until.clone() };
    let server = Server::start(Arc::new(held), listener, 0, false);
    tokio::spawn(async move {
        until.cancelled().await;
        server.shutdown(Some(LINGER)).await;
    });
}

/// The listener a fault holds after the Editor left it.
struct HeldPort {
    /// A zombie listener reads and never answers; otherwise another
    /// program holds the port and closes every connection.
    zombie: bool,
    until: CancellationToken,
}

impl Responder for HeldPort {
    async fn serve(self: Arc<Self>, accepted: Accepted) {
        let mut stream = accepted.stream;
        if self.zombie {
            swallow(stream, self.until.clone()).await;
        } else {
            // Closes at once, reading what it was sent so the close is
            // clean rather than a reset.
            let _ = stream.shutdown().await;
            let _ = tokio::time::timeout(LINGER, swallow(stream, CancellationToken::new())).await;
        }
    }
}

/// The Editor's lifecycle: serves `listener` and carries out the commands
/// (reload, crash, restart, quit) until it quits.
pub async fn drive(
    editor: Arc<Editor>,
    listener: TcpListener,
    preferred_port: u16,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    let all_interfaces = editor.listens_everywhere();
    let mut server = Server::start(editor.clone(), listener, preferred_port, all_interfaces);
    loop {
        match commands.recv().await {
            Some(Command::Reload { options, begun, done }) => {
                let previous_session_id = editor.session_id();
                let port = server.port();
                tracing::info!(port, "domain reload");
                // No one new is accepted by the domain that is going away.
                let old_listener = server.stop_accepting().await;
                editor.begin_shutdown(ShutdownReason::DomainReload);
                // Unless a fault holds it, the old listener closes now.
                reload_faults(&editor, old_listener);
                if let Some(begun) = begun {
                    let _ = begun.send(());
                }
                server.wait_closed(Some(CLOSE_GRACE)).await;
                let downtime = options.downtime.unwrap_or(Duration::from_millis(editor.base.editor.reload_downtime_ms));
                tokio::time::sleep(downtime).await;
                let Some(listener) = rebind(&editor, &server, options.move_port).await else { return };
                // Serve as soon as the socket listens; the discovery file follows.
                let listening_at = std::time::Instant::now();
                server.listen(listener);
                editor.finish_reload(server.port());
                schedule_tools_ready(&editor, options.tools_ready_delay);
                tracing::info!(port = server.port(), "listening again");
                report(done, &editor, server.port(), port, previous_session_id, listening_at);
            }
            Some(Command::Crash { options, done }) => {
                let previous_session_id = editor.session_id();
                let port = server.port();
                tracing::info!(port, "the Editor crashes");
                // The process dies whole: its listener first, so nothing
                // connects to the dying Editor.
                drop(server.stop_accepting().await);
                editor.crash();
                server.wait_closed(Some(CLOSE_GRACE)).await;
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
                let Some(listener) = rebind(&editor, &server, move_port).await else { return };
                // The new process is itself (instance, session, journal)
                // before it accepts anyone.
                let new_port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
                editor.restart(new_port);
                let listening_at = std::time::Instant::now();
                server.listen(listener);
                tracing::info!(port = new_port, "a new Editor process listens");
                report(done, &editor, new_port, port, previous_session_id, listening_at);
            }
            Some(Command::Restart { done, .. }) => {
                tracing::warn!("restart asked while the Editor runs: ignored");
                drop(done);
            }
            Some(Command::Quit { done }) => {
                quit(&editor, server).await;
                if let Some(done) = done {
                    let _ = done.send(());
                }
                return;
            }
            None => {
                quit(&editor, server).await;
                return;
            }
        }
    }
}

/// Listens again after a reload or a crash: on the same port, or with
/// `move_port` on another; any port when that fails. `None` (and the
/// Editor quits) when it cannot listen at all.
async fn rebind(editor: &Editor, server: &Server<Editor>, move_port: bool) -> Option<TcpListener> {
    match server.rebind(if move_port { NextPort::Move } else { NextPort::Same }).await {
        Ok(listener) => Some(listener),
        Err(err) => {
            tracing::error!(%err, "cannot listen again");
            editor.request_quit(None);
            None
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

async fn quit(editor: &Arc<Editor>, mut server: Server<Editor>) {
    let port = server.port();
    editor.hang.end();
    editor.begin_shutdown(ShutdownReason::EditorQuit);
    drop(server.stop_accepting().await);
    server.wait_closed(Some(CLOSE_GRACE)).await;
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

/// Step 5 of a reload: once tools are registered, `list_changed` to every
/// client connected by then (unless another reload started meanwhile).
fn schedule_tools_ready(editor: &Arc<Editor>, delay: Option<Duration>) {
    let editor = editor.clone();
    let generation = editor.generation();
    let delay = delay.unwrap_or(Duration::from_millis(editor.base.editor.tools_ready_delay_ms));
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        if editor.generation() == generation && editor.model.lifecycle.list_changed_after_reload {
            editor.notify_tools_changed();
        }
    });
}
