//! One client connection of the simulated Editor, over the editor link's
//! [`Connection`]: frames read (framing detected from the first byte) and
//! handled through the `toEditor` fault rules, requests run concurrently
//! (pipelining) and answered as they complete, answers written through the
//! `fromEditor` fault rules ([`EditorFaults`]). A client that does not read
//! is not read; a hung Editor reads and writes nothing.

use std::{
    io,
    sync::{Arc, atomic::Ordering},
};

use bytes::{Bytes, BytesMut};
use editor_link::{
    connection::{Connection, Ending, Flow, FrameSink, Options, Outgoing, Received, WriteLayer},
    framing::Framing,
    jsonrpc::{ErrorKind, ErrorObject, Message, ParseFailure, Response},
};
use tokio_util::task::TaskTracker;

use super::decoder::PolicyDecoder;
use crate::{
    editor::{
        Client, Editor,
        model::{
            Decoding, HeaderError, NewlineFrames, Oversize, Pipelining, ReplyFraming,
            listener::{Accepting, Backpressure, BrokenPeer},
            messages::{AfterParseError, Batches, Notifications},
        },
    },
    faults::{BoxFuture, Inbound, Silence, Subject, Trigger, Wire},
    server::{Peer, Stream},
};

/// How many requests of one connection run at once; the connection is not
/// read while they all do (the uLoopMCP Editor runs one at a time).
const IN_FLIGHT_LIMIT: usize = 64;

/// Serves one accepted connection until it closes.
pub(crate) async fn serve(editor: Arc<Editor>, number: u64, stream: Stream, peer: Peer) {
    let _serial = match editor.model.listener.accepting {
        Accepting::OneAtATime => editor.serial.clone().acquire_owned().await.ok(),
        Accepting::Concurrent | Accepting::WaitsForFirstByte => None,
    };
    let decoding = editor.model.framing.decoding;
    let decoder = PolicyDecoder::new(decoding, editor.max_request_bytes);
    // The layer needs the connection's wire, which exists once the
    // connection does: it gets it through this cell.
    let wire_cell = Arc::new(std::sync::OnceLock::new());
    let layer = EditorFaults { editor: editor.clone(), client: number, wire: wire_cell.clone() };
    let options = Options::editor(editor.max_request_bytes).decoder(decoder).layer(layer);
    let Connection { sender, mut receiver, writer } = stream.connection(options);
    let wire = Wire::new(sender, editor.hang.clone(), editor.faults.clone());
    let _ = wire_cell.set(wire.clone());
    let client = editor.add_client(number, peer, wire);
    if editor.is_crashed() {
        // Accepted as the process died: the kernel closes it.
        client.end(Ending::Close);
    }
    tracing::debug!(client = client.id, peer = %client.peer, "connected");

    let requests = TaskTracker::new();
    let previous = std::sync::Mutex::new(None);
    let in_flight = Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT_LIMIT));
    let mut framing_known = false;
    loop {
        // Backpressure: a client that does not read its answers, or has too
        // many requests running, is not read until that changes; a hung
        // Editor reads nothing.
        let ready = async {
            if editor.model.listener.backpressure == Backpressure::None {
                editor.unhung().await;
                return None;
            }
            client.room(Client::QUEUE_LIMIT).await;
            editor.unhung().await;
            in_flight.clone().acquire_owned().await.ok()
        };
        let permit = tokio::select! {
            _ = client.closed() => break,
            permit = ready => permit,
        };
        let received = tokio::select! {
            _ = client.closed() => break,
            received = receiver.recv() => received,
        };
        if let (false, Some(framing)) = (framing_known, receiver.framing()) {
            framing_known = true;
            editor.stats.count_framing(framing);
            if framing == Framing::Newline {
                match editor.model.framing.newline {
                    NewlineFrames::Served => {}
                    NewlineFrames::Refused => {
                        let error = ErrorObject::new(ErrorKind::FramingError, "newline framing is not supported");
                        client.send(&Message::Response(Response::error(None, error)));
                        break;
                    }
                    NewlineFrames::Unanswered => {
                        // A header reader waits for a blank line that never comes.
                        client.closed().await;
                        break;
                    }
                }
            }
        }
        match received {
            Received::Closed => {
                // The peer finished sending (or went away): answer what is
                // in flight, then close.
                requests.close();
                tokio::select! {
                    _ = requests.wait() => {}
                    _ = client.closed() => {}
                }
                break;
            }
            Received::Lost(why) => {
                tracing::debug!(client = client.id, why, "peer went away");
                if editor.model.listener.broken_peer == BrokenPeer::StopsEditor {
                    editor.request_quit(None);
                }
                break;
            }
            Received::Body(body) => {
                editor.stats.bytes_received.fetch_add(body.len() as u64, Ordering::Relaxed);
                match client.wire.silence() {
                    Silence::None => {}
                    Silence::BlackHole => continue,
                    Silence::HalfOpen => {
                        client.closed().await;
                        break;
                    }
                }
                if receive(&editor, &client, &requests, body, permit, &previous).await == AfterBody::Close {
                    break;
                }
                if decoding == Decoding::FirstFramePerRead {
                    receiver.discard_buffered();
                }
            }
            Received::TooLarge { size, limit, .. } => {
                editor.stats.frames_too_large.fetch_add(1, Ordering::Relaxed);
                let oversize = editor.model.framing.oversize;
                if oversize != Oversize::Close {
                    let error = ErrorObject::new(
                        ErrorKind::FrameTooLarge,
                        format!("Frame of {size} bytes exceeds the limit of {limit} bytes; it was discarded"),
                    )
                    .with_data("size", size)
                    .with_data("limit", limit);
                    client.send(&Message::Response(Response::error(None, error)));
                }
                if oversize != Oversize::Answer {
                    break;
                }
            }
            Received::Broken(err) => {
                if editor.model.listener.broken_peer == BrokenPeer::StopsEditor {
                    editor.request_quit(None);
                }
                editor.stats.framing_errors.fetch_add(1, Ordering::Relaxed);
                let header_error = editor.model.framing.header_error;
                if header_error != HeaderError::Unanswered {
                    let error = ErrorObject::new(ErrorKind::FramingError, format!("{err}; closing the connection"));
                    client.send(&Message::Response(Response::error(None, error)));
                }
                if header_error != HeaderError::AnswerAndClose {
                    // Nothing more is read; the client is left to close it.
                    client.closed().await;
                }
                break;
            }
        }
    }
    // Close: the writer writes what is queued (within its drain limit), then
    // shuts the socket down.
    client.end(Ending::Graceful);
    let mut writer = writer;
    if tokio::time::timeout(editor_link::connection::DRAIN_LIMIT * 2, &mut writer).await.is_err() {
        writer.abort();
    }
    let (mut read_half, _) = receiver.into_inner();
    if client.ending() == Ending::Graceful {
        // The shutdown notification must not be destroyed by a reset.
        crate::server::linger(&mut read_half).await;
    }
    drop(read_half);
    editor.remove_client(client.id);
    tracing::debug!(client = client.id, "disconnected");
}

