//! `mainThreadStall`: every matched tool waits `ms` before anything runs, not even
//! the checks (a throttled main thread: an unfocused Editor, a modal dialog).

use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, Scope, Trigger};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MainThreadStall {
    pub ms: u64,
}

impl Behaviour for MainThreadStall {
    fn name(&self) -> &'static str {
        "mainThreadStall"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::ToEditor]
    }

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    fn effect(&self, fired: &Fired) -> Option<Effect> {
        Some(Effect::Stall(fired.duration(self.ms)))
    }
}
