//! `bandwidth`: the frame is paced at `bytesPerSecond`, twenty slices a second.

use bytes::Bytes;
use editor_link::connection::{Flow, FrameSink, Outgoing};
use serde::{Deserialize, Serialize};

use super::{Behaviour, BoxFuture, Fired, Inbound, Scope, Trigger, Wire};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Bandwidth {
    pub bytes_per_second: u64,
}

impl Behaviour for Bandwidth {
    fn name(&self) -> &'static str {
        "bandwidth"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::FromEditor, Trigger::ToEditor]
    }

    fn scope(&self) -> Scope {
        Scope::Wire
    }

    fn validate(&self) -> Result<(), String> {
        if self.bytes_per_second == 0 { Err("bytesPerSecond must be greater than 0".into()) } else { Ok(()) }
    }

    fn outbound<'a>(
        &'a self,
        _fired: &'a Fired,
        _wire: &'a Wire,
        out: &'a Outgoing,
        sink: &'a mut FrameSink,
    ) -> BoxFuture<'a, std::io::Result<(bool, Flow)>> {
        Box::pin(async move {
            let bytes = sink.encode(&out.body)?;
            let slice = (self.bytes_per_second / 20).max(1) as usize;
            for piece in bytes.chunks(slice) {
                sink.raw(piece).await?;
                tokio::time::sleep(self.time_for(piece.len())).await;
            }
            Ok((true, Flow::Continue))
        })
    }

    fn inbound<'a>(&'a self, _fired: &'a Fired, _wire: &'a Wire, body: Bytes) -> BoxFuture<'a, Inbound> {
        Box::pin(async move {
            tokio::time::sleep(self.time_for(body.len())).await;
            Inbound::Frames(vec![body])
        })
    }
}

impl Bandwidth {
    /// How long `bytes` take at this rate.
    fn time_for(&self, bytes: usize) -> std::time::Duration {
        editor_link::duration::saturating_seconds(bytes as f64 / self.bytes_per_second.max(1) as f64)
    }
}
