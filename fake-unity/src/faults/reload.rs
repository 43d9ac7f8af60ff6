//! `reload`: a domain reload at the matched request: before the tool ran (not
//! applied, no answer), after it ran (applied, journaled for `x-resume`, no
//! answer), or after the reply; on the same port or another.

use super::ReloadPoint;
use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, Scope, Trigger};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reload {
    #[serde(default)]
    pub downtime_ms: Option<u64>,
    #[serde(default)]
    pub move_port: bool,
    #[serde(default)]
    pub at: ReloadPoint,
}

impl Behaviour for Reload {
    fn name(&self) -> &'static str {
        "reload"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::ToEditor]
    }

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    fn effect(&self, fired: &Fired) -> Option<Effect> {
        let downtime = self.downtime_ms.map(|ms| fired.duration(ms));
        Some(Effect::Reload { at: self.at, downtime, move_port: self.move_port })
    }
}
