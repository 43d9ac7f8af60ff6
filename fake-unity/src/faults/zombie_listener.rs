//! `zombieListener`: the listener accepts and never answers (for `ms`, or until
//! quit); at a reload or start, the old or preferred port stays taken that way.

use serde::{Deserialize, Serialize};

use super::{Behaviour, Scope, Trigger};

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
}
