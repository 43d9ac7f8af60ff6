//! The output: one writer, one message per line.
//!
//! Messages queued together go out in one write (a client with many calls
//! in flight gets their answers in one system call, not one each), and a
//! tool's answer is written a piece at a time from the Editor's bytes: a
//! large result is never copied whole into a line.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::{
    io::{AsyncWrite, AsyncWriteExt},
    sync::{mpsc, oneshot},
};
use tokio_util::sync::CancellationToken;

use super::{
    message::Refusal,
    session::{Revision, SERVER_INFO_KEY, server_info},
};
use crate::{raw_json, results::ToolResult};

/// Bytes gathered before they are written.
const BATCH: usize = 64 * 1024;

pub(super) enum OutItem {
    Line(Vec<u8>),
    ToolAnswer(Box<ToolAnswer>),
    Flush(oneshot::Sender<()>),
}

/// The answer to a `tools/call`.
#[derive(Debug)]
pub(super) struct ToolAnswer {
    id: Value,
    result: ToolResult,
    revision: Revision,
}

/// The only way to the output.
#[derive(Clone, Debug)]
pub(super) struct Out(mpsc::UnboundedSender<OutItem>);

impl std::fmt::Debug for OutItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OutItem::Line(_) => "Line",
            OutItem::ToolAnswer(_) => "ToolAnswer",
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

    /// The answer to request `id`: its result, or an error.
    pub(super) fn answer(&self, id: &Value, answer: Result<Value, Refusal>) {
        match answer {
            Ok(result) => {
                self.line(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
            }
            Err(refusal) => self.refuse(&refusal),
        }
    }

    /// A JSON-RPC error (`id` null when the request's could not be read).
    pub(super) fn refuse(&self, refusal: &Refusal) {
        let mut error = json!({"code": refusal.code, "message": refusal.message});
        if let Some(data) = &refusal.data {
            error["data"] = data.clone();
        }
        self.line(&json!({"jsonrpc": "2.0", "id": refusal.id.clone().unwrap_or(Value::Null), "error": error}));
    }

    /// The answer to a `tools/call`.
    pub(super) fn tool_answer(&self, id: Value, result: ToolResult, revision: Revision) -> bool {
        self.0.send(OutItem::ToolAnswer(Box::new(ToolAnswer { id, result, revision }))).is_ok()
    }

    /// Waits until everything queued so far is written, up to `limit`.
    pub(super) async fn flush(&self, limit: Duration) {
        let (tx, rx) = oneshot::channel();
        if self.0.send(OutItem::Flush(tx)).is_ok() {
            let _ = tokio::time::timeout(limit, rx).await;
        }
    }
}

/// Where the writer gathers bytes: written out once it holds [`BATCH`].
struct Batch<W> {
    output: W,
    buf: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> Batch<W> {
    async fn write_if_full(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= BATCH { self.write_out().await } else { Ok(()) }
    }

    async fn write_out(&mut self) -> std::io::Result<()> {
        if !self.buf.is_empty() {
            self.output.write_all(&self.buf).await?;
            self.buf.clear();
        }
        if self.buf.capacity() > 4 * BATCH {
            self.buf = Vec::with_capacity(BATCH);
        }
        Ok(())
    }

    /// Bytes that are part of a line already begun: gathered when small,
    /// else written where they are.
    async fn bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if bytes.len() < BATCH {
            self.buf.extend_from_slice(bytes);
            return self.write_if_full().await;
        }
        self.write_out().await?;
        self.output.write_all(bytes).await
    }

    async fn item(&mut self, item: OutItem) -> std::io::Result<()> {
        match item {
            OutItem::Line(line) => {
                self.bytes(&line).await?;
                self.buf.push(b'\n');
            }
            OutItem::ToolAnswer(answer) => self.tool_answer(&answer).await?,
            OutItem::Flush(done) => {
                self.write_out().await?;
                self.output.flush().await?;
                let _ = done.send(());
            }
        }
        self.write_if_full().await
    }

