//! Answers every `initialize` with protocol version 2024-11-05.

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct PinsVersion;

impl Breaks for PinsVersion {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, _: &Relay) -> Flow {
        if answering.method == "initialize" {
            if let Some(version) = message.pointer_mut("/result/protocolVersion") {
                *version = json!("2024-11-05");
            }
        }
        Flow::Pass
    }
}
