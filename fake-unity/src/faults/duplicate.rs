//! `duplicate`: the frame is sent twice, or handled twice.

use bytes::Bytes;
use editor_link::connection::{Flow, FrameSink, Outgoing};
use serde::{Deserialize, Serialize};

use super::{Behaviour, BoxFuture, Fired, Inbound, Scope, Trigger, Wire};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Duplicate {}

impl Behaviour for Duplicate {
    fn name(&self) -> &'static str {
        "duplicate"
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
            sink.frame(&out.body).await?;
            sink.frame(&out.body).await?;
            Ok((true, Flow::Continue))
        })
    }

    fn inbound<'a>(&'a self, _fired: &'a Fired, _wire: &'a Wire, body: Bytes) -> BoxFuture<'a, Inbound> {
        Box::pin(async move { Inbound::Frames(vec![body.clone(), body]) })
    }
}