/// The `fromEditor` fault rules, as the connection's write layer: each
/// frame the Editor writes goes through the first rule it matches. A hung
/// Editor writes nothing until it wakes; a silenced connection, nothing.
struct EditorFaults {
    editor: Arc<Editor>,
    client: u64,
    wire: Arc<std::sync::OnceLock<Wire>>,
}

impl WriteLayer for EditorFaults {
    fn write<'a>(&'a mut self, out: &'a Outgoing, sink: &'a mut FrameSink) -> BoxFuture<'a, io::Result<(bool, Flow)>> {
        Box::pin(async move {
            tokio::select! {
                biased;
                _ = self.editor.unhung() => {}
                _ = sink.closing() => return Ok((false, Flow::Continue)),
            }
            let Some(wire) = self.wire.get() else { return Ok((false, Flow::Continue)) };
            if wire.silence() != Silence::None {
                return Ok((false, Flow::Continue));
            }
            let before = sink.bytes_written();
            let subject = Subject {
                connection: Some(self.client),
                frame: Some(out.kind),
                is_error: out.is_error,
                method: out.method.as_deref(),
            };
            let written = match self.editor.faults.frame(Trigger::FromEditor, subject) {
                None if self.editor.model.framing.replies == ReplyFraming::AlwaysNewline => {
                    // Newline framing whatever the client speaks.
                    let mut buf = BytesMut::new();
                    editor_link::framing::encode_frame(Framing::Newline, &out.body, &mut buf)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                    sink.raw(&buf).await.map(|()| (true, Flow::Continue))
                }
                None => sink.frame(&out.body).await.map(|()| (true, Flow::Continue)),
                Some(fired) => fired.fault().behaviour().outbound(&fired, wire, out, sink).await,
            };
            self.editor.stats.bytes_sent.fetch_add(sink.bytes_written() - before, Ordering::Relaxed);
            written
        })
    }
}

