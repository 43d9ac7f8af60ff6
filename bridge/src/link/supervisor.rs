//! The link's task: keeping the connection. Find the Editor (discovery),
//! connect and shake hands ([`super::handshake`]), serve until the
//! connection ends (a watchdog on it), and start again — at the fast reload
//! pace while the Editor is expected back, with backoff while it is absent.

use std::{
    sync::Arc,
    time::{Duration, Instant, SystemTime},
};

use super::{
    Link, LinkEvent, LinkState, Phase, ReloadRecord,
    socket::{CloseReason, EditorConnection, lock},
};
use editor_link::{discovery::iso_timestamp, endpoint::Endpoint};

use super::{
    Silence,
    folder_watch::{FolderWatch, stamps},
    handshake::{ConnectError, Unanswered},
    open_editors::Looked,
    socket::DialError,
    target::{Found, Target},
    whereabouts::{self, Absence, Chosen, ChosenBy, Place, Round, Verdict},
};

/// Outside every project with no Editor chosen, the longest pause between
/// looks.
const OUTSIDE_LOOK_EVERY: Duration = Duration::from_secs(3);

/// Finds, connects, serves until closed, repeats; until the link stops.
pub(super) async fn run(link: Arc<Link>) {
    link.keep_connected().await;
}

impl Link {
    async fn keep_connected(&self) {
        let mut config = self.dialer.config_now();
        let mut absent_delay = config.reload_retry.max(Duration::from_millis(50));
        let mut watch = FolderWatch::new(&config.published_files());
        loop {
            if self.stopping.is_cancelled() {
                break;
            }
            let looked_at = Instant::now();
            // Outside every project the open Editors decide which project
            // the link is for; several (or none) leave nothing to connect to.
            let outside = self.decide_outside().await;
            let now = self.dialer.config_now();
            if now.locator.project != config.locator.project {
                config = now;
                watch = FolderWatch::new(&config.published_files());
            }
            let (found, mut round, undecided) = match outside {
                Some((absence, looked)) => {
                    let found = Found { notes: looked.notes, ..Found::default() };
                    (found, looked.round, Some(absence))
                }
                None => (config.targets(), Round::default(), None),
            };
            self.remember_refusal(&found);
            if let Some(why) = &found.refused {
                round.denied.get_or_insert_with(|| why.clone());
            }
            let mut tried = found.notes.clone();
            let mut connected = None;
            let (last, name) = {
                let memory = lock(&self.memory);
                (memory.last.as_ref().map(|c| c.framing), memory.client_name.clone())
            };
            for (n, target) in found.targets.iter().enumerate() {
                let connecting = match self.dialer.connect(target, last, name.as_deref()).await {
                    Err(ConnectError::Silent(held)) => {
                        round.maybe_there = true;
                        self.hold(*held, &found.targets[..n], &tried).await
                    }
                    other => other,
                };
                match connecting {
                    Ok(c) => {
                        connected = Some(c);
                        break;
                    }
                    Err(why) => {
                        saw(&mut round, &target.label(), &why);
                        tried.push(format!("{} ({}): {why}", target.label(), target.source));
                    }
                }
            }
            let Some(connection) = connected else {
                {
                    let mut memory = lock(&self.memory);
                    memory.tried = tried;
                    memory.discovery_reloading = found.reloading;
                }
                let outside_undecided = undecided.is_some();
                let absence = undecided.unwrap_or_else(|| self.absence(&round));
                self.verdict.send_replace(Verdict { absence, looked_at });
                let fast = matches!(self.status().state, LinkState::Reloading);
                let delay = if fast {
                    config.reload_retry
                } else {
                    let d = absent_delay;
                    // Outside every project a look asks every open Editor its
                    // version: not every second while none is chosen (a call
                    // has the link look at once anyway).
                    let most = if outside_undecided { OUTSIDE_LOOK_EVERY } else { config.absent_retry_max };
                    absent_delay = (absent_delay * 2).min(most);
                    d
                };
                if watch.is_none() {
                    // The folders may exist by now (a project opened the first time).
                    watch = FolderWatch::new(&config.published_files());
                }
                if self.pause(delay, fast, watch.as_ref()).await {
                    break;
                }
                continue;
            };
            absent_delay = config.reload_retry.max(Duration::from_millis(50));
            self.verdict.send_replace(Verdict { absence: None, looked_at });
            self.on_connected(&connection);
            tokio::spawn(super::watchdog::watch(self.dialer.clone(), connection.clone()));
            tokio::select! {
                _ = connection.closed.cancelled() => {}
                _ = self.stopping.cancelled() => connection.close(CloseReason::Stopped),
            }
            self.on_disconnected(&connection);
        }
        self.phase.send_replace(Phase::Stopped);
    }

    /// Outside every project, which Editor the link is for: the one the
    /// agent chose; the only open one (looked for again once it is no
    /// longer running); none when several or none are open — then why, and
    /// what the look found.
    async fn decide_outside(&self) -> Option<(Option<Absence>, Looked)> {
        let seen = self.dialer.place();
        let Place::Anywhere { chosen } = &seen else { return None };
        match chosen {
            Some(Chosen { by: ChosenBy::Agent, .. }) => return None,
            Some(Chosen { project, by: ChosenBy::OnlyOpen, .. }) if whereabouts::unity_has_open(project) => {
                return None;
            }
            _ => {}
        }
        let looked = self.look_outside().await;
        lock(&self.memory).open_editors.clone_from(&looked.editors);
        match looked.editors.as_slice() {
            [only] => {
                let chosen =
                    Chosen { project: only.project.clone(), by: ChosenBy::OnlyOpen, local: only.local.clone() };
                // Unless the agent chose meanwhile.
                if self.dialer.replace_place(&seen, Place::Anywhere { chosen: Some(chosen) }) {
                    tracing::info!(project = %only.project.display(), "outside any project: the only open Unity Editor is used");
                }
                None
            }
            _ if !self.dialer.replace_place(&seen, Place::Anywhere { chosen: None }) => None,
            editors => {
                let absence = match (editors, &looked.round) {
                    ([], Round { denied: Some(why), .. }) => Some(Absence::Denied { why: why.clone() }),
                    // An Editor that did not say which project it has open
                    // may be one: no certainty that none is.
                    ([], Round { maybe_there: true, .. }) => None,
                    ([], _) => Some(Absence::NoneOpen),
                    (several, _) => Some(Absence::Several { editors: several.to_vec() }),
                };
                Some((absence, looked))
            }
        }
    }

