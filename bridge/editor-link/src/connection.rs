//! One editor-link connection, for every peer of this project: frames in
//! from a [`Receiver`], bodies out through a [`Sender`], over a TCP stream or
//! an in-memory pipe ([`Connection::memory`]) — as lsp-server's `Connection`
//! is for LSP.
//!
//! The receiver decodes frames in the connection's framing (fixed, or
//! detected from the first byte, protocol §2) and tells the peer going away
//! ([`Received::Closed`], [`Received::Lost`]) from the peer breaking the protocol
//! ([`Received::Broken`]). The sender queues bodies for a writer task that
//! frames and writes them in order; what it writes can be shaped by a
//! [`WriteLayer`] (fake-unity's faults: delays, slices, corruption, …), and
//! each body's [`Delivery`] says how far it got — the fact a client needs to
//! say truthfully whether the Editor may have run a request. The writer
//! counts queued bytes, so a reader can stop reading a peer that does not
//! read ([`Sender::room`]).

mod writer;

use std::{
    future::Future,
    io,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use tokio::{
    io::{AsyncRead, AsyncWrite, AsyncWriteExt},
    net::TcpStream,
    sync::{Notify, mpsc},
};
use tokio_util::{codec::FramedRead, sync::CancellationToken};

use crate::{
    framing::{Frame, FrameDecoder, FrameError, Framing, FramingError, encode_frame},
    jsonrpc::Message,
};

/// How long a gracefully closing writer may take to write what is queued
/// (a peer that does not read gets no more).
pub const DRAIN_LIMIT: Duration = Duration::from_secs(1);

/// How far one body got toward the peer.
#[derive(Clone, Debug)]
pub struct Delivery(Arc<AtomicU8>);

/// In the writer's queue: nothing of it has left.
const QUEUED: u8 = 0;
/// Being written to the socket.
const WRITING: u8 = 1;
/// Written whole: the peer may have read it.
const WRITTEN: u8 = 2;
/// Taken back before the writer reached it: it never left.
const WITHDRAWN: u8 = 3;
/// Not written, or written only in part (the write failed, or a layer cut
/// or dropped it): the peer cannot act on it.
const LOST: u8 = 4;

impl Delivery {
    fn new() -> Delivery {
        Delivery(Arc::new(AtomicU8::new(QUEUED)))
    }

    /// The writer takes the body; false when it was withdrawn.
    fn start_writing(&self) -> bool {
        self.0.compare_exchange(QUEUED, WRITING, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// A body taken for writing but not begun goes back to the queue.
    fn unstart(&self) {
        let _ = self.0.compare_exchange(WRITING, QUEUED, Ordering::AcqRel, Ordering::Acquire);
    }

    fn finish(&self, whole: bool) {
        self.0.store(if whole { WRITTEN } else { LOST }, Ordering::Release);
    }

    /// Whether the body may have reached the peer (a write under way counts:
    /// it may complete).
    pub fn reached(&self) -> bool {
        matches!(self.0.load(Ordering::Acquire), WRITING | WRITTEN)
    }

    /// Gives up on the body: one still queued is never written. Whether it
    /// may have reached the peer all the same.
    pub fn withdraw(&self) -> bool {
        match self.0.compare_exchange(QUEUED, WITHDRAWN, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => false,
            Err(stage) => matches!(stage, WRITING | WRITTEN),
        }
    }
}

/// What kind of frame a body is, for layers that treat them differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FrameKind {
    Request,
    /// A response, result or error.
    Response,
    /// An error response only (for matching; a body is never of this kind).
    Error,
    Notification,
    /// Not a JSON-RPC message.
    Invalid,
}

/// One body to send, and what a layer may want to know of it.
#[derive(Clone, Debug)]
pub struct Outgoing {
    pub body: Bytes,
    pub kind: FrameKind,
    /// An error response.
    pub is_error: bool,
    /// A request's or notification's method, or the method of the request a
    /// response answers.
    pub method: Option<Arc<str>>,
    /// Written as it is, unframed (a peer testing what bad bytes do).
    pub raw: bool,
    delivery: Option<Delivery>,
}

impl Outgoing {
    /// `message` as a frame body; `answering` is the method of the request
    /// a response answers.
    pub fn message(message: &Message, answering: Option<&str>) -> Outgoing {
        let (kind, is_error, method) = match message {
            Message::Request(r) => (FrameKind::Request, false, Some(r.method.as_str())),
            Message::Notification(n) => (FrameKind::Notification, false, Some(n.method.as_str())),
            Message::Response(r) => (FrameKind::Response, r.outcome.is_err(), answering),
        };
        Outgoing {
            body: Bytes::from(message.to_bytes()),
            kind,
            is_error,
            method: method.map(Arc::from),
            raw: false,
            delivery: None,
        }
    }

    /// Bytes sent as a frame as they are, JSON or not.
    pub fn body(body: impl Into<Bytes>) -> Outgoing {
        Outgoing {
            body: body.into(),
            kind: FrameKind::Invalid,
            is_error: false,
            method: None,
            raw: false,
            delivery: None,
        }
    }

    /// Bytes written as they are, without framing.
    pub fn raw(bytes: impl Into<Bytes>) -> Outgoing {
        Outgoing { raw: true, ..Outgoing::body(bytes) }
    }
}

/// How a connection ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Ending {
    /// What is queued is written (within [`DRAIN_LIMIT`]), then a clean close.
    Graceful = 0,
    /// A clean close now; nothing more is written.
    Close = 1,
    /// A TCP reset now.
    Reset = 2,
}

/// What a layer says after writing (or not writing) a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// The connection ends now, this way.
    End(Ending),
}

