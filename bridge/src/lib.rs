//! `unity-mcp-bridge`: the MCP stdio server for the Unity Editor. The wire
//! it speaks to the Editor is the editor link (`docs/editor-link-protocol.md`),
//! defined once in the `unity-editor-link` crate ([`editor_link`]).
//!
//! Map of the modules:
//!
//! - [`link`] — the bridge's hold on the Editor: one persistent
//!   connection, reconnect through reloads, pipelined calls, resume only on
//!   the same Editor process, honest answers by the deadline, watchdog.
//! - [`tools`] — Editor tools as MCP tools: schemas, arguments, the tool cache.
//! - [`results`] — Unity results and errors as MCP tool results; oversized
//!   results to files.
//! - [`raw_json`] — a result kept as the Editor's bytes, written out a piece
//!   at a time.
//! - [`bridge`] — the bridge as a service, independent of MCP: the tool
//!   catalogue, calls with deadlines and progress (a call's steps in
//!   `bridge/tool_call.rs`), its own two tools.
//! - [`main_thread`] — why a call waits: the Editor's main thread held by a
//!   modal dialog, a compile or an import, named in progress and answers.
//! - [`silent_editor`] — an Editor open on the project whose package does
//!   not answer: compile errors, Safe Mode, the package missing.
//! - [`compile_result`] — a compile across its reload on an Editor without
//!   a resume journal, answered from the result file it writes (uLoopMCP).
//! - [`mcp`] — the MCP stdio server, the protocol its own: each line read
//!   once, one lifecycle, one front door; stdout clean, every request
//!   answered once.
//! - [`setup`] — writing MCP clients' configuration files (`setup CLIENT`).
//! - [`cli`] — the command line (the `unity-mcp-bridge` binary is a call to
//!   [`cli::main`]; `unity-conformance` embeds the same).

pub mod bridge;
pub mod cli;
pub mod compile_result;
pub mod link;
pub mod main_thread;
pub mod mcp;
pub mod output_schemas;
pub mod raw_json;
pub mod results;
pub mod setup;
pub mod silent_editor;
pub mod tools;

/// This crate's version, as reported to peers.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
