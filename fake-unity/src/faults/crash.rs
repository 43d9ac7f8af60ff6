//! `crash`: the Editor process dies at the matched request (`kill -9`, a native
//! crash): no shutdown notification, every connection closed, the discovery
//! file left behind naming a dead process. After `restartAfterMs` a new
//! Editor process opens the project: a new instance and session, an empty
//! resume journal, the scene and console as on disk, on the same port or
//! (`movePort`) another.

use super::ReloadPoint;
use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, Scope, Trigger};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Crash {
    #[serde(default)]
    pub restart_after_ms: Option<u64>,
    #[serde(default)]
    pub move_port: bool,
    #[serde(default)]
    pub at: ReloadPoint,
}

impl Behaviour for Crash {
    fn name(&self) -> &'static str {
        "crash"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::ToEditor]
    }

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    fn effect(&self, fired: &Fired) -> Option<Effect> {
        let restart_after = self.restart_after_ms.map(|ms| fired.duration(ms));
        Some(Effect::Crash { at: self.at, restart_after, move_port: self.move_port })
    }
}
