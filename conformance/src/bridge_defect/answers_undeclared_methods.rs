//! Answers methods of capabilities it does not declare (resources,
//! prompts, completions, logging) with empty results, and an unknown
//! method with -32602.

use editor_link::jsonrpc::code;
use serde_json::{Value, json};

use super::{Breaks, Flow, FromClient, Relay};

/// What a bridge that serves the methods of capabilities it does not
/// declare answers them.
fn undeclared_answer(method: &str) -> Option<Value> {
    Some(match method {
        "resources/list" => json!({"resources": []}),
        "resources/templates/list" => json!({"resourceTemplates": []}),
        "prompts/list" => json!({"prompts": []}),
        "completion/complete" => json!({"completion": {"values": []}}),
        "logging/setLevel" => json!({}),
        _ => return None,
    })
}

#[derive(Debug, Default)]
pub(super) struct AnswersUndeclaredMethods;

impl Breaks for AnswersUndeclaredMethods {
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, relay: &Relay) -> Flow {
        let method = client.method;
        if client.id.is_none() || method.is_empty() {
            return Flow::Pass;
        }
        let known = matches!(method, "initialize" | "ping" | "tools/list" | "tools/call");
        match undeclared_answer(method) {
            Some(result) => relay.answer(&message["id"], &result),
            None if !known => {
                relay.refuse(&message["id"], code::INVALID_PARAMS, &format!("Invalid params for {method}"))
            }
            None => return Flow::Pass,
        }
        Flow::Stop
    }
}
