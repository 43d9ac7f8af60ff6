//! One call to the Editor, answered exactly once, by its deadline, saying
//! truthfully whether the Editor may have run it.
//!
//! A call follows the Editor through reloads: a request that never left the
//! bridge is simply sent again; one that reached an Editor whose connection
//! then ended is resumed (`x-resume`, protocol §5) only on that same Editor
//! process — the resume journal survives a domain reload, not a crash — and
//! sent afresh only when the tool only reads. Anything else is reported as
//! it is: it may have run.

use std::{
    fmt,
    sync::Arc,
    time::{Duration, Instant},
};

use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    Link,
    socket::{CloseReason, EditorConnection, Reply},
    whereabouts::Absence,
};
use editor_link::jsonrpc::{ErrorKind, ErrorObject, Id, Request, Response};

use crate::raw_json::RawJson;

/// How one call goes.
#[derive(Clone, Debug)]
pub struct CallOptions {
    pub deadline: Instant,
    pub cancel: CancellationToken,
    /// Receives the Editor's `notifications/progress` params for this call.
    pub progress: Option<mpsc::UnboundedSender<Value>>,
    /// The tool only reads: sending it again after a cut-off is harmless.
    pub read_only: bool,
}

impl CallOptions {
    pub fn within(timeout: Duration) -> Self {
        CallOptions {
            deadline: editor_link::duration::instant_after(Instant::now(), timeout),
            cancel: CancellationToken::new(),
            progress: None,
            read_only: false,
        }
    }
}

/// How the connection that carried a call ended before its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutOff {
    /// A domain reload (the Editor said so).
    Reload,
    /// The Editor quit.
    Quit,
    /// Another Editor process answers now: the one that received the call
    /// is gone (it crashed, or was closed and opened again).
    Restarted,
    /// The connection closed without a word (a crash, a broken socket).
    Lost,
    /// The Editor stopped answering and the bridge gave up on the connection.
    Silent,
}

impl CutOff {
    fn of(reason: &CloseReason) -> CutOff {
        match reason {
            CloseReason::Shutdown(why) if why == "EditorQuit" => CutOff::Quit,
            CloseReason::Shutdown(_) => CutOff::Reload,
            CloseReason::Silent | CloseReason::Overdue | CloseReason::Cancelled => CutOff::Silent,
            CloseReason::PeerClosed | CloseReason::Failed(_) | CloseReason::Open | CloseReason::Stopped => CutOff::Lost,
        }
    }

    /// What happened, as the middle of a sentence.
    pub fn describe(self) -> &'static str {
        match self {
            CutOff::Reload => "Unity reloaded its scripts (a domain reload)",
            CutOff::Quit => "Unity quit",
            CutOff::Restarted => "Unity restarted (a new Editor process, after a crash or a restart)",
            CutOff::Lost => "the connection to Unity closed without warning (Unity may have crashed)",
            CutOff::Silent => "Unity stopped answering (hung or frozen), so the bridge closed the connection",
        }
    }
}

/// Why a request could not be sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotSent {
    /// No Editor was reachable; what was tried.
    NoEditor { tried: Vec<String> },
    /// An Editor was connected, but the request could not be written to it
    /// (it was not reading).
    Blocked,
    /// An Editor that answers one request at a time per connection was
    /// connected, but every connection the bridge may open to it was busy
    /// with another call.
    Busy { connections: usize },
    /// An open Editor accepted the connection at `endpoint` and did not
    /// answer the handshake: its main thread is likely held.
    Unanswered { endpoint: String },
    /// Nothing to wait for, as a look begun after the call asked found.
    Absent(Absence),
}

/// Why a call did not return a result.
#[derive(Clone, Debug, PartialEq)]
pub enum CallError {
    /// The Editor answered with a JSON-RPC error.
    Editor(ErrorObject),
    /// The answer was larger than the response limit.
    TooLarge { size: u64, limit: usize },
    /// The answer was not valid JSON (its id could still be read).
    Unreadable { reason: String },
    /// The caller cancelled.
    Cancelled,
    /// The deadline passed before the request left the bridge: it did not run.
    NotSent { seconds: f64, why: NotSent },
    /// The request reached the Editor and no answer came by the deadline: it
    /// may have run, or still be running. `after` says how its connection
    /// ended, when it did and no Editor took the call up again.
    NoAnswer { seconds: f64, after: Option<CutOff> },
    /// The request reached the Editor, whose connection then ended, and it
    /// could not be resumed or safely sent again: it may have run.
    CutOff(CutOff),
}

