//! `garbage`: `bytes` random bytes are written before the frame.

use editor_link::connection::{Flow, FrameSink, Outgoing};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{Behaviour, BoxFuture, Fired, Scope, Trigger, Wire};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Garbage {
    pub bytes: usize,
}

impl Behaviour for Garbage {
    fn name(&self) -> &'static str {
        "garbage"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::FromEditor]
    }

    fn scope(&self) -> Scope {
        Scope::Wire
    }

    fn validate(&self) -> Result<(), String> {
        if self.bytes == 0 { Err("bytes must be greater than 0".into()) } else { Ok(()) }
    }

    fn outbound<'a>(
        &'a self,
        fired: &'a Fired,
        _wire: &'a Wire,
        out: &'a Outgoing,
        sink: &'a mut FrameSink,
    ) -> BoxFuture<'a, std::io::Result<(bool, Flow)>> {
        Box::pin(async move {
            let garbage: Vec<u8> = fired.with_rng(|rng| (0..self.bytes).map(|_| rng.random()).collect());
            sink.raw(&garbage).await?;
            sink.frame(&out.body).await?;
            Ok((false, Flow::Continue))
        })
    }
}
