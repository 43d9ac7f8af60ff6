//! A call that waits on a blocked Editor is told why: the bridge asks the
//! Editor (`get-editor-state`, answered without its main thread) and names
//! what holds the main thread — here fake-unity's modal dialog and long
//! import — in the call's progress, in the answer at the deadline and in
//! `bridge-status`.

use fake_unity::{Fault, RuleSpec, faults::DialogSpec, faults::MainThreadStall};
use serde_json::{Value, json};

use crate::{
    client::{self, Expect},
    service::{fake, project},
};

fn stall(dialog: Option<DialogSpec>, importing: bool) -> RuleSpec {
    RuleSpec::new(Fault::MainThreadStall(MainThreadStall { ms: 60_000, dialog, importing })).method("clear-console")
}

/// `bridge-status`'s `mainThread`, once the bridge is connected.
async fn main_thread(raw: &mut mcp_client::McpClient) -> Value {
    for n in 0.. {
        let id = json!(format!("status-{n}"));
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "bridge-status", "arguments": {}}});
        raw.line(&call.to_string()).await;
        let status = raw.answer(&id).await["result"]["structuredContent"].clone();
        if status["connected"] == true {
            return status["mainThread"].clone();
        }
        assert!(n < 200, "the bridge did not connect: {status}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    unreachable!()
}

fn text(answer: &Value) -> String {
    answer["result"]["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modal_dialog_is_named_in_progress_in_the_answer_and_in_bridge_status() {
    let project = project();
    let fake = fake(project.path()).await;
    let dialog = DialogSpec { title: "Save Scene".into(), buttons: vec!["Save".into(), "Don't Save".into()] };
    let _dialog = fake.add_fault(stall(Some(dialog), false)).unwrap();
    let mut raw = client::in_memory(project.path(), &[]);
    raw.handshake().await;
    raw.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"clear-console","arguments":{"TimeoutSeconds":12},"_meta":{"progressToken":"p"}}}"#).await;
    // Meanwhile bridge-status asks the Editor, which answers without its main thread.
    let said = loop {
        let said = main_thread(&mut raw).await;
        assert!(said.is_object(), "the package's Editor answers get-editor-state: {said}");
        if said["blocked"] == true {
            break said;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    };
    assert_eq!(
        said["dialog"],
        json!({"title": "Save Scene", "buttons": ["Save", "Don't Save"], "rewritesScripts": false})
    );
    // The package's own deadline answers first (the tool waited for the
    // main thread under it); the answer still says what held it.
    let answer = raw.answer(&json!(1)).await;
    let text = text(&answer);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        text.contains("Unity gave up on clear-console at its own deadline")
            && text.contains("When the deadline passed, the Editor's main thread has not run for")
            && text.contains(r#"a modal dialog is open in Unity, "Save Scene" (buttons: "Save", "Don't Save")"#)
            && text.contains("a larger TimeoutSeconds does not help"),
        "{text}"
    );
    let progress: Vec<String> = raw
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .filter_map(|n| n["params"]["message"].as_str().map(str::to_owned))
        .collect();
    assert!(progress.iter().any(|m| m.contains(r#""Save Scene""#)), "{progress:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_import_is_named_and_a_free_main_thread_is_not_blocked() {
    let project = project();
    let fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &[]);
    raw.handshake().await;
    let free = main_thread(&mut raw).await;
    assert_eq!(free["blocked"], false, "{free}");
    let _import = fake.add_fault(stall(None, true)).unwrap();
    raw.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"clear-console","arguments":{"TimeoutSeconds":6}}}"#).await;
    let answer = raw.answer(&json!(1)).await;
    assert!(text(&answer).contains("Unity is importing assets (a long import)"), "{answer}");
}

/// The bridge as a child process for `project`, reading the fake's Editor
/// log (`UNITY_EDITOR_LOG`, as for an Editor started with `-logFile`).
fn bridge_reading_the_log(project: &std::path::Path) -> mcp_client::McpClient {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_unity-mcp-bridge"));
    command.arg("--project").arg(project).args(["--tools-wait", "1", "--log-level", "warn"]);
    command.env("UNITY_EDITOR_LOG", project.join(fake_unity::silent_package::EDITOR_LOG));
    mcp_client::McpClient::spawn(command, mcp_client::Stderr::Discard).unwrap().strict()
}

