//! Answers a failed tool call only at the call's deadline (its
//! `TimeoutSeconds`), as a bridge that waits for an Editor it has already
//! seen is not there — not running, none open, several to choose from, a
//! socket it may not use — rather than saying so at once.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

/// The longest it holds an answer.
const AT_MOST: Duration = Duration::from_secs(300);

#[derive(Debug, Default)]
pub(super) struct WaitsForAbsentEditor;

impl Breaks for WaitsForAbsentEditor {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, relay: &Relay) -> Flow {
        if answering.method != "tools/call" || message["result"]["isError"] != json!(true) {
            return Flow::Pass;
        }
        let seconds = answering
            .request
            .and_then(|r| r["params"]["arguments"]["TimeoutSeconds"].as_f64())
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(60.0);
        relay.say_later(Duration::from_secs_f64(seconds).min(AT_MOST), message);
        Flow::Stop
    }
}
