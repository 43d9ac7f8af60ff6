//! The MCP side: the bridge's own MCP server, on any pair of byte streams
//! (the process's stdin and stdout at the binary's edge, [`stdio`]; an
//! in-memory pipe in tests).
//!
//! It owns the protocol rather than serving through an SDK: every line is
//! read once into a typed message, the session's lifecycle is one state,
//! and each method is served in one place ([`dispatch`]). (It served through
//! rmcp 3.9 until issue 43: rmcp on its own exits on a notification before
//! `initialize`, drops a malformed line without an answer, runs two requests
//! with one id and waits up to 5 s for handlers at EOF; its result types
//! hold a tool's result as a tree that it serialises again; and it has no
//! place for the tasks extension's subscriptions. So a guard in front of it
//! validated every line, `tools/call` and the tasks were served beside it,
//! and its output was patched afterwards: three doors. The tests still
//! drive the bridge with rmcp's client, as with the Python and TypeScript
//! SDKs and the MCP Inspector.) When the input closes or `shutdown`
//! resolves, the session stops at once with what is already answered
//! flushed.
//!
//! - [`message`] — a line read once: a request (its method, the revision
//!   its `_meta` names), a notification, or the error it gets.
//! - [`session`] — what the others share: the lifecycle, the ids in flight,
//!   the client named, the revision of a request, the server's name.
//! - [`dispatch`] — the one front door: lifecycle, ids, each method served.
//! - [`methods`] — `initialize`, `server/discover`, `tools/list`, resources.
//! - [`calls`] — `tools/call`: results relayed as the Editor's bytes,
//!   cancellation, progress; for a client that takes tasks, wrapped.
//! - [`subscriptions`] — list changes, each revision's way; 2026-07-28's
//!   `subscriptions/listen`.
//! - [`tasks`] — 2026-07-28's tasks extension: calls answered with a task,
//!   `tasks/get` and `tasks/cancel`.
//! - [`out`] — the output: one writer, one message per line.
//! - [`stdio`] — stdin and stdout as async streams, and when the process must stop.

mod calls;
mod dispatch;
mod message;
mod methods;
mod out;
mod session;
pub mod stdio;
mod subscriptions;
mod tasks;

use std::{future::Future, sync::Arc, time::Duration};

use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::{codec::FramedRead, sync::CancellationToken};

use crate::bridge::Bridge;
use dispatch::Dispatcher;
use editor_link::{
    framing::{Frame, FrameDecoder, Framing},
    jsonrpc::code,
};
use message::Refusal;
use out::Out;
pub use stdio::serve_stdio;

/// The MCP revisions with an `initialize` handshake, newest first.
pub const HANDSHAKE_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The stateless revision: no handshake, `server/discover`, and the version
/// and client capabilities in every request's `_meta`.
pub const STATELESS_VERSION: &str = "2026-07-28";

/// Every revision served, newest first: what `server/discover` and the
/// unsupported-version error list.
pub const SUPPORTED_VERSIONS: [&str; 5] = [STATELESS_VERSION, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The `_meta` keys of a 2026-07-28 request (both required).
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key a 2026-07-28 request names its client under (optional).
pub(crate) const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";

/// How the MCP server behaves.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Tools per `tools/list` page.
    pub page_size: usize,
    /// Exit when the parent process goes away.
    pub exit_with_parent: bool,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions { page_size: 100, exit_with_parent: true }
    }
}

/// Why the server stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The client closed its end of the input (stdin EOF).
    InputClosed,
    /// The output cannot be written (the client closed stdout).
    OutputClosed,
    /// The process's parent is gone (see [`stdio`]).
    ParentGone,
    /// SIGTERM, SIGINT or SIGHUP (a client's shutdown sequence ends with SIGTERM).
    Signal(&'static str),
}

/// Largest line accepted on the input.
const INPUT_LIMIT: usize = 16 * 1024 * 1024;

/// Serves one MCP session: requests read from `input`, answers and
/// notifications written to `output`, until the input closes, the output
/// cannot be written, or `shutdown` resolves (with the reason it gives).
/// The link to the Editor is stopped on the way out.
pub async fn serve(
    input: impl AsyncRead + Send + Unpin + 'static,
    output: impl AsyncWrite + Send + Unpin + 'static,
    bridge: Arc<Bridge>,
    options: ServeOptions,
    shutdown: impl Future<Output = Stop>,
) -> Stop {
    let (out, out_rx) = Out::new();
    let output_closed = CancellationToken::new();
    let writer = tokio::spawn(out::write_lines(output, out_rx, output_closed.clone()));
    let mut dispatcher = Dispatcher::new(bridge.clone(), options, out.clone());
    let stop = tokio::select! {
        () = read_input(input, &mut dispatcher, &out) => Stop::InputClosed,
        _ = output_closed.cancelled() => Stop::OutputClosed,
        stop = shutdown => stop,
    };
    tracing::info!(?stop, "shutting down");
    // Calls in flight are abandoned; what is already answered still goes out.
    dispatcher.close();
    bridge.link.stop();
    out.flush(Duration::from_millis(200)).await;
    writer.abort();
    stop
}

/// Hands the client's messages to `dispatcher`, one per line, until the
/// input ends.
async fn read_input(input: impl AsyncRead + Send + Unpin, dispatcher: &mut Dispatcher, out: &Out) {
    let mut lines = FramedRead::new(input, FrameDecoder::new(Framing::Newline, INPUT_LIMIT));
    while let Some(frame) = lines.next().await {
        match frame {
            Ok(Frame::Body(line)) => dispatcher.line(&line),
            Ok(Frame::TooLarge { size, limit, .. }) => out.refuse(&Refusal::new(
                None,
                code::INVALID_REQUEST,
                format!("Invalid Request: a message of {size} bytes is over the {limit}-byte limit"),
            )),
            Err(e) => return tracing::debug!(%e, "the input ended"),
        }
    }
}

/// A panic's message, as far as it says one.
fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}
