//! Answers every failed tool call 30 s late (a bridge that waits for
//! something besides the call's deadline).

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, MISSED_BY, Relay};

#[derive(Debug, Default)]
pub(super) struct MissesDeadlines;

impl Breaks for MissesDeadlines {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, relay: &Relay) -> Flow {
        if answering.method == "tools/call" && message["result"]["isError"] == json!(true) {
            relay.say_later(MISSED_BY, message);
            return Flow::Stop;
        }
        Flow::Pass
    }
}