impl CallError {
    /// The same error with its seconds counted from `started`: the client's
    /// call, which may have waited for the Editor's tool list before the link
    /// was asked (so "within 1 s" was said of a call that had waited 3 s).
    pub fn counted_from(self, started: Instant) -> CallError {
        let seconds = seconds_since(started);
        match self {
            CallError::NotSent { why, .. } => CallError::NotSent { seconds, why },
            CallError::NoAnswer { after, .. } => CallError::NoAnswer { seconds, after },
            other => other,
        }
    }

    /// Whether the Editor may have run the call (or still be running it).
    pub fn may_have_run(&self) -> bool {
        match self {
            CallError::NotSent { .. } => false,
            CallError::NoAnswer { .. } | CallError::CutOff(_) | CallError::TooLarge { .. } => true,
            CallError::Unreadable { .. } => true,
            CallError::Cancelled => true,
            CallError::Editor(e) => !matches!(
                e.kind(),
                ErrorKind::MethodNotFound
                    | ErrorKind::InvalidParams
                    | ErrorKind::SecurityBlocked
                    | ErrorKind::ToolDisabled
                    | ErrorKind::ProjectMismatch
                    | ErrorKind::SessionChanged
                    | ErrorKind::Unauthorized
                    | ErrorKind::InvalidRequest
                    | ErrorKind::ParseError
            ),
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Editor(e) => write!(f, "{e}"),
            CallError::TooLarge { size, limit } => {
                write!(f, "the answer ({size} bytes) is over the {limit}-byte limit")
            }
            CallError::Unreadable { reason } => write!(f, "the answer was not valid JSON: {reason}"),
            CallError::Cancelled => f.write_str("cancelled"),
            CallError::NotSent { seconds, why: NotSent::NoEditor { tried } } => {
                write!(f, "not sent within {seconds} s: no Unity Editor found (tried: {})", tried.join("; "))
            }
            CallError::NotSent { seconds, why: NotSent::Absent(absence) } => {
                write!(f, "not sent (after {seconds} s): {absence}")
            }
            CallError::NotSent { seconds, why: NotSent::Blocked } => {
                write!(f, "not sent within {seconds} s: the Editor was not reading")
            }
            CallError::NotSent { seconds, why: NotSent::Unanswered { endpoint } } => {
                write!(
                    f,
                    "not sent within {seconds} s: the Editor at {endpoint} accepted the connection but did not answer"
                )
            }
            CallError::NotSent { seconds, why: NotSent::Busy { connections } } => {
                write!(f, "not sent within {seconds} s: all {connections} connections to the Editor were busy")
            }
            CallError::NoAnswer { seconds, after: None } => write!(f, "no answer from Unity within {seconds} s"),
            CallError::NoAnswer { seconds, after: Some(cut) } => {
                write!(f, "{} and no Editor took the call up within {seconds} s", cut.describe())
            }
            CallError::CutOff(cut) => f.write_str(cut.describe()),
        }
    }
}

impl std::error::Error for CallError {}

/// How many times one call follows the Editor through reloads.
const MAX_ATTEMPTS: usize = 8;

/// A request that reached an Editor whose connection then ended.
#[derive(Clone, Debug)]
struct Reached {
    /// The Editor process it reached, when that Editor names itself.
    instance: Option<String>,
    cut: CutOff,
}

/// What to do with a call that reached an Editor, on the next connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    /// The same Editor process, with its resume journal: ask it (`x-resume`).
    Resume,
    /// Send it as a new request (it only reads).
    Fresh,
    /// Report it: it may have run.
    GiveUp(CutOff),
}

/// The rule of this module: resume only where the journal is, resend only
/// what only reads.
fn next_step(reached: &Reached, now: &super::EditorInfo, read_only: bool) -> Next {
    let same_editor = reached.instance.is_some() && now.instance() == reached.instance.as_deref();
    if same_editor && now.can_resume() {
        Next::Resume
    } else if read_only {
        Next::Fresh
    } else if reached.instance.is_some() && !same_editor {
        Next::GiveUp(CutOff::Restarted)
    } else {
        Next::GiveUp(reached.cut)
    }
}

