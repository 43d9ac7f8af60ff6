//! `truncate`: only the first `keep` bytes of the body (default half), framed
//! consistently.

use bytes::Bytes;
use editor_link::connection::{Flow, FrameSink, Outgoing};
use serde::{Deserialize, Serialize};

use super::{Behaviour, BoxFuture, Fired, Inbound, Scope, Trigger, Wire};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Truncate {
    #[serde(default)]
    pub keep: Option<usize>,
}

impl Behaviour for Truncate {
    fn name(&self) -> &'static str {
        "truncate"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::FromEditor, Trigger::ToEditor]
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
            let keep = self.keep.unwrap_or(out.body.len() / 2).min(out.body.len());
            sink.frame(&out.body[..keep]).await?;
            Ok((false, Flow::Continue))
        })
    }

    fn inbound<'a>(&'a self, _fired: &'a Fired, _wire: &'a Wire, body: Bytes) -> BoxFuture<'a, Inbound> {
        Box::pin(async move {
            let keep = self.keep.unwrap_or(body.len() / 2).min(body.len());
            Inbound::Frames(vec![body.slice(..keep)])
        })
    }
}