/// The socket a connection writes to.
enum Socket {
    /// A TCP stream's write half: it can end with a reset.
    Tcp(tokio::net::tcp::OwnedWriteHalf),
    Other(Pin<Box<dyn AsyncWrite + Send>>),
}

impl Socket {
    async fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Socket::Tcp(w) => w.write_all(bytes).await,
            Socket::Other(w) => w.write_all(bytes).await,
        }
    }

    /// Writes what the socket takes now, without waiting: 0 when it is full.
    fn write_now(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let polled = match self {
            Socket::Tcp(w) => Pin::new(w).poll_write(&mut cx, bytes),
            Socket::Other(w) => w.as_mut().poll_write(&mut cx, bytes),
        };
        match polled {
            std::task::Poll::Ready(result) => result,
            std::task::Poll::Pending => Ok(0),
        }
    }

    async fn flush(&mut self) -> io::Result<()> {
        match self {
            Socket::Tcp(w) => w.flush().await,
            Socket::Other(w) => w.flush().await,
        }
    }

    async fn shutdown(&mut self) -> io::Result<()> {
        match self {
            Socket::Tcp(w) => w.shutdown().await,
            Socket::Other(w) => w.shutdown().await,
        }
    }

    /// Closes with a reset when it can (no linger; the write half is
    /// forgotten so it sends no FIN first, and the socket resets when the
    /// read half goes); otherwise just closes.
    fn reset(self) {
        match self {
            Socket::Tcp(w) => {
                let _ = w.as_ref().set_zero_linger();
                w.forget();
            }
            Socket::Other(w) => drop(w),
        }
    }
}

/// Where a [`WriteLayer`] writes: the socket, in the connection's framing.
pub struct FrameSink {
    socket: Socket,
    shared: Arc<Shared>,
    buf: BytesMut,
}

impl std::fmt::Debug for FrameSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameSink").field("framing", &self.framing()).finish_non_exhaustive()
    }
}

impl FrameSink {
    /// The framing frames are written in.
    pub fn framing(&self) -> Framing {
        self.shared.framing()
    }

    /// `body` framed, as bytes (for a layer that writes them its own way).
    pub fn encode(&mut self, body: &[u8]) -> io::Result<Bytes> {
        self.buf.clear();
        encode_frame(self.framing(), body, &mut self.buf).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        Ok(self.buf.split().freeze())
    }

    /// Writes `body` as one frame.
    pub async fn frame(&mut self, body: &[u8]) -> io::Result<()> {
        let bytes = self.encode(body)?;
        self.raw(&bytes).await
    }

    /// Writes bytes as they are.
    pub async fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.socket.write_all(bytes).await?;
        self.shared.bytes_written.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    pub async fn flush(&mut self) -> io::Result<()> {
        self.socket.flush().await
    }

    /// Bytes written to the socket so far.
    pub fn bytes_written(&self) -> u64 {
        self.shared.bytes_written.load(Ordering::Relaxed)
    }

