//! The editor-link server: binding (preferred port, then fallback; loopback
//! only), the accept loop, one task pair per connection (reader, writer), and
//! the lifecycle driver that reloads and quits.
//!
//! Like mini-redis, [`accept_loop`] takes its listener and a stop signal from
//! outside, so the driver restarts it through the same entry point after a
//! domain reload.

use std::{
    io,
    net::{Ipv4Addr, SocketAddr},
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream, tcp::OwnedWriteHalf},
    sync::mpsc,
};
use tokio_util::{codec::FramedRead, sync::CancellationToken, task::TaskTracker};
use unity_mcp_bridge::{
    framing::{Frame, FrameDecoder, FrameError, Framing, encode_frame},
    jsonrpc::{ErrorKind, ErrorObject, Message, ParseFailure, Response},
};

use crate::{
    defect::Defect,
    editor::{Client, Command, Editor, ReloadReport, ShutdownReason},
};

/// How many ports after the preferred one are tried (protocol §1).
pub const FALLBACK_PORTS: u16 = 10;

/// How long a closing connection keeps reading what the peer still sends.
const LINGER: Duration = Duration::from_millis(100);

/// How long a closing connection may take to write what is queued.
const DRAIN_LIMIT: Duration = Duration::from_secs(1);

/// How long a reload waits for connections to finish closing.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Binds `127.0.0.1` on `preferred` or, if taken, the next ports (protocol §1);
/// port 0 asks the system for one. `avoid` is never chosen (a port move).
pub async fn bind(preferred: u16, avoid: Option<u16>) -> io::Result<TcpListener> {
    let loopback = Ipv4Addr::LOCALHOST;
    if preferred == 0 {
        for _ in 0..16 {
            let listener = TcpListener::bind((loopback, 0)).await?;
            if Some(listener.local_addr()?.port()) != avoid {
                return Ok(listener);
            }
        }
        return Err(io::Error::new(io::ErrorKind::AddrInUse, "no free port different from the current one"));
    }
    let mut last = None;
    for port in preferred..=preferred.saturating_add(FALLBACK_PORTS) {
        if Some(port) == avoid {
            continue;
        }
        match TcpListener::bind((loopback, port)).await {
            Ok(listener) => return Ok(listener),
            Err(err) => last = Some(err),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::AddrInUse, "no port to try")))
}

