//! `refuseConnections`: every connection is accepted, then reset at once (an
//! Editor refusing clients).

use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, Refusal, Scope, Trigger};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefuseConnections {}

impl Behaviour for RefuseConnections {
    fn name(&self) -> &'static str {
        "refuseConnections"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::Connect]
    }

    fn scope(&self) -> Scope {
        Scope::Wire
    }

    fn effect(&self, _fired: &Fired) -> Option<Effect> {
        Some(Effect::Refuse(Refusal::Reset))
    }
}
