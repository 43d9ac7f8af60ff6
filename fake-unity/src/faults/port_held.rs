//! `portHeld`: another process holds the Editor's port (accepts, then closes)
//! for `ms` or until quit; the Editor comes back on the next port.

use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, PortHolder, Scope, Trigger};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PortHeld {
    #[serde(default)]
    pub ms: Option<u64>,
}

impl Behaviour for PortHeld {
    fn name(&self) -> &'static str {
        "portHeld"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::Reload, Trigger::Start]
    }

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    fn effect(&self, fired: &Fired) -> Option<Effect> {
        Some(Effect::HoldPort { holder: PortHolder::OtherProgram, until: self.ms.map(|ms| fired.duration(ms)) })
    }
}
