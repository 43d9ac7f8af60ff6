//! How an Editor goes through a domain reload and a quit (protocol §4, §5).
//! Both Editors do it as the protocol says (uLoopMCP 2.1.1's
//! `McpBridgeServer.Dispose` sends the same shutdown notification); the
//! other values are the deliberate defects' (`serve --defect`), set by
//! `Defect::shape`.

use std::time::SystemTime;

/// Tool calls running when the domain goes away.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InFlightAtShutdown {
    /// Abandoned unanswered: the domain that ran them is gone (protocol §5).
    Abandoned,
    /// Answered "interrupted" after the shutdown notification, before the
    /// sockets close (`answers-after-shutdown`).
    AnsweredAfterNotice,
}

/// The server session after a reload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionAfterReload {
    /// A new one (protocol §5).
    New,
    /// The old one kept (`same-session-after-reload`).
    Kept,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LifecyclePolicy {
    /// `notifications/server/shutdown` before the connections close (protocol
    /// §4); off for `no-shutdown-notification`.
    pub shutdown_notice: bool,
    pub in_flight: InFlightAtShutdown,
    pub session_after_reload: SessionAfterReload,
    /// `notifications/tools/list_changed` once tools are registered after a
    /// reload (protocol §5); off for `no-list-changed-after-reload`.
    pub list_changed_after_reload: bool,
}

impl LifecyclePolicy {
    pub const PROTOCOL: LifecyclePolicy = LifecyclePolicy {
        shutdown_notice: true,
        in_flight: InFlightAtShutdown::Abandoned,
        session_after_reload: SessionAfterReload::New,
        list_changed_after_reload: true,
    };

    /// uLoopMCP 3 sends no notification at all (docs/uloop-3-wire.md §8:
    /// the only write of its server is a response): the sockets just close,
    /// calls in flight unanswered.
    pub const ULOOP_3: LifecyclePolicy =
        LifecyclePolicy { shutdown_notice: false, list_changed_after_reload: false, ..Self::PROTOCOL };
}

// uLoopMCP's lock files, which clients read to tell a compile or a reload
// (their names are the dialects': editor_link::dialect).
pub use editor_link::dialect::{
    uloop_2_1_1::{COMPILING_LOCK, DOMAIN_RELOAD_LOCK},
    uloop_3::SERVER_STARTING_LOCK,
};

/// `DateTime.UtcNow.ToString("o")`: what uLoopMCP writes into its lock files.
pub fn lock_stamp(at: SystemTime) -> String {
    let text = humantime::format_rfc3339_nanos(at).to_string();
    // 9 fractional digits to .NET's 7.
    match text.rsplit_once('.') {
        Some((seconds, fraction)) => format!("{seconds}.{:0<7.7}Z", fraction.trim_end_matches('Z')),
        None => text,
    }
}
