//! Protocol §5 and §7: domain reload (with and without a port move), quit,
//! the discovery file through both, and resume.

use std::time::Duration;

use editor_link::{
    discovery::{DiscoveryFile, EditorState},
    jsonrpc::{Id, Message, Request, notifications},
};
use serde_json::{Value, json};

use crate::support::{Client, TestEditor, eventually, kind, none, switch_domain_reload};

fn resend(id: impl Into<Id>, method: &str, params: Value) -> Message {
    let mut request = Request::new(id, method, params);
    request.extra.insert("x-resume".into(), true.into());
    Message::Request(request)
}

#[tokio::test]
async fn a_reload_notifies_closes_and_comes_back_with_a_new_session() {
    let editor = TestEditor::start_with(|c| c.state.editor.reload_downtime_ms = 400).await;
    let before = editor.discovery();
    assert_eq!(before.state, Some(EditorState::Ready));
    assert_eq!(before.pid, std::process::id());
    assert_eq!(before.project_path, std::fs::canonicalize(editor.path()).unwrap().to_string_lossy());

    let mut client = editor.connect().await;
    client.ok("ping", none()).await;
    let in_flight = client.request("debug-sleep", json!({"SleepSeconds": 5})).await;
    tokio::time::sleep(Duration::from_millis(50)).await;

    editor.fake.control().post("/reload", json!({})).await.unwrap();
    let seen = client.until_closed().await;
    assert_eq!(seen.len(), 1, "only the shutdown notification, no answer to the request in flight: {seen:?}");
    let Message::Notification(note) = &seen[0] else { panic!("{seen:?}") };
    assert_eq!(
        (note.method.as_str(), note.params.clone()),
        (notifications::SERVER_SHUTDOWN, Some(json!({"reason": "DomainReload"})))
    );
    let _ = in_flight;

    // Down: the discovery file says so and the port refuses connections.
    let path = editor.path().to_owned();
    eventually("discovery state reloading", || {
        DiscoveryFile::read(&path).map(|d| d.state == Some(EditorState::Reloading)).unwrap_or(false)
    })
    .await;
    assert!(
        tokio::net::TcpStream::connect(("127.0.0.1", before.port)).await.is_err(),
        "nothing listens while reloading"
    );

    eventually("discovery state ready again", || {
        DiscoveryFile::read(&path).map(|d| d.state == Some(EditorState::Ready)).unwrap_or(false)
    })
    .await;
    let after = editor.discovery();
    assert_eq!(after.port, before.port, "same port unless asked to move");
    assert_ne!(after.server_session_id, before.server_session_id);
    let mut again = Client::connect(after.port, editor_link::framing::Framing::Header).await;
    again.ok("ping", none()).await;
    let note = again.notification(notifications::TOOLS_LIST_CHANGED).await;
    assert_eq!(note.params.unwrap()["message"], "Unity tools have been updated");
    let state = editor.state().await;
    assert_eq!((state["reloads"].clone(), state["sessionId"].clone()), (json!(1), json!(after.server_session_id)));
}

#[tokio::test]
async fn a_reload_can_move_the_port() {
    let editor = TestEditor::start().await;
    let old_port = editor.port();
    let report = editor.fake.control().reload(50, true).await.unwrap();
    let new_port = report["port"].as_u64().unwrap() as u16;
    assert_ne!(new_port, old_port);
    assert_eq!(report["previousPort"], old_port);
    assert_ne!(report["sessionId"], report["previousSessionId"]);
    assert_eq!(editor.discovery().port, new_port);
    assert_eq!(editor.fake.port(), new_port);
    assert!(tokio::net::TcpStream::connect(("127.0.0.1", old_port)).await.is_err());
    let mut client = Client::connect(new_port, editor_link::framing::Framing::Newline).await;
    client.ok("ping", none()).await;
}

