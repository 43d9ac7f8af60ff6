//! What a fault does, behind one trait: each fault is a file of this folder
//! with its parameters and its [`Behaviour`]. Wire faults act on frames as
//! they pass (delay, split, corrupt, drop, duplicate, end the connection) and
//! run wherever a connection carries the editor link — the simulated
//! Editor's own connections and `fake-unity proxy` in front of any Editor;
//! Editor faults change what the simulated Editor does (a slow tool, a
//! reload, a crash) and run only there.

use std::{
    future::Future,
    io,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicU8, Ordering},
    },
    time::Duration,
};

use bytes::Bytes;
use editor_link::connection::{Ending, Flow, FrameSink, Outgoing, Sender};

use super::{Effect, Faults, Fired, Trigger};
use crate::stall::Stall;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a fault can be carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// On any connection carrying the editor link: in the simulated Editor,
    /// and by `fake-unity proxy` in front of any Editor.
    Wire,
    /// Only by the simulated Editor: it changes what the Editor does.
    Editor,
}

/// What a frame from the client becomes after a fault fired on it.
#[derive(Debug)]
pub enum Inbound {
    /// These frames are handled (none: it was dropped).
    Frames(Vec<Bytes>),
    /// The frame is handled with the fault attached: it acts on the request
    /// (a slow tool, a reload, a crash …).
    WithFault(Bytes),
    /// Nothing more is read from the connection.
    Stop,
}

/// What a fault does.
pub trait Behaviour: Send + Sync + std::fmt::Debug {
    /// Its `kind` in scenario files, and in counters.
    fn name(&self) -> &'static str;

    /// The triggers it means something for; the first is the default.
    fn triggers(&self) -> &'static [Trigger];

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    /// Why its parameters cannot be used, if they cannot.
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }

    /// A frame going to the client, fired on `fromEditor`: writes it (or
    /// not, or otherwise); whether it went out whole, and whether the
    /// connection goes on. Default: as it is.
    fn outbound<'a>(
        &'a self,
        _fired: &'a Fired,
        _wire: &'a Wire,
        out: &'a Outgoing,
        sink: &'a mut FrameSink,
    ) -> BoxFuture<'a, io::Result<(bool, Flow)>> {
        Box::pin(async move {
            sink.frame(&out.body).await?;
            Ok((true, Flow::Continue))
        })
    }

    /// What it does to the simulated Editor when it fired (at a request, a
    /// lifecycle moment or a connection), if anything. Default: nothing; a
    /// wire fault acts on frames instead.
    fn effect(&self, _fired: &Fired) -> Option<Effect> {
        None
    }

    /// A frame from the client, fired on `toEditor`: what is handled
    /// instead. Default: the frame, with the fault attached.
    fn inbound<'a>(&'a self, _fired: &'a Fired, _wire: &'a Wire, body: Bytes) -> BoxFuture<'a, Inbound> {
        Box::pin(std::future::ready(Inbound::WithFault(body)))
    }
}

/// A connection a fault has silenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Silence {
    None = 0,
    /// Reads and discards, never writes.
    BlackHole = 1,
    /// Neither reads nor writes (the peer vanished).
    HalfOpen = 2,
}

/// A connection, as a fault firing on it sees it.
#[derive(Clone, Debug)]
pub struct Wire {
    pub sender: Sender,
    silence: Arc<AtomicU8>,
    /// What a `hang` holds: the whole simulated Editor, or the whole proxy.
    pub hang: Arc<Stall>,
    pub faults: Arc<Faults>,
}

impl Wire {
    pub fn new(sender: Sender, hang: Arc<Stall>, faults: Arc<Faults>) -> Wire {
        Wire { sender, silence: Arc::new(AtomicU8::new(Silence::None as u8)), hang, faults }
    }

    pub fn silence(&self) -> Silence {
        match self.silence.load(Ordering::Acquire) {
            1 => Silence::BlackHole,
            2 => Silence::HalfOpen,
            _ => Silence::None,
        }
    }

    /// Silences the connection, closing it after `close_after` if given.
    pub fn set_silence(&self, silence: Silence, close_after: Option<Duration>) {
        self.silence.store(silence as u8, Ordering::Release);
        if let Some(delay) = close_after {
            let sender = self.sender.clone();
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                sender.end(Ending::Close);
            });
        }
    }

    /// Ends the connection now, cleanly or with a reset.
    pub fn end(&self, ending: Ending) {
        self.sender.end(ending);
    }
}
