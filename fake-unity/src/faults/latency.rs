//! `latency`: the frame waits `ms` ± `jitterMs` (drawn from the rule's seeded
//! generator).

use bytes::Bytes;
use editor_link::connection::{Flow, FrameSink, Outgoing};
use serde::{Deserialize, Serialize};

use super::{Behaviour, BoxFuture, Fired, Inbound, Scope, Trigger, Wire};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Latency {
    pub ms: u64,
    #[serde(default)]
    pub jitter_ms: u64,
}

impl Behaviour for Latency {
    fn name(&self) -> &'static str {
        "latency"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::FromEditor, Trigger::ToEditor]
    }

    fn scope(&self) -> Scope {
        Scope::Wire
    }

    fn outbound<'a>(
        &'a self,
        fired: &'a Fired,
        _wire: &'a Wire,
        out: &'a Outgoing,
        sink: &'a mut FrameSink,
    ) -> BoxFuture<'a, std::io::Result<(bool, Flow)>> {
        Box::pin(async move {
            tokio::time::sleep(fired.jittered(self.ms, self.jitter_ms)).await;
            sink.frame(&out.body).await?;
            Ok((true, Flow::Continue))
        })
    }

    fn inbound<'a>(&'a self, fired: &'a Fired, _wire: &'a Wire, body: Bytes) -> BoxFuture<'a, Inbound> {
        Box::pin(async move {
            tokio::time::sleep(fired.jittered(self.ms, self.jitter_ms)).await;
            Inbound::Frames(vec![body])
        })
    }
}
