//! The editor-link server: binding (preferred port, then fallback; loopback
//! only), the accept loop, one task pair per connection (reader, writer), and
//! the lifecycle driver that reloads and quits. The fault rules
//! ([`crate::faults`]) are carried out here: on each frame read and written,
//! on accept, and at reload and quit.
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

use bytes::BytesMut;
use editor_link::{
    framing::{Frame, FrameDecoder, FrameError, Framing, FramingError, encode_frame},
    jsonrpc::{ErrorKind, ErrorObject, Message, ParseFailure, Response},
};
use futures_util::StreamExt;
use rand::Rng;
use serde_json::Value;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream, tcp::OwnedWriteHalf},
    sync::mpsc,
};
use tokio_util::{codec::FramedRead, sync::CancellationToken, task::TaskTracker};

use crate::{
    defect::Defect,
    editor::{Client, Command, Editor, Ending, Outgoing, ReloadReport, ShutdownReason, Silence},
    faults::{Fault, Fired, FrameKind, Subject, Trigger},
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
/// `all_interfaces` is the `all-interfaces` defect.
pub async fn bind(preferred: u16, avoid: Option<u16>, all_interfaces: bool) -> io::Result<TcpListener> {
    let loopback = if all_interfaces { Ipv4Addr::UNSPECIFIED } else { Ipv4Addr::LOCALHOST };
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

/// Accepts connections until `stop` is cancelled; gives the listener back
/// (a fault may keep it open as a zombie).
pub async fn accept_loop(listener: TcpListener, editor: Arc<Editor>, stop: CancellationToken) -> TcpListener {
    loop {
        // A hung Editor, or a dead listener, accepts nothing: connections
        // wait in the kernel's backlog.
        tokio::select! {
            _ = stop.cancelled() => return listener,
            _ = accepting(&editor) => {}
        }
        let accepted = tokio::select! {
            _ = stop.cancelled() => return listener,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                // Accepted just as a hang began: held like the backlog is.
                tokio::select! {
                    _ = stop.cancelled() => return listener,
                    _ = accepting(&editor) => {}
                }
                let number = editor.next_connection();
                if number > 100 && editor.has_defect(Defect::LeaksConnections) {
                    drop(stream);
                    continue;
                }
                if let Some(fired) = editor.faults.connect(number) {
                    refuse(&editor, stream, &fired);
                    continue;
                }
                if editor.has_defect(Defect::BlockingAccept) {
                    // The framing sniffed in the accept loop itself.
                    let _ = stream.peek(&mut [0u8; 1]).await;
                }
                let editor_for_task = editor.clone();
                editor.connections.spawn(serve_connection(editor_for_task, number, stream, peer));
            }
            Err(err) => {
                // Out of file descriptors and the like: back off, keep serving.
                tracing::warn!(%err, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Resolves once the Editor would accept a connection: neither hung nor
/// with a dead listener.
async fn accepting(editor: &Editor) {
    while editor.hang.is_on() || editor.dead_listener.is_on() {
        editor.hang.cleared().await;
        editor.dead_listener.cleared().await;
    }
}

/// How many requests of one connection run at once; the connection is not
/// read while they all do (the uLoopMCP Editor runs one at a time).
const IN_FLIGHT_LIMIT: usize = 64;

/// A `connect` fault: the connection is never served.
fn refuse(editor: &Editor, stream: TcpStream, fired: &Fired) {
    match fired.fault() {
        Fault::RefuseConnections | Fault::Reset => {
            let _ = stream.set_zero_linger();
        }
        Fault::Close => {}
        Fault::HalfOpen => {
            // Held open, never read: the peer's writes pile up unanswered.
            let release = editor.hold_token();
            tokio::spawn(async move {
                release.cancelled().await;
                drop(stream);
            });
            return;
        }
        // Zombie listener, black hole: accepted, read, never answered.
        _ => {
            let until = hold_until(fired, &editor.hold_token());
            tokio::spawn(swallow(stream, until));
            return;
        }
    }
    drop(stream);
}

/// A token cancelled after the fault's `ms` (if any) or when holds are released.
fn hold_until(fired: &Fired, release: &CancellationToken) -> CancellationToken {
    let ms = match fired.fault() {
        Fault::ZombieListener { ms } | Fault::PortHeld { ms } => *ms,
        Fault::BlackHole { close_after_ms } => *close_after_ms,
        _ => None,
    };
    let until = release.child_token();
    if let Some(ms) = ms {
        let timer = until.clone();
        let delay = fired.duration(ms);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            timer.cancel();
        });
    }
    until
}

/// Reads and discards until the peer closes or `until` is cancelled.
async fn swallow(mut stream: TcpStream, until: CancellationToken) {
    let mut sink = vec![0u8; 16 * 1024];
    loop {
        tokio::select! {
            _ = until.cancelled() => return,
            read = stream.read(&mut sink) => if !matches!(read, Ok(n) if n > 0) { return },
        }
    }
}

/// What holds a port after a reload (a `zombieListener` or `portHeld`
/// fault): the old listener stays open, answering nothing or closing every
/// connection, so the Editor comes back on another port.
pub(crate) fn hold_port(listener: TcpListener, fired: &Fired, release: &CancellationToken) {
    let until = hold_until(fired, release);
    let zombie = matches!(fired.fault(), Fault::ZombieListener { .. });
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                _ = until.cancelled() => return,
                accepted = listener.accept() => accepted,
            };
            match accepted {
                Ok((stream, _)) if zombie => {
                    tokio::spawn(swallow(stream, until.clone()));
                }
                Ok((mut stream, _)) => {
                    // Another program: it closes at once, reading what it
                    // was sent so the close is clean rather than a reset.
                    tokio::spawn(async move {
                        let _ = stream.shutdown().await;
                        let _ = tokio::time::timeout(LINGER, swallow(stream, CancellationToken::new())).await;
                    });
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    });
}

/// One connection: framing detected from the first byte, requests dispatched
/// concurrently (pipelining), responses written in completion order.
async fn serve_connection(editor: Arc<Editor>, number: u64, stream: TcpStream, peer: SocketAddr) {
    let _serial = match editor.has_defect(Defect::SerializesClients) {
        true => editor.serial.clone().acquire_owned().await.ok(),
        false => None,
    };
    let _ = stream.set_nodelay(true);
    let (read_half, write_half) = stream.into_split();
    let (tx, rx) = mpsc::unbounded_channel();
    let client = editor.add_client(number, peer, tx);
    if editor.is_crashed() {
        // Accepted as the process died: the kernel closes it.
        client.end(Ending::Close);
    }
    tracing::debug!(client = client.id, %peer, "connected");
    let writer = tokio::spawn(write_loop(editor.clone(), client.clone(), write_half, rx));

    let requests = TaskTracker::new();
    let decoder = DefectiveDecoder {
        inner: FrameDecoder::detect(editor.max_request_bytes),
        drop_partial: editor.has_defect(Defect::NoPartialFrames),
        strict_headers: editor.has_defect(Defect::StrictHeaders),
        length_in_chars: editor.has_defect(Defect::LengthInCharacters),
    };
    let mut frames = FramedRead::new(read_half, decoder);
    let in_flight = Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT_LIMIT));
    loop {
        // Backpressure: a client that does not read its answers, or has too
        // many requests running, is not read until that changes; a hung
        // Editor reads nothing.
        let ready = async {
            client.room(Client::QUEUE_LIMIT).await;
            editor.unhung().await;
            in_flight.clone().acquire_owned().await.ok()
        };
        let permit = tokio::select! {
            _ = client.close.cancelled() => break,
            permit = ready => permit,
        };
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
                match client.silence() {
                    Silence::None => {}
                    Silence::BlackHole => continue,
                    Silence::HalfOpen => {
                        client.close.cancelled().await;
                        break;
                    }
                }
                if receive(&editor, &client, &requests, body.to_vec(), permit).await == AfterBody::Close {
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
                if editor.has_defect(Defect::FragileListener) {
                    editor.request_quit(None);
                }
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
                if editor.has_defect(Defect::FragileListener) {
                    editor.request_quit(None);
                }
                break;
            }
        }
    }
    // Close: the writer flushes what is queued, then shuts the socket down;
    // a peer that does not read gets no more than the drain limit.
    client.close.cancel();
    let mut writer = writer;
    if tokio::time::timeout(DRAIN_LIMIT * 2, &mut writer).await.is_err() {
        writer.abort();
    }
    let mut read_half = frames.into_inner();
    if client.ending() == Ending::Graceful {
        // Read (and drop) what the peer still sends for a moment: closing a
        // socket with unread input sends a reset, which can destroy the
        // shutdown notification before the peer reads it.
        let _ = tokio::time::timeout(LINGER, async {
            let mut sink = [0u8; 4096];
            while matches!(read_half.read(&mut sink).await, Ok(n) if n > 0) {}
        })
        .await;
    }
    drop(read_half);
    editor.remove_client(client.id);
    tracing::debug!(client = client.id, "disconnected");
}