/// Whether a connection goes on after a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AfterBody {
    Continue,
    Close,
}

/// One frame from the client: the `toEditor` fault rules, then handling.
async fn receive(
    editor: &Arc<Editor>,
    client: &Arc<Client>,
    requests: &TaskTracker,
    body: Bytes,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
    previous: &std::sync::Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
) -> AfterBody {
    let parsed = editor.model.framing.reading.read(&body);
    let requests = &Requests { tracker: requests, permit: std::sync::Mutex::new(permit), previous };
    let Some(fired) = editor.faults.frame(Trigger::ToEditor, Subject::of_frame(client.id, &parsed)) else {
        return handle_body(editor, client, requests, parsed, &body, None);
    };
    match fired.fault().behaviour().inbound(&fired, &client.wire, body.clone()).await {
        Inbound::Frames(frames) => {
            for frame in frames {
                let parsed = editor.model.framing.reading.read(&frame);
                if handle_body(editor, client, requests, parsed, &frame, None) == AfterBody::Close {
                    return AfterBody::Close;
                }
            }
            AfterBody::Continue
        }
        // Request-level faults travel with the request.
        Inbound::WithFault(_) => handle_body(editor, client, requests, parsed, &body, Some(fired)),
        Inbound::Stop => AfterBody::Close,
    }
}

/// Where a connection's requests run: its task tracker, and the in-flight
/// permit of the frame being handled (the first request made of it keeps
/// it until answered).
struct Requests<'a> {
    tracker: &'a TaskTracker,
    permit: std::sync::Mutex<Option<tokio::sync::OwnedSemaphorePermit>>,
    /// With in-order pipelining: done when the previous request is answered.
    previous: &'a std::sync::Mutex<Option<tokio::sync::oneshot::Receiver<()>>>,
}

/// Answers or dispatches one parsed frame.
fn handle_body(
    editor: &Arc<Editor>,
    client: &Arc<Client>,
    requests: &Requests<'_>,
    parsed: Result<Message, ParseFailure>,
    body: &[u8],
    fault: Option<crate::faults::Fired>,
) -> AfterBody {
    match parsed {
        Ok(Message::Request(request)) => {
            let editor = editor.clone();
            let client = client.clone();
            let permit = crate::editor::lock(&requests.permit).take();
            // In order: each request waits for the one before it.
            let (previous, done) = match editor.model.framing.pipelining {
                Pipelining::Concurrent => (None, None),
                Pipelining::InOrder => {
                    let (done, next) = tokio::sync::oneshot::channel();
                    (crate::editor::lock(requests.previous).replace(next), Some(done))
                }
            };
            requests.tracker.spawn(async move {
                if let Some(previous) = previous {
                    let _ = previous.await;
                }
                editor.handle_request(&client, request, fault).await;
                drop(permit);
                if let Some(done) = done {
                    let _ = done.send(());
                }
            });
        }
        Ok(Message::Notification(_)) => {
            // Editors ignore client notifications (protocol §4).
            editor.stats.notifications_received.fetch_add(1, Ordering::Relaxed);
            if editor.model.messages.notifications == Notifications::Answered {
                client.send(&Message::Response(Response { id: None, outcome: Ok(serde_json::json!({})) }));
            }
        }
        Ok(Message::Response(_)) => {
            editor.stats.responses_received.fetch_add(1, Ordering::Relaxed);
        }
        Err(ParseFailure::Batch) if editor.model.messages.batches == Batches::Unanswered => {}
        Err(failure) => {
            let not_json = matches!(failure, ParseFailure::NotJson(_));
            if not_json {
                editor.stats.parse_errors.fetch_add(1, Ordering::Relaxed);
            }
            let Some(response) = editor.model.errors.unreadable(&failure, body) else {
                return AfterBody::Continue;
            };
            client.send(&Message::Response(response));
            if not_json && editor.model.messages.after_parse_error == AfterParseError::Close {
                return AfterBody::Close;
            }
        }
    }
    AfterBody::Continue
}
