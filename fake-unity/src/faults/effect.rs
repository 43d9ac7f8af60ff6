//! What a fault does to the simulated Editor, as data. Each fault's file
//! says which effect it has ([`Behaviour::effect`](super::Behaviour::effect));
//! the Editor carries every effect out in one place (`serving/effects.rs`),
//! and `fake-unity proxy` carries out the refusals of connections, the only
//! effects that mean something in front of another Editor. Wire faults that
//! act on frames as they pass do so in their own files.

use std::time::Duration;

use super::{Blocker, ReloadPoint};

/// What a fault that fired does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    // ---- at the request it fired on ----
    /// The main thread is busy for this long: what waits for it waits (the
    /// Editor's dialect says what: every request, or only tool bodies);
    /// `blocker` says what holds it, when known.
    Stall { busy: Duration, blocker: Option<Blocker> },
    /// The tool works this much longer, inside its deadline, reporting
    /// progress every second unless it is deadlocked.
    SlowTool { extra: Duration, progress: bool },
    /// The result is padded to about this many bytes.
    PadResponse(usize),
    /// A domain reload at `at`, the Editor away for `downtime` (or its
    /// state's default), on another port with `move_port`.
    Reload { at: ReloadPoint, downtime: Option<Duration>, move_port: bool },
    /// The Editor process dies at `at`; a new one listens after
    /// `restart_after` (or when told), on another port with `move_port`.
    Crash { at: ReloadPoint, restart_after: Option<Duration>, move_port: bool },

    // ---- at a lifecycle moment (start, reload, quit) ----
    /// These tools are gone (an empty list brings every tool back).
    RemoveTools(Vec<String>),
    /// The listener stays bound and accepts nothing, for this long or until
    /// the rule is removed.
    DeadListener(Option<Duration>),
    /// The Editor's port stays taken (the old one at a reload, the preferred
    /// one at start), so it comes back on another; for this long or until
    /// released.
    HoldPort { holder: PortHolder, until: Option<Duration> },
    /// A discovery file saying `ready` for a process that does not exist.
    StaleDiscovery,

    // ---- at a connection accepted ----
    /// The connection is never served.
    Refuse(Refusal),
    /// The listener takes this long over the connection before it accepts
    /// the next (the connection is then served as any).
    SlowAccept(Duration),
}

/// Who holds a port the Editor left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortHolder {
    /// A zombie listener: accepts, reads, never answers.
    Zombie,
    /// Another program: accepts and closes at once.
    OtherProgram,
}

/// How a refused connection ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Reset at once.
    Reset,
    /// Closed cleanly at once.
    Close,
    /// Held open and never read (the peer's writes pile up), until the
    /// Editor lets go of what faults hold.
    HoldUnread,
    /// Read and never answered, for this long or until let go.
    Swallow(Option<Duration>),
}