/// The frame decoder, with the framing defects when asked for.
struct DefectiveDecoder {
    inner: FrameDecoder,
    /// `no-partial-frames`: whatever does not make a whole frame is dropped.
    drop_partial: bool,
    /// `strict-headers`: the header block must be exactly `Content-Length: N`.
    strict_headers: bool,
    /// `length-in-characters`: Content-Length counts characters, not bytes.
    length_in_chars: bool,
}

impl DefectiveDecoder {
    /// The naive header reader of the two header defects (the real one is
    /// the bridge library's decoder).
    fn decode_naive(&self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        let Some(end) = src.windows(4).position(|w| w == b"\r\n\r\n") else { return Ok(None) };
        let head = String::from_utf8_lossy(&src[..end]).into_owned();
        let value = if self.strict_headers {
            head.strip_prefix("Content-Length: ").filter(|v| !v.contains(['\r', '\n', ' ']))
        } else {
            head.split("\r\n").find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.trim().eq_ignore_ascii_case("content-length").then_some(value.trim())
            })
        };
        let declared: usize = value
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| FrameError::Protocol(FramingError::MalformedHeaderLine(head.clone())))?;
        let start = end + 4;
        let length = if self.length_in_chars {
            // Walk `declared` characters; wait while they have not all come.
            let text = String::from_utf8_lossy(&src[start..]);
            match text.char_indices().nth(declared) {
                Some((at, _)) => at,
                None if text.chars().count() == declared => src.len() - start,
                None => return Ok(None),
            }
        } else {
            declared
        };
        if src.len() < start + length {
            return Ok(None);
        }
        let mut frame = src.split_to(start + length);
        Ok(Some(Frame::Body(frame.split_off(start).freeze())))
    }
}

