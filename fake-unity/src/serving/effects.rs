//! The one place the simulated Editor carries out what the faults that
//! fired do ([`Effect`]): at a request (a stall, a slow tool, a padded
//! result, a reload or a crash before or after the tool ran), at a lifecycle
//! moment (tools taken away, a dead listener, a port held, a stale discovery
//! file) and at a connection (refused: reset, closed, held unread,
//! swallowed). The faults say what; this file does it; `serving/request.rs`
//! and `serving/driver.rs` only say when.

use std::{net::Ipv4Addr, sync::Arc, time::Duration};

use editor_link::jsonrpc::{Message, Response};
use serde_json::Value;
use tokio::{io::AsyncWriteExt, net::TcpListener};
use tokio_util::sync::CancellationToken;

use crate::{
    editor::{CrashOptions, Editor, ReloadOptions},
    faults::{Effect, PortHolder, Refusal, ReloadPoint, Trigger},
    server::{Accepted, LINGER, Listener, Responder, Server, Stream, swallow},
    tools::{After, ToolCall},
};

/// The member a padded result (the `responseSize` fault) carries its bulk in.
pub(crate) const PADDING: &str = "Padding";

/// What a fault that fired on a request does to it.
#[derive(Debug)]
pub(super) struct AtRequest(pub Effect);

impl AtRequest {
    /// A busy main thread, for what waits for it: held this long.
    pub fn stall(&self) -> Option<(Duration, Option<crate::faults::Blocker>)> {
        match &self.0 {
            Effect::Stall { busy, blocker } => Some((*busy, blocker.clone())),
            _ => None,
        }
    }

    /// Before the tool runs: a reload or a crash there takes the request
    /// with it (not applied, no answer). True when it did.
    pub fn ends_before_run(&self, editor: &Editor) -> bool {
        match self.0 {
            Effect::Reload { at: ReloadPoint::BeforeRun, downtime, move_port } => {
                editor.request_reload(ReloadOptions { downtime, move_port, ..ReloadOptions::default() }, None);
                true
            }
            Effect::Crash { at: ReloadPoint::BeforeRun, restart_after, move_port } => {
                editor.request_crash(CrashOptions { restart_after, move_port }, None);
                true
            }
            _ => false,
        }
    }

    /// The slow tool's extra work, before its real work: reporting progress
    /// every second unless it is deadlocked.
    pub fn slow_tool(&self) -> Option<(Duration, bool)> {
        match self.0 {
            Effect::SlowTool { extra, progress } => Some((extra, progress)),
            _ => None,
        }
    }

    /// The result padded with a [`PADDING`] string until the response is
    /// about the fault's size.
    pub fn pad(&self, response: &mut Response) {
        let Effect::PadResponse(bytes) = self.0 else { return };
        let size = Message::Response(response.clone()).to_bytes().len();
        if let (Some(missing), Ok(Value::Object(result))) = (bytes.checked_sub(size + 14), &mut response.outcome) {
            result.insert(PADDING.into(), "x".repeat(missing).into());
        }
    }

    /// After the tool ran (its answer journaled): a reload or a crash right
    /// there leaves the request unanswered; one after the reply follows it.
    pub fn after_run(&self, editor: &Editor) -> AfterRun {
        let (at, after) = match self.0 {
            Effect::Reload { at, downtime, move_port } => {
                (at, After::ReloadWith(ReloadOptions { downtime, move_port, ..ReloadOptions::default() }))
            }
            Effect::Crash { at, restart_after, move_port } => {
                (at, After::CrashWith(CrashOptions { restart_after, move_port }))
            }
            _ => return AfterRun::Answer(None),
        };
        match at {
            ReloadPoint::BeforeRun => AfterRun::Answer(None),
            ReloadPoint::AfterReply => AfterRun::Answer(Some(after)),
            ReloadPoint::AfterRun => {
                if let After::CrashWith(options) = after {
                    editor.request_crash(options, None);
                } else if let After::ReloadWith(options) = after {
                    editor.request_reload(options, None);
                }
                AfterRun::Unanswered
            }
        }
    }
}

/// What becomes of a request once its tool ran.
#[derive(Debug)]
pub(super) enum AfterRun {
    /// It is answered, and then this may follow.
    Answer(Option<After>),
    /// The domain or the process went away first: no answer.
    Unanswered,
}

/// The `slowTool` fault: the tool works for `extra` before its real work,
/// reporting progress every second unless it is deadlocked.
pub(super) async fn work_for(call: &ToolCall, extra: Duration, progress: bool) {
    let started = tokio::time::Instant::now();
    let mut tick = 0;
    loop {
        let left = extra.saturating_sub(started.elapsed());
        if left.is_zero() {
            return;
        }
        if progress {
            call.progress.report(tick, None, &format!("Working ({tick} s)"));
        }
        tick += 1;
        tokio::time::sleep(left.min(Duration::from_secs(1))).await;
    }
}

