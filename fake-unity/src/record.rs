//! `fake-unity record`: a transparent proxy that records the editor link.
//! Put it in front of a real Editor (or a fake one) and point the client at
//! it; bytes are forwarded unchanged as they arrive, in either framing, and
//! every logical frame is written to a transcript — the same format as the
//! bridge's `--record`, redacted the same way.

use std::{future::Future, path::PathBuf, sync::Arc, time::Duration};

use bytes::BytesMut;
use editor_link::{
    framing::{Frame, FrameDecoder},
    redaction::Redactor,
    transcript::{Direction, Recorder},
};
use serde_json::json;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{
        TcpListener, TcpStream,
        tcp::{OwnedReadHalf, OwnedWriteHalf},
    },
};
use tokio_util::sync::CancellationToken;

use crate::server::{Accepted, Responder, Server};

/// Frames larger than this are forwarded but recorded as an event only.
const RECORD_LIMIT: usize = 256 * 1024 * 1024;

/// How long to wait for the upstream Editor to accept.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How to record.
#[derive(Clone, Debug)]
pub struct RecordConfig {
    /// `HOST:PORT` of the Editor.
    pub upstream: String,
    /// Port to listen on (127.0.0.1); 0 for any.
    pub port: u16,
    pub out: PathBuf,
    /// The Editor's project, so its path is redacted.
    pub project: Option<PathBuf>,
    /// Record values as they are, without placeholders.
    pub no_redact: bool,
}

/// A running recording proxy.
#[derive(Debug)]
pub struct RecordProxy {
    port: u16,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<u64>,
}

impl RecordProxy {
    pub async fn start(config: RecordConfig) -> std::io::Result<RecordProxy> {
        let redactor =
            if config.no_redact { Redactor::none() } else { Redactor::for_project(config.project.as_deref()) };
        let recorder =
            Arc::new(Recorder::create(&config.out, "fake-unity record", env!("CARGO_PKG_VERSION"), redactor)?);
        let listener = TcpListener::bind(("127.0.0.1", config.port)).await?;
        let port = listener.local_addr()?.port();
        let (host, upstream_port) = config.upstream.rsplit_once(':').unwrap_or((config.upstream.as_str(), ""));
        let upstream_port: serde_json::Value = upstream_port.parse::<u16>().map_or(json!(upstream_port), |p| json!(p));
        recorder.event(0, "listen", json!({"port": port, "upstreamHost": host, "upstreamPort": upstream_port}));
        let stop = CancellationToken::new();
        let task = tokio::spawn(serve(listener, Recording { upstream: config.upstream, recorder, stop: stop.clone() }));
        Ok(RecordProxy { port, stop, task })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops accepting and waits for open connections to end; how many
    /// connections were recorded.
    pub async fn stop(self) -> u64 {
        self.stop.cancel();
        self.task.await.unwrap_or(0)
    }
}

/// What the recorder's server answers with: each connection relayed to
/// the upstream Editor and recorded.
struct Recording {
    upstream: String,
    recorder: Arc<Recorder>,
    stop: CancellationToken,
}

impl Responder for Recording {
    fn serve(self: Arc<Self>, accepted: Accepted) -> impl Future<Output = ()> + Send + 'static {
        let (upstream, recorder, stop) = (self.upstream.clone(), self.recorder.clone(), self.stop.clone());
        async move {
            // The recorder listens on TCP only.
            if let Some(stream) = accepted.stream.into_tcp() {
                proxy(stream, upstream, accepted.number, recorder, stop).await;
            }
        }
    }
}

/// Serves until stopped, then waits for the open connections to end (each
/// records its close); how many were accepted.
async fn serve(listener: TcpListener, recording: Recording) -> u64 {
    let stop = recording.stop.clone();
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let server = Server::start(Arc::new(recording), listener, port, false);
    stop.cancelled().await;
    let accepted = server.accepted();
    server.shutdown(None).await;
    accepted
}

async fn proxy(client: TcpStream, upstream: String, conn: u64, recorder: Arc<Recorder>, stop: CancellationToken) {
    let _ = client.set_nodelay(true);
    let editor = match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&upstream)).await {
        Ok(Ok(editor)) => editor,
        Ok(Err(err)) => return unavailable(client, conn, &recorder, &format!("cannot connect to {upstream}: {err}")),
        Err(_) => {
            return unavailable(
                client,
                conn,
                &recorder,
                &format!("{upstream} did not accept within {CONNECT_TIMEOUT:?}"),
            );
        }
    };
    let _ = editor.set_nodelay(true);
    let port = editor.peer_addr().map(|a| a.port()).unwrap_or(0);
    recorder.event(conn, "connect", json!({"port": port}));
    tracing::info!(conn, upstream, "client connected; proxying");
    let (client_read, client_write) = client.into_split();
    let (editor_read, editor_write) = editor.into_split();
    let ended = CancellationToken::new();
    let to_editor = pump(client_read, editor_write, conn, Direction::ToEditor, recorder.clone(), ended.clone());
    let from_editor = pump(editor_read, client_write, conn, Direction::FromEditor, recorder.clone(), ended.clone());
    tokio::select! {
        _ = async { tokio::join!(to_editor, from_editor) } => {}
        _ = stop.cancelled() => recorder.event(conn, "close", json!({"by": "proxy", "reason": "the recording stopped"})),
    }
}

fn unavailable(client: TcpStream, conn: u64, recorder: &Recorder, why: &str) {
    tracing::warn!(conn, "{why}");
    recorder.event(conn, "close", json!({"by": "editor", "reason": why}));
    drop(client);
}

/// Forwards one direction as bytes arrive, recording each whole frame; when
/// the sender closes, records who closed and passes the close on.
async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    conn: u64,
    dir: Direction,
    recorder: Arc<Recorder>,
    ended: CancellationToken,
) {
    let mut decoder = FrameDecoder::detect(RECORD_LIMIT);
    let mut pending = BytesMut::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let by = if dir == Direction::ToEditor { "client" } else { "editor" };
    let reason = loop {
        let n = match from.read(&mut chunk).await {
            Ok(0) => break "closed".to_owned(),
            Ok(n) => n,
            Err(err) => break format!("{err}"),
        };
        if let Err(err) = to.write_all(&chunk[..n]).await {
            tracing::debug!(%err, "the other side is gone");
        }
        pending.extend_from_slice(&chunk[..n]);
        loop {
            match decoder.decode_frame(&mut pending) {
                Ok(Some(Frame::Body(body))) => recorder.frame(conn, dir, &body),
                Ok(Some(Frame::TooLarge { size, .. })) => {
                    recorder.event(conn, "frame-too-large", json!({"dir": dir.as_str(), "size": size}));
                }
                Ok(None) => break,
                Err(err) => {
                    // Not the editor link (or broken): keep forwarding, stop decoding.
                    recorder.event(conn, "framing-error", json!({"dir": dir.as_str(), "error": err.to_string()}));
                    pending.clear();
                    decoder = FrameDecoder::detect(RECORD_LIMIT);
                    break;
                }
            }
        }
    };
    // The first side to close is the one that closed the connection.
    if !ended.is_cancelled() {
        ended.cancel();
        recorder.event(conn, "close", json!({"by": by, "reason": reason}));
    }
    let _ = to.shutdown().await;
}
