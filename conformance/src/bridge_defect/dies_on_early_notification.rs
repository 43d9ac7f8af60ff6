//! Exits at a notification that comes before `initialize`.

use serde_json::Value;

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct DiesOnEarlyNotification;

impl Breaks for DiesOnEarlyNotification {
    fn client_message(&self, _: &mut Value, client: &FromClient<'_>, _: &Relay) -> Flow {
        match client.id {
            None if !client.initialized => Flow::Exit(70),
            _ => Flow::Pass,
        }
    }
}