/// Accepts connections until `stop` is cancelled.
pub async fn accept_loop(listener: TcpListener, editor: Arc<Editor>, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                let editor_for_task = editor.clone();
                editor.connections.spawn(serve_connection(editor_for_task, stream, peer));
            }
            Err(err) => {
                // Out of file descriptors and the like: back off, keep serving.
                tracing::warn!(%err, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// One connection: framing detected from the first byte, requests dispatched
/// concurrently (pipelining), responses written in completion order.
async fn serve_connection(editor: Arc<Editor>, stream: TcpStream, peer: SocketAddr) {
    let _ = stream.set_nodelay(true);
    let (read_half, write_half) = stream.into_split();
    let (tx, rx) = mpsc::unbounded_channel();
    let client = editor.add_client(peer, tx);
    tracing::debug!(client = client.id, %peer, "connected");
    let writer = tokio::spawn(write_loop(editor.clone(), client.clone(), write_half, rx));

    let requests = TaskTracker::new();
    let decoder = DefectiveDecoder {
        inner: FrameDecoder::detect(editor.max_request_bytes),
        drop_partial: editor.has_defect(Defect::NoPartialFrames),
    };
    let mut frames = FramedRead::new(read_half, decoder);
    loop {
        let next = tokio::select! {
            _ = client.close.cancelled() => break,
            next = frames.next() => next,
        };
        if let Some(framing) = frames.decoder().inner.framing() {
            client.set_framing(framing);
            if framing == Framing::Newline && editor.has_defect(Defect::NoNewlineFraming) {
                let error = ErrorObject::new(ErrorKind::FramingError, "newline framing is not supported");
                client.send(&Message::Response(Response::error(None, error)));
                break;
            }
        }
        match next {
            None => {
                // The peer finished sending: answer what is in flight, then close.
                requests.close();
                tokio::select! {
                    _ = requests.wait() => {}
                    _ = client.close.cancelled() => {}
                }
                break;
            }
            Some(Ok(Frame::Body(body))) => {
                editor.stats.bytes_received.fetch_add(body.len() as u64, Ordering::Relaxed);
                if handle_body(&editor, &client, &requests, &body) == AfterBody::Close {
                    break;
                }
                if editor.has_defect(Defect::OneFramePerRead) {
                    frames.read_buffer_mut().clear();
                }
            }
            Some(Ok(Frame::TooLarge { size, limit, .. })) => {
                editor.stats.frames_too_large.fetch_add(1, Ordering::Relaxed);
                let error = ErrorObject::new(
                    ErrorKind::FrameTooLarge,
                    format!("Frame of {size} bytes exceeds the limit of {limit} bytes; it was discarded"),
                )
                .with_data("size", size)
                .with_data("limit", limit);
                client.send(&Message::Response(Response::error(None, error)));
                if editor.has_defect(Defect::OversizeCloses) {
                    break;
                }
            }
            Some(Err(FrameError::Protocol(err))) => {
                editor.stats.framing_errors.fetch_add(1, Ordering::Relaxed);
                let error = ErrorObject::new(ErrorKind::FramingError, format!("{err}; closing the connection"));
                client.send(&Message::Response(Response::error(None, error)));
                if editor.has_defect(Defect::FramingErrorKeepsOpen) {
                    client.close.cancelled().await;
                }
                break;
            }
            Some(Err(err)) => {
                tracing::debug!(client = client.id, %err, "peer went away");
                break;
            }
        }
    }
    // Close: the writer flushes what is queued, then shuts the socket down.
    client.close.cancel();
    let _ = writer.await;
    // Read (and drop) what the peer still sends for a moment: closing a socket
    // with unread input sends a reset, which can destroy the shutdown
    // notification before the peer reads it.
    let mut read_half = frames.into_inner();
    let _ = tokio::time::timeout(LINGER, async {
        let mut sink = [0u8; 4096];
        while matches!(read_half.read(&mut sink).await, Ok(n) if n > 0) {}
    })
    .await;
    editor.remove_client(client.id);
    tracing::debug!(client = client.id, "disconnected");
}

/// The frame decoder, with the framing defects when asked for.
struct DefectiveDecoder {
    inner: FrameDecoder,
    /// `no-partial-frames`: whatever does not make a whole frame is dropped.
    drop_partial: bool,
}

impl tokio_util::codec::Decoder for DefectiveDecoder {
    type Item = Frame;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        let frame = self.inner.decode_frame(src)?;
        if frame.is_none() && self.drop_partial && !src.is_empty() {
            src.clear();
            self.inner = match self.inner.framing() {
                Some(framing) => FrameDecoder::new(framing, self.inner.limit()),
                None => FrameDecoder::detect(self.inner.limit()),
            };
        }
        Ok(frame)
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        self.inner.decode_frame_eof(src)
    }
}

/// Whether a connection goes on after a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AfterBody {
    Continue,
    Close,
}

/// Parses one frame body and answers or dispatches it.
fn handle_body(editor: &Arc<Editor>, client: &Arc<Client>, requests: &TaskTracker, body: &[u8]) -> AfterBody {
    match Message::parse(body) {
        Ok(Message::Request(request)) => {
            let editor = editor.clone();
            let client = client.clone();
            requests.spawn(async move {
                if let Some(response) = editor.process(&client, request).await {
                    client.send(&Message::Response(response));
                }
            });
        }
        Ok(Message::Notification(_)) => {
            // Editors ignore client notifications (protocol §4).
            editor.stats.notifications_received.fetch_add(1, Ordering::Relaxed);
            if editor.has_defect(Defect::AnswersNotifications) {
                client.send(&Message::Response(Response { id: None, outcome: Ok(serde_json::json!({})) }));
            }
        }
        Ok(Message::Response(_)) => {
            editor.stats.responses_received.fetch_add(1, Ordering::Relaxed);
        }
        Err(ParseFailure::Batch) if editor.has_defect(Defect::IgnoresBatches) => {}
        Err(failure) => {
            let not_json = matches!(failure, ParseFailure::NotJson(_));
            if not_json {
                editor.stats.parse_errors.fetch_add(1, Ordering::Relaxed);
            }
            client.send(&Message::Response(failure.to_response()));
            if not_json && editor.has_defect(Defect::ParseErrorCloses) {
                return AfterBody::Close;
            }
        }
    }
    AfterBody::Continue
}

/// Writes queued bodies in the client's framing until the connection closes;
/// on close, drains what is already queued first (the shutdown notification).
async fn write_loop(
    editor: Arc<Editor>,
    client: Arc<Client>,
    mut socket: OwnedWriteHalf,
    mut rx: mpsc::UnboundedReceiver<Bytes>,
) {
    let mut buf = BytesMut::new();
    loop {
        let body = tokio::select! {
            biased;
            body = rx.recv() => body,
            _ = client.close.cancelled() => None,
        };
        let Some(body) = body else { break };
        if write_frame(&editor, &client, &mut socket, &mut buf, &body).await.is_err() {
            return;
        }
    }
    // What was queued before the close goes out, unless the peer has stopped
    // reading: a reload never waits on a client.
    let drain = async {
        while let Ok(body) = rx.try_recv() {
            if write_frame(&editor, &client, &mut socket, &mut buf, &body).await.is_err() {
                return;
            }
        }
        let _ = socket.shutdown().await;
    };
    let _ = tokio::time::timeout(DRAIN_LIMIT, drain).await;
}

