//! The MCP side: the only module that knows rmcp (3.9).
//!
//! [`serve`] runs one MCP session over any pair of byte streams: the
//! process's stdin and stdout at the binary's edge ([`stdio`]), an in-memory
//! pipe in tests. rmcp runs the session. In front of it the [`guard`] is the
//! one place the client's JSON-RPC is read and validated, because rmcp 3.9 on
//! its own exits on a notification before `initialize`, drops a malformed
//! line without an answer, runs two requests with one id, and waits up to 5 s
//! for handlers at EOF: the guard answers those itself and hands rmcp only
//! typed messages it has checked. [`out`] is the only writer of the output,
//! one message per line. [`handler`] serves the MCP methods on the
//! [`Bridge`], each in its own task so a panic becomes an error reply. When
//! the input closes or `shutdown` resolves, the session stops at once with
//! what is already answered flushed.
//!
//! - [`session`] — what the others share: the ids in flight, the client
//!   named, the revision of a call, the server's name.
//! - [`guard`] — the input, line by line: validation.
//! - [`calls`] — `tools/call`, served beside rmcp: results relayed as the
//!   Editor's bytes, cancellation, progress.
//! - [`out`] — the output: one writer, one message per line.
//! - [`handler`] — what rmcp serves: `initialize`, `server/discover`,
//!   `tools/list`, list changes (and 2026-07-28's `subscriptions/listen`).
//! - [`stdio`] — stdin and stdout as async streams, and when the process must stop.
//! - [`tasks`] — 2026-07-28's tasks extension: calls answered with a task,
//!   `tasks/get` and `tasks/cancel`.

mod calls;
mod guard;
mod handler;
mod out;
mod session;
pub mod stdio;
mod tasks;

use std::{future::Future, sync::Arc, time::Duration};

use tokio::{
    io::{AsyncRead, AsyncWrite},
    sync::mpsc,
};
use tokio_util::sync::CancellationToken;

use crate::bridge::Bridge;
use calls::Calls;
use guard::GuardedTransport;
use handler::Handler;
use out::Out;
use session::{InFlight, Negotiated, NotedClient};
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
    let (to_rmcp, from_guard) = mpsc::channel(64);
    let input_closed = CancellationToken::new();
    let in_flight = InFlight::default();
    let client = NotedClient::default();
    let negotiated = Negotiated::default();
    let calls = Calls::new(bridge.clone(), out.clone(), in_flight.clone(), client.clone(), negotiated.clone());
    let calls_tasks = calls.tasks.clone();
    let reader =
        tokio::spawn(guard::read_input(input, to_rmcp, out.clone(), calls, in_flight.clone(), input_closed.clone()));

    let handler = Handler::new(bridge.clone(), options.clone(), in_flight.clone(), client, negotiated);
    let transport = GuardedTransport::new(from_guard, out.clone(), in_flight, calls_tasks);
    let session = tokio::spawn(async move {
        match rmcp::serve_server(handler, transport).await {
            Ok(running) => {
                let _ = running.waiting().await;
            }
            Err(e) => tracing::info!(%e, "the MCP session ended before it began"),
        }
    });

    let stop = tokio::select! {
        _ = input_closed.cancelled() => Stop::InputClosed,
        _ = output_closed.cancelled() => Stop::OutputClosed,
        stop = shutdown => stop,
    };
    tracing::info!(?stop, "shutting down");
    // Calls in flight are abandoned; what is already answered still goes out.
    bridge.link.stop();
    reader.abort();
    session.abort();
    out.flush(Duration::from_millis(200)).await;
    writer.abort();
    stop
}