    /// What a round in the project (or at the port given) that connected
    /// nowhere can say for certain.
    fn absence(&self, round: &Round) -> Option<Absence> {
        match self.dialer.place() {
            Place::Pinned => round.denied.clone().map(|why| Absence::Denied { why }),
            place => match place.project() {
                Some(project) => whereabouts::in_project(project, round),
                None => None,
            },
        }
    }

    /// Sleeps `delay`, waking as soon as a discovery file changes (an
    /// Editor back from a reload rewrites it the moment it listens); true
    /// when the link is stopping. The folders' watch wakes it where there is
    /// one; otherwise, while the Editor reloads (`fast`), the files are
    /// looked at every millisecond: a `stat` each, not a read.
    async fn pause(&self, delay: Duration, fast: bool, watch: Option<&FolderWatch>) -> bool {
        let files = self.dialer.config_now().published_files();
        let seen = stamps(&files);
        let changed = async {
            match watch {
                Some(watch) => watch.changed().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(changed);
        // With a watch the change wakes us; the polling is only its backstop.
        let tick = if fast && watch.is_none() { Duration::from_millis(1) } else { Duration::from_millis(25) };
        let until = Instant::now() + delay;
        loop {
            let step = until.saturating_duration_since(Instant::now()).min(tick);
            if step.is_zero() {
                return false;
            }
            tokio::select! {
                _ = tokio::time::sleep(step) => {}
                _ = &mut changed => return false,
                () = self.look_now.notified() => return false,
                _ = self.stopping.cancelled() => return true,
            }
            if !files.is_empty() && stamps(&files) != seen {
                return false;
            }
        }
    }

    /// Keeps waiting on a handshake the Editor has not answered, rather
    /// than opening another connection every round: an Editor whose main
    /// thread is held answers when it is free. Meanwhile the link says so
    /// (what was tried, and that an open Editor is silent, for the answers
    /// of calls that wait). It gives up when the connection ends, the link
    /// stops, or a look for the Editor now finds somewhere else to try
    /// first (`before`: what was tried before it, in order): a discovery
    /// file that names another port, the Editor gone from this one.
    async fn hold(
        &self,
        mut held: Unanswered,
        before: &[Target],
        tried_before: &[String],
    ) -> Result<Arc<EditorConnection>, ConnectError> {
        let config = self.config();
        let outcome = loop {
            let target = &held.candidate;
            {
                let mut memory = lock(&self.memory);
                memory.tried = tried_before.to_vec();
                memory.tried.push(format!("{} ({}): {held}", target.label(), target.source));
                memory.silent = Some(Silence { endpoint: target.label(), since: held.since });
            }
            let now = config.targets().targets;
            let ahead: Vec<&Endpoint> =
                now.iter().map(|t| &t.endpoint).take_while(|e| **e != target.endpoint).collect();
            let still_next = ahead.len() < now.len() && ahead == before.iter().map(|t| &t.endpoint).collect::<Vec<_>>();
            if !still_next {
                held.close();
                break Err(ConnectError::Unreachable("a look for the Editor now finds somewhere else to try".into()));
            }
            tokio::select! {
                answered = held.answer(config.connect_timeout) => if let Some(answered) = answered {
                    let name = lock(&self.memory).client_name.clone();
                    break self.dialer.conclude(held, answered, name.as_deref()).await;
                },
                () = self.stopping.cancelled() => {
                    held.close();
                    break Err(ConnectError::Unreachable("the bridge is stopping".into()));
                }
            }
        };
        lock(&self.memory).silent = None;
        outcome
    }

    /// Logs a refusal once (the link looks again and again).
    fn remember_refusal(&self, found: &Found) {
        let mut memory = lock(&self.memory);
        if memory.refused != found.refused {
            if let Some(why) = &found.refused {
                tracing::warn!("{why}");
            }
            memory.refused.clone_from(&found.refused);
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
        tracing::info!(endpoint = %connection.target.endpoint, framing = %connection.framing, "connected to the Unity Editor");
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
}

/// What one candidate that could not be used tells a round, by the kind of
/// its failure.
fn saw(round: &mut Round, label: &str, why: &ConnectError) {
    match why {
        ConnectError::Dial(DialError::NothingThere(_)) => {}
        ConnectError::Dial(DialError::Denied(reason)) => {
            round.denied.get_or_insert_with(|| format!("{label}: {reason}"));
        }
        // An Editor that refuses the token may be this project's only if
        // Unity has the project open (in_project asks that first).
        ConnectError::OtherProject(said) | ConnectError::Unauthorized(said) => {
            round.other_project.get_or_insert_with(|| format!("{label}: {said}"));
        }
        ConnectError::Dial(DialError::TimedOut(_) | DialError::Other(_))
        | ConnectError::Silent(_)
        | ConnectError::Unreachable(_)
        | ConnectError::WrongFraming(_) => round.maybe_there = true,
    }
}