    /// Resolves once the connection is closing (a layer that waits stops).
    pub fn closing(&self) -> tokio_util::sync::WaitForCancellationFutureOwned {
        self.shared.closed.clone().cancelled_owned()
    }
}

/// What a [`WriteLayer`] returns: whether the frame went out whole as sent,
/// and whether the connection goes on.
pub type Written<'a> = Pin<Box<dyn Future<Output = io::Result<(bool, Flow)>> + Send + 'a>>;

/// Shapes what a connection writes: given each outgoing frame, writes it to
/// the sink — or not, or differently. The default writes every frame as is.
pub trait WriteLayer: Send + 'static {
    /// Writes `out`; `Ok(true)` when it went out whole as sent (its
    /// [`Delivery`] says it reached the peer).
    fn write<'a>(&'a mut self, out: &'a Outgoing, sink: &'a mut FrameSink) -> Written<'a>;

    /// Whether frames queued together may go out in one write: true only
    /// for a layer that writes every frame whole and at once ([`Plain`]);
    /// a fault that cuts or delays frames needs its own writes.
    fn gathers(&self) -> bool {
        false
    }
}

/// Every frame as it is.
#[derive(Debug, Default)]
pub struct Plain;

impl WriteLayer for Plain {
    fn write<'a>(&'a mut self, out: &'a Outgoing, sink: &'a mut FrameSink) -> Written<'a> {
        Box::pin(async move {
            sink.frame(&out.body).await?;
            Ok((true, Flow::Continue))
        })
    }

    fn gathers(&self) -> bool {
        true
    }
}

/// State the two halves share.
#[derive(Debug)]
struct Shared {
    /// 0: not known yet (header framing is written until it is); 1 header; 2 newline.
    framing: AtomicU8,
    queued: AtomicUsize,
    drained: Notify,
    closed: CancellationToken,
    ending: AtomicU8,
    bytes_written: AtomicU64,
}

impl Shared {
    fn framing(&self) -> Framing {
        if self.framing.load(Ordering::Acquire) == 2 { Framing::Newline } else { Framing::Header }
    }

    fn set_framing(&self, framing: Framing) {
        let code = match framing {
            Framing::Header => 1,
            Framing::Newline => 2,
        };
        let _ = self.framing.compare_exchange(0, code, Ordering::AcqRel, Ordering::Acquire);
    }

    fn ending(&self) -> Ending {
        match self.ending.load(Ordering::Acquire) {
            1 => Ending::Close,
            2 => Ending::Reset,
            _ => Ending::Graceful,
        }
    }

    fn dequeued(&self, bytes: usize) {
        self.queued.fetch_sub(bytes, Ordering::AcqRel);
        self.drained.notify_waiters();
    }
}

/// The sending half: cheap to clone, shared by every task that answers.
#[derive(Clone, Debug)]
pub struct Sender {
    tx: mpsc::UnboundedSender<Outgoing>,
    shared: Arc<Shared>,
}

impl Sender {
    /// Queues `out`; its [`Delivery`] says how far it gets (withdrawn at
    /// once when the connection is closed).
    pub fn send(&self, mut out: Outgoing) -> Delivery {
        let delivery = Delivery::new();
        if self.shared.closed.is_cancelled() {
            delivery.withdraw();
            return delivery;
        }
        out.delivery = Some(delivery.clone());
        let size = out.body.len();
        self.shared.queued.fetch_add(size, Ordering::AcqRel);
        if let Err(mpsc::error::SendError(out)) = self.tx.send(out) {
            self.shared.dequeued(size);
            if let Some(d) = &out.delivery {
                d.withdraw();
            }
        }
        delivery
    }

    /// Queues a message (`answering`: the method of the request a response
    /// answers).
    pub fn send_message(&self, message: &Message, answering: Option<&str>) -> Delivery {
        self.send(Outgoing::message(message, answering))
    }

    /// Bytes queued and not written yet.
    pub fn queued_bytes(&self) -> usize {
        self.shared.queued.load(Ordering::Acquire)
    }

    /// Waits until at most `limit` bytes are queued.
    pub async fn room(&self, limit: usize) {
        loop {
            let drained = self.shared.drained.notified();
            if self.queued_bytes() <= limit || self.shared.closed.is_cancelled() {
                return;
            }
            drained.await;
        }
    }

