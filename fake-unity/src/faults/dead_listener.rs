//! `deadListener`: the listener stays bound and accepts nothing (for `ms`, or
//! until the rule is removed or the Editor quits): connections complete in
//! the kernel's backlog and are never served.

use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, Scope, Trigger};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeadListener {
    #[serde(default)]
    pub ms: Option<u64>,
}

impl Behaviour for DeadListener {
    fn name(&self) -> &'static str {
        "deadListener"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::Start, Trigger::Reload]
    }

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    fn effect(&self, fired: &Fired) -> Option<Effect> {
        Some(Effect::DeadListener(self.ms.map(|ms| fired.duration(ms))))
    }
}
