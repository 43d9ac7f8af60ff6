//! The simulated Editor's counters, shown by `GET /stats`.

use super::*;

/// Counters, shown by `GET /stats`.
#[derive(Debug, Default)]
pub struct Stats {
    pub connections_accepted: AtomicU64,
    pub requests: AtomicU64,
    pub responses_sent: AtomicU64,
    pub notifications_received: AtomicU64,
    pub notifications_sent: AtomicU64,
    pub responses_received: AtomicU64,
    pub frames_too_large: AtomicU64,
    pub framing_errors: AtomicU64,
    pub parse_errors: AtomicU64,
    pub bytes_received: AtomicU64,
    pub bytes_sent: AtomicU64,
    pub reloads: AtomicU64,
    pub resumed: AtomicU64,
    pub crashes: AtomicU64,
    pub restarts: AtomicU64,
    /// Connections by the framing their first bytes chose.
    pub header_connections: AtomicU64,
    pub newline_connections: AtomicU64,
    /// Requests received, per method.
    calls: Mutex<BTreeMap<String, u64>>,
    /// Tool bodies started, per tool: what the Editor actually did (a
    /// request refused, answered from the journal or never reached does not
    /// count; one cut off after it started does).
    runs: Mutex<BTreeMap<String, u64>>,
    errors: Mutex<BTreeMap<&'static str, u64>>,
}

impl Stats {
    pub(crate) fn count_call(&self, method: &str) {
        *lock(&self.calls).entry(method.to_owned()).or_default() += 1;
    }

    pub(crate) fn count_framing(&self, framing: Framing) {
        let counter = match framing {
            Framing::Header => &self.header_connections,
            Framing::Newline => &self.newline_connections,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_run(&self, tool: &str) {
        *lock(&self.runs).entry(tool.to_owned()).or_default() += 1;
    }

    /// How many times `tool` ran.
    pub fn runs(&self, tool: &str) -> u64 {
        lock(&self.runs).get(tool).copied().unwrap_or(0)
    }

    pub(super) fn count_error(&self, kind: ErrorKind) {
        *lock(&self.errors).entry(kind.type_name()).or_default() += 1;
    }

    pub fn to_json(&self) -> Value {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        json!({
            "connectionsAccepted": n(&self.connections_accepted),
            "requests": n(&self.requests),
            "responsesSent": n(&self.responses_sent),
            "notificationsReceived": n(&self.notifications_received),
            "notificationsSent": n(&self.notifications_sent),
            "responsesReceived": n(&self.responses_received),
            "framesTooLarge": n(&self.frames_too_large),
            "framingErrors": n(&self.framing_errors),
            "parseErrors": n(&self.parse_errors),
            "bytesReceived": n(&self.bytes_received),
            "bytesSent": n(&self.bytes_sent),
            "reloads": n(&self.reloads),
            "resumed": n(&self.resumed),
            "crashes": n(&self.crashes),
            "restarts": n(&self.restarts),
            "framings": {"header": n(&self.header_connections), "newline": n(&self.newline_connections)},
            "calls": *lock(&self.calls),
            "runs": *lock(&self.runs),
            "errors": *lock(&self.errors),
        })
    }
}
