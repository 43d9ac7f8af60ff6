//! A uLoopMCP 3 ("Unity CLI Loop") Editor behind the bridge: the bridge
//! binary as a child process, an rmcp client over stdio, and fake-unity's
//! model of uLoopMCP 3 (`--editor uloop-3`) on a Unix domain socket in the
//! test's own temporary folder (`--endpoint`), never in `/tmp/uloop`.
#![cfg(unix)]

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use editor_link::endpoint::{Endpoint, canonical_project_root};
use fake_unity::{Config, EditorKind, FakeUnity, Fault, ReloadOptions, RuleSpec};
use serde_json::{Value, json};

use crate::e2e::{WAIT, bridge, call, eventually, project, text};

/// A uLoopMCP 3 Editor on `project`, listening on `socket`.
async fn editor(project: &Path, socket: &Path) -> FakeUnity {
    let mut config = Config::new(project);
    config.editor = EditorKind::Uloop3;
    config.endpoint = Some(Endpoint::Unix(socket.to_owned()));
    config.seed = Some(3);
    config.state.editor.reload_downtime_ms = 300;
    config.state.compile.duration_ms = 20;
    FakeUnity::start(config).await.unwrap()
}

/// `clear-console` made to work for a minute from now on (the guard
/// removes the fault when dropped).
fn slow_clear_console(fake: &FakeUnity) -> fake_unity::FaultGuard {
    fake.add_fault(
        RuleSpec::new(Fault::SlowTool(fake_unity::faults::SlowTool { ms: 60_000, progress: false }))
            .method("clear-console"),
    )
    .unwrap()
}

/// A folder for the socket, as private as `/tmp/uloop` should be.
fn sockets() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = dir.path().join("x.sock");
    (dir, socket)
}

fn endpoint_arg(socket: &Path) -> String {
    format!("unix:{}", socket.display())
}

#[tokio::test]
async fn a_uloop_3_editor_is_served_through_the_bridge() {
    let project = project();
    let (_dir, socket) = sockets();
    let fake = editor(project.path(), &socket).await;
    let endpoint = endpoint_arg(&socket);
    let (client, _) = bridge(project.path(), &["--endpoint", &endpoint]).await;

    // Its catalogue (get-tool-details), with the bridge's own two.
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names.len(), 2 + 14, "{names:?}");
    assert!(names.contains(&"get-logs") && names.contains(&"compile"), "{names:?}");
    assert!(!names.contains(&"get-version") && !names.contains(&"ping"), "internal commands are not listed");

    let logs = call(&client, "get-logs", json!({"MaxCount": 3})).await;
    assert_eq!(logs["structuredContent"]["Ver"], "3.0.0-beta.1", "{logs}");
    assert!(logs.get("isError").is_none_or(|e| e == false), "{logs}");

    let status = call(&client, "bridge-status", json!({})).await;
    let status = &status["structuredContent"];
    assert_eq!(status["connected"], true, "{status}");
    assert_eq!(status["endpoint"], endpoint.as_str(), "{status}");
    assert_eq!(status["port"], Value::Null, "{status}");
    assert_eq!(status["packageVersion"], "3.0.0-beta.1", "{status}");

    // Ready means get-version answered: uLoopMCP 3 has no ping.
    let ready = call(&client, "wait-for-editor-ready", json!({"timeout_seconds": 5})).await;
    assert_eq!(ready["structuredContent"]["ready"], true, "{ready}");

    // Nothing it does not know was sent: no set-client-name, no ping.
    let stats = fake.control().get("/stats").await.unwrap();
    for unknown in ["set-client-name", "ping"] {
        assert!(stats["calls"].get(unknown).is_none(), "{unknown} was sent: {}", stats["calls"]);
    }
    assert_eq!(stats["framings"]["newline"], 0, "{}", stats["framings"]);
}

