//! Why a call waits: the Editor's main thread, as `get-editor-state`
//! reports it (protocol §6, extension `editor-state`; the link answers it
//! without the main thread). While a call has no answer the bridge asks every
//! [`WATCH_EVERY`], and once work has waited for the main thread
//! [`BLOCKED_AFTER`] or more it says so: in the call's progress, in the
//! answer at the deadline and in `bridge-status`, naming what holds it — a
//! modal dialog (its title and buttons, where the Editor can see it), a
//! compile, an import, a reload — or, when the Editor cannot tell, what is
//! likely.

use std::{fmt, path::Path, sync::Arc, time::Duration};

use serde_json::{Value, json};

use crate::link::{CallOptions, Link};
use editor_link::{methods, version::Extension};

/// Work waiting this long means the main thread is held.
pub const BLOCKED_AFTER: Duration = Duration::from_secs(3);
/// How often a waiting call asks.
pub const WATCH_EVERY: Duration = Duration::from_secs(2);
/// The longest title or button text repeated, in characters.
const SAID_CHARS: usize = 120;
/// The most buttons named.
const SAID_BUTTONS: usize = 8;
/// Said of what the Editor said before its connection closed.
const LAST_HEARD: &str = "(last heard before the connection to Unity closed) ";
/// How long an answer to the question may take (it needs no main thread).
const ASK_WITHIN: Duration = Duration::from_millis(1500);

/// What holds the main thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Holder {
    Dialog {
        title: String,
        buttons: Vec<String>,
        rewrites_scripts: bool,
    },
    Compiling,
    Importing,
    Reloading,
    /// The Editor cannot tell (no dialog it can see, nothing it is doing).
    Unknown,
}

/// The Editor's main thread has not run for a while.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    pub for_ms: u64,
    pub holder: Holder,
    /// The Editor offers `press-dialog-button`.
    pub can_press: bool,
}

impl Blocked {
    /// The verdict on a `get-editor-state` result: `None` while the main
    /// thread runs.
    pub fn from_state(state: &Value, can_press: bool) -> Option<Blocked> {
        let ms = |key: &str| state.get(key).and_then(Value::as_u64).unwrap_or(0);
        let for_ms = ms("OldestQueuedMs").max(ms("MainThreadLastRanMsAgo"));
        if for_ms < BLOCKED_AFTER.as_millis() as u64 {
            return None;
        }
        let flag = |key: &str| state.get(key).and_then(Value::as_bool).unwrap_or(false);
        // What the Editor says goes into progress and answers: bounded.
        let short = |text: &str| text.chars().take(SAID_CHARS).collect::<String>();
        let holder = match state.get("Dialog").filter(|d| d.is_object()) {
            Some(dialog) => Holder::Dialog {
                title: short(dialog["Title"].as_str().unwrap_or_default()),
                buttons: dialog["Buttons"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .take(SAID_BUTTONS)
                    .filter_map(|b| b.as_str().map(short))
                    .collect(),
                rewrites_scripts: dialog["RewritesScripts"] == true,
            },
            None if flag("Compiling") => Holder::Compiling,
            None if flag("Importing") => Holder::Importing,
            None if flag("Reloading") => Holder::Reloading,
            None => Holder::Unknown,
        };
        Some(Blocked { for_ms, holder, can_press })
    }

    /// For `bridge-status`.
    pub fn to_json(&self) -> Value {
        let mut out = json!({"blocked": true, "forSeconds": self.for_ms / 1000, "says": self.to_string()});
        if let Holder::Dialog { title, buttons, rewrites_scripts } = &self.holder {
            out["dialog"] = json!({"title": title, "buttons": buttons, "rewritesScripts": rewrites_scripts});
        }
        out
    }
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the Editor's main thread has not run for {} s: ", self.for_ms / 1000)?;
        match &self.holder {
            Holder::Dialog { title, buttons, rewrites_scripts } => {
                let buttons = buttons.iter().map(|b| format!("\"{b}\"")).collect::<Vec<_>>().join(", ");
                write!(
                    f,
                    "a modal dialog is open in Unity, \"{title}\" (buttons: {buttons}), and Unity does nothing until it is answered"
                )?;
                if *rewrites_scripts {
                    write!(
                        f,
                        "; it asks whether Unity may rewrite your scripts (the API updater): the user should answer it in Unity"
                    )
                } else if self.can_press {
                    write!(f, "; answer it in Unity, or press one with press-dialog-button if the package allows it")
                } else {
                    write!(f, "; answer it in Unity")
                }
            }
            Holder::Compiling => write!(f, "Unity is compiling scripts"),
            Holder::Importing => write!(f, "Unity is importing assets (a long import)"),
            Holder::Reloading => write!(f, "Unity is reloading its scripts"),
            Holder::Unknown => write!(
                f,
                "a modal dialog or a long import is likely (or a script in an endless loop); look at the Unity window"
            ),
        }
    }
}

