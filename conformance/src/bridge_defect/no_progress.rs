//! Never sends `notifications/progress`.

use editor_link::jsonrpc::notifications;
use serde_json::Value;

use super::{Answering, Breaks, Flow, Relay, is_notification};

#[derive(Debug, Default)]
pub(super) struct NoProgress;

impl Breaks for NoProgress {
    fn bridge_message(&self, message: &mut Value, _: &Answering<'_>, _: &Relay) -> Flow {
        if is_notification(message, notifications::PROGRESS) { Flow::Stop } else { Flow::Pass }
    }
}