impl tokio_util::codec::Decoder for DefectiveDecoder {
    type Item = Frame;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        let header_framing = src.iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|b| *b != b'{');
        if (self.strict_headers || self.length_in_chars) && header_framing {
            return self.decode_naive(src);
        }
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

/// What the fault rules see of a frame.
fn subject_of<'a>(connection: u64, parsed: &'a Result<Message, ParseFailure>) -> Subject<'a> {
    let (frame, is_error, method) = match parsed {
        Ok(Message::Request(r)) => (FrameKind::Request, false, Some(r.method.as_str())),
        Ok(Message::Notification(n)) => (FrameKind::Notification, false, Some(n.method.as_str())),
        Ok(Message::Response(r)) => (FrameKind::Response, r.outcome.is_err(), None),
        Err(_) => (FrameKind::Invalid, false, None),
    };
    Subject { connection: Some(connection), frame: Some(frame), is_error, method }
}

/// One frame from the client: the `toEditor` fault rules, then handling.
async fn receive(
    editor: &Arc<Editor>,
    client: &Arc<Client>,
    requests: &TaskTracker,
    mut body: Vec<u8>,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
) -> AfterBody {
    let parsed = Message::parse(&body);
    let requests = &Requests { tracker: requests, permit: std::sync::Mutex::new(permit) };
    let Some(fired) = editor.faults.frame(Trigger::ToEditor, subject_of(client.id, &parsed)) else {
        return handle_body(editor, client, requests, parsed, None);
    };
    let reparse = |body: &[u8]| Message::parse(body);
    match fired.fault().clone() {
        Fault::Latency { ms, jitter_ms } => {
            tokio::time::sleep(fired.jittered(ms, jitter_ms)).await;
            handle_body(editor, client, requests, parsed, None)
        }
        Fault::Bandwidth { bytes_per_second } => {
            tokio::time::sleep(Duration::from_secs_f64(body.len() as f64 / bytes_per_second as f64)).await;
            handle_body(editor, client, requests, parsed, None)
        }
        Fault::BlackHole { close_after_ms } => {
            silence(client, Silence::BlackHole, close_after_ms.map(|ms| fired.duration(ms)));
            AfterBody::Continue
        }
        Fault::HalfOpen => {
            silence(client, Silence::HalfOpen, None);
            client.close.cancelled().await;
            AfterBody::Close
        }
        Fault::Reset => {
            client.end(Ending::Reset);
            AfterBody::Close
        }
        Fault::Close => {
            client.end(Ending::Close);
            AfterBody::Close
        }
        Fault::Corrupt => {
            corrupt(&fired, &mut body, false);
            handle_body(editor, client, requests, reparse(&body), None)
        }
        Fault::Truncate { keep } => {
            body.truncate(keep.unwrap_or(body.len() / 2));
            handle_body(editor, client, requests, reparse(&body), None)
        }
        Fault::Duplicate => {
            let again = reparse(&body);
            if handle_body(editor, client, requests, parsed, None) == AfterBody::Close {
                return AfterBody::Close;
            }
            handle_body(editor, client, requests, again, None)
        }
        Fault::Drop => AfterBody::Continue,
        Fault::Hang { ms } => {
            // The request was read; it runs when the Editor wakes up.
            editor.hang.start(&editor.faults, ms.map(|ms| fired.duration(ms)), Some(fired.name().to_owned()));
            handle_body(editor, client, requests, parsed, None)
        }
        // Request-level faults travel with the request.
        _ => handle_body(editor, client, requests, parsed, Some(fired)),
    }
}