#[tokio::test]
async fn quit_notifies_closes_and_publishes_stopped() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    client.ok("ping", none()).await;
    let port = editor.port();
    editor.fake.control().post("/quit", json!({})).await.unwrap();
    let seen = client.until_closed().await;
    assert!(
        matches!(&seen[..], [Message::Notification(n)] if n.method == notifications::SERVER_SHUTDOWN && n.params == Some(json!({"reason": "EditorQuit"}))),
        "{seen:?}"
    );
    let path = editor.path().to_owned();
    eventually("discovery state stopped", || {
        DiscoveryFile::read(&path).map(|d| d.state == Some(EditorState::Stopped)).unwrap_or(false)
    })
    .await;
    let fake = &editor.fake;
    eventually("the Editor to finish quitting", || fake.has_quit()).await;
    assert!(tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err());
}

#[tokio::test]
async fn a_compile_that_changes_scripts_reloads_and_resume_returns_its_result() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    client.ok("set-client-name", json!({"ClientName": "resume-test"})).await;
    let script = editor.path().join("Assets/Scripts/ScoreKeeper.cs");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(&script, text.replace("// A known bug", "// A known (documented) bug")).unwrap();

    client.send(&Message::Request(Request::new("compile-1", "compile", json!({})))).await;
    let seen = client.until_closed().await;
    assert!(
        seen.iter().all(|m| !matches!(m, Message::Response(_))),
        "the compile's answer is cut off by the reload: {seen:?}"
    );
    assert!(seen.iter().any(|m| matches!(m, Message::Notification(n) if n.method == notifications::SERVER_SHUTDOWN)));

    let fake = &editor.fake;
    eventually("the Editor to come back", || {
        fake.editor().phase() == EditorState::Ready
            && fake.editor().stats.reloads.load(std::sync::atomic::Ordering::Relaxed) == 1
    })
    .await;
    let mut again = editor.connect().await;
    again.ok("set-client-name", json!({"ClientName": "resume-test"})).await;
    again.send(&resend("compile-1", "compile", json!({}))).await;
    let resumed = again.response(&"compile-1".into()).await.outcome.unwrap();
    assert_eq!((resumed["Success"].clone(), resumed["ErrorCount"].clone()), (json!(true), json!(0)));
    // Answered from the journal: the compile ran once, and no second reload.
    let stats = editor.fake.control().get("/stats").await.unwrap();
    assert_eq!(
        (stats["calls"]["compile"].clone(), stats["resumed"].clone(), stats["reloads"].clone()),
        (json!(2), json!(1), json!(1))
    );
}

#[tokio::test]
async fn resume_semantics() {
    let editor = TestEditor::start_with(|c| c.state.editor.reload_downtime_ms = 50).await;
    let mut client = editor.connect().await;
    client.ok("set-client-name", json!({"ClientName": "bridge"})).await;
    // Completed before the reload: clear-console ran once.
    client
        .send(&Message::Request(Request::new(100u64, "clear-console", json!({"AddConfirmationMessage": false}))))
        .await;
    let first = client.response(&100u64.into()).await.outcome.unwrap();
    assert_eq!(first["ClearedLogCount"], 8);
    // Started but cut off by the reload.
    let sleeping = client.request("debug-sleep", json!({"SleepSeconds": 30, "TimeoutSeconds": 60})).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    editor.fake.reload(fake_unity::ReloadOptions::default()).await.unwrap();

    let mut again = editor.connect().await.ids_from(1000);
    again.ok("set-client-name", json!({"ClientName": "bridge"})).await;
    again.send(&resend(100u64, "clear-console", json!({"AddConfirmationMessage": false}))).await;
    assert_eq!(
        again.response(&100u64.into()).await.outcome.unwrap(),
        first,
        "the journaled response, not a second run"
    );
    // Cleared once; the new domain's scripts logged again as they loaded.
    let logs = again.ok("get-logs", none()).await;
    assert_eq!(logs["TotalCount"], 1, "{logs}");
    assert_eq!(logs["Logs"][0]["Message"], "Fixture logs-at-load 1.0.0: scripts loaded");

    again.send(&resend(sleeping.clone(), "debug-sleep", json!({"SleepSeconds": 30, "TimeoutSeconds": 60}))).await;
    let err = again.response(&sleeping).await.outcome.unwrap_err();
    assert_eq!((err.code, kind(&err)), (-32603, "interrupted"));
    assert_eq!(err.data.unwrap()["reason"], "DomainReload");

    again.send(&resend(777u64, "ping", json!({"Message": "new"}))).await;
    assert_eq!(again.response(&777u64.into()).await.outcome.unwrap()["Message"], "Unity MCP Bridge received: new");

    again.send(&resend(100u64, "ping", json!({}))).await;
    let err = again.response(&100u64.into()).await.outcome.unwrap_err();
    assert_eq!(kind(&err), "invalid_request");

    // Another client reusing id 100 is a different request.
    let mut other = editor.connect().await;
    other.ok("set-client-name", json!({"ClientName": "someone-else"})).await;
    other.send(&resend(100u64, "ping", json!({}))).await;
    assert!(other.response(&100u64.into()).await.outcome.is_ok());
}

