//! Cases, levels and statuses (h2spec / Autobahn style).

use std::{borrow::Cow, fmt, future::Future, pin::Pin, sync::Arc};

use crate::target::Session;

/// How much a requirement matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    /// A failure fails the run.
    Must,
    /// A failure is a warning.
    Should,
    /// Reported, never fails.
    Info,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::Info => "INFO",
        })
    }
}

/// What a target must offer for a case to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Only the editor link.
    Link,
    /// The fake's control API (reloads) and the project's discovery file.
    Control,
    /// The project's files (what the fixture project says).
    Project,
    /// A fake Editor the suite starts itself, with a fault scenario loaded
    /// (or, for a scenario of wire faults only, `fake-unity proxy` in
    /// front of the target: the case says when it cannot run).
    Faults,
}

/// The outcome of a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Fail,
    /// A SHOULD requirement was broken.
    Warn,
    /// An INFO case's finding.
    Info,
    /// The target cannot run this case (named in the detail).
    Skip,
    /// The harness itself failed (could not connect, timed out).
    Error,
    /// A failure the baseline expects (`--baseline`): reported, not counted.
    #[serde(rename = "expected-failure")]
    ExpectedFailure,
    /// A baseline entry that now passes: the baseline is out of date.
    #[serde(rename = "stale-baseline")]
    StaleBaseline,
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Warn => "WARN",
            Status::Info => "INFO",
            Status::Skip => "SKIP",
            Status::Error => "ERROR",
            Status::ExpectedFailure => "XFAIL",
            Status::StaleBaseline => "STALE",
        })
    }
}

/// Why a check did not pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The target broke the requirement.
    Violation(String),
    /// The harness could not carry out the check.
    Harness(String),
    /// The target cannot run this case (why, in words): reported skipped.
    NotApplicable(String),
}

pub type CheckResult = Result<(), Finding>;
pub type CheckFuture = Pin<Box<dyn Future<Output = CheckResult> + Send>>;

/// A case's check: given a fresh session, the verdict.
pub type Check = Arc<dyn Fn(Session) -> CheckFuture + Send + Sync>;

/// A check from a function or closure.
pub fn check(f: impl Fn(Session) -> CheckFuture + Send + Sync + 'static) -> Check {
    Arc::new(f)
}

/// One case of the catalogue.
#[derive(Clone)]
pub struct Case {
    /// Stable id: protocol section and slug, `2.newline-framing` (cases made
    /// per tool carry the tool's name: `3.invalid-params.get-logs`).
    pub id: Cow<'static, str>,
    /// The requirement, in words.
    pub requirement: Cow<'static, str>,
    /// Where it is written: `docs/editor-link-protocol.md §2`.
    pub reference: &'static str,
    pub level: Level,
    pub needs: Needs,
    pub check: Check,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Case").field("id", &self.id).field("level", &self.level).finish_non_exhaustive()
    }
}

/// Fails the check with a violation unless `cond` holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err($crate::case::Finding::Violation(format!($($fmt)+)));
        }
    };
}

/// Fails the check with a violation.
pub fn violation<T>(message: impl Into<String>) -> Result<T, Finding> {
    Err(Finding::Violation(message.into()))
}
