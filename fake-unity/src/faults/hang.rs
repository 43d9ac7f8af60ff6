//! `hang`: everything hangs at the matched request (a debugger break, SIGSTOP, a
//! frozen main thread): nothing is read, written, accepted or run, and every
//! socket stays open. The request runs once the hang ends, after `ms` or
//! when the rule is removed. In the simulated Editor the whole Editor hangs;
//! in a proxy, everything the proxy relays.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::{Behaviour, BoxFuture, Fired, Inbound, Scope, Trigger, Wire};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Hang {
    #[serde(default)]
    pub ms: Option<u64>,
}

impl Behaviour for Hang {
    fn name(&self) -> &'static str {
        "hang"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::ToEditor]
    }

    fn scope(&self) -> Scope {
        Scope::Wire
    }

    fn inbound<'a>(&'a self, fired: &'a Fired, wire: &'a Wire, body: Bytes) -> BoxFuture<'a, Inbound> {
        Box::pin(async move {
            wire.hang.start(&wire.faults, self.ms.map(|ms| fired.duration(ms)), Some(fired.name().to_owned()));
            Inbound::Frames(vec![body])
        })
    }
}
