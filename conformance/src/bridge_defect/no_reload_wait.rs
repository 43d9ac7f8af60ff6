//! Answers a compile before the domain reload it causes is over (as if
//! the client had not asked for `WaitForDomainReload`).

use serde_json::{Value, json};

use super::{Breaks, Flow, FromClient, Relay};

#[derive(Debug, Default)]
pub(super) struct NoReloadWait;

impl Breaks for NoReloadWait {
    fn client_message(&self, message: &mut Value, client: &FromClient<'_>, _: &Relay) -> Flow {
        let params = &mut message["params"];
        if client.method == "tools/call" && params["name"] == "compile" && params["arguments"].is_object() {
            params["arguments"]["WaitForDomainReload"] = json!(false);
        }
        Flow::Pass
    }
}
