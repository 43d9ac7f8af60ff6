//! Fault injection: rules that break the editor link on purpose, the way real
//! Editors do (docs/editor-link-protocol.md, fixtures/scenarios/README.md),
//! installed from a scenario file, the control API or a [`FaultGuard`].
//!
//! - [`rules`] — what sets a fault off (`on`), what it matches, how often
//!   and how long it fires, its counters.
//! - [`behaviour`] — the one trait every fault implements, and the wire a
//!   fault acts on.
//! - [`effect`] — what a fault does to the simulated Editor, as data; the
//!   Editor carries effects out in one place (`serving/effects.rs`).
//! - one file per fault, with its parameters and what it does: wire faults
//!   (`latency`, `bandwidth`, `slicer`, `closeAfterBytes`, `blackHole`,
//!   `halfOpen`, `reset`, `close`, `refuseConnections`, `garbage`,
//!   `corrupt`, `truncate`, `duplicate`, `wrongId`, `drop`, `hang`) run on
//!   any connection, in the simulated Editor and in `fake-unity proxy` in
//!   front of any Editor; Editor faults (`mainThreadStall`, `slowTool`,
//!   `reload`, `responseSize`, `crash`, `zombieListener`, `portHeld`,
//!   `staleDiscovery`, `toolsChange`, `deadListener`) change what the
//!   simulated Editor does.

pub mod behaviour;
pub mod effect;
pub mod guard;
pub mod rules;

mod bandwidth;
mod black_hole;
mod close;
mod close_after_bytes;
mod corrupt;
mod crash;
mod dead_listener;
mod drop;
mod duplicate;
mod garbage;
mod half_open;
mod hang;
mod latency;
mod main_thread_stall;
mod port_held;
mod refuse_connections;
mod reload;
mod reset;
mod response_size;
mod slicer;
mod slow_accept;
mod slow_tool;
mod stale_discovery;
mod tools_change;
mod truncate;
mod wrong_id;
mod zombie_listener;

use serde::{Deserialize, Serialize};

pub use self::{
    bandwidth::Bandwidth,
    behaviour::{Behaviour, BoxFuture, Inbound, Scope, Silence, Wire},
    black_hole::BlackHole,
    close::Close,
    close_after_bytes::CloseAfterBytes,
    corrupt::Corrupt,
    crash::Crash,
    dead_listener::DeadListener,
    drop::Drop,
    duplicate::Duplicate,
    effect::{Effect, PortHolder, Refusal},
    garbage::Garbage,
    guard::{Expected, FaultGuard},
    half_open::HalfOpen,
    hang::Hang,
    latency::Latency,
    main_thread_stall::{Blocker, DialogSpec, MainThreadStall},
    port_held::PortHeld,
    refuse_connections::RefuseConnections,
    reload::Reload,
    reset::Reset,
    response_size::ResponseSize,
    rules::{FaultError, Faults, Fired, FrameKind, Match, ReloadPoint, RuleSpec, Subject, Trigger},
    slicer::Slicer,
    slow_accept::SlowAccept,
    slow_tool::SlowTool,
    stale_discovery::StaleDiscovery,
    tools_change::ToolsChange,
    truncate::Truncate,
    wrong_id::WrongId,
    zombie_listener::ZombieListener,
};

/// One fault, as a scenario file or the control API names it:
/// `{"kind": "latency", "ms": 200}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Fault {
    Latency(Latency),
    Bandwidth(Bandwidth),
    Slicer(Slicer),
    CloseAfterBytes(CloseAfterBytes),
    BlackHole(BlackHole),
    Reset(Reset),
    Close(Close),
    RefuseConnections(RefuseConnections),
    SlowAccept(SlowAccept),
    Garbage(Garbage),
    Corrupt(Corrupt),
    Truncate(Truncate),
    Duplicate(Duplicate),
    WrongId(WrongId),
    Drop(Drop),
    HalfOpen(HalfOpen),
    MainThreadStall(MainThreadStall),
    SlowTool(SlowTool),
    Reload(Reload),
    ZombieListener(ZombieListener),
    PortHeld(PortHeld),
    StaleDiscovery(StaleDiscovery),
    ToolsChange(ToolsChange),
    ResponseSize(ResponseSize),
    Hang(Hang),
    DeadListener(DeadListener),
    Crash(Crash),
}

impl Fault {
    /// What it does.
    pub fn behaviour(&self) -> &dyn Behaviour {
        match self {
            Fault::Latency(f) => f,
            Fault::Bandwidth(f) => f,
            Fault::Slicer(f) => f,
            Fault::CloseAfterBytes(f) => f,
            Fault::BlackHole(f) => f,
            Fault::Reset(f) => f,
            Fault::Close(f) => f,
            Fault::RefuseConnections(f) => f,
            Fault::SlowAccept(f) => f,
            Fault::Garbage(f) => f,
            Fault::Corrupt(f) => f,
            Fault::Truncate(f) => f,
            Fault::Duplicate(f) => f,
            Fault::WrongId(f) => f,
            Fault::Drop(f) => f,
            Fault::HalfOpen(f) => f,
            Fault::MainThreadStall(f) => f,
            Fault::SlowTool(f) => f,
            Fault::Reload(f) => f,
            Fault::ZombieListener(f) => f,
            Fault::PortHeld(f) => f,
            Fault::StaleDiscovery(f) => f,
            Fault::ToolsChange(f) => f,
            Fault::ResponseSize(f) => f,
            Fault::Hang(f) => f,
            Fault::DeadListener(f) => f,
            Fault::Crash(f) => f,
        }
    }

    /// Its `kind`: the name used in scenario files and counters.
    pub fn name(&self) -> &'static str {
        self.behaviour().name()
    }

    /// The triggers this fault means something for; the first is the default.
    pub fn triggers(&self) -> &'static [Trigger] {
        self.behaviour().triggers()
    }

    /// Where it can run.
    pub fn scope(&self) -> Scope {
        self.behaviour().scope()
    }
}