/// Where a connection's requests run: its task tracker, and the in-flight
/// permit of the frame being handled (the first request made of it keeps
/// it until answered).
struct Requests<'a> {
    tracker: &'a TaskTracker,
    permit: std::sync::Mutex<Option<tokio::sync::OwnedSemaphorePermit>>,
}

/// Silences a connection, closing it after `close_after` if given.
fn silence(client: &Arc<Client>, silence: Silence, close_after: Option<Duration>) {
    client.set_silence(silence);
    if let Some(delay) = close_after {
        let client = client.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            client.end(Ending::Close);
        });
    }
}

/// The `corrupt` fault: overwrites about one byte in 32 (at least one) and
/// makes sure the result is not JSON; never adds a line break, so newline
/// framing stays intact.
fn corrupt(fired: &Fired, body: &mut [u8], newline_framing: bool) {
    if body.is_empty() {
        return;
    }
    fired.with_rng(|rng| {
        for _ in 0..(body.len() / 32).max(1) {
            let at = rng.random_range(0..body.len());
            body[at] = rng.random();
        }
    });
    if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok() {
        body[0] = b'#';
    }
    if newline_framing {
        for b in body.iter_mut().filter(|b| matches!(b, b'\n' | b'\r')) {
            *b = b'#';
        }
    }
}

