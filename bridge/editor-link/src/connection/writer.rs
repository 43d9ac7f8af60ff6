//! The writer task: frames queued on a connection go out in order, through
//! its [`WriteLayer`], each [`Delivery`](super::Delivery) told how far its body got; frames
//! queued together go out together when the layer allows.

use std::{io, sync::atomic::Ordering};

use bytes::BytesMut;
use tokio::sync::mpsc;

use super::{DRAIN_LIMIT, Ending, Flow, FrameSink, Outgoing, Shared, Socket, WriteLayer};
use crate::framing::encode_frame;

/// Writes queued frames through the layer until the connection closes; then
/// drains what is queued (gracefully) or ends at once (close, reset).
pub(super) async fn write_loop(
    mut sink: FrameSink,
    mut rx: mpsc::UnboundedReceiver<Outgoing>,
    mut layer: Box<dyn WriteLayer>,
) {
    let shared = sink.shared.clone();
    let mut carried = Carried::new();
    loop {
        let out = match carried.pop_front() {
            Some(out) => Some(out),
            None => tokio::select! {
                biased;
                out = rx.recv() => out,
                _ = shared.closed.cancelled() => None,
            },
        };
        let Some(out) = out else { break };
        if shared.closed.is_cancelled() && shared.ending() != Ending::Graceful {
            // Ended abruptly (a close, a reset): nothing more goes out.
            forget(&shared, &out);
            break;
        }
        let written = if layer.gathers() {
            write_gathered(&mut sink, out, &mut rx, &mut carried).await
        } else {
            write_one(&mut sink, &mut *layer, out).await
        };
        match written {
            Ok(Flow::Continue) => {}
            Ok(Flow::End(ending)) => {
                let _ = shared.ending.compare_exchange(0, ending as u8, Ordering::AcqRel, Ordering::Acquire);
                shared.closed.cancel();
                break;
            }
            Err(_) => {
                // The peer is gone: nothing more can be written.
                shared.closed.cancel();
                return;
            }
        }
    }
    match shared.ending() {
        Ending::Reset => {
            // Nothing may go out before the reset.
            let socket = std::mem::replace(&mut sink.socket, Socket::Other(Box::pin(tokio::io::sink())));
            socket.reset();
        }
        Ending::Close => {
            let _ = sink.socket.shutdown().await;
        }
        Ending::Graceful => {
            let drain = async {
                while let Some(out) = carried.pop_front().or_else(|| rx.try_recv().ok()) {
                    if !matches!(write_one(&mut sink, &mut *layer, out).await, Ok(Flow::Continue)) {
                        return;
                    }
                }
                let _ = sink.socket.shutdown().await;
            };
            let _ = tokio::time::timeout(DRAIN_LIMIT, drain).await;
        }
    }
    // What was never written was never delivered.
    for out in carried {
        forget(&shared, &out);
    }
    rx.close();
    while let Ok(out) = rx.try_recv() {
        forget(&shared, &out);
    }
}

/// Whether the writer may write `out`: false when its sender withdrew it
/// (it never leaves, and no longer counts as queued).
fn taken_for_writing(shared: &Shared, out: &Outgoing) -> bool {
    if out.delivery.as_ref().is_some_and(|d| !d.start_writing()) {
        shared.dequeued(out.body.len());
        return false;
    }
    true
}

/// A body that will never be written.
fn forget(shared: &Shared, out: &Outgoing) {
    shared.dequeued(out.body.len());
    if let Some(d) = &out.delivery {
        d.withdraw();
    }
}

/// Bytes of frames gathered into one write.
const GATHER: usize = 64 * 1024;

/// Frames taken from the queue but not begun (the socket was full): they
/// go first next time, and can still be withdrawn meanwhile.
type Carried = std::collections::VecDeque<Outgoing>;

