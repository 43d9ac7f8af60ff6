//! `toolsChange`: after this reload (or from the start) these tools are gone; an
//! empty list brings every tool back.

use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, Scope, Trigger};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsChange {
    pub remove: Vec<String>,
}

impl Behaviour for ToolsChange {
    fn name(&self) -> &'static str {
        "toolsChange"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::Reload, Trigger::Start]
    }

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    fn effect(&self, _fired: &Fired) -> Option<Effect> {
        Some(Effect::RemoveTools(self.remove.clone()))
    }
}