/// uLoopMCP 3 answers in order on one connection: a call made beside a slow
/// one goes out on a connection of its own and is answered while the slow
/// one still runs.
#[tokio::test]
async fn a_call_beside_a_slow_call_is_not_held_behind_it() {
    let project = project();
    let (_dir, socket) = sockets();
    let fake = editor(project.path(), &socket).await;
    let endpoint = endpoint_arg(&socket);
    let (client, _) = bridge(project.path(), &["--endpoint", &endpoint]).await;
    call(&client, "get-logs", json!({"MaxCount": 1})).await;

    let _slow = slow_clear_console(&fake);
    let slow = tokio::spawn({
        let client = client.clone();
        async move { call(&client, "clear-console", json!({"TimeoutSeconds": 120})).await }
    });
    let runs = |method: &str| {
        let fake = &fake;
        let method = method.to_owned();
        async move { fake.control().get("/stats").await.unwrap()["runs"][&method].as_u64().unwrap_or(0) }
    };
    let deadline = Instant::now() + WAIT;
    while runs("clear-console").await == 0 {
        assert!(Instant::now() < deadline, "the slow call never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let logs = call(&client, "get-logs", json!({"MaxCount": 1})).await;
    assert!(logs["structuredContent"].get("Ver").is_some(), "{logs}");
    assert!(!slow.is_finished(), "get-logs was answered only after the slow call");
    slow.abort();
}

/// Every request carries `x-uloop.expectedProjectRoot`: a bridge of another
/// project pointed at this Editor's socket is refused, and says so.
#[tokio::test]
async fn an_editor_of_another_project_refuses_the_bridge_and_it_says_so() {
    let project = project();
    let other = self::project();
    let (_dir, socket) = sockets();
    let fake = editor(project.path(), &socket).await;
    let endpoint = endpoint_arg(&socket);
    let (client, _) = bridge(other.path(), &["--endpoint", &endpoint, "--tools-wait", "0.5"]).await;

    let refused = call(&client, "get-logs", json!({"TimeoutSeconds": 1})).await;
    assert_eq!(refused["isError"], true, "{refused}");
    let said = text(&refused);
    assert!(said.contains("did not run"), "{said}");
    assert!(
        said.contains("another project open")
            && said.contains("Connected Unity instance belongs to a different project"),
        "{said}"
    );
    let root = canonical_project_root(other.path()).unwrap();
    assert!(said.contains(&root), "names the root it sent: {said}");
    let status = call(&client, "bridge-status", json!({})).await;
    assert_eq!(status["structuredContent"]["connected"], false, "{status}");
    // The Editor saw the mismatch: it logs every refusal to its console.
    let stats = fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["runs"].get("get-logs"), None, "{stats}");
}

/// A domain reload deletes the socket and makes it again: the bridge waits
/// for it (the lock files, the socket coming back) and the next call works.
#[tokio::test]
async fn a_domain_reload_mid_session_is_followed() {
    let project = project();
    let (_dir, socket) = sockets();
    let fake = editor(project.path(), &socket).await;
    let endpoint = endpoint_arg(&socket);
    let (client, _) = bridge(project.path(), &["--endpoint", &endpoint]).await;
    call(&client, "get-logs", json!({"MaxCount": 1})).await;

    fake.reload(ReloadOptions::default()).await.unwrap();
    let logs = call(&client, "get-logs", json!({"MaxCount": 1})).await;
    assert_eq!(logs["structuredContent"]["Ver"], "3.0.0-beta.1", "{logs}");
    assert!(logs.get("isError").is_none_or(|e| e == false), "{logs}");
    let status = call(&client, "bridge-status", json!({})).await;
    assert_eq!(status["structuredContent"]["connected"], true, "{status}");
    assert_eq!(status["structuredContent"]["reloads"], 1, "{status}");
    assert_eq!(fake.control().get("/stats").await.unwrap()["reloads"], 1);
}

/// A call in flight when the reload closes its connection: uLoopMCP 3 has
/// no resume journal and sends no word before it goes, so a call that
/// changes something is answered honestly: it may have run.
#[tokio::test]
async fn a_mutating_call_cut_off_by_a_reload_may_have_run() {
    let project = project();
    let (_dir, socket) = sockets();
    let fake = editor(project.path(), &socket).await;
    let endpoint = endpoint_arg(&socket);
    let (client, _) = bridge(project.path(), &["--endpoint", &endpoint]).await;
    call(&client, "get-logs", json!({"MaxCount": 1})).await;
    let slow = slow_clear_console(&fake);
    let cleared = tokio::spawn({
        let client = client.clone();
        async move { call(&client, "clear-console", json!({"TimeoutSeconds": 60})).await }
    });
    let deadline = Instant::now() + WAIT;
    while fake.control().get("/stats").await.unwrap()["runs"]["clear-console"].as_u64().unwrap_or(0) == 0 {
        assert!(Instant::now() < deadline, "the call never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    fake.reload(ReloadOptions::default()).await.unwrap();
    let result = cleared.await.unwrap();
    assert_eq!(result["isError"], true, "{result}");
    assert!(text(&result).contains("may or may not have run"), "{result}");
    assert!(text(&result).contains("domain reload"), "the lock file said why: {result}");
    drop(slow);
    let logs = call(&client, "get-logs", json!({"MaxCount": 1})).await;
    assert_eq!(logs["structuredContent"]["Ver"], "3.0.0-beta.1", "{logs}");
    let stats = fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["calls"]["clear-console"], 1, "never sent twice: {stats}");
}

/// A socket in a folder anyone may write to (no sticky bit) could have been
/// put there by anyone: refused, never connected to, and the reason shown.
#[tokio::test]
async fn an_untrusted_socket_is_refused_and_never_connected_to() {
    let project = project();
    let (dir, socket) = sockets();
    let fake = editor(project.path(), &socket).await;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let endpoint = endpoint_arg(&socket);
    let (client, _) = bridge(project.path(), &["--endpoint", &endpoint, "--tools-wait", "0.5"]).await;

    let refused = call(&client, "get-logs", json!({"TimeoutSeconds": 0.5})).await;
    assert_eq!(refused["isError"], true, "{refused}");
    let said = text(&refused);
    assert!(said.contains("did not run") && said.contains("refused"), "{said}");
    assert!(said.contains("writable by others"), "{said}");
    let status = call(&client, "bridge-status", json!({})).await;
    let tried = status["structuredContent"]["tried"].to_string();
    assert!(tried.contains("refused, not connected to") && tried.contains(&endpoint), "{tried}");
    assert_eq!(fake.control().get("/stats").await.unwrap()["connectionsAccepted"], 0, "never connected to");

    // Made private again, it is used.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    eventually("the bridge to connect", || !fake.editor().clients().is_empty()).await;
    let logs = call(&client, "get-logs", json!({"MaxCount": 1})).await;
    assert_eq!(logs["structuredContent"]["Ver"], "3.0.0-beta.1", "{logs}");
}
