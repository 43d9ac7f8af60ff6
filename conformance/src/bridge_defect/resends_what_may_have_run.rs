//! Sends a tool call again when its error says it may have run (as a
//! bridge that retries after an Editor crash would: it runs twice).

use serde_json::{Value, json};

use super::{Answering, Breaks, Flow, Relay};

#[derive(Debug, Default)]
pub(super) struct ResendsWhatMayHaveRun;

impl Breaks for ResendsWhatMayHaveRun {
    fn bridge_message(&self, message: &mut Value, answering: &Answering<'_>, relay: &Relay) -> Flow {
        let failed = answering.method == "tools/call" && message["result"]["isError"] == json!(true);
        let text: String =
            message["result"]["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect();
        match answering.request {
            // Again, under a new id; its answer stands for this one.
            Some(request) if failed && crate::did_it_run::claims(&text).0 => {
                relay.resend(request, message["id"].clone());
                Flow::Stop
            }
            _ => Flow::Pass,
        }
    }
}