async fn silent(why: fake_unity::silent_package::SilentPackage) -> (tempfile::TempDir, fake_unity::FakeUnity) {
    let project = project();
    let mut config = fake_unity::Config::new(project.path());
    config.scenario.silent_package = Some(why);
    let fake = fake_unity::FakeUnity::start(config).await.unwrap();
    (project, fake)
}

/// Unity open, its package not answering: the call that could not be sent
/// and `bridge-status` say so, and what is likely, instead of "no Editor".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_editor_whose_package_does_not_answer_is_named_with_its_compile_errors() {
    use fake_unity::silent_package::{COMPILE_ERROR, SilentPackage};
    let (project, _fake) = silent(SilentPackage::CompileErrors).await;
    let mut raw = bridge_reading_the_log(project.path());
    raw.handshake().await;
    raw.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-logs","arguments":{"TimeoutSeconds":2}}}"#).await;
    let answer = raw.answer(&json!(1)).await;
    let said = text(&answer);
    assert!(said.contains("did not run"), "{said}");
    assert!(said.contains("Unity has this project open (process") && said.contains(COMPILE_ERROR), "{said}");
    raw.line(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bridge-status","arguments":{}}}"#)
        .await;
    let status = raw.answer(&json!(2)).await["result"]["structuredContent"].clone();
    assert_eq!(status["unityOpen"]["pid"], std::process::id(), "{status}");
    assert!(status["unityOpen"]["says"].as_str().unwrap().contains("do not compile"), "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_editor_without_the_package_or_in_safe_mode_is_named_so() {
    use fake_unity::silent_package::SilentPackage;
    for (why, words) in [
        (SilentPackage::NotInstalled, "neither the Unity MCP package (dev.unitymcp.bridge) nor uLoopMCP"),
        (SilentPackage::SafeMode, "Unity is in Safe Mode"),
        (SilentPackage::Starting, "it may still be starting or importing"),
    ] {
        let (project, _fake) = silent(why).await;
        let mut raw = bridge_reading_the_log(project.path());
        raw.handshake().await;
        raw.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bridge-status","arguments":{}}}"#)
            .await;
        let status = raw.answer(&json!(1)).await["result"]["structuredContent"].clone();
        let says = status["unityOpen"]["says"].as_str().unwrap_or_default().to_owned();
        assert!(says.contains(words), "{why:?}: {status}");
    }
    // No Editor at all: nothing claimed.
    let project = project();
    let mut raw = bridge_reading_the_log(project.path());
    raw.handshake().await;
    raw.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bridge-status","arguments":{}}}"#)
        .await;
    assert_eq!(raw.answer(&json!(1)).await["result"]["structuredContent"]["unityOpen"], Value::Null);
}

/// While a call waits for an Editor that is open but silent, its progress
/// says so (the answer at the end too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_waiting_for_a_silent_editor_is_told_why_in_progress() {
    use fake_unity::silent_package::SilentPackage;
    let (project, _fake) = silent(SilentPackage::Starting).await;
    let mut raw = bridge_reading_the_log(project.path());
    raw.handshake().await;
    raw.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-logs","arguments":{"TimeoutSeconds":12},"_meta":{"progressToken":"p"}}}"#).await;
    let answer = raw.answer(&json!(1)).await;
    assert!(text(&answer).contains("it may still be starting or importing"), "{answer}");
    let progress: Vec<String> = raw
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .filter_map(|n| n["params"]["message"].as_str().map(str::to_owned))
        .collect();
    assert!(progress.iter().any(|m| m.contains("Unity has this project open (process")), "{progress:?}");
}

