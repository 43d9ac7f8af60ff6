//! Echoes integer ids as strings.

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct IdsAsStrings;

impl Breaks for IdsAsStrings {
    fn bridge_message(&self, message: &mut Value, _: &Answering<'_>, _: &Relay) -> Flow {
        if message.get("method").is_none() {
            if let Some(n) = message.get("id").and_then(Value::as_i64) {
                message["id"] = json!(n.to_string());
            }
        }
        Flow::Pass
    }
}