#[tokio::test]
async fn resuming_a_request_still_running_waits_for_it() {
    let editor = TestEditor::start().await;
    let mut first = editor.connect().await;
    first.ok("set-client-name", json!({"ClientName": "bridge"})).await;
    first.send(&Message::Request(Request::new("s", "debug-sleep", json!({"SleepSeconds": 0.3})))).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(first);
    let mut second = editor.connect().await;
    second.ok("set-client-name", json!({"ClientName": "bridge"})).await;
    second.send(&resend("s", "debug-sleep", json!({"SleepSeconds": 0.3}))).await;
    let result = second.response(&"s".into()).await.outcome.unwrap();
    assert_eq!(result["ActualSleepSeconds"], 0.3);
    let stats = editor.fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["calls"]["debug-sleep"], 2, "the resend was counted but did not sleep again");
}

#[tokio::test]
async fn entering_play_mode_keeps_the_domain_when_the_project_says_so() {
    let editor = TestEditor::start().await;
    switch_domain_reload(editor.path(), false);
    let mut client = editor.connect().await;
    assert_eq!(client.ok("control-play-mode", json!({"Action": "Play"})).await["IsPlaying"], true);
    // The same connection answers again: nothing reloaded.
    assert_eq!(client.ok("control-play-mode", json!({"Action": "Pause"})).await["IsPaused"], true);
    assert_eq!(editor.state().await["reloads"], 0);
}

#[tokio::test]
async fn entering_play_mode_reloads_as_unity_does_by_default() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    let result = client.ok("control-play-mode", json!({"Action": "Play"})).await;
    assert_eq!(result["IsPlaying"], true);
    let seen = client.until_closed().await;
    assert!(seen.iter().any(|m| matches!(m, Message::Notification(n) if n.method == notifications::SERVER_SHUTDOWN)));
    let fake = &editor.fake;
    eventually("the reload to finish", || {
        fake.editor().phase() == EditorState::Ready
            && fake.editor().stats.reloads.load(std::sync::atomic::Ordering::Relaxed) == 1
    })
    .await;
    let mut again = editor.connect().await;
    assert_eq!(
        again.ok("control-play-mode", json!({"Action": "Pause"})).await["IsPlaying"],
        true,
        "play mode survives the reload"
    );
}

#[tokio::test]
async fn assets_refresh_compiles_changed_scripts_and_reloads() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    let result = client.ok("execute-menu-item", json!({"MenuItemPath": "Assets/Refresh"})).await;
    assert_eq!(result["Success"], true);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(editor.state().await["reloads"], 0, "nothing changed, nothing reloads");

    std::fs::write(editor.path().join("Assets/Scripts/NewScript.cs"), "public class NewScript {}\n").unwrap();
    client.ok("execute-menu-item", json!({"MenuItemPath": "Assets/Refresh"})).await;
    let seen = client.until_closed().await;
    assert!(seen.iter().any(|m| matches!(m, Message::Notification(n) if n.method == notifications::SERVER_SHUTDOWN)));
}

