//! Calls side by side on an Editor that answers one request at a time per
//! connection (uLoopMCP 2.x: its server reads the next request on a
//! connection only after answering the last). There a call sent on a busy
//! connection waits behind the call before it, and a call abandoned at its
//! deadline or cancelled holds the connection until the Editor finishes it.
//! So, as uLoopMCP's own clients do (its CLI opens a connection per request),
//! each call goes out on a connection of its own, a lane, and the link's
//! connection keeps the handshake and the Editor's notifications:
//!
//! - a call takes an idle lane, or opens one; never more than [`MAX_LANES`]
//!   at once (beyond that a call waits for one to come free, by its deadline);
//! - a lane whose call was answered waits for the next call (up to
//!   [`IDLE_LANES`] of them); one whose call was abandoned is closed, which
//!   frees the Editor's side of it at once;
//! - lanes belong to one connection of the link: when it ends (a reload, a
//!   crash) they are not used again, and the next calls open lanes to the
//!   Editor the link finds next.
//!
//! Our Editors answer requests on one connection concurrently: they get no
//! lanes.

use std::{
    sync::{Arc, Mutex},
    time::Instant,
};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::{
    Wait,
    handshake::Dialer,
    socket::{CloseReason, EditorConnection, lock},
};

/// The most lanes open at once (besides the link's own connection).
pub const MAX_LANES: usize = 8;

/// Lanes kept open while no call needs them.
pub const IDLE_LANES: usize = 2;

/// The lanes of the link's current connection.
#[derive(Debug, Default)]
pub(super) struct Lanes {
    pool: Mutex<Pool>,
    /// A lane came free, or a slot to open one.
    freed: Notify,
}

#[derive(Debug, Default)]
struct Pool {
    /// The link connection (its number) the lanes belong to.
    of: u64,
    idle: Vec<Arc<EditorConnection>>,
    /// Lanes open or being opened, idle ones included.
    open: usize,
}

/// A lane lent to one call. Dropped, it goes back to the pool, or is closed
/// when its call closed it (abandoned at its deadline, or cancelled) or
/// enough lanes are idle.
#[derive(Debug)]
pub(super) struct Lane<'a> {
    lanes: &'a Lanes,
    of: u64,
    pub connection: Arc<EditorConnection>,
}

impl Drop for Lane<'_> {
    fn drop(&mut self) {
        let mut pool = lock(&self.lanes.pool);
        let ours = pool.of == self.of;
        let usable = !self.connection.closed.is_cancelled() && self.connection.calls_waiting() == 0;
        if ours && usable && pool.idle.len() < IDLE_LANES {
            pool.idle.push(self.connection.clone());
        } else {
            self.connection.close(CloseReason::Stopped);
            if ours {
                pool.open = pool.open.saturating_sub(1);
            }
        }
        drop(pool);
        self.lanes.freed.notify_one();
    }
}

/// What [`Lanes::take`] found.
enum Slot {
    Idle(Arc<EditorConnection>),
    /// A slot reserved: open a lane into it.
    Open,
}

impl Lanes {
    /// The pool for `of`: lanes of an earlier link connection are closed.
    fn take(&self, of: u64) -> Option<Slot> {
        let mut pool = lock(&self.pool);
        if pool.of != of {
            for lane in pool.idle.drain(..) {
                lane.close(CloseReason::Stopped);
            }
            *pool = Pool { of, idle: Vec::new(), open: 0 };
        }
        while let Some(lane) = pool.idle.pop() {
            if lane.closed.is_cancelled() {
                pool.open = pool.open.saturating_sub(1);
            } else {
                return Some(Slot::Idle(lane));
            }
        }
        (pool.open < MAX_LANES).then(|| {
            pool.open += 1;
            Slot::Open
        })
    }

    /// A reserved slot whose lane could not be opened.
    fn give_back(&self, of: u64) {
        let mut pool = lock(&self.pool);
        if pool.of == of {
            pool.open = pool.open.saturating_sub(1);
        }
        drop(pool);
        self.freed.notify_one();
    }

    /// Lanes lent out to calls now (each carries one call).
    pub fn busy(&self, of: u64) -> usize {
        let pool = lock(&self.pool);
        if pool.of == of { pool.open.saturating_sub(pool.idle.len()) } else { 0 }
    }
}

impl Lanes {
    /// A lane to the Editor behind `primary` for one call: an idle one, a new
    /// one, or (all [`MAX_LANES`] busy) the first to come free. `None` when a
    /// lane cannot be opened (an Editor that takes one connection only): the
    /// call then goes out on `primary`.
    pub(super) async fn lane(
        &self,
        dialer: &Arc<Dialer>,
        primary: &Arc<EditorConnection>,
        deadline: Instant,
        cancel: &CancellationToken,
    ) -> Result<Option<Lane<'_>>, Wait> {
        let of = primary.number;
        loop {
            let freed = self.freed.notified();
            match self.take(of) {
                Some(Slot::Idle(connection)) => return Ok(Some(Lane { lanes: self, of, connection })),
                Some(Slot::Open) => {
                    return match open_lane(dialer, primary, deadline).await {
                        Some(connection) => Ok(Some(Lane { lanes: self, of, connection })),
                        None => {
                            self.give_back(of);
                            Ok(None)
                        }
                    };
                }
                None => {}
            }
            tokio::select! {
                _ = freed => {}
                _ = primary.closed.cancelled() => return Ok(None),
                _ = tokio::time::sleep_until(deadline.into()) => {
                    return Err(Wait::Busy { connections: MAX_LANES });
                }
                _ = cancel.cancelled() => return Err(Wait::Cancelled),
            }
        }
    }
}

/// Opens a lane: a connection to the same Editor, endpoint, token (or
/// `x-uloop`) and framing as `primary`, which already said who it is; a
/// watchdog of its own watches it.
async fn open_lane(
    dialer: &Arc<Dialer>,
    primary: &Arc<EditorConnection>,
    deadline: Instant,
) -> Option<Arc<EditorConnection>> {
    let opening = dialer.open(&primary.target, primary.framing);
    let lane = match tokio::time::timeout_at(deadline.into(), opening).await {
        Ok(Ok(lane)) => lane,
        Ok(Err(why)) => {
            tracing::info!(endpoint = %primary.target.endpoint, %why, "cannot open another connection to the Editor; the call waits in line");
            return None;
        }
        Err(_) => return None,
    };
    *lock(&lane.info) = primary.info();
    lock(&lane.session_id).clone_from(&lock(&primary.session_id));
    // When the link's connection ends, an idle lane of it is closed by the
    // next call (`Lanes::take`) and one in use when its call ends: a lane in
    // use is left to end as the Editor ends it, so its call hears why (a
    // reload's shutdown notification, or a crash).
    tokio::spawn(super::watchdog::watch(dialer.clone(), lane.clone()));
    Some(lane)
}