/// A call that stopped waiting for a connection (the link's, or a lane):
/// cancelled, or at its deadline — then not sent, unless an earlier attempt
/// reached an Editor.
fn gave_up_waiting(wait: super::Wait, started: Instant, reached: Option<&Reached>) -> CallError {
    match wait {
        super::Wait::Cancelled => CallError::Cancelled,
        // Waiting for a lane comes after any reconnection, so nothing was
        // sent on this attempt: an earlier one that reached the Editor still
        // makes it "may have run".
        super::Wait::Busy { connections } => match reached {
            Some(r) => CallError::NoAnswer { seconds: seconds_since(started), after: Some(r.cut) },
            None => CallError::NotSent { seconds: seconds_since(started), why: NotSent::Busy { connections } },
        },
        super::Wait::Unanswered { silence } => match reached {
            Some(r) => CallError::NoAnswer { seconds: seconds_since(started), after: Some(r.cut) },
            None => CallError::NotSent {
                seconds: seconds_since(started),
                why: NotSent::Unanswered { endpoint: silence.endpoint },
            },
        },
        super::Wait::Deadline { tried } => {
            let seconds = seconds_since(started);
            match reached {
                Some(r) => CallError::NoAnswer { seconds, after: Some(r.cut) },
                None => CallError::NotSent { seconds, why: NotSent::NoEditor { tried } },
            }
        }
        // An earlier attempt reached an Editor that is gone now for certain:
        // it may have run, said now rather than at the deadline.
        super::Wait::Absent(absence) => {
            let seconds = seconds_since(started);
            match reached {
                Some(r) => CallError::NoAnswer { seconds, after: Some(r.cut) },
                None => CallError::NotSent { seconds, why: NotSent::Absent(absence) },
            }
        }
    }
}

fn seconds_since(started: Instant) -> f64 {
    (started.elapsed().as_secs_f64() * 10.0).round() / 10.0
}

/// Where one call stands between its attempts: the id it goes out with,
/// whether it asks the Editor's journal (`x-resume`), and whether an
/// earlier attempt reached an Editor.
#[derive(Debug)]
struct Attempt {
    id: Id,
    resume: bool,
    reached: Option<Reached>,
}

/// What one attempt came to.
#[derive(Debug)]
enum Tried {
    /// The call's answer (a result, or why there is none).
    Answered(Result<RawJson, CallError>),
    /// Its connection ended: the next connection gets it.
    Again,
}

impl Attempt {
    /// The attempt on a connection to an Editor that says `now`, after
    /// one that reached an Editor: resumed, sent afresh, or given up
    /// ([`next_step`]).
    fn follow(
        &mut self,
        now: &super::EditorInfo,
        read_only: bool,
        fresh: impl FnOnce() -> Id,
    ) -> Result<(), CallError> {
        let Some(reached) = &self.reached else { return Ok(()) };
        match next_step(reached, now, read_only) {
            Next::Resume => self.resume = true,
            Next::Fresh => *self = Attempt { id: fresh(), resume: false, reached: None },
            Next::GiveUp(cut) => return Err(CallError::CutOff(cut)),
        }
        Ok(())
    }

    fn request(&self, method: &str, params: &Value) -> Request {
        let request = Request::new(self.id.clone(), method, params.clone());
        if self.resume { request.resumed() } else { request }
    }

    /// Why the call ends after every attempt was cut off.
    fn exhausted(self, started: Instant, tried: Vec<String>) -> CallError {
        match self.reached {
            Some(r) => CallError::CutOff(r.cut),
            None => CallError::NotSent { seconds: seconds_since(started), why: NotSent::NoEditor { tried } },
        }
    }
}

impl Link {
    /// Calls a tool on the Editor: waits for a connection, follows the Editor
    /// through reloads, and answers exactly once, by `options.deadline`.
    pub async fn call(self: &Arc<Self>, method: &str, params: Value, options: CallOptions) -> Result<Value, CallError> {
        self.call_raw(method, params, options).await.map(|result| result.to_value())
    }

