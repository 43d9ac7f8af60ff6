//! Sends one tool call at a time to the Editor: a call waits until the
//! one before it is answered (a bridge with one connection to an Editor
//! that answers in order).

use std::{collections::VecDeque, sync::Mutex};

use editor_link::lock;
use serde_json::Value;

use super::{Answering, Breaks, Flow, FromClient, Relay};

/// Tool calls sent to the bridge and not answered, and those held until
/// they are.
#[derive(Debug, Default)]
struct Calls {
    out: usize,
    held: VecDeque<String>,
}

#[derive(Debug, Default)]
pub(super) struct OneCallAtATime {
    calls: Mutex<Calls>,
}

impl Breaks for OneCallAtATime {
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, _: &Relay) -> Flow {
        if client.method != "tools/call" {
            return Flow::Pass;
        }
        let mut calls = lock(&self.calls);
        calls.out += 1;
        if calls.out == 1 {
            return Flow::Pass;
        }
        // Sent when the calls before it are answered.
        calls.held.push_back(message.to_string());
        Flow::Hold
    }

    fn bridge_message(&self, _: &mut Value, answering: &Answering<'_>, relay: &Relay) -> Flow {
        if answering.method == "tools/call" {
            let mut calls = lock(&self.calls);
            calls.out = calls.out.saturating_sub(1);
            if let Some(next) = calls.held.pop_front() {
                relay.send(next);
            }
        }
        Flow::Pass
    }
}
