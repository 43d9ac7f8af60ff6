//! The output: one writer, one message per line.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::{
    io::{AsyncWrite, AsyncWriteExt},
    sync::{mpsc, oneshot},
};
use tokio_util::sync::CancellationToken;

pub(super) enum OutItem {
    Line(Vec<u8>),
    Flush(oneshot::Sender<()>),
}

/// The only way to the output.
#[derive(Clone, Debug)]
pub(super) struct Out(mpsc::UnboundedSender<OutItem>);

impl std::fmt::Debug for OutItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OutItem::Line(_) => "Line",
            OutItem::Flush(_) => "Flush",
        })
    }
}

impl Out {
    pub(super) fn new() -> (Out, mpsc::UnboundedReceiver<OutItem>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Out(tx), rx)
    }

    pub(super) fn line(&self, value: &impl serde::Serialize) -> bool {
        match serde_json::to_vec(value) {
            Ok(bytes) => self.0.send(OutItem::Line(bytes)).is_ok(),
            Err(e) => {
                tracing::error!(%e, "cannot serialise a message for stdout");
                false
            }
        }
    }

    /// A JSON-RPC error answered by the guard itself.
    pub(super) fn error(&self, id: Option<&Value>, code: i64, message: &str, data: Option<Value>) {
        let mut error = json!({"code": code, "message": message});
        if let Some(data) = data {
            error["data"] = data;
        }
        self.line(&json!({"jsonrpc": "2.0", "id": id.cloned().unwrap_or(Value::Null), "error": error}));
    }

    /// Waits until everything queued so far is written, up to `limit`.
    pub(super) async fn flush(&self, limit: Duration) {
        let (tx, rx) = oneshot::channel();
        if self.0.send(OutItem::Flush(tx)).is_ok() {
            let _ = tokio::time::timeout(limit, rx).await;
        }
    }
}

/// Writes each line queued on `rx` to `output`; cancels `closed` when the
/// output cannot be written.
pub(super) async fn write_lines(
    mut output: impl AsyncWrite + Unpin,
    mut rx: mpsc::UnboundedReceiver<OutItem>,
    closed: CancellationToken,
) {
    while let Some(item) = rx.recv().await {
        match item {
            OutItem::Line(mut line) => {
                line.push(b'\n');
                if output.write_all(&line).await.is_err() {
                    closed.cancel();
                    return;
                }
                if rx.is_empty() && output.flush().await.is_err() {
                    closed.cancel();
                    return;
                }
            }
            OutItem::Flush(done) => {
                let _ = output.flush().await;
                let _ = done.send(());
            }
        }
    }
}
