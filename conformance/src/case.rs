//! Cases, levels and statuses (h2spec / Autobahn style).

use std::{borrow::Cow, fmt, future::Future, pin::Pin, sync::Arc};

use crate::{finding::Finding, target::Session};

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
    /// A domain reload: through a control API, or the real way when the
    /// project is known ([`crate::reload`]); and the project's discovery file.
    Reload,
    /// What only a control API gives (named here: a port move, a fault, a
    /// setting, a quit), and the project's discovery file.
    Control(&'static str),
    /// The project's files (what the fixture project says).
    Project,
    /// A fake Editor the suite starts itself, with a fault scenario loaded
    /// (or, for a scenario of wire faults only, `fake-unity proxy` in
    /// front of the target: the case says when it cannot run).
    Faults,
}

/// One of this project's extensions of the protocol, as `Capabilities`
/// names it: the editor link's own vocabulary.
pub use editor_link::version::Extension;

/// Which Editor a catalogue is: a case about a catalogue's tool applies only
/// to an Editor whose catalogue it is (the protocol does not fix one). The
/// suite has a reference for each dialect's (`Dialect::catalogue`).
pub use editor_link::dialect::Dialect;

/// What a case checks, and so what the Editor must offer for it to apply:
/// the core protocol (no extensions), extensions of this project, the tools
/// it calls, and whether it checks a tool catalogue's reference rather than
/// the protocol.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Requires {
    pub extensions: Vec<Extension>,
    /// Tools the case calls: the Editor must list them.
    pub tools: Vec<Cow<'static, str>>,
    /// It checks a catalogue's tools (their schemas or results as its
    /// reference gives them), not the protocol: the catalogue of this dialect.
    pub catalogue: Option<&'static Dialect>,
    /// It compares what the Editor says with what `fixtures/unity-project`
    /// holds (its scene, scripts, tests): it applies only where that project
    /// is open ([`crate::target::is_fixture_project`]).
    pub fixture_project: bool,
}

impl Requires {
    /// The core protocol, with no particular tool.
    pub const CORE: Requires =
        Requires { extensions: Vec::new(), tools: Vec::new(), catalogue: None, fixture_project: false };

    /// The core protocol, calling `tools`.
    pub fn tools(tools: &[&'static str]) -> Requires {
        Requires { tools: tools.iter().map(|t| Cow::Borrowed(*t)).collect(), ..Requires::CORE }
    }

    /// An extension of this project.
    pub fn extension(extension: Extension) -> Requires {
        Requires { extensions: vec![extension], ..Requires::CORE }
    }

    /// The reference of `catalogue`'s catalogue as a whole.
    pub fn catalogue(catalogue: &'static Dialect) -> Requires {
        Requires { catalogue: Some(catalogue), ..Requires::CORE }
    }

    /// A tool of the package's catalogue.
    pub fn catalogue_tool(tool: impl Into<Cow<'static, str>>) -> Requires {
        Requires::catalogue(&editor_link::dialect::PACKAGE).and_tool(tool)
    }

    pub fn and_extension(mut self, extension: Extension) -> Requires {
        self.extensions.push(extension);
        self
    }

    pub fn and_tool(mut self, tool: impl Into<Cow<'static, str>>) -> Requires {
        self.tools.push(tool.into());
        self
    }

    /// Only where `fixtures/unity-project` is open.
    pub fn on_the_fixture_project(mut self) -> Requires {
        self.fixture_project = true;
        self
    }

    /// Its profile in words: `core`, the catalogue's (`catalogue:package`),
    /// or the extensions' names.
    pub fn profile(&self) -> String {
        match (self.extensions.as_slice(), self.catalogue) {
            ([], None) => "core".into(),
            ([], Some(catalogue)) => format!("catalogue:{catalogue}"),
            (extensions, _) => extensions.iter().map(|e| e.name()).collect::<Vec<_>>().join("+"),
        }
    }
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
    /// What it checks, and what the Editor must offer for it to apply.
    pub requires: Requires,
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
            return Err($crate::finding::Finding::Violation(format!($($fmt)+)));
        }
    };
}
