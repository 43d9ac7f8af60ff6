//! An Editor that goes silent (half-open sockets, a frozen process): while
//! calls wait and nothing arrives, ask whether it is alive, and leave a
//! connection it no longer answers on, so the link looks for it again. One
//! watchdog a connection (the link's, and each lane), a task of its own.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use serde_json::json;

use super::{
    handshake::Dialer,
    socket::{CloseReason, EditorConnection, ExchangeError, lock},
    target::Target,
};
use editor_link::framing::Framing;

/// While calls wait on `connection` and the Editor says nothing, makes sure
/// it is alive; closes the connection once it no longer answers.
pub(super) async fn watch(dialer: Arc<Dialer>, connection: Arc<EditorConnection>) {
    let config = &dialer.config;
    let tick = (config.silence_before_ping / 4).max(Duration::from_millis(50));
    loop {
        tokio::select! {
            _ = tokio::time::sleep(tick) => {}
            _ = connection.closed.cancelled() => return,
        }
        let silent_for = lock(&connection.last_inbound).elapsed();
        if connection.calls_waiting() == 0 || silent_for < config.silence_before_ping {
            continue;
        }
        let dialect = connection.info().dialect;
        let alive = if dialect.concurrent() {
            // Our Editors answer a ping beside a running call.
            let ping = connection.exchange(dialer.fresh_id(), dialect.probe, json!({}), config.ping_deadline);
            answered(&ping.await)
        } else {
            // uLoopMCP answers one request at a time per connection: ask
            // on a second connection whether the Editor is there at all.
            probe(&dialer, &connection.target, connection.framing, dialect.probe).await
        };
        if alive {
            *lock(&connection.last_inbound) = Instant::now();
        } else if !connection.closed.is_cancelled() {
            tracing::warn!(endpoint = %connection.target.endpoint, "the Editor stopped answering; reconnecting");
            connection.close(CloseReason::Silent);
            return;
        }
    }
}

/// Asks `method` (the dialect's harmless probe) on a connection of its own.
async fn probe(dialer: &Dialer, target: &Target, framing: Framing, method: &str) -> bool {
    let Ok(probe) = dialer.open_quiet(target, framing).await else {
        return false;
    };
    let ok = answered(&probe.exchange(dialer.fresh_id(), method, json!({}), dialer.config.ping_deadline).await);
    probe.close(CloseReason::Stopped);
    ok
}

/// An Editor that answered at all is alive, even if it answered with an error.
fn answered(ping: &Result<serde_json::Value, ExchangeError>) -> bool {
    matches!(ping, Ok(_) | Err(ExchangeError::Editor(_)))
}