async fn write_frame(
    editor: &Editor,
    client: &Client,
    socket: &mut OwnedWriteHalf,
    buf: &mut BytesMut,
    body: &[u8],
) -> io::Result<()> {
    buf.clear();
    // Bodies come from `Message::to_bytes`, which never holds a raw newline.
    encode_frame(client.framing(), body, buf).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    socket.write_all(buf).await?;
    editor.stats.bytes_sent.fetch_add(buf.len() as u64, Ordering::Relaxed);
    Ok(())
}

/// The lifecycle driver: serves, reloads on request (steps 1–5 of protocol
/// §5), and returns once the Editor has quit. The caller has already
/// published `listener` (see [`Editor::listening`]).
pub async fn drive(
    editor: Arc<Editor>,
    listener: TcpListener,
    preferred_port: u16,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    let mut port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let (mut stop, mut accepting) = start_accepting(listener, &editor);
    loop {
        match commands.recv().await {
            Some(Command::Reload { options, done }) => {
                let previous_session_id = editor.session_id();
                tracing::info!(port, "domain reload");
                editor.begin_shutdown(ShutdownReason::DomainReload);
                stop.cancel();
                let _ = accepting.await;
                wait_closed(&editor).await;
                let downtime = options.downtime.unwrap_or(Duration::from_millis(editor.base.editor.reload_downtime_ms));
                tokio::time::sleep(downtime).await;
                let (want, avoid) = if options.move_port {
                    (if preferred_port == 0 { 0 } else { port.saturating_add(1) }, Some(port))
                } else {
                    (port, None)
                };
                let listener = match bind(want, avoid).await {
                    Ok(listener) => listener,
                    Err(err) => {
                        tracing::warn!(%err, port = want, "cannot bind after reload; trying any port");
                        match bind(0, None).await {
                            Ok(listener) => listener,
                            Err(err) => {
                                tracing::error!(%err, "cannot listen again after a reload");
                                editor.begin_shutdown(ShutdownReason::EditorQuit);
                                return;
                            }
                        }
                    }
                };
                let new_port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
                // Serve as soon as the socket listens; the discovery file follows.
                let listening_at = std::time::Instant::now();
                (stop, accepting) = start_accepting(listener, &editor);
                editor.finish_reload(new_port);
                schedule_tools_ready(&editor);
                tracing::info!(port = new_port, "listening again");
                if let Some(done) = done {
                    let _ = done.send(ReloadReport {
                        port: new_port,
                        session_id: editor.session_id(),
                        previous_port: port,
                        previous_session_id,
                        listening_at: Some(listening_at),
                    });
                }
                port = new_port;
            }
            Some(Command::Quit { done }) => {
                editor.begin_shutdown(ShutdownReason::EditorQuit);
                stop.cancel();
                let _ = accepting.await;
                wait_closed(&editor).await;
                if let Some(done) = done {
                    let _ = done.send(());
                }
                return;
            }
            None => {
                editor.begin_shutdown(ShutdownReason::EditorQuit);
                stop.cancel();
                let _ = accepting.await;
                wait_closed(&editor).await;
                return;
            }
        }
    }
}

fn start_accepting(listener: TcpListener, editor: &Arc<Editor>) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let stop = CancellationToken::new();
    let accepting = tokio::spawn(accept_loop(listener, editor.clone(), stop.clone()));
    (stop, accepting)
}

/// Step 5 of a reload: once tools are registered, `list_changed` to every
/// client connected by then (unless another reload started meanwhile).
fn schedule_tools_ready(editor: &Arc<Editor>) {
    let editor = editor.clone();
    let generation = editor.generation();
    let delay = Duration::from_millis(editor.base.editor.tools_ready_delay_ms);
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        if editor.generation() == generation && !editor.has_defect(Defect::NoListChangedAfterReload) {
            editor.notify_tools_changed();
        }
    });
}

async fn wait_closed(editor: &Editor) {
    editor.connections.close();
    if tokio::time::timeout(CLOSE_GRACE, editor.connections.wait()).await.is_err() {
        tracing::warn!("connections still closing after {CLOSE_GRACE:?}");
    }
    editor.connections.reopen();
}
