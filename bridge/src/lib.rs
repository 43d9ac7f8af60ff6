//! `unity-mcp-bridge`: the MCP stdio server for the Unity Editor, and the one
//! definition of the editor-link wire format that every crate of this project
//! shares (see `editor-link-protocol.md`).
//!
//! Map of the modules:
//!
//! - [`framing`] — §2: header and newline framing; the incremental
//!   [`framing::FrameDecoder`] and the encoder.
//! - [`jsonrpc`] — §3/§4: [`jsonrpc::Message`] (request, notification,
//!   response), ids that round-trip exactly, and the error table
//!   ([`jsonrpc::ErrorKind`]).
//! - [`duration`] — durations and deadlines from untrusted numbers, never
//!   a panic.
//! - [`tool_details`] — §6: the `get-tool-details` result, order-preserving.
//! - [`discovery`] — §7: the discovery file (written atomically) and finding
//!   the Editor ([`discovery::Locator`]).
//! - [`transcript`] — editor-link traffic as JSON Lines (`--record`).
//! - [`link`] — the bridge's hold on the Editor: one persistent
//!   connection, reconnect through reloads, pipelined calls, resume only on
//!   the same Editor process, honest answers by the deadline, watchdog.
//! - [`tools`] — Editor tools as MCP tools; results and errors as MCP tool
//!   results; oversized results to files; the tool cache.
//! - [`bridge`] — the bridge as a service, independent of the MCP SDK: the
//!   tool catalogue, calls with deadlines and progress, its own two tools.
//! - [`mcp`] — the MCP stdio server: the one module that knows rmcp, behind a
//!   guard that keeps stdout clean and every request answered.
//! - [`setup`] — writing MCP clients' configuration files (`setup CLIENT`).
//! - [`cli`] — the command line (the `unity-mcp-bridge` binary is a call to
//!   [`cli::main`]; `unity-conformance` embeds the same).

pub mod bridge;
pub mod cli;
pub mod discovery;
pub mod duration;
pub mod framing;
pub mod jsonrpc;
pub mod link;
pub mod mcp;
pub mod setup;
pub mod tool_details;
pub mod tools;
pub mod transcript;

/// This crate's version, as reported to peers.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
