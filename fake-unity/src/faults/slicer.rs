//! `slicer`: the frame is written in pieces of `bytes` (± `sizeVariation`),
//! `delayMs` apart.

use editor_link::connection::{Flow, FrameSink, Outgoing};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{Behaviour, BoxFuture, Fired, Scope, Trigger, Wire};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Slicer {
    pub bytes: usize,
    #[serde(default)]
    pub size_variation: usize,
    #[serde(default)]
    pub delay_ms: u64,
}

impl Behaviour for Slicer {
    fn name(&self) -> &'static str {
        "slicer"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::FromEditor]
    }

    fn scope(&self) -> Scope {
        Scope::Wire
    }

    fn validate(&self) -> Result<(), String> {
        if self.bytes == 0 {
            return Err("bytes must be greater than 0".into());
        }
        if self.size_variation >= self.bytes {
            return Err("sizeVariation must be smaller than bytes".into());
        }
        Ok(())
    }

    fn outbound<'a>(
        &'a self,
        fired: &'a Fired,
        _wire: &'a Wire,
        out: &'a Outgoing,
        sink: &'a mut FrameSink,
    ) -> BoxFuture<'a, std::io::Result<(bool, Flow)>> {
        Box::pin(async move {
            let bytes = sink.encode(&out.body)?;
            let delay = fired.duration(self.delay_ms);
            let mut rest = &bytes[..];
            while !rest.is_empty() {
                let size = if self.size_variation == 0 {
                    self.bytes
                } else {
                    let (low, high) = (self.bytes - self.size_variation, self.bytes + self.size_variation);
                    fired.with_rng(|rng| rng.random_range(low..=high))
                };
                let (piece, tail) = rest.split_at(size.min(rest.len()));
                sink.raw(piece).await?;
                sink.flush().await?;
                rest = tail;
                if !rest.is_empty() {
                    tokio::time::sleep(delay).await;
                }
            }
            Ok((true, Flow::Continue))
        })
    }
}
