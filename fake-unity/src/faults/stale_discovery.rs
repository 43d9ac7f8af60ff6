//! `staleDiscovery`: a discovery file saying `ready` with a dead pid is left behind.

use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, Scope, Trigger};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StaleDiscovery {}

impl Behaviour for StaleDiscovery {
    fn name(&self) -> &'static str {
        "staleDiscovery"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::Quit, Trigger::Start]
    }

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    fn effect(&self, _fired: &Fired) -> Option<Effect> {
        Some(Effect::StaleDiscovery)
    }
}
