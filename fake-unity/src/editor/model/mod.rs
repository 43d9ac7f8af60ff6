//! The Editor fake-unity plays, chosen at start (`serve --editor NAME`): its
//! tool catalogue and its wire policies, as data. The Editor core asks its
//! [`EditorModel`] how to do a thing; it never asks which Editor it is.
//!
//! - [`errors`] — how each failure is answered (codes, shapes, texts), and
//!   which failures the Editor also writes to its console.
//! - [`framing`] — what a connection accepts: framings, a header block that
//!   does not parse, an over-limit frame.
//! - [`discovery`] — where the Editor says it listens, and in what shape.
//! - [`messages`] — how a request is read and checked before a tool runs,
//!   and how answers are encoded.
//! - [`listener`] — how connections are accepted and kept.
//! - [`lifecycle`] — what a reload or a quit does to clients and calls.
//! - [`Extensions`] — which of this project's protocol extensions it offers.
//!
//! The deliberate defects (`serve --defect NAME`) are values of these
//! policies too (`Defect::shape`): the core carries out a policy, whichever
//! Editor or defect chose it.
//!
//! Three Editors: [`EditorKind::Package`], this project's Unity package
//! (`docs/editor-link-protocol.md` with every extension),
//! [`EditorKind::Uloop211`], the uLoopMCP 2.1.1 Editor server most users
//! of the protocol run, as it is on the wire, and [`EditorKind::Uloop3`],
//! uLoopMCP 3 ("Unity CLI Loop", branch `v3-beta` at c50f54c,
//! `docs/uloop-3-wire.md`): a Unix domain socket or named pipe named after
//! the project, no discovery file, no notifications.

pub mod discovery;
pub mod errors;
pub mod framing;
pub mod lifecycle;
pub mod listener;
pub mod messages;

pub use discovery::{DiscoveryFileKind, DiscoveryPolicy};
use editor_link::dialect::{self, Dialect};
pub use errors::{ErrorPolicy, Failure, Identity};
pub use framing::{Decoding, FramingPolicy, HeaderError, NewlineFrames, Oversize, Pipelining, Reading, ReplyFraming};
pub use lifecycle::LifecyclePolicy;
pub use listener::ListenerPolicy;
pub use messages::MessagePolicy;

/// uLoopMCP's `McpVersion.VERSION`: `Ver` in every result of the 2.1.1 Editor.
pub const ULOOP_VERSION: &str = editor_link::dialect::uloop_2_1_1::VERSION;

/// `Ver` in every result of the uLoopMCP 3 Editor.
pub const ULOOP3_VERSION: &str = editor_link::dialect::uloop_3::VERSION;

/// The commit of hatayama/uLoopMCP (branch `v3-beta`) the v3 model follows.
pub const ULOOP3_COMMIT: &str = editor_link::dialect::uloop_3::COMMIT;

/// Which Editor fake-unity plays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum EditorKind {
    /// This project's Unity package: the protocol with every extension.
    #[default]
    Package,
    /// uLoopMCP 2.1.1's Editor server: its catalogue, its errors, its framing.
    #[value(name = "uloop-2.1.1")]
    Uloop211,
    /// uLoopMCP 3 ("Unity CLI Loop", `v3-beta` at c50f54c): a Unix domain
    /// socket (Windows: a named pipe), `x-uloop.expectedProjectRoot`, 14 tools.
    #[value(name = "uloop-3")]
    Uloop3,
}

impl EditorKind {
    /// The dialect it speaks: how clients reach, probe and follow it.
    pub fn dialect(self) -> &'static Dialect {
        match self {
            EditorKind::Package => &dialect::PACKAGE,
            EditorKind::Uloop211 => &dialect::ULOOP_2_1_1,
            EditorKind::Uloop3 => &dialect::ULOOP_3,
        }
    }

    /// The Editor that speaks `dialect`.
    pub fn of(dialect: &Dialect) -> EditorKind {
        <EditorKind as clap::ValueEnum>::value_variants()
            .iter()
            .copied()
            .find(|kind| kind.dialect() == dialect)
            .unwrap_or_default()
    }
}

impl std::fmt::Display for EditorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.dialect().name)
    }
}

