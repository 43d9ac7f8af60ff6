//! `zombieListener`: the listener accepts and never answers (for `ms`, or until
//! quit); at a reload or start, the old or preferred port stays taken that way.

use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, PortHolder, Refusal, Scope, Trigger};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZombieListener {
    #[serde(default)]
    pub ms: Option<u64>,
}

impl Behaviour for ZombieListener {
    fn name(&self) -> &'static str {
        "zombieListener"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::Connect, Trigger::Start, Trigger::Reload]
    }

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    fn effect(&self, fired: &Fired) -> Option<Effect> {
        let until = self.ms.map(|ms| fired.duration(ms));
        Some(match fired.trigger() {
            // A connection to the Editor's own listener: swallowed.
            Trigger::Connect => Effect::Refuse(Refusal::Swallow(until)),
            // At start or a reload, the port it leaves stays taken.
            _ => Effect::HoldPort { holder: PortHolder::Zombie, until },
        })
    }
}
