//! A call that waits on a blocked Editor is told why (protocol §6
//! `get-editor-state`; docs/bridge.md): the fake's main thread held by a
//! modal dialog, and the bridge names the dialog — its title and buttons —
//! in the call's progress and in the answer at the deadline, instead of
//! waiting in silence.

use serde_json::json;

use fake_unity::{
    Fault, RuleSpec,
    faults::{DialogSpec, MainThreadStall},
};

use crate::{
    case::{Case, CheckFuture, Extension, Level, Needs, Requires, check},
    ensure,
    finding::Finding,
    target::Session,
};

const REFERENCE: &str =
    "docs/editor-link-protocol.md §6 (get-editor-state); docs/bridge.md (a blocked main thread named)";

const TITLE: &str = "Save Scene";

pub fn cases() -> Vec<Case> {
    vec![Case {
        id: "mcp.blocked-main-thread-named".into(),
        requirement: "A call that waits on an Editor whose main thread a modal dialog holds is told so: its progress and the answer at its deadline say that the main thread has not run and name the dialog, its title and buttons (the Editor reports them with get-editor-state, answered without its main thread).".into(),
        reference: REFERENCE,
        level: Level::Should,
        needs: Needs::Faults,
        requires: Requires::extension(Extension::EditorState).and_tool("clear-console"),
        check: check(modal_dialog_named),
    }]
}

fn modal_dialog_named(mut s: Session) -> CheckFuture {
    Box::pin(async move {
        let dialog = DialogSpec { title: TITLE.into(), buttons: vec!["Save".into(), "Don't Save".into()] };
        let stall = MainThreadStall { ms: 60_000, dialog: Some(dialog), importing: false };
        let rule = RuleSpec::new(Fault::MainThreadStall(stall)).method("clear-console");
        // The dialog goes into the embedded fake as it starts, or into an
        // Editor with a control API (the package's headless host) through it.
        let control = match (s.is_embedded_fake(), s.control.clone()) {
            (true, _) => {
                s.restart_fake(|config| config.scenario.faults = vec![rule]).await?;
                None
            }
            (false, Some(control)) => {
                let rule = serde_json::to_value(&rule).map_err(|e| Finding::Harness(e.to_string()))?;
                control.post("/faults", json!([rule])).await.map_err(|e| match e {
                    fake_unity::control::ControlError::Status { status: 400, body } => Finding::NotApplicable(format!(
                        "not applicable: this Editor's control API cannot hold its main thread: {body}"
                    )),
                    other => Finding::Harness(format!("the control API: {other}")),
                })?;
                Some(control)
            }
            (false, None) => {
                // A proxy in front of another Editor delays frames; it cannot hold that Editor's main thread.
                return Err(Finding::NotApplicable(
                    "not applicable: a modal dialog is an Editor fault (in front of this Editor the scenario runs through fake-unity proxy, which carries out wire faults only)".into(),
                ));
            }
        };
        let named = named_in_answer_and_progress(&s).await;
        if let Some(control) = control {
            // The stall lets go of the main thread, the rule goes.
            control.post("/reset", json!({})).await.map_err(|e| Finding::Harness(format!("the control API: {e}")))?;
        }
        named
    })
}

/// The call that waits on the held main thread, its answer and progress.
async fn named_in_answer_and_progress(s: &Session) -> Result<(), Finding> {
    {
        let mut mcp = s.mcp().await?;
        mcp.initialize().await?;
        let id = json!("held");
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "clear-console", "arguments": {"TimeoutSeconds": 12}, "_meta": {"progressToken": "held"}}});
        mcp.send(&call).await?;
        let answer = mcp.response_within(&id, std::time::Duration::from_secs(40)).await?;
        let text: String =
            answer["result"]["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect();
        let named = |said: &str| {
            said.contains("main thread has not run") && said.contains(TITLE) && said.contains("Don't Save")
        };
        ensure!(named(&text), "the answer at the deadline does not name the dialog that holds the main thread: {text}");
        let progress: Vec<String> = mcp
            .notifications()
            .iter()
            .filter(|n| n["method"] == "notifications/progress")
            .filter_map(|n| n["params"]["message"].as_str().map(str::to_owned))
            .collect();
        ensure!(
            progress.iter().any(|m| named(m)),
            "no progress named the dialog while the call waited 12 s: {progress:?}"
        );
        s.note(format!("said: {}", progress.iter().rfind(|m| named(m)).map_or("", String::as_str)));
        mcp.finish().await
    }
}
