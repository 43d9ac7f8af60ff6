//! `blackHole`: this frame and everything after it on the connection is
//! swallowed, both ways; the connection is closed after `closeAfterMs` if
//! given.

use super::Silence;
use bytes::Bytes;
use editor_link::connection::{Flow, FrameSink, Outgoing};
use serde::{Deserialize, Serialize};

use super::{Behaviour, BoxFuture, Effect, Fired, Inbound, Refusal, Scope, Trigger, Wire};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlackHole {
    #[serde(default)]
    pub close_after_ms: Option<u64>,
}

impl Behaviour for BlackHole {
    fn name(&self) -> &'static str {
        "blackHole"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::ToEditor, Trigger::FromEditor, Trigger::Connect]
    }

    fn scope(&self) -> Scope {
        Scope::Wire
    }

    fn outbound<'a>(
        &'a self,
        fired: &'a Fired,
        wire: &'a Wire,
        _out: &'a Outgoing,
        _sink: &'a mut FrameSink,
    ) -> BoxFuture<'a, std::io::Result<(bool, Flow)>> {
        Box::pin(async move {
            self.start(fired, wire);
            Ok((false, Flow::Continue))
        })
    }

    fn inbound<'a>(&'a self, fired: &'a Fired, wire: &'a Wire, _body: Bytes) -> BoxFuture<'a, Inbound> {
        Box::pin(async move {
            self.start(fired, wire);
            Inbound::Frames(Vec::new())
        })
    }

    /// At a connection: read and never answered, closed after
    /// `closeAfterMs` if given. (On a frame it acts on the wire.)
    fn effect(&self, fired: &Fired) -> Option<Effect> {
        let until = self.close_after_ms.map(|ms| fired.duration(ms));
        (fired.trigger() == Trigger::Connect).then_some(Effect::Refuse(Refusal::Swallow(until)))
    }
}

impl BlackHole {
    fn start(&self, fired: &Fired, wire: &Wire) {
        wire.set_silence(Silence::BlackHole, self.close_after_ms.map(|ms| fired.duration(ms)));
    }
}