    /// [`Link::call`], its result as the Editor wrote it (a tool's result
    /// is relayed without being parsed into a tree). Each attempt: a
    /// connection (the link's, and a lane of its own where the Editor
    /// answers in order), the call resumed or sent afresh as its last
    /// attempt allows, the client named, then one exchange.
    pub async fn call_raw(
        self: &Arc<Self>,
        method: &str,
        params: Value,
        options: CallOptions,
    ) -> Result<RawJson, CallError> {
        let started = Instant::now();
        let mut attempt = Attempt { id: self.dialer.fresh_id(), resume: false, reached: None };
        for _ in 0..MAX_ATTEMPTS {
            let gave_up = |wait, attempt: &Attempt| gave_up_waiting(wait, started, attempt.reached.as_ref());
            let connection = match self.connection(options.deadline, &options.cancel, false).await {
                Ok(connection) => connection,
                Err(wait) => return Err(gave_up(wait, &attempt)),
            };
            attempt.follow(&connection.info(), options.read_only, || self.dialer.fresh_id())?;
            // An Editor that answers one request at a time per connection:
            // the call gets a connection of its own (lanes.rs), held until
            // this attempt ends.
            let lane = match connection.info().dialect.concurrent() {
                true => None,
                false => match self.lanes.lane(&self.dialer, &connection, options.deadline, &options.cancel).await {
                    Ok(lane) => lane,
                    Err(wait) => return Err(gave_up(wait, &attempt)),
                },
            };
            let connection = lane.as_ref().map_or(connection, |lane| lane.connection.clone());
            self.name_the_client(&connection, options.deadline).await;
            match self.exchange(&connection, method, &params, &options, started, &mut attempt).await {
                Tried::Answered(outcome) => return outcome,
                Tried::Again => {}
            }
        }
        Err(attempt.exhausted(started, self.status().tried))
    }

    /// One attempt on `connection`: the request sent, its answer awaited by
    /// the deadline (or the caller's cancellation), and what the answer, or
    /// the connection's end, means for the call.
    async fn exchange(
        &self,
        connection: &EditorConnection,
        method: &str,
        params: &Value,
        options: &CallOptions,
        started: Instant,
        attempt: &mut Attempt,
    ) -> Tried {
        let id = attempt.id.clone();
        let (reply, delivery) = connection.request(attempt.request(method, params), options.progress.clone(), false);
        let in_order = !connection.info().dialect.concurrent();
        let reply = tokio::select! {
            reply = reply => reply,
            _ = tokio::time::sleep_until(options.deadline.into()) => {
                // A late answer finds no one waiting and is dropped.
                tracing::debug!(method, %id, "no answer by the call's deadline");
                connection.forget(&id);
                let seconds = seconds_since(started);
                let sent = delivery.withdraw();
                if sent && in_order {
                    // uLoopMCP answers one request at a time per
                    // connection: what is sent after this on it would
                    // wait for an answer no one wants (forever, if the
                    // connection went half-open). Closed, it frees the
                    // Editor's side at once.
                    connection.close(CloseReason::Overdue);
                }
                return Tried::Answered(Err(match (sent, &attempt.reached) {
                    (true, _) => CallError::NoAnswer { seconds, after: None },
                    (false, Some(r)) => CallError::NoAnswer { seconds, after: Some(r.cut) },
                    (false, None) => CallError::NotSent { seconds, why: NotSent::Blocked },
                }));
            }
            _ = options.cancel.cancelled() => {
                connection.forget(&id);
                if delivery.withdraw() && in_order {
                    // As at the deadline: the Editor would answer the
                    // cancelled call before anything sent after it.
                    connection.close(CloseReason::Cancelled);
                }
                return Tried::Answered(Err(CallError::Cancelled));
            }
        };
        let reply = match reply {
            Ok(reply) => reply,
            Err(_) if delivery.reached() => return self.cut_off(connection, method, options, attempt),
            Err(_) => {
                tracing::info!(method, %id, "call not sent before the connection closed; sending it again");
                return Tried::Again;
            }
        };
        Tried::Answered(match reply {
            // The Editor says the resumed call was cut off before it
            // finished; a read-only call is simply made again.
            Reply::Response(Response { outcome: Err(e), .. })
                if attempt.resume && options.read_only && e.kind() == ErrorKind::Interrupted =>
            {
                *attempt = Attempt { id: self.dialer.fresh_id(), resume: false, reached: None };
                return Tried::Again;
            }
            Reply::Result(result) => Ok(result),
            Reply::Response(response) => response.outcome.map(|v| RawJson::from_value(&v)).map_err(CallError::Editor),
            Reply::TooLarge { size, limit } => Err(CallError::TooLarge { size, limit }),
            Reply::Unreadable(reason) => Err(CallError::Unreadable { reason }),
        })
    }

    /// The connection ended after the Editor may have read the call: it is
    /// given up now when nothing can take it up again, else followed to
    /// the next connection.
    fn cut_off(
        &self,
        connection: &EditorConnection,
        method: &str,
        options: &CallOptions,
        attempt: &mut Attempt,
    ) -> Tried {
        let info = connection.info();
        let cut = match CutOff::of(&connection.reason()) {
            // uLoopMCP 3 says nothing before a reload: its lock file does.
            CutOff::Lost if self.dialer.config_now().reload_lock_says_reloading(info.dialect) => CutOff::Reload,
            cut => cut,
        };
        if !options.read_only && !info.can_resume() {
            return Tried::Answered(Err(CallError::CutOff(cut)));
        }
        tracing::info!(method, id = %attempt.id, ?cut, "call cut off after it reached the Editor");
        attempt.reached = Some(Reached { instance: info.instance().map(str::to_owned), cut });
        Tried::Again
    }

