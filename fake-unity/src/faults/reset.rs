//! `reset`: the connection is aborted with a TCP reset.

use bytes::Bytes;
use editor_link::connection::Ending;
use editor_link::connection::{Flow, FrameSink, Outgoing};
use serde::{Deserialize, Serialize};

use super::{Behaviour, BoxFuture, Effect, Fired, Inbound, Refusal, Scope, Trigger, Wire};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reset {}

impl Behaviour for Reset {
    fn name(&self) -> &'static str {
        "reset"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::ToEditor, Trigger::FromEditor, Trigger::Connect]
    }

    fn scope(&self) -> Scope {
        Scope::Wire
    }

    fn outbound<'a>(
        &'a self,
        _fired: &'a Fired,
        _wire: &'a Wire,
        _out: &'a Outgoing,
        _sink: &'a mut FrameSink,
    ) -> BoxFuture<'a, std::io::Result<(bool, Flow)>> {
        Box::pin(async move { Ok((false, Flow::End(Ending::Reset))) })
    }

    fn inbound<'a>(&'a self, _fired: &'a Fired, wire: &'a Wire, _body: Bytes) -> BoxFuture<'a, Inbound> {
        Box::pin(async move {
            wire.end(Ending::Reset);
            Inbound::Stop
        })
    }

    /// At a connection: it is never served. (On a frame it acts on the wire.)
    fn effect(&self, fired: &Fired) -> Option<Effect> {
        (fired.trigger() == Trigger::Connect).then_some(Effect::Refuse(Refusal::Reset))
    }
}