    /// The framing written: the one given, or the one the receiver detected
    /// (header framing until it knows).
    pub fn framing(&self) -> Framing {
        self.shared.framing()
    }

    /// Bytes written to the socket so far.
    pub fn bytes_written(&self) -> u64 {
        self.shared.bytes_written.load(Ordering::Relaxed)
    }

    /// Ends the connection this way (the first ending asked for wins).
    pub fn end(&self, ending: Ending) {
        let _ = self.shared.ending.compare_exchange(0, ending as u8, Ordering::AcqRel, Ordering::Acquire);
        self.shared.closed.cancel();
    }

    /// How the connection is ending (graceful while it is open).
    pub fn ending(&self) -> Ending {
        self.shared.ending()
    }

    pub fn is_closed(&self) -> bool {
        self.shared.closed.is_cancelled()
    }

    /// Resolves once the connection is closing.
    pub async fn closed(&self) {
        self.shared.closed.cancelled().await;
    }
}

/// What the receiver got.
#[derive(Debug)]
pub enum Received {
    /// A whole frame's body.
    Body(Bytes),
    /// A frame over the limit, skipped without being buffered; its first
    /// bytes when asked for ([`Options::keep_head`]). The stream is in sync.
    TooLarge { size: u64, limit: usize, head: Bytes },
    /// The peer closed the connection cleanly, between frames.
    Closed,
    /// The peer went away uncleanly: a reset, or a frame cut short.
    Lost(String),
    /// The peer broke the framing; the stream is out of sync.
    Broken(FramingError),
}

type Reader = FramedRead<Pin<Box<dyn AsyncRead + Send>>, Box<dyn DecodeFrames>>;

/// A decoder of frames: the editor link's [`FrameDecoder`], or one that
/// breaks the framing on purpose (fake-unity's defects).
pub trait DecodeFrames: tokio_util::codec::Decoder<Item = Frame, Error = FrameError> + Send + 'static {
    /// The framing, once known.
    fn framing(&self) -> Option<Framing>;
}

impl DecodeFrames for FrameDecoder {
    fn framing(&self) -> Option<Framing> {
        FrameDecoder::framing(self)
    }
}

/// The receiving half.
pub struct Receiver {
    frames: Reader,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Receiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Receiver").field("framing", &self.frames.decoder().framing()).finish_non_exhaustive()
    }
}

impl Receiver {
    /// The next frame, or how the stream ended. Cancel-safe.
    pub async fn recv(&mut self) -> Received {
        let next = self.frames.next().await;
        if let Some(framing) = self.frames.decoder().framing() {
            self.shared.set_framing(framing);
        }
        match next {
            None => Received::Closed,
            Some(Ok(Frame::Body(body))) => Received::Body(body),
            Some(Ok(Frame::TooLarge { size, limit, head })) => Received::TooLarge { size, limit, head },
            Some(Err(FrameError::Protocol(e))) => Received::Broken(e),
            Some(Err(e)) => Received::Lost(e.to_string()),
        }
    }

    /// The framing, once known.
    pub fn framing(&self) -> Option<Framing> {
        self.frames.decoder().framing()
    }

    /// Bytes read and not yet part of a frame.
    pub fn buffered(&self) -> &[u8] {
        self.frames.read_buffer()
    }

    /// Forgets the bytes read and not yet part of a frame.
    pub fn discard_buffered(&mut self) {
        self.frames.read_buffer_mut().clear();
    }

    /// The stream and what was buffered (to read the rest as bytes).
    pub fn into_inner(self) -> (Pin<Box<dyn AsyncRead + Send>>, Bytes) {
        let buffered = Bytes::copy_from_slice(self.frames.read_buffer());
        (self.frames.into_inner(), buffered)
    }
}

/// How a connection reads and writes.
pub struct Options {
    /// The framing to speak; `None` detects it from the peer's first byte
    /// (an Editor's side).
    pub framing: Option<Framing>,
    /// Largest frame received.
    pub limit: usize,
    /// Leading bytes kept of an over-limit frame.
    pub keep_head: usize,
    /// What shapes the frames written.
    pub layer: Box<dyn WriteLayer>,
    /// A decoder other than the editor link's own.
    pub decoder: Option<Box<dyn DecodeFrames>>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options").field("framing", &self.framing).field("limit", &self.limit).finish_non_exhaustive()
    }
}

