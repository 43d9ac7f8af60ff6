//! Why a check did not pass: the one word every layer of the suite uses
//! for it (cases, the Editor client, the bridge under test, the runner).

/// Why a check did not pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The target broke the requirement.
    Violation(String),
    /// The harness could not carry out the check.
    Harness(String),
    /// The Editor could not be reached: a connection to it failed, for a
    /// cause the runner tells apart. (A harness error in itself; the runner
    /// waits for a shared Editor to recover after it, and fails the case
    /// only when it does not.)
    Unreachable(Unreachable),
    /// The target cannot run this case (why, in words): reported skipped.
    NotApplicable(String),
}

impl Finding {
    /// What was found, in words.
    pub fn detail(&self) -> &str {
        match self {
            Finding::Violation(why) | Finding::Harness(why) | Finding::NotApplicable(why) => why,
            Finding::Unreachable(unreachable) => &unreachable.detail,
        }
    }

    /// A failure to reach or use the Editor as a violation of the case,
    /// `context` saying what failed; not applicable stays so.
    pub fn into_violation(self, context: impl FnOnce(&str) -> String) -> Finding {
        match self {
            not_applicable @ Finding::NotApplicable(_) => not_applicable,
            other => Finding::Violation(context(other.detail())),
        }
    }
}

/// A connection to the Editor that failed: its cause and the words for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreachable {
    pub cause: ConnectCause,
    pub detail: String,
}

impl Unreachable {
    /// `connecting` (say, "cannot connect to tcp://…") failed with `error`.
    pub fn connecting(connecting: impl std::fmt::Display, error: &std::io::Error) -> Unreachable {
        let cause = ConnectCause::of(error);
        Unreachable { cause, detail: format!("{connecting}: {error} ({})", cause.describe()) }
    }

    /// The connection did not complete in time.
    pub fn timed_out(detail: impl Into<String>) -> Unreachable {
        Unreachable { cause: ConnectCause::TimedOut, detail: detail.into() }
    }
}

/// Why a connection to the Editor failed, told apart by the error's kind
/// and number, never its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectCause {
    /// Nothing listens there (ECONNREFUSED): no Editor, or between domains.
    Refused,
    /// The listener's queue is full (a local socket's EAGAIN): it is alive
    /// but not accepting fast enough.
    BacklogFull,
    /// The system forbids it (EACCES, EPERM: a sandbox, another user's socket).
    PermissionDenied,
    /// The socket or pipe is gone (ENOENT), or the connection was reset.
    Gone,
    /// No answer to the connect in time (a full TCP backlog drops it).
    TimedOut,
    /// Anything else.
    Other,
}

impl ConnectCause {
    pub fn of(error: &std::io::Error) -> ConnectCause {
        use std::io::ErrorKind;
        match error.kind() {
            ErrorKind::ConnectionRefused => ConnectCause::Refused,
            ErrorKind::WouldBlock => ConnectCause::BacklogFull,
            ErrorKind::PermissionDenied => ConnectCause::PermissionDenied,
            ErrorKind::NotFound | ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted => ConnectCause::Gone,
            ErrorKind::TimedOut => ConnectCause::TimedOut,
            _ => ConnectCause::Other,
        }
    }

    /// In words, for the finding.
    pub fn describe(self) -> &'static str {
        match self {
            ConnectCause::Refused => "refused: nothing listens there",
            ConnectCause::BacklogFull => "its listen backlog is full: it is not accepting connections fast enough",
            ConnectCause::PermissionDenied => "not permitted",
            ConnectCause::Gone => "the endpoint is gone",
            ConnectCause::TimedOut => "no answer in time",
            ConnectCause::Other => "another error",
        }
    }
}

/// Fails the check with a violation.
pub fn violation<T>(message: impl Into<String>) -> Result<T, Finding> {
    Err(Finding::Violation(message.into()))
}
