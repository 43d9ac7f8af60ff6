//! How an Editor goes through a domain reload and a quit (protocol §4, §5).
//! Both Editors do it as the protocol says (uLoopMCP 2.1.1's
//! `McpBridgeServer.Dispose` sends the same shutdown notification); the
//! other values are the deliberate defects' (`serve --defect`), set by
//! `Defect::shape`.

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
}