/// Asks the Editor once; `None` when it does not offer the question, is
/// not connected, or does not answer within a moment.
pub async fn ask(link: &Arc<Link>) -> Option<Value> {
    let info = link.editor_info()?;
    if !info.version.offers(Extension::EditorState) || !link.is_connected() {
        return None;
    }
    let mut options = CallOptions::within(ASK_WITHIN);
    options.read_only = true;
    let raw = link.call_raw(methods::GET_EDITOR_STATE, json!({}), options).await.ok()?;
    Some(raw.to_value())
}

/// Whether the Editor offers `press-dialog-button`.
pub fn can_press(link: &Link) -> bool {
    link.editor_info().is_some_and(|i| i.version.offers(Extension::DialogButtons))
}

/// Watches, while a call waits, forever (dropped with the call), why it
/// waits: what holds a connected Editor's main thread, or, while no Editor
/// answers, an open Editor of `project` that is silent
/// ([`crate::silent_editor`]). The latest in `latest`, cleared when the
/// reason goes.
pub async fn watch(
    link: &Arc<Link>,
    project: Option<&std::path::Path>,
    latest: Arc<std::sync::Mutex<Option<String>>>,
) -> std::convert::Infallible {
    // What the Editor itself said last, while connected: after its
    // connection goes (the watchdog may take a held Editor for a hung one)
    // it still says why.
    let mut heard: Option<String> = None;
    loop {
        tokio::time::sleep(WATCH_EVERY).await;
        let why = match link.is_connected() {
            true => {
                if let Some(state) = ask(link).await {
                    heard = Blocked::from_state(&state, can_press(link)).map(|b| b.to_string());
                }
                // No answer to the question itself: what was said stands.
                heard.clone()
            }
            // What was seen most nearly first: what the Editor said, an Editor
            // that accepted and is silent, then what its files tell.
            false => match (&heard, link.silence()) {
                (Some(heard), _) => Some(format!("{LAST_HEARD}{heard}")),
                (None, Some(silence)) => Some(format!(
                    "Unity is open and accepted the connection ({}), but has not answered for {} s: its main thread is likely blocked (a modal dialog, an import)",
                    silence.endpoint,
                    silence.since.elapsed().as_secs()
                )),
                (None, None) => link
                    .project()
                    .or_else(|| project.map(Path::to_path_buf))
                    .as_deref()
                    .and_then(crate::silent_editor::diagnose)
                    .map(|s| s.to_string()),
            },
        };
        if let Some(why) = &why {
            tracing::info!(%why, "a call waits");
        }
        *editor_link::lock(&latest) = why;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_main_thread_is_not_blocked() {
        let state = json!({"MainThreadLastRanMsAgo": 12, "QueuedForMainThread": 0, "OldestQueuedMs": 0});
        assert_eq!(Blocked::from_state(&state, false), None);
        assert_eq!(Blocked::from_state(&json!({"OldestQueuedMs": 2999}), false), None);
    }

    #[test]
    fn what_holds_the_main_thread_is_named() {
        let dialog = json!({"MainThreadLastRanMsAgo": 14_200, "QueuedForMainThread": 2, "OldestQueuedMs": 14_000,
            "Dialog": {"Title": "Save Scene", "Buttons": ["Save", "Don't Save"], "RewritesScripts": false}});
        let said = Blocked::from_state(&dialog, false).unwrap().to_string();
        assert_eq!(
            said,
            "the Editor's main thread has not run for 14 s: a modal dialog is open in Unity, \"Save Scene\" (buttons: \"Save\", \"Don't Save\"), and Unity does nothing until it is answered; answer it in Unity"
        );
        assert!(Blocked::from_state(&dialog, true).unwrap().to_string().contains("press-dialog-button"));
        let consent = json!({"OldestQueuedMs": 5000, "Dialog": {"Title": "Script Updating Consent", "Buttons": ["Yes", "No"], "RewritesScripts": true}});
        let said = Blocked::from_state(&consent, true).unwrap().to_string();
        assert!(said.contains("rewrite your scripts") && !said.contains("press-dialog-button"), "{said}");
        let importing = json!({"MainThreadLastRanMsAgo": 30_000, "Importing": true});
        assert!(
            Blocked::from_state(&importing, false)
                .unwrap()
                .to_string()
                .ends_with("Unity is importing assets (a long import)")
        );
        // An Editor that says too much is quoted in part.
        let long =
            json!({"OldestQueuedMs": 5000, "Dialog": {"Title": "t".repeat(100_000), "Buttons": vec!["b"; 10_000]}});
        let said = Blocked::from_state(&long, false).unwrap().to_string();
        assert!(said.len() < 1000, "{} characters", said.len());
        let unknown = Blocked::from_state(&json!({"OldestQueuedMs": 9000}), false).unwrap();
        assert_eq!(unknown.holder, Holder::Unknown);
        assert!(unknown.to_string().contains("a modal dialog or a long import is likely"));
        assert_eq!(unknown.to_json()["forSeconds"], 9);
    }
}