impl Options {
    /// A client's side: `framing`, frames up to `limit`.
    pub fn client(framing: Framing, limit: usize) -> Options {
        Options { framing: Some(framing), limit, keep_head: 0, layer: Box::new(Plain), decoder: None }
    }

    /// An Editor's side: the framing detected, requests up to `limit`.
    pub fn editor(limit: usize) -> Options {
        Options { framing: None, limit, keep_head: 0, layer: Box::new(Plain), decoder: None }
    }

    pub fn keep_head(mut self, bytes: usize) -> Options {
        self.keep_head = bytes;
        self
    }

    pub fn layer(mut self, layer: impl WriteLayer) -> Options {
        self.layer = Box::new(layer);
        self
    }

    pub fn decoder(mut self, decoder: impl DecodeFrames) -> Options {
        self.decoder = Some(Box::new(decoder));
        self
    }
}

/// One connection: its two halves.
#[derive(Debug)]
pub struct Connection {
    pub sender: Sender,
    pub receiver: Receiver,
    /// The writer task; it ends after the connection closes and what it
    /// owed is written (or the drain limit passed).
    pub writer: tokio::task::JoinHandle<()>,
}

impl Connection {
    /// Over a TCP stream (Nagle off: frames are small and latency counts).
    pub fn tcp(stream: TcpStream, options: Options) -> Connection {
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        Connection::with_socket(read, Socket::Tcp(write), options)
    }

    /// Over a Unix domain socket (uLoopMCP 3 on macOS and Linux).
    #[cfg(unix)]
    pub fn unix(stream: tokio::net::UnixStream, options: Options) -> Connection {
        let (read, write) = stream.into_split();
        Connection::new(read, write, options)
    }

    /// Over a Windows named pipe, as its client (uLoopMCP 3 on Windows).
    #[cfg(windows)]
    pub fn pipe(pipe: tokio::net::windows::named_pipe::NamedPipeClient, options: Options) -> Connection {
        let (read, write) = tokio::io::split(pipe);
        Connection::new(read, write, options)
    }

    /// Two connected ends in memory: a client's (`framing`) and an
    /// Editor's (detecting it), each with default options.
    pub fn memory(framing: Framing, limit: usize) -> (Connection, Connection) {
        let (a, b) = tokio::io::duplex(256 * 1024);
        let (a_read, a_write) = tokio::io::split(a);
        let (b_read, b_write) = tokio::io::split(b);
        (
            Connection::new(a_read, a_write, Options::client(framing, limit)),
            Connection::new(b_read, b_write, Options::editor(limit)),
        )
    }

    /// Over any reader and writer.
    pub fn new(
        read: impl AsyncRead + Send + 'static,
        write: impl AsyncWrite + Send + 'static,
        options: Options,
    ) -> Connection {
        Connection::with_socket(read, Socket::Other(Box::pin(write)), options)
    }

    fn with_socket(read: impl AsyncRead + Send + 'static, socket: Socket, options: Options) -> Connection {
        let shared = Arc::new(Shared {
            framing: AtomicU8::new(0),
            queued: AtomicUsize::new(0),
            drained: Notify::new(),
            closed: CancellationToken::new(),
            ending: AtomicU8::new(0),
            bytes_written: AtomicU64::new(0),
        });
        let decoder: Box<dyn DecodeFrames> = match (options.decoder, options.framing) {
            (Some(decoder), _) => decoder,
            (None, Some(framing)) => Box::new(FrameDecoder::new(framing, options.limit).keep_head(options.keep_head)),
            (None, None) => Box::new(FrameDecoder::detect(options.limit).keep_head(options.keep_head)),
        };
        if let Some(framing) = options.framing {
            shared.set_framing(framing);
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let sink = FrameSink { socket, shared: shared.clone(), buf: BytesMut::new() };
        let writer = tokio::spawn(writer::write_loop(sink, rx, options.layer));
        let read: Pin<Box<dyn AsyncRead + Send>> = Box::pin(read);
        Connection {
            sender: Sender { tx, shared: shared.clone() },
            receiver: Receiver { frames: FramedRead::new(read, decoder), shared },
            writer,
        }
    }
}

impl tokio_util::codec::Decoder for Box<dyn DecodeFrames> {
    type Item = Frame;
    type Error = FrameError;

    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        (**self).decode(src)
    }

    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        (**self).decode_eof(src)
    }
}
