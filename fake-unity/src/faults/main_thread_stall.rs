//! `mainThreadStall`: every matched tool that waits for the main thread
//! waits `ms` (a throttled main thread: an unfocused Editor, a modal
//! dialog). Where it waits is the Editor's dialect's to say
//! (`editor_link::dialect::MainThread`): uLoopMCP switches to the main
//! thread before it reads a request, so nothing, not even its checks, runs
//! until the stall ends; the package reads and checks a request on a worker
//! and only its tool's body waits, under the tool's deadline.
//! What holds it, when known: a modal `dialog` (its title and buttons) or a
//! long asset import (`importing`), as `get-editor-state` reports them.

use serde::{Deserialize, Serialize};

use super::{Behaviour, Effect, Fired, Scope, Trigger};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MainThreadStall {
    pub ms: u64,
    /// A modal dialog holds the main thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogSpec>,
    /// A long asset import holds it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub importing: bool,
}

/// A modal dialog: its title and its buttons' texts, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DialogSpec {
    pub title: String,
    pub buttons: Vec<String>,
}

/// What holds the main thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Blocker {
    Dialog { title: String, buttons: Vec<String> },
    Import,
}

impl Behaviour for MainThreadStall {
    fn name(&self) -> &'static str {
        "mainThreadStall"
    }

    fn triggers(&self) -> &'static [Trigger] {
        &[Trigger::ToEditor]
    }

    fn scope(&self) -> Scope {
        Scope::Editor
    }

    fn effect(&self, fired: &Fired) -> Option<Effect> {
        let blocker = match (&self.dialog, self.importing) {
            (Some(d), _) => Some(Blocker::Dialog { title: d.title.clone(), buttons: d.buttons.clone() }),
            (None, true) => Some(Blocker::Import),
            (None, false) => None,
        };
        Some(Effect::Stall { busy: fired.duration(self.ms), blocker })
    }
}
