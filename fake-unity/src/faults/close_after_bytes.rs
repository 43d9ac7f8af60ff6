//! `closeAfterBytes`: only the first `bytes` bytes of the frame go out, then a
//! clean close: a frame cut short.

use editor_link::connection::Ending;
use editor_link::connection::{Flow, FrameSink, Outgoing};
use serde::{Deserialize, Serialize};

use super::{Behaviour, BoxFuture, Fired, Scope, Trigger, Wire};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CloseAfterBytes {
    pub bytes: usize,
}

impl Behaviour for CloseAfterBytes {
    fn name(&self) -> &'static str {
        "closeAfterBytes"
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
            let bytes = sink.encode(&out.body)?;
            sink.raw(&bytes[..self.bytes.min(bytes.len())]).await?;
            Ok((false, Flow::End(Ending::Close)))
        })
    }
}
