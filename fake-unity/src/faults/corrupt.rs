//! `corrupt`: bytes of the body are overwritten: a well-framed frame of invalid
//! JSON (about one byte in 32, at least one; never a line break, so newline
//! framing stays intact).

use bytes::Bytes;
use editor_link::connection::{Flow, FrameSink, Outgoing};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{Behaviour, BoxFuture, Fired, Inbound, Scope, Trigger, Wire};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Corrupt {}

impl Behaviour for Corrupt {
    fn name(&self) -> &'static str {
        "corrupt"
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
            let mut body = out.body.to_vec();
            corrupt(fired, &mut body);
            sink.frame(&body).await?;
            Ok((false, Flow::Continue))
        })
    }

    fn inbound<'a>(&'a self, fired: &'a Fired, _wire: &'a Wire, body: Bytes) -> BoxFuture<'a, Inbound> {
        Box::pin(async move {
            let mut body = body.to_vec();
            corrupt(fired, &mut body);
            Inbound::Frames(vec![Bytes::from(body)])
        })
    }
}

/// Overwrites about one byte in 32 (at least one), makes sure the result is
/// not JSON, and leaves no line break.
fn corrupt(fired: &Fired, body: &mut [u8]) {
    if body.is_empty() {
        return;
    }
    fired.with_rng(|rng| {
        for _ in 0..(body.len() / 32).max(1) {
            let at = rng.random_range(0..body.len());
            body[at] = rng.random();
        }
    });
    if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok() {
        body[0] = b'#';
    }
    for b in body.iter_mut().filter(|b| matches!(b, b'\n' | b'\r')) {
        *b = b'#';
    }
}