/// Writes `first` and the frames queued behind it (up to [`GATHER`] bytes)
/// in as few writes as the socket takes: a client with many calls in flight
/// sends them in one system call. Each frame is delivered once it is
/// written whole; one the socket has begun is finished; those it has not
/// begun are carried to the next round, still withdrawable, so a peer that
/// stops reading commits no more than it would one frame at a time.
async fn write_gathered(
    sink: &mut FrameSink,
    first: Outgoing,
    rx: &mut mpsc::UnboundedReceiver<Outgoing>,
    carried: &mut Carried,
) -> io::Result<Flow> {
    let mut gathered = BytesMut::new();
    // Each frame taken, with where its bytes end in `gathered`.
    let mut frames: Vec<(Outgoing, usize)> = Vec::new();
    let mut next = Some(first);
    while let Some(out) = next.take() {
        // One withdrawn by its sender never leaves.
        if taken_for_writing(&sink.shared, &out) {
            let framed = if out.raw {
                // Raw bytes are what a peer testing bad input meant to send.
                gathered.extend_from_slice(&out.body);
                Ok(())
            } else {
                encode_frame(sink.framing(), &out.body, &mut gathered)
            };
            frames.push((out, gathered.len()));
            if let Err(e) = framed {
                for (out, _) in &frames {
                    sink.shared.dequeued(out.body.len());
                    if let Some(d) = &out.delivery {
                        d.finish(false);
                    }
                }
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
        }
        let ending = sink.shared.closed.is_cancelled() && sink.shared.ending() != Ending::Graceful;
        if gathered.len() < GATHER && !ending {
            next = carried.pop_front().or_else(|| rx.try_recv().ok());
        }
    }
    if frames.is_empty() {
        return Ok(Flow::Continue);
    }
    // What the socket takes now, without waiting.
    let mut written = 0;
    let mut outcome = loop {
        if written == gathered.len() {
            break Ok(());
        }
        match sink.socket.write_now(&gathered[written..]) {
            Ok(0) => break Ok(()),
            Ok(n) => written += n,
            Err(e) => break Err(e),
        }
    };
    // Nothing taken: wait for the first frame to go, as a lone frame would.
    // Part of a frame taken: finish that frame, however long it takes.
    let must_finish = match &outcome {
        Ok(()) if written == 0 => frames.first().map(|(_, end)| *end),
        Ok(()) => frames.iter().map(|(_, end)| *end).find(|&end| end > written),
        Err(_) => None,
    };
    // The frames the socket has not begun wait in the queue again, first in
    // line and withdrawable, while that one is written.
    let committed = must_finish.unwrap_or(written);
    let mut start = 0;
    let mut taken = Vec::new();
    for (out, end) in frames {
        if start >= committed && end > committed {
            if let Some(d) = &out.delivery {
                d.unstart();
            }
            carried.push_back(out);
        } else {
            taken.push((out, end));
        }
        start = end;
    }
    if let Some(end) = must_finish {
        outcome = sink.socket.write_all(&gathered[written..end]).await;
        if outcome.is_ok() {
            written = end;
        }
    }
    sink.shared.bytes_written.fetch_add(written as u64, Ordering::Relaxed);
    for (out, end) in taken {
        sink.shared.dequeued(out.body.len());
        if let Some(d) = &out.delivery {
            d.finish(end <= written);
        }
    }
    outcome.map(|()| Flow::Continue)
}

async fn write_one(sink: &mut FrameSink, layer: &mut dyn WriteLayer, out: Outgoing) -> io::Result<Flow> {
    let size = out.body.len();
    if !taken_for_writing(&sink.shared, &out) {
        return Ok(Flow::Continue);
    }
    let written = if out.raw {
        // Raw bytes are what a peer testing bad input meant to send: no layer.
        sink.raw(&out.body).await.map(|()| (true, Flow::Continue))
    } else {
        layer.write(&out, sink).await
    };
    sink.shared.dequeued(size);
    if let Some(d) = &out.delivery {
        d.finish(matches!(written, Ok((true, _))));
    }
    written.map(|(_, flow)| flow)
}