    /// `{"jsonrpc":"2.0","id":…,"result":{…}}` with the members in rmcp's
    /// order (`resultType`, `content`, `structuredContent`, `isError`,
    /// `_meta`).
    async fn tool_answer(&mut self, answer: &ToolAnswer) -> std::io::Result<()> {
        let buf = &mut self.buf;
        buf.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        serde_json::to_writer(&mut *buf, &answer.id)?;
        buf.extend_from_slice(br#","result":{"#);
        if answer.revision.result_type() {
            buf.extend_from_slice(br#""resultType":"complete","#);
        }
        match &answer.result {
            ToolResult::Built(value) => {
                let mut first = true;
                for key in ["content", "structuredContent", "isError"] {
                    if key == "structuredContent" && !answer.revision.structured() {
                        continue;
                    }
                    if let Some(member) = value.get(key) {
                        if !std::mem::take(&mut first) {
                            buf.push(b',');
                        }
                        serde_json::to_writer(&mut *buf, key)?;
                        buf.push(b':');
                        match (key, member) {
                            // resource_link came with 2025-06-18 too.
                            ("content", Value::Array(blocks)) if !answer.revision.structured() => {
                                let older: Vec<&Value> =
                                    blocks.iter().filter(|b| b["type"] != "resource_link").collect();
                                serde_json::to_writer(&mut *buf, &older)?;
                            }
                            _ => serde_json::to_writer(&mut *buf, member)?,
                        }
                    }
                }
            }
            ToolResult::Relayed { result, is_error } => {
                buf.extend_from_slice(br#""content":[{"type":"text","text":""#);
                let mut rest = result.as_str();
                while !rest.is_empty() {
                    let piece = raw_json::piece(rest, BATCH / 4);
                    raw_json::escape_into(piece, &mut self.buf);
                    rest = &rest[piece.len()..];
                    self.write_if_full().await?;
                }
                self.buf.extend_from_slice(br#""}]"#);
                if answer.revision.structured() {
                    self.buf.extend_from_slice(br#","structuredContent":"#);
                    self.verbatim(result.bytes()).await?;
                }
                if *is_error {
                    self.buf.extend_from_slice(br#","isError":true"#);
                }
            }
        }
        if matches!(answer.revision, Revision::Stateless { .. }) {
            self.buf.extend_from_slice(br#","_meta":"#);
            serde_json::to_writer(&mut self.buf, &json!({SERVER_INFO_KEY: server_info()}))?;
        }
        self.buf.extend_from_slice(b"}}\n");
        Ok(())
    }

    /// JSON text written as it is, but for line breaks between its tokens
    /// (a pretty-printed result), which would end the line: they become
    /// spaces. (Inside JSON strings they are always escaped.)
    async fn verbatim(&mut self, json: &[u8]) -> std::io::Result<()> {
        for chunk in json.chunks(BATCH) {
            if memchr::memchr2(b'\n', b'\r', chunk).is_some() {
                self.buf.extend(chunk.iter().map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }));
                self.write_if_full().await?;
            } else {
                self.bytes(chunk).await?;
            }
        }
        Ok(())
    }
}

/// Writes what is queued on `rx` to `output`, everything queued at once in
/// one write; cancels `closed` when the output cannot be written.
pub(super) async fn write_lines(
    output: impl AsyncWrite + Unpin,
    mut rx: mpsc::UnboundedReceiver<OutItem>,
    closed: CancellationToken,
) {
    let mut batch = Batch { output, buf: Vec::with_capacity(BATCH) };
    while let Some(item) = rx.recv().await {
        let mut written = batch.item(item).await;
        while written.is_ok() {
            match rx.try_recv() {
                Ok(item) => written = batch.item(item).await,
                Err(_) => break,
            }
        }
        if written.is_ok() {
            written = batch.write_out().await;
        }
        if written.is_ok() {
            written = batch.output.flush().await;
            tracing::trace!("stdout written");
        }
        if written.is_err() {
            closed.cancel();
            return;
        }
    }
}
