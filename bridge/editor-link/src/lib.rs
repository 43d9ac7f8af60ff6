//! The editor link: how a Unity Editor and its clients talk
//! (`docs/editor-link-protocol.md`). One definition of the wire, shared by
//! the bridge, fake-unity and the conformance suite.
//!
//! Map of the modules:
//!
//! - [`framing`] — §2: header and newline framing; the incremental
//!   [`framing::FrameDecoder`] (check, parse, advance) and the encoder.
//! - [`jsonrpc`] — §3/§4: [`jsonrpc::Message`] (request, notification,
//!   response), ids that round-trip exactly, and the error table
//!   ([`jsonrpc::ErrorKind`]).
//! - [`version`] — §6: the `get-version` result, typed, and the extensions
//!   an Editor names in its `Capabilities`.
//! - [`dialect`] — which Editor is at the other end (the package, uLoopMCP
//!   2.1.1, uLoopMCP 3) and its policies: how it is found, whether it
//!   answers in order, its harmless probe, how it reloads, where it leaves
//!   compile results, its catalogue.
//! - [`connection`] — one [`connection::Connection`]: a reader and a writer
//!   over a TCP stream or an in-memory pipe, frames in, bodies out, and how
//!   far each body got.
//! - [`methods`] — §6: the link's own methods (`get-version`, `ping` …),
//!   named once.
//! - [`tool_details`] — §6: the `get-tool-details` result, order-preserving.
//! - [`discovery`] — §7: the discovery file (written atomically) and finding
//!   the Editor ([`discovery::Locator`]).
//! - [`endpoint`] — where an Editor listens: a TCP port, or uLoopMCP 3's
//!   Unix socket or named pipe named from the project root, and whether a
//!   socket can be trusted to be this user's Editor.
//! - [`unity_instance`] — Unity's own `Library/EditorInstance.json`:
//!   whether a Unity has the project open at all.
//! - [`registry`] — the user's registry of open Editors, for a client
//!   started outside any project.
//! - [`wsl`] — a client inside WSL 2 in front of a Windows Editor: paths,
//!   processes, networking.
//! - [`transcript`] — editor-link traffic as JSON Lines.
//! - [`redaction`] — one vocabulary of placeholders for what differs from run
//!   to run: transcripts (reversibly) and MCP snapshots.
//! - [`duration`] — durations and deadlines from untrusted numbers, never a
//!   panic.

pub mod connection;
pub mod dialect;
pub mod discovery;
pub mod duration;
pub mod endpoint;
pub mod framing;
pub mod jsonrpc;
pub mod methods;
pub mod redaction;
pub mod registry;
pub mod tool_details;
pub mod transcript;
pub mod unity_instance;
pub mod version;
pub mod wsl;

/// `std::sync::Mutex::lock`, ignoring poisoning: every user of it (the
/// bridge's link and MCP session, fake-unity's Editor) keeps its data
/// consistent at every await and panic point, and a panicking task (answered
/// as an error elsewhere) must not wedge the process that should keep serving.
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `f`, which blocks (a write, a rename or a removal on the file
/// system; seconds of computation), without holding up the other tasks of
/// the async runtime it is called from: on a multi-threaded runtime the
/// worker hands its queue to another thread first
/// (`tokio::task::block_in_place`); elsewhere `f` just runs.
///
/// Why: a task that blocks its thread holds every task queued behind it
/// there. On a disk busy with other writes (a build beside, an antivirus
/// scan) one rename or unlink took 1.4 to 9 s, and serialising a 16 MB
/// response took seconds in a debug build: the suite read answers its
/// bridge had written in time seconds late (issue 34: found with `strace`,
/// `/proc/PID/task/*/syscall` sampling and `perf` under a writing load).
pub fn blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) if runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// This crate's version, as reported to peers.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
