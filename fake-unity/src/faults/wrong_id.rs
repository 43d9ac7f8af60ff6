//! `wrongId`: the answer carries an id the client never used.

use editor_link::connection::{Flow, FrameSink, Outgoing};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Behaviour, BoxFuture, Fired, Scope, Trigger, Wire};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WrongId {}

impl Behaviour for WrongId {
    fn name(&self) -> &'static str {
        "wrongId"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::FromEditor]
    }

    fn scope(&self) -> Scope {
        Scope::Wire
    }

    fn outbound<'a>(
        &'a self,
        _fired: &'a Fired,
        _wire: &'a Wire,
        out: &'a Outgoing,
        sink: &'a mut FrameSink,
    ) -> BoxFuture<'a, std::io::Result<(bool, Flow)>> {
        Box::pin(async move {
            let body = match serde_json::from_slice::<Value>(&out.body) {
                Ok(mut message) => {
                    message["id"] = match &message["id"] {
                        Value::Number(n) => n.as_i64().map_or(Value::from("wrong"), |n| (n + 1_000_000).into()),
                        Value::String(s) => format!("{s}-wrong").into(),
                        _ => "wrong".into(),
                    };
                    message.to_string().into_bytes()
                }
                Err(_) => out.body.to_vec(),
            };
            sink.frame(&body).await?;
            Ok((false, Flow::Continue))
        })
    }
}