    /// A connection that is open, waiting for one up to the deadline.
    pub(super) async fn connection(
        &self,
        deadline: Instant,
        cancel: &CancellationToken,
        on_purpose: bool,
    ) -> Result<std::sync::Arc<EditorConnection>, super::Wait> {
        let asked = Instant::now();
        let mut watch = self.phase.subscribe();
        // Subscribed once not connected (the verdict is of no use before).
        let mut verdicts: Option<tokio::sync::watch::Receiver<super::Verdict>> = None;
        loop {
            if let super::Phase::Connected { connection, .. } = &*watch.borrow_and_update() {
                if !connection.closed.is_cancelled() {
                    return Ok(connection.clone());
                }
            }
            let verdicts = verdicts.get_or_insert_with(|| {
                // Not connected: a fresh look, now, for a verdict of this call's time.
                self.look_now.notify_one();
                self.verdict.subscribe()
            });
            {
                let verdict = verdicts.borrow_and_update();
                if let Some(absence) = verdict.absence.as_ref().filter(|_| verdict.looked_at >= asked) {
                    if !(on_purpose && absence.can_end_by_waiting()) {
                        return Err(super::Wait::Absent(absence.clone()));
                    }
                }
            }
            tokio::select! {
                changed = watch.changed() => {
                    if changed.is_err() {
                        return Err(super::Wait::Deadline { tried: vec!["the bridge is stopping".into()] });
                    }
                }
                _ = verdicts.changed() => {}
                _ = tokio::time::sleep_until(deadline.into()) => {
                    return Err(match self.silence() {
                        Some(silence) => super::Wait::Unanswered { silence },
                        None => super::Wait::Deadline { tried: self.status().tried },
                    });
                }
                _ = cancel.cancelled() => return Err(super::Wait::Cancelled),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::EditorInfo;
    use editor_link::version::Extension;

    fn editor(instance: Option<&str>, resume: bool) -> EditorInfo {
        let version = editor_link::version::Version {
            editor_instance_id: instance.map(str::to_owned),
            capabilities: Some(editor_link::version::Capabilities::of(resume.then_some(Extension::Resume))),
            ..Default::default()
        };
        EditorInfo { version, dialect: &editor_link::dialect::PACKAGE }
    }

    fn reached(instance: Option<&str>, cut: CutOff) -> Reached {
        Reached { instance: instance.map(str::to_owned), cut }
    }

    #[test]
    fn a_call_that_may_have_run_is_resumed_only_where_its_journal_is() {
        let at_a = reached(Some("a"), CutOff::Reload);
        assert_eq!(next_step(&at_a, &editor(Some("a"), true), false), Next::Resume, "reloaded, same process");
        assert_eq!(next_step(&at_a, &editor(Some("b"), true), false), Next::GiveUp(CutOff::Restarted));
        assert_eq!(next_step(&at_a, &editor(Some("b"), true), true), Next::Fresh, "it only reads");
        assert_eq!(next_step(&at_a, &editor(None, true), false), Next::GiveUp(CutOff::Restarted));
        let anonymous = reached(None, CutOff::Lost);
        assert_eq!(next_step(&anonymous, &editor(None, true), false), Next::GiveUp(CutOff::Lost));
        assert_eq!(next_step(&anonymous, &editor(Some("a"), true), false), Next::GiveUp(CutOff::Lost));
        assert_eq!(next_step(&anonymous, &editor(None, false), true), Next::Fresh);
    }

    #[test]
    fn errors_say_whether_the_editor_may_have_run_the_call() {
        let no_editor = CallError::NotSent { seconds: 2.0, why: NotSent::NoEditor { tried: vec!["port 8700".into()] } };
        assert!(!no_editor.may_have_run());
        assert_eq!(no_editor.to_string(), "not sent within 2 s: no Unity Editor found (tried: port 8700)");
        assert!(CallError::NoAnswer { seconds: 2.0, after: None }.may_have_run());
        assert!(CallError::CutOff(CutOff::Restarted).may_have_run());
        let blocked = ErrorObject::new(ErrorKind::SecurityBlocked, "no");
        assert!(!CallError::Editor(blocked).may_have_run());
    }
}
