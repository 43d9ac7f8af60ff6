//! The simulated Editor on the [`Server`]: what it accepts (the `connect`
//! fault rules, the accept defects) and its lifecycle driver, which
//! reloads, crashes, restarts and quits; the faults of each moment are
//! carried out by [`super::effects`], each connection served by
//! [`super::connection`].

use std::{future::Future, sync::Arc, time::Duration};

use tokio::sync::mpsc;

use super::{
    connection,
    effects::{self, Port},
};
use crate::{
    editor::{Command, Editor, ReloadReport, ShutdownReason, model::listener::Accepting},
    faults::{Effect, Trigger},
    server::{Accepted, Listener, NextPort, Responder, Server},
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
            match fired.effect() {
                // The accept loop waits for this: the connections behind it wait in the backlog.
                Some(Effect::SlowAccept(taking)) => tokio::time::sleep(taking).await,
                Some(Effect::Refuse(refusal)) => {
                    effects::refuse(accepted.stream, refusal, &self.hold_token());
                    return None;
                }
                effect => {
                    tracing::warn!(fault = fired.fault().name(), ?effect, "not a refusal; the connection is dropped");
                    return None;
                }
            }
        }
        if self.model.listener.accepting == Accepting::WaitsForFirstByte {
            // The framing sniffed in the accept loop itself.
            accepted.stream.wait_for_first_byte().await;
        }
        Some(accepted)
    }

    fn serve(self: Arc<Self>, accepted: Accepted) -> impl Future<Output = ()> + Send + 'static {
        connection::serve(self, accepted.number, accepted.stream, accepted.peer)
    }
}

/// The Editor's lifecycle: serves `listener` and carries out the commands
/// (reload, crash, restart, quit) until it quits.
pub async fn drive(
    editor: Arc<Editor>,
    listener: Listener,
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
                effects::at_lifecycle(&editor, Trigger::Reload, Port::Left(old_listener)).await;
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
                // connects to the dying Editor. A Unix socket file stays
                // behind, stale, as a dead process leaves it.
                if let Some(listener) = server.stop_accepting().await {
                    listener.leave_behind();
                }
                editor.crash(options.restart_after.is_some());
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
                let new_port = listener.port();
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
async fn rebind(editor: &Editor, server: &Server<Editor>, move_port: bool) -> Option<Listener> {
    editor.starting_server();
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
    effects::at_lifecycle(editor, Trigger::Quit, Port::Quitting(port)).await;
    editor.release_holds();
    editor.unity_closed();
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