/// Answers or dispatches one parsed frame.
fn handle_body(
    editor: &Arc<Editor>,
    client: &Arc<Client>,
    requests: &Requests<'_>,
    parsed: Result<Message, ParseFailure>,
    fault: Option<Fired>,
) -> AfterBody {
    match parsed {
        Ok(Message::Request(request)) => {
            let editor = editor.clone();
            let client = client.clone();
            let permit = crate::editor::lock(&requests.permit).take();
            requests.tracker.spawn(async move {
                editor.handle_request(&client, request, fault).await;
                drop(permit);
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
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
) {
    let mut buf = BytesMut::new();
    loop {
        let out = tokio::select! {
            biased;
            out = rx.recv() => out,
            _ = client.close.cancelled() => None,
        };
        let Some(out) = out else { break };
        // A hung Editor writes nothing; what it queued goes out when it
        // wakes, unless the connection ended meanwhile.
        tokio::select! {
            biased;
            _ = editor.unhung() => {}
            _ = client.close.cancelled() => {
                client.dequeued(out.body.len());
                break;
            }
        }
        if client.ending() != Ending::Graceful {
            // Ended abruptly (a reset, a crash): nothing more goes out.
            client.dequeued(out.body.len());
            break;
        }
        let size = out.body.len();
        let written = write_out(&editor, &client, &mut socket, &mut buf, out).await;
        client.dequeued(size);
        match written {
            Ok(true) => {}
            Ok(false) => break,
            Err(_) => return,
        }
    }
    match client.ending() {
        Ending::Reset => {
            // The socket closes when the reader drops its half: with no
            // linger that is a reset, and no FIN may go out before it.
            let _ = socket.as_ref().set_zero_linger();
            socket.forget();
        }
        Ending::Close => {
            let _ = socket.shutdown().await;
        }
        Ending::Graceful => {
            // What was queued before the close goes out, unless the peer has
            // stopped reading: a reload never waits on a client.
            let drain = async {
                while let Ok(out) = rx.try_recv() {
                    let size = out.body.len();
                    let written = write_out(&editor, &client, &mut socket, &mut buf, out).await;
                    client.dequeued(size);
                    if !matches!(written, Ok(true)) {
                        return;
                    }
                }
                let _ = socket.shutdown().await;
            };
            let _ = tokio::time::timeout(DRAIN_LIMIT, drain).await;
        }
    }
}

/// Writes one queued frame through the `fromEditor` fault rules; false when
/// a fault ended the connection.
async fn write_out(
    editor: &Editor,
    client: &Arc<Client>,
    socket: &mut OwnedWriteHalf,
    buf: &mut BytesMut,
    out: Outgoing,
) -> io::Result<bool> {
    if client.silence() != Silence::None {
        return Ok(true);
    }
    let subject = Subject {
        connection: Some(client.id),
        frame: Some(out.kind),
        is_error: out.is_error,
        method: out.method.as_deref(),
    };
    let Some(fired) = editor.faults.frame(Trigger::FromEditor, subject) else {
        write_frame(editor, client, socket, buf, &out.body).await?;
        return Ok(true);
    };
    let framing = client.framing();
    let encode = |body: &[u8], buf: &mut BytesMut| {
        buf.clear();
        encode_frame(framing, body, buf).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    };
    match fired.fault().clone() {
        Fault::Latency { ms, jitter_ms } => {
            tokio::time::sleep(fired.jittered(ms, jitter_ms)).await;
            write_frame(editor, client, socket, buf, &out.body).await?;
        }
        Fault::Bandwidth { bytes_per_second } => {
            encode(&out.body, buf)?;
            // Twenty slices a second at the given rate.
            let slice = (bytes_per_second / 20).max(1) as usize;
            for piece in buf.chunks(slice) {
                socket.write_all(piece).await?;
                editor.stats.bytes_sent.fetch_add(piece.len() as u64, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_secs_f64(piece.len() as f64 / bytes_per_second as f64)).await;
            }
        }
        Fault::Slicer { bytes, size_variation, delay_ms } => {
            encode(&out.body, buf)?;
            let delay = fired.duration(delay_ms);
            let mut rest = &buf[..];
            while !rest.is_empty() {
                let size = if size_variation == 0 {
                    bytes
                } else {
                    fired.with_rng(|rng| rng.random_range(bytes - size_variation..=bytes + size_variation))
                };
                let (piece, tail) = rest.split_at(size.min(rest.len()));
                socket.write_all(piece).await?;
                socket.flush().await?;
                editor.stats.bytes_sent.fetch_add(piece.len() as u64, Ordering::Relaxed);
                rest = tail;
                if !rest.is_empty() {
                    tokio::time::sleep(delay).await;
                }
            }
        }
        Fault::CloseAfterBytes { bytes } => {
            encode(&out.body, buf)?;
            let piece = &buf[..bytes.min(buf.len())];
            socket.write_all(piece).await?;
            editor.stats.bytes_sent.fetch_add(piece.len() as u64, Ordering::Relaxed);
            client.end(Ending::Close);
            return Ok(false);
        }
        Fault::BlackHole { close_after_ms } => {
            silence(client, Silence::BlackHole, close_after_ms.map(|ms| fired.duration(ms)));
        }
        Fault::HalfOpen => silence(client, Silence::HalfOpen, None),
        Fault::Reset => {
            client.end(Ending::Reset);
            return Ok(false);
        }
        Fault::Close => {
            client.end(Ending::Close);
            return Ok(false);
        }
        Fault::Garbage { bytes } => {
            let garbage: Vec<u8> = fired.with_rng(|rng| (0..bytes).map(|_| rng.random()).collect());
            socket.write_all(&garbage).await?;
            editor.stats.bytes_sent.fetch_add(garbage.len() as u64, Ordering::Relaxed);
            write_frame(editor, client, socket, buf, &out.body).await?;
        }
        Fault::Corrupt => {
            let mut body = out.body.to_vec();
            corrupt(&fired, &mut body, framing == Framing::Newline);
            write_frame(editor, client, socket, buf, &body).await?;
        }
        Fault::Truncate { keep } => {
            let keep = keep.unwrap_or(out.body.len() / 2).min(out.body.len());
            write_frame(editor, client, socket, buf, &out.body[..keep]).await?;
        }
        Fault::Duplicate => {
            write_frame(editor, client, socket, buf, &out.body).await?;
            write_frame(editor, client, socket, buf, &out.body).await?;
        }
        Fault::WrongId => {
            let body = match serde_json::from_slice::<Value>(&out.body) {
                Ok(mut message) => {
                    message["id"] = match &message["id"] {
                        Value::Number(n) => n.as_i64().map_or(Value::from("wrong"), |n| (n + 1_000_000).into()),
                        Value::String(s) => format!("{s}-wrong").into(),
                        _ => "wrong".into(),
                    };
                    message.to_string().into_bytes()
                }
                Err(_) => out.body.to_vec(),
            };
            write_frame(editor, client, socket, buf, &body).await?;
        }
        Fault::Drop => {}
        // Request-level and lifecycle faults never fire on written frames.
        _ => write_frame(editor, client, socket, buf, &out.body).await?,
    }
    Ok(true)
}

async fn write_frame(
    editor: &Editor,
    client: &Client,
    socket: &mut OwnedWriteHalf,
    buf: &mut BytesMut,
    body: &[u8],
) -> io::Result<()> {
    buf.clear();
    // Bodies come from `Message::to_bytes`, which never holds a raw newline
    // (and fault-mangled bodies are kept free of them).
    encode_frame(client.framing(), body, buf).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    socket.write_all(buf).await?;
    editor.stats.bytes_sent.fetch_add(buf.len() as u64, Ordering::Relaxed);
    Ok(())
}

/// The lifecycle driver: serves, reloads on request (steps 1–5 of protocol
/// §5), crashes and restarts, and returns once the Editor has quit. The
/// caller has already published `listener` (see [`Editor::listening`]).
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
                // No one new is accepted by the domain that is going away.
                stop.cancel();
                let old_listener = accepting.await.ok();
                editor.begin_shutdown(ShutdownReason::DomainReload);
                // Unless a fault holds it, the old listener closes now.
                reload_faults(&editor, old_listener);
                wait_closed(&editor).await;
                let downtime = options.downtime.unwrap_or(Duration::from_millis(editor.base.editor.reload_downtime_ms));
                tokio::time::sleep(downtime).await;
                let Some(listener) = rebind(&editor, port, preferred_port, options.move_port).await else { return };
                let new_port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
                // Serve as soon as the socket listens; the discovery file follows.
                let listening_at = std::time::Instant::now();
                (stop, accepting) = start_accepting(listener, &editor);
                editor.finish_reload(new_port);
                schedule_tools_ready(&editor);
                tracing::info!(port = new_port, "listening again");
                report(done, &editor, new_port, port, previous_session_id, listening_at);
                port = new_port;
            }
            Some(Command::Crash { options, done }) => {
                let previous_session_id = editor.session_id();
                tracing::info!(port, "the Editor crashes");
                // The process dies whole: its listener first, so nothing
                // connects to the dying Editor.
                stop.cancel();
                drop(accepting.await);
                editor.crash();
                wait_closed(&editor).await;
                // Until a new Editor process starts, only quit and restart mean anything.
                let (move_port, done) = match options.restart_after {
                    Some(after) => {
                        tokio::time::sleep(after).await;
                        (options.move_port, done)
                    }
                    None => loop {
                        match commands.recv().await {
                            Some(Command::Restart { move_port, done }) => break (move_port, done),
                            Some(Command::Quit { done }) => {
                                editor.release_holds();
                                if let Some(done) = done {
                                    let _ = done.send(());
                                }
                                return;
                            }
                            None => return,
                            Some(other) => tracing::warn!(?other, "the Editor has crashed: ignored"),
                        }
                    },
                };
                let Some(listener) = rebind(&editor, port, preferred_port, move_port).await else { return };
                let new_port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
                // The new process is itself (instance, session, journal)
                // before it accepts anyone.
                editor.restart(new_port);
                let listening_at = std::time::Instant::now();
                (stop, accepting) = start_accepting(listener, &editor);
                tracing::info!(port = new_port, "a new Editor process listens");
                report(done, &editor, new_port, port, previous_session_id, listening_at);
                port = new_port;
            }
            Some(Command::Restart { done, .. }) => {
                tracing::warn!("restart asked while the Editor runs: ignored");
                drop(done);
            }
            Some(Command::Quit { done }) => {
                quit(&editor, stop, accepting, port).await;
                if let Some(done) = done {
                    let _ = done.send(());
                }
                return;
            }
            None => {
                quit(&editor, stop, accepting, port).await;
                return;
            }
        }
    }
}

