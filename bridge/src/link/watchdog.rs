//! An Editor that goes silent (half-open sockets, a frozen process): while
//! calls wait and nothing arrives, ask whether it is alive, and leave a
//! connection it no longer answers on, so the link looks for it again.

use std::{
    sync::{Arc, atomic::Ordering},
    time::{Duration, Instant},
};

use serde_json::json;
use tokio::sync::broadcast;

use super::{
    Link,
    socket::{CloseReason, EditorConnection, ExchangeError, lock},
    target::Target,
};
use editor_link::framing::Framing;

impl Link {
    /// While calls wait and the Editor says nothing, make sure it is alive;
    /// close a connection it no longer answers on.
    pub(super) async fn watch_silence(self: Arc<Self>, connection: Arc<EditorConnection>) {
        let tick = (self.config.silence_before_ping / 4).max(Duration::from_millis(50));
        loop {
            tokio::select! {
                _ = tokio::time::sleep(tick) => {}
                _ = connection.closed.cancelled() => return,
            }
            let silent_for = lock(&connection.last_inbound).elapsed();
            if connection.calls_waiting() == 0 || silent_for < self.config.silence_before_ping {
                continue;
            }
            let dialect = connection.info().dialect;
            let alive = if dialect.concurrent() {
                // Our Editors answer a ping beside a running call.
                let ping = connection.exchange(self.fresh_id(), dialect.probe, json!({}), self.config.ping_deadline);
                answered(&ping.await)
            } else {
                // uLoopMCP answers one request at a time per connection: ask
                // on a second connection whether the Editor is there at all.
                self.probe(&connection.target, connection.framing, dialect.probe).await
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
    async fn probe(&self, target: &Target, framing: Framing, method: &str) -> bool {
        let (events, _) = broadcast::channel(1);
        let number = self.next_connection.fetch_add(1, Ordering::Relaxed);
        let Ok(probe) = EditorConnection::open(target, framing, number, &self.config, None, events).await else {
            return false;
        };
        let ok = answered(&probe.exchange(self.fresh_id(), method, json!({}), self.config.ping_deadline).await);
        probe.close(CloseReason::Stopped);
        ok
    }
}

/// An Editor that answered at all is alive, even if it answered with an error.
fn answered(ping: &Result<serde_json::Value, ExchangeError>) -> bool {
    matches!(ping, Ok(_) | Err(ExchangeError::Editor(_)))
}
