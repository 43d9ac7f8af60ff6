//! `slowAccept`: the listener takes `ms` to accept each connection — a
//! saturated listener, as uLoopMCP 3's, which accepts on a busy thread pool
//! (its listen backlog 100). A burst of connections waits in the kernel's
//! backlog and drains one every `ms`; a client connecting meanwhile waits
//! behind it (on a local socket whose backlog is full, its connect fails at
//! once). The Editor is not down: it answers again once the burst is served.

use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, Scope, Trigger};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SlowAccept {
    pub ms: u64,
}

impl Behaviour for SlowAccept {
    fn name(&self) -> &'static str {
        "slowAccept"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::Connect]
    }

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    fn effect(&self, fired: &Fired) -> Option<Effect> {
        Some(Effect::SlowAccept(fired.duration(self.ms)))
    }
}