/// Listens again after a reload or a crash: on `port`, or with `move_port`
/// on another; any port when that fails. `None` (and the Editor quits) when
/// it cannot listen at all.
async fn rebind(editor: &Arc<Editor>, port: u16, preferred_port: u16, move_port: bool) -> Option<TcpListener> {
    let (want, avoid) = if move_port {
        (if preferred_port == 0 { 0 } else { port.saturating_add(1) }, Some(port))
    } else {
        (port, None)
    };
    let all = editor.has_defect(Defect::AllInterfaces);
    match bind(want, avoid, all).await {
        Ok(listener) => Some(listener),
        Err(err) => {
            tracing::warn!(%err, port = want, "cannot bind again; trying any port");
            match bind(0, None, all).await {
                Ok(listener) => Some(listener),
                Err(err) => {
                    tracing::error!(%err, "cannot listen again");
                    editor.request_quit(None);
                    None
                }
            }
        }
    }
}

fn report(
    done: Option<tokio::sync::oneshot::Sender<ReloadReport>>,
    editor: &Editor,
    port: u16,
    previous_port: u16,
    previous_session_id: String,
    listening_at: std::time::Instant,
) {
    if let Some(done) = done {
        let _ = done.send(ReloadReport {
            port,
            session_id: editor.session_id(),
            previous_port,
            previous_session_id,
            listening_at: Some(listening_at),
        });
    }
}

