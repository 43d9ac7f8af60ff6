//! `responseSize`: the matched tool's result is padded to about `bytes` bytes.

use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, Scope, Trigger};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResponseSize {
    pub bytes: usize,
}

impl Behaviour for ResponseSize {
    fn name(&self) -> &'static str {
        "responseSize"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::ToEditor]
    }

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    fn validate(&self) -> Result<(), String> {
        if self.bytes > 1 << 30 { Err("bytes must be at most 1 GiB".into()) } else { Ok(()) }
    }

    fn effect(&self, _fired: &Fired) -> Option<Effect> {
        Some(Effect::PadResponse(self.bytes))
    }
}
