//! Never forwards `notifications/tools/list_changed`.

use editor_link::jsonrpc::notifications;
use serde_json::Value;

use super::{Answering, Breaks, Flow, Relay, is_notification};

#[derive(Debug, Default)]
pub(super) struct NoListChanged;

impl Breaks for NoListChanged {
    fn bridge_message(&self, message: &mut Value, _: &Answering<'_>, _: &Relay) -> Flow {
        if is_notification(message, notifications::TOOLS_LIST_CHANGED) { Flow::Stop } else { Flow::Pass }
    }
}