/// This project's extensions of the protocol, each one on or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extensions {
    /// `x-resume` answered from a journal, `resume` in the capabilities.
    pub resume: bool,
    /// The common `TimeoutSeconds` parameter and per-call deadlines.
    pub timeouts: bool,
    /// `ProtocolVersion`, `EditorInstanceId` and `Capabilities` in `get-version`.
    pub capabilities: bool,
    /// MCP annotations and a default `timeoutSeconds` on each `get-tool-details` entry.
    pub tool_metadata: bool,
    /// Enum defaults listed as their names (uLoopMCP lists the C# integer).
    pub enum_default_names: bool,
    /// A token in the discovery file that every request must carry as
    /// `x-token`, `token` in the capabilities (protocol §7).
    pub token: bool,
    /// `get-editor-state`, answered without the main thread (protocol §6).
    pub editor_state: bool,
    /// Each tool's `outputSchema` in `get-tool-details` (protocol §6): the
    /// package's own, generated from its response types
    /// (`fixtures/editor-models/package.output-schemas.json`).
    pub output_schema: bool,
}

impl Extensions {
    pub const NONE: Extensions = Extensions {
        resume: false,
        timeouts: false,
        capabilities: false,
        tool_metadata: false,
        enum_default_names: false,
        token: false,
        editor_state: false,
        output_schema: false,
    };
}

/// An Editor: what it offers and how it behaves on the wire.
#[derive(Clone, Debug)]
pub struct EditorModel {
    pub kind: EditorKind,
    /// Its dialect's policies on the wire and on disk (lock files, result
    /// files), which clients rely on.
    pub dialect: &'static Dialect,
    /// `Ver` in every result; `None`: the editor state's package version.
    pub version: Option<&'static str>,
    pub errors: ErrorPolicy,
    pub framing: FramingPolicy,
    pub discovery: DiscoveryPolicy,
    pub messages: MessagePolicy,
    pub listener: ListenerPolicy,
    pub lifecycle: LifecyclePolicy,
    pub extensions: Extensions,
}

impl EditorModel {
    /// The Editor of `kind`; `resume` says whether the package keeps a resume
    /// journal (uLoopMCP 2.1.1 never does).
    pub fn of(kind: EditorKind, resume: bool) -> EditorModel {
        match kind {
            EditorKind::Package => EditorModel {
                kind,
                dialect: kind.dialect(),
                version: None,
                errors: ErrorPolicy::Package,
                framing: FramingPolicy::PACKAGE,
                discovery: DiscoveryPolicy::truthful(DiscoveryFileKind::InstanceFile),
                messages: MessagePolicy::PROTOCOL,
                listener: ListenerPolicy::PROTOCOL,
                lifecycle: LifecyclePolicy::PROTOCOL,
                extensions: Extensions {
                    resume,
                    timeouts: true,
                    capabilities: true,
                    tool_metadata: true,
                    enum_default_names: true,
                    token: true,
                    editor_state: true,
                    output_schema: true,
                },
            },
            EditorKind::Uloop211 => EditorModel {
                kind,
                dialect: kind.dialect(),
                version: Some(ULOOP_VERSION),
                errors: ErrorPolicy::Uloop211,
                framing: FramingPolicy::ULOOP_2_1_1,
                discovery: DiscoveryPolicy::truthful(DiscoveryFileKind::UloopSettings),
                messages: MessagePolicy::PROTOCOL,
                listener: ListenerPolicy::PROTOCOL,
                lifecycle: LifecyclePolicy::PROTOCOL,
                extensions: Extensions::NONE,
            },
            EditorKind::Uloop3 => EditorModel {
                kind,
                dialect: kind.dialect(),
                version: Some(ULOOP3_VERSION),
                errors: ErrorPolicy::Uloop3,
                // FrameParser, MessageReassembler and the Newtonsoft reading
                // are 2.1.1's (docs/uloop-3-wire.md §4, §10).
                framing: FramingPolicy::ULOOP_2_1_1,
                discovery: DiscoveryPolicy::truthful(DiscoveryFileKind::Uloop3Locks),
                messages: MessagePolicy::PROTOCOL,
                listener: ListenerPolicy::ULOOP_3,
                lifecycle: LifecyclePolicy::ULOOP_3,
                extensions: Extensions::NONE,
            },
        }
    }
}