/// Where the Editor's port stands at a lifecycle moment.
#[derive(Debug)]
pub enum Port {
    /// Starting, not yet bound: the port it will try first (0: any).
    Preferred(u16),
    /// Reloading: the listener the old domain leaves (closed unless a fault
    /// holds it).
    Left(Option<Listener>),
    /// Quitting from this port.
    Quitting(u16),
}

/// The faults of a lifecycle moment (`start`, `reload`, `quit`), carried out.
pub async fn at_lifecycle(editor: &Arc<Editor>, trigger: Trigger, mut port: Port) {
    for fired in editor.faults.lifecycle(trigger) {
        match (fired.effect(), &mut port) {
            (Some(Effect::RemoveTools(names)), _) => editor.set_removed_tools(names),
            (Some(Effect::DeadListener(until)), _) => {
                editor.dead_listener.start(&editor.faults, until, Some(fired.name().to_owned()))
            }
            (Some(Effect::HoldPort { holder, until }), Port::Left(listener)) => {
                // A local socket has no port to hold: it closes (and goes).
                if let Some(listener) = listener.take().and_then(Listener::into_tcp) {
                    hold_port(listener, holder, until, &editor.hold_token());
                }
            }
            (Some(Effect::HoldPort { holder, until }), Port::Preferred(preferred)) if *preferred != 0 => {
                match TcpListener::bind((Ipv4Addr::LOCALHOST, *preferred)).await {
                    Ok(listener) => hold_port(listener, holder, until, &editor.hold_token()),
                    Err(err) => tracing::warn!(%err, port = *preferred, "cannot hold the port"),
                }
            }
            (Some(Effect::StaleDiscovery), Port::Preferred(preferred)) => {
                editor.write_stale_discovery(if *preferred == 0 { 8700 } else { *preferred })
            }
            (Some(Effect::StaleDiscovery), Port::Quitting(port)) => editor.write_stale_discovery(*port),
            (_, Port::Preferred(_)) => {
                tracing::warn!(fault = fired.fault().name(), "this start fault needs a fixed --port; ignored")
            }
            (effect, _) => tracing::warn!(fault = fired.fault().name(), ?effect, ?trigger, "no effect here; ignored"),
        }
    }
}

/// A refused connection (a `connect` fault), ended as `refusal` says; what
/// is held is let go when `release` is cancelled. The simulated Editor and
/// `fake-unity proxy` both refuse this way.
pub fn refuse(stream: Stream, refusal: Refusal, release: &CancellationToken) {
    match refusal {
        Refusal::Reset => return stream.reset(),
        Refusal::Close => {}
        Refusal::HoldUnread => {
            let release = release.clone();
            tokio::spawn(async move {
                release.cancelled().await;
                drop(stream);
            });
            return;
        }
        Refusal::Swallow(until) => {
            tokio::spawn(swallow(stream, released_after(release, until)));
            return;
        }
    }
    drop(stream);
}

/// A token cancelled after `until` (if given) or when `release` is.
fn released_after(release: &CancellationToken, until: Option<Duration>) -> CancellationToken {
    let token = release.child_token();
    if let Some(delay) = until {
        let timer = token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            timer.cancel();
        });
    }
    token
}

/// The port the Editor left stays taken (a `zombieListener` or `portHeld`
/// fault): the listener stays open, answering nothing or closing every
/// connection, so the Editor comes back on another port.
fn hold_port(listener: TcpListener, holder: PortHolder, until: Option<Duration>, release: &CancellationToken) {
    let until = released_after(release, until);
    let held = HeldPort { holder, until: until.clone() };
    let server = Server::start(Arc::new(held), listener, 0, false);
    tokio::spawn(async move {
        until.cancelled().await;
        server.shutdown(Some(LINGER)).await;
    });
}

/// The listener a fault holds after the Editor left it.
struct HeldPort {
    holder: PortHolder,
    until: CancellationToken,
}

impl Responder for HeldPort {
    async fn serve(self: Arc<Self>, accepted: Accepted) {
        let mut stream = accepted.stream;
        match self.holder {
            PortHolder::Zombie => swallow(stream, self.until.clone()).await,
            PortHolder::OtherProgram => {
                // Closes at once, reading what it was sent so the close is
                // clean rather than a reset.
                let _ = stream.shutdown().await;
                let _ = tokio::time::timeout(LINGER, swallow(stream, CancellationToken::new())).await;
            }
        }
    }
}