#[tokio::test]
async fn without_resume_the_editor_behaves_like_uloop() {
    let editor = TestEditor::start_with(|c| c.resume = false).await;
    let mut client = editor.connect().await;
    let version = client.ok("get-version", none()).await;
    assert!(!version["Capabilities"].as_array().unwrap().contains(&json!("resume")));
    client.send(&Message::Request(Request::new(5u64, "clear-console", json!({})))).await;
    assert_eq!(client.response(&5u64.into()).await.outcome.unwrap()["ClearedLogCount"], 8);
    // A resend runs again: uLoopMCP has no journal.
    client.send(&resend(5u64, "clear-console", json!({}))).await;
    assert_eq!(client.response(&5u64.into()).await.outcome.unwrap()["ClearedLogCount"], 1);
}

/// Starts a PlayMode run on a first connection, which the domain reload of
/// entering play mode closes unanswered; resumes it on a second; its answer.
async fn play_mode_run_resumed(
    editor: &TestEditor,
) -> (Vec<Message>, Client, Result<Value, editor_link::jsonrpc::ErrorObject>) {
    let params = json!({"TestMode": "PlayMode", "TimeoutSeconds": 60});
    let mut first = editor.connect().await;
    first.ok("set-client-name", json!({"ClientName": "bridge"})).await;
    first.send(&Message::Request(Request::new(5u64, "run-tests", params.clone()))).await;
    let seen = first.until_closed().await;
    assert!(
        !seen.iter().any(|m| matches!(m, Message::Response(r) if r.id == Some(5u64.into()))),
        "the connection that asked closes with its domain, unanswered: {seen:?}"
    );
    let fake = &editor.fake;
    eventually("the reload to finish", || fake.editor().phase() == EditorState::Ready).await;
    let mut again = editor.connect().await;
    again.ok("set-client-name", json!({"ClientName": "bridge"})).await;
    again.send(&resend(5u64, "run-tests", params)).await;
    let outcome = again.response(&5u64.into()).await.outcome;
    (seen, again, outcome)
}

#[tokio::test]
async fn a_play_mode_run_goes_on_after_the_reload_and_answers_its_resume() {
    // Its last test takes long enough for the resumed request to wait.
    let editor = TestEditor::start_with(|c| {
        let last = c.state.tests.iter_mut().rev().find(|t| t.full_name.contains("PlayMode")).unwrap();
        last.duration_ms = 8_000;
    })
    .await;
    let (seen, mut again, outcome) = play_mode_run_resumed(&editor).await;
    assert!(seen.iter().any(|m| matches!(m, Message::Notification(n) if n.method == notifications::SERVER_SHUTDOWN)));
    let result = outcome.expect("the run's answer, taken up in the new domain");
    assert_eq!((result["TestCount"].as_u64(), result["PassedCount"].as_u64()), (Some(3), Some(2)));
    assert_eq!(result["SkippedCount"], 1);
    // The tests finished in the new domain told the resumed request.
    let told: Vec<Value> =
        std::iter::from_fn(|| again.take_notification(notifications::PROGRESS).map(|n| n.params.unwrap_or_default()))
            .collect();
    assert!(!told.is_empty() && told.iter().all(|p| p["requestId"] == 5 && p["total"] == 3), "{told:?}");
    let state = editor.state().await;
    assert_eq!(state["reloads"], 1);
    assert_eq!(state["playMode"]["isPlaying"], false, "the run left play mode once done");
}

#[tokio::test]
async fn a_play_mode_run_that_loses_its_answer_is_said_interrupted() {
    let editor = TestEditor::start_with(|c| c.defect = Some(fake_unity::Defect::LosesPlayModeAnswer)).await;
    let (_, _, outcome) = play_mode_run_resumed(&editor).await;
    let err = outcome.expect_err("the defect loses the answer");
    assert_eq!(kind(&err), "interrupted");
}

#[tokio::test]
async fn a_play_mode_run_without_domain_reload_answers_where_it_was_asked() {
    let editor = TestEditor::start().await;
    switch_domain_reload(editor.path(), false);
    let mut client = editor.connect().await;
    let result = client.ok("run-tests", json!({"TestMode": "PlayMode"})).await;
    assert_eq!(result["TestCount"], 3);
    assert_eq!(editor.state().await["reloads"], 0);
}
