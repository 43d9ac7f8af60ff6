//! Keeping the connection: find the Editor (discovery), connect, shake hands
//! (`get-version`: is it this project's Editor, which Editor process, what
//! can it do), serve until the connection ends, and start again — at the
//! fast reload pace while the Editor is expected back, with backoff while it
//! is absent.
//!
//! Framing: header framing first; the legacy newline framing only when the
//! Editor gave a verdict against header framing (it closed the connection
//! or sent something that is not a header). An Editor that says nothing is
//! busy or hung, not old: a timeout changes nothing.

use std::{
    sync::{Arc, atomic::Ordering},
    time::{Duration, Instant, SystemTime},
};

use serde_json::json;

use super::{
    EditorInfo, FramingChoice, Link, LinkEvent, LinkState, Phase, ReloadRecord,
    socket::{CloseReason, EditorConnection, ExchangeError, lock},
};
use editor_link::{
    discovery::{Candidate, Candidates, iso_timestamp, same_folder},
    framing::Framing,
    jsonrpc::ErrorKind,
};

/// Why one candidate could not be used.
#[derive(Debug)]
enum ConnectError {
    /// Nothing to connect to, or the connection failed.
    Unreachable(String),
    /// Connected, and the Editor said nothing: busy or hung.
    Silent(String),
    /// Another project's Editor.
    OtherProject(String),
    /// It answered in a way that rules this framing out.
    WrongFraming(String),
}

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnectError::Unreachable(why)
            | ConnectError::Silent(why)
            | ConnectError::OtherProject(why)
            | ConnectError::WrongFraming(why) => f.write_str(why),
        }
    }
}

impl Link {
    /// The background task: find, connect, serve until closed, repeat.
    pub(super) async fn keep_connected(self: Arc<Self>) {
        let mut absent_delay = self.config.reload_retry.max(Duration::from_millis(50));
        loop {
            if self.stopping.is_cancelled() {
                break;
            }
            let found = self.config.locator.candidates();
            let mut tried = found.notes.clone();
            let mut connected = None;
            for candidate in &found.ports {
                match self.connect(candidate).await {
                    Ok(c) => {
                        connected = Some(c);
                        break;
                    }
                    Err(why) => tried.push(format!("port {} ({}): {why}", candidate.port, candidate.source)),
                }
            }
            let Some(connection) = connected else {
                {
                    let mut memory = lock(&self.memory);
                    memory.tried = tried;
                    memory.discovery_reloading = found.reloading;
                }
                let fast = matches!(self.status().state, LinkState::Reloading);
                let delay = if fast {
                    self.config.reload_retry
                } else {
                    let d = absent_delay;
                    absent_delay = (absent_delay * 2).min(self.config.absent_retry_max);
                    d
                };
                if self.pause(delay, &found).await {
                    break;
                }
                continue;
            };
            absent_delay = self.config.reload_retry.max(Duration::from_millis(50));
            self.on_connected(&connection);
            tokio::spawn(self.clone().watch_silence(connection.clone()));
            tokio::select! {
                _ = connection.closed.cancelled() => {}
                _ = self.stopping.cancelled() => connection.close(CloseReason::Stopped),
            }
            self.on_disconnected(&connection);
        }
        self.phase.send_replace(Phase::Stopped);
    }

    /// Sleeps `delay`, waking early when the discovery files change; true
    /// when the link is stopping.
    async fn pause(&self, delay: Duration, seen: &Candidates) -> bool {
        let until = Instant::now() + delay;
        loop {
            let step = until.saturating_duration_since(Instant::now()).min(Duration::from_millis(25));
            if step.is_zero() {
                return false;
            }
            tokio::select! {
                _ = tokio::time::sleep(step) => {}
                _ = self.stopping.cancelled() => return true,
            }
            if self.config.locator.project.is_some() && self.config.locator.candidates() != *seen {
                return false;
            }
        }
    }

