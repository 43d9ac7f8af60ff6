//! `slowTool`: the matched tool takes `ms` longer, inside its deadline, reporting
//! progress every second unless `progress` is false (a deadlock).

use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, Scope, Trigger};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SlowTool {
    pub ms: u64,
    #[serde(default = "yes")]
    pub progress: bool,
}

impl Behaviour for SlowTool {
    fn name(&self) -> &'static str {
        "slowTool"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::ToEditor]
    }

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    fn effect(&self, fired: &Fired) -> Option<Effect> {
        Some(Effect::SlowTool { extra: fired.duration(self.ms), progress: self.progress })
    }
}

fn yes() -> bool {
    true
}