/// A held Editor that then stops answering altogether (its connection
/// dropped): what it said last still says why the call waited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_editor_said_last_is_kept_when_its_connection_drops() {
    let project = project();
    let fake = fake(project.path()).await;
    let dialog = DialogSpec { title: "Save Scene".into(), buttons: vec!["Save".into()] };
    let _dialog = fake.add_fault(stall(Some(dialog), false)).unwrap();
    let mut raw = client::in_memory(project.path(), &[]);
    raw.handshake().await;
    raw.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"clear-console","arguments":{"TimeoutSeconds":15},"_meta":{"progressToken":"p"}}}"#).await;
    // Once the call's progress has named the dialog (the bridge has heard it)…
    loop {
        let message = raw.next_json().await;
        if message["method"] == "notifications/progress"
            && message["params"]["message"].as_str().is_some_and(|m| m.contains("Save Scene"))
        {
            break;
        }
    }
    // Now the whole Editor freezes: nothing answered, the watchdog drops it.
    fake.hang(None);
    let answer = raw.answer(&json!(1)).await;
    let said = text(&answer);
    assert!(
        said.contains("(last heard before the connection to Unity closed)") && said.contains("\"Save Scene\""),
        "{said}"
    );
    fake.end_hang();
}

/// A fake Editor of `editor` on `project` with a modal dialog up from the
/// start, before any bridge connects: every request it would run on its
/// main thread waits.
async fn dialog_from_the_start(project: &std::path::Path, editor: fake_unity::EditorKind) -> fake_unity::FakeUnity {
    let mut config = fake_unity::Config::new(project);
    config.editor = editor;
    config.seed = Some(5);
    let dialog = DialogSpec { title: "Save Scene".into(), buttons: vec!["Save".into(), "Cancel".into()] };
    let stall = MainThreadStall { ms: 60_000, dialog: Some(dialog), importing: false };
    config.scenario.faults = vec![RuleSpec::new(Fault::MainThreadStall(stall)).named("modal-dialog-open")];
    fake_unity::FakeUnity::start(config).await.unwrap()
}

/// A bridge started with a dialog already up in front of `editor`, calling
/// get-logs with an 8 s deadline and a progress token: the Editor (and its
/// project), the client with what it was told, the answer.
async fn get_logs_with_a_dialog_up(
    editor: fake_unity::EditorKind,
) -> ((tempfile::TempDir, fake_unity::FakeUnity), mcp_client::McpClient, Value) {
    let project = project();
    let fake = dialog_from_the_start(project.path(), editor).await;
    let mut raw = client::in_memory(project.path(), &[]);
    raw.handshake().await;
    raw.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-logs","arguments":{"TimeoutSeconds":8},"_meta":{"progressToken":"p"}}}"#).await;
    let answer = raw.answer(&json!(1)).await;
    ((project, fake), raw, answer)
}

fn progress_words(raw: &mcp_client::McpClient) -> Vec<String> {
    raw.notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .filter_map(|n| n["params"]["message"].as_str().map(str::to_owned))
        .collect()
}

/// A dialog up before the bridge starts, in front of the package: its
/// handshake runs on a worker, so the bridge connects, and names the dialog
/// in the call's progress and its answer, as for a dialog that came later.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialog_up_before_the_bridge_is_named_in_front_of_the_package() {
    let (_fake, raw, answer) = get_logs_with_a_dialog_up(fake_unity::EditorKind::Package).await;
    let said = text(&answer);
    assert!(said.contains(r#"a modal dialog is open in Unity, "Save Scene""#), "{said}");
    assert!(progress_words(&raw).iter().any(|m| m.contains(r#""Save Scene""#)), "{:?}", progress_words(&raw));
}

/// A dialog up before the bridge starts, in front of uLoopMCP 2.1.1, whose
/// handshake waits for the main thread: the bridge keeps one connection
/// waiting (never a new handshake every round into the stalled Editor) and
/// says the Editor is open but not answering, its main thread likely
/// blocked: never "open the project in Unity".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialog_up_before_the_bridge_is_said_as_an_open_editor_that_does_not_answer() {
    let ((_project, fake), raw, answer) = get_logs_with_a_dialog_up(fake_unity::EditorKind::Uloop211).await;
    let said = text(&answer);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(
        said.contains("Unity is open and accepted the bridge's connection")
            && said.contains("did not run")
            && said.contains("main thread is likely blocked")
            && !said.contains("Open the project"),
        "{said}"
    );
    let progress = progress_words(&raw);
    assert!(progress.iter().any(|m| m.contains("accepted the connection")), "{progress:?}");
    let accepted = fake.editor().stats.connections_accepted.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!(accepted, 1, "one connection kept waiting, not a handshake every round");
}