    fn on_connected(&self, connection: &Arc<EditorConnection>) {
        let previous = self.phase.borrow().clone();
        {
            let mut memory = lock(&self.memory);
            if let Phase::Away { since, at } = previous {
                memory.reloads += 1;
                memory.last_reload = Some(ReloadRecord {
                    started_at: iso_timestamp(at),
                    reconnected_after_ms: since.elapsed().as_millis() as u64,
                });
            }
            memory.last = Some(connection.clone());
            memory.tried.clear();
            memory.discovery_reloading = false;
        }
        tracing::info!(port = connection.port, framing = %connection.framing, "connected to the Unity Editor");
        self.phase.send_replace(Phase::Connected { connection: connection.clone(), since: SystemTime::now() });
        let _ = self.events.send(LinkEvent::Connected);
    }

    fn on_disconnected(&self, connection: &Arc<EditorConnection>) {
        let reason = connection.reason();
        tracing::info!(?reason, "the connection to the Unity Editor closed");
        let next = match &reason {
            CloseReason::Shutdown(r) if r == "EditorQuit" => Phase::Absent,
            CloseReason::Stopped => Phase::Stopped,
            _ => Phase::Away { since: Instant::now(), at: SystemTime::now() },
        };
        self.phase.send_replace(next);
        let _ = self.events.send(LinkEvent::Disconnected);
    }

    /// The framings to try, in order.
    fn framings(&self) -> Vec<Framing> {
        match self.config.framing {
            FramingChoice::Header => vec![Framing::Header],
            FramingChoice::Newline => vec![Framing::Newline],
            FramingChoice::Auto => match lock(&self.memory).last.as_ref().map(|c| c.framing) {
                Some(Framing::Newline) => vec![Framing::Newline, Framing::Header],
                _ => vec![Framing::Header, Framing::Newline],
            },
        }
    }

    /// Connects to one candidate and shakes hands; checks it is this
    /// project's Editor.
    async fn connect(&self, candidate: &Candidate) -> Result<Arc<EditorConnection>, ConnectError> {
        let mut last = None;
        for framing in self.framings() {
            match self.connect_with(candidate, framing).await {
                Err(ConnectError::WrongFraming(why)) => last = Some(ConnectError::WrongFraming(why)),
                other => return other,
            }
        }
        Err(last.unwrap_or_else(|| ConnectError::Unreachable("no framing to try".into())))
    }

    async fn connect_with(
        &self,
        candidate: &Candidate,
        framing: Framing,
    ) -> Result<Arc<EditorConnection>, ConnectError> {
        let number = self.next_connection.fetch_add(1, Ordering::Relaxed);
        let connection = EditorConnection::open(
            candidate.port,
            framing,
            number,
            &self.config,
            self.recorder.clone(),
            self.events.clone(),
        )
        .await
        .map_err(ConnectError::Unreachable)?;
        let limit = self.config.connect_timeout;
        match connection.exchange(self.fresh_id(), "get-version", json!({}), limit).await {
            Ok(version) => {
                let info = EditorInfo::from_version(&version);
                if let (Some(project), Some(data_path)) = (&self.config.locator.project, &info.data_path) {
                    if !same_folder(std::path::Path::new(data_path), &project.join("Assets")) {
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
            Err(ExchangeError::Editor(e)) => {
                if e.kind() != ErrorKind::MethodNotFound {
                    tracing::warn!(%e, "the Editor answered get-version with an error");
                }
            }
            Err(ExchangeError::NoAnswer) => {
                connection.close(CloseReason::Stopped);
                return Err(ConnectError::Silent(format!(
                    "connected, but no answer to get-version within {limit:?} (Unity busy or hung)"
                )));
            }
            Err(e @ (ExchangeError::Closed(_) | ExchangeError::Unusable(_))) => {
                connection.close(CloseReason::Stopped);
                return Err(ConnectError::WrongFraming(format!("{e} ({framing} framing)")));
            }
        }
        lock(&connection.session_id).clone_from(&candidate.session_id);
        let name = lock(&self.memory).client_name.clone();
        if let Some(name) = name {
            let _ = connection.exchange(self.fresh_id(), "set-client-name", json!({"ClientName": name}), limit).await;
        }
        Ok(connection)
    }
}