async fn quit(
    editor: &Arc<Editor>,
    stop: CancellationToken,
    accepting: tokio::task::JoinHandle<TcpListener>,
    port: u16,
) {
    editor.hang.end();
    editor.begin_shutdown(ShutdownReason::EditorQuit);
    stop.cancel();
    let _ = accepting.await;
    wait_closed(editor).await;
    for fired in editor.faults.lifecycle(Trigger::Quit) {
        if matches!(fired.fault(), Fault::StaleDiscovery) {
            editor.write_stale_discovery(port);
        }
    }
    editor.release_holds();
}

/// The `reload` fault rules, while the Editor is away: the tool set
/// changes, or the old port stays held.
fn reload_faults(editor: &Editor, mut old_listener: Option<TcpListener>) {
    for fired in editor.faults.lifecycle(Trigger::Reload) {
        match fired.fault() {
            Fault::ToolsChange { remove } => editor.set_removed_tools(remove.clone()),
            Fault::DeadListener { ms } => editor.dead_listener.start(
                &editor.faults,
                ms.map(|ms| fired.duration(ms)),
                Some(fired.name().to_owned()),
            ),
            Fault::ZombieListener { .. } | Fault::PortHeld { .. } => {
                if let Some(listener) = old_listener.take() {
                    hold_port(listener, &fired, &editor.hold_token());
                }
            }
            _ => {}
        }
    }
}

type Accepting = tokio::task::JoinHandle<TcpListener>;

fn start_accepting(listener: TcpListener, editor: &Arc<Editor>) -> (CancellationToken, Accepting) {
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
