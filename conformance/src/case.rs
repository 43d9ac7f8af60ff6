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
    /// The fake's control API (reloads) and the project's discovery file.
    Control,
    /// The project's files (what the fixture project says).
    Project,
    /// A fake Editor the suite starts itself, with a fault scenario loaded
    /// (or, for a scenario of wire faults only, `fake-unity proxy` in
    /// front of the target: the case says when it cannot run).
    Faults,
}

/// One of this project's extensions of the protocol (marked **extension** in
/// `docs/editor-link-protocol.md`): something an Editor may offer beyond the
/// core every uLoopMCP-2.x-compatible Editor follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Extension {
    /// §2 newline framing.
    NewlineFraming,
    /// §2 an over-limit frame answered `frame_too_large`, the connection kept.
    FrameTooLarge,
    /// §3 `-32601` for an unknown tool and `-32602` for invalid params.
    ErrorCodes,
    /// §5 the resume journal (`x-resume`).
    Resume,
    /// §6 `ProtocolVersion`, `EditorInstanceId` and `Capabilities` in `get-version`.
    Capabilities,
    /// §6 the `TimeoutSeconds` parameter and the `timeout` error.
    Timeouts,
    /// §6 `annotations` and `timeoutSeconds` in `get-tool-details`.
    ToolMetadata,
    /// §4 `notifications/progress`.
    Progress,
    /// §6 screenshots' `ImageDataBase64` (`IncludeImageData`).
    ImageData,
    /// §7 `Library/MCPInstance.json`.
    DiscoveryFile,
    /// §7 the token: in the discovery file, required in every request (`x-token`).
    Token,
    /// §6 `get-editor-state`: the main thread's state, answered without it.
    EditorState,
    /// §6 `press-dialog-button` (gated; the package names it on Windows).
    DialogButtons,
    /// §6 each tool's `outputSchema` in `get-tool-details`.
    OutputSchema,
}

impl Extension {
    pub fn all() -> &'static [Extension] {
        <Extension as clap::ValueEnum>::value_variants()
    }

    /// Its name (`newline-framing`), as `Capabilities` and `--extension` say it.
    pub fn name(self) -> &'static str {
        match self {
            Extension::NewlineFraming => "newline-framing",
            Extension::FrameTooLarge => "frame-too-large",
            Extension::ErrorCodes => "error-codes",
            Extension::Resume => "resume",
            Extension::Capabilities => "capabilities",
            Extension::Timeouts => "timeouts",
            Extension::ToolMetadata => "tool-metadata",
            Extension::Progress => "progress",
            Extension::ImageData => "image-data",
            Extension::DiscoveryFile => "discovery-file",
            Extension::Token => "token",
            Extension::EditorState => "editor-state",
            Extension::DialogButtons => "dialog-buttons",
            Extension::OutputSchema => "output-schema",
        }
    }
}

impl fmt::Display for Extension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tool catalogue the suite has a reference for: the tools an Editor
/// lists, their schemas and their answers. The protocol does not fix one;
/// a case about a catalogue's tool applies only to an Editor whose
/// catalogue it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Catalogue {
    /// This project's package: §6 of the protocol reference
    /// (`reference::TOOLS`); the Editor says `ProtocolVersion: 1`.
    Package,
    /// The uLoopMCP 2.1.1 package, as its server lists and answers
    /// (`fixtures/editor-models/uloop-2.1.1.tool-details.json`, the
    /// recordings of `fixtures/recordings/uloop-2.1.1/`); the Editor says
    /// `Ver: "2.1.1"` and no `ProtocolVersion`.
    #[serde(rename = "uloop-2.1.1")]
    Uloop211,
    /// uLoopMCP 3 ("Unity CLI Loop", branch `v3-beta` at c50f54c,
    /// `docs/uloop-3-wire.md`): 14 tools, `get-version` and
    /// `get-tool-details` as internal commands never listed, only `-32603`,
    /// `x-uloop.expectedProjectRoot` compared byte for byte; the Editor says
    /// `Ver: "3.0.0-beta.1"`, lists no `ping`, and listens on a Unix socket
    /// (Windows: a named pipe), not a TCP port.
    #[serde(rename = "uloop-3")]
    Uloop3,
}

impl Catalogue {
    /// Its name in case ids and profiles.
    pub fn name(self) -> &'static str {
        match self {
            Catalogue::Package => "package",
            Catalogue::Uloop211 => "uloop-2.1.1",
            Catalogue::Uloop3 => "uloop-3",
        }
    }

    pub fn all() -> [Catalogue; 3] {
        [Catalogue::Package, Catalogue::Uloop211, Catalogue::Uloop3]
    }

    /// The catalogues with MCP output snapshots (`fixtures/snapshots/mcp/`):
    /// those of the Editors the bridge reaches. Not uLoopMCP 3's yet: the
    /// bridge under test does not speak to it.
    pub fn with_snapshots() -> [Catalogue; 2] {
        [Catalogue::Package, Catalogue::Uloop211]
    }

    /// The fake Editor whose catalogue it is.
    pub fn fake_editor(self) -> fake_unity::EditorKind {
        match self {
            Catalogue::Package => fake_unity::EditorKind::Package,
            Catalogue::Uloop211 => fake_unity::EditorKind::Uloop211,
            Catalogue::Uloop3 => fake_unity::EditorKind::Uloop3,
        }
    }

    /// Where its reference is, in words.
    pub fn reference(self) -> &'static str {
        match self {
            Catalogue::Package => "the package's tool catalogue (§6's reference)",
            Catalogue::Uloop211 => "uLoopMCP 2.1.1's tool catalogue (its recorded get-tool-details and answers)",
            Catalogue::Uloop3 => "uLoopMCP 3's tool catalogue and wire (v3-beta c50f54c, docs/uloop-3-wire.md)",
        }
    }
}

impl fmt::Display for Catalogue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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
    /// reference gives them), not the protocol.
    pub catalogue: Option<Catalogue>,
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

    /// The reference of `catalogue` as a whole.
    pub fn catalogue(catalogue: Catalogue) -> Requires {
        Requires { catalogue: Some(catalogue), ..Requires::CORE }
    }

    /// A tool of the package's catalogue.
    pub fn catalogue_tool(tool: impl Into<Cow<'static, str>>) -> Requires {
        Requires::catalogue(Catalogue::Package).and_tool(tool)
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

#[cfg(test)]
mod tests {
    use super::Extension;

    #[test]
    fn each_extension_is_named_as_on_the_command_line() {
        for extension in Extension::all() {
            let value = clap::ValueEnum::to_possible_value(extension).unwrap();
            assert_eq!(extension.name(), value.get_name());
        }
    }
}
