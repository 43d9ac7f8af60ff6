//! `--editor uloop-3`: uLoopMCP 3 ("Unity CLI Loop", hatayama/uLoopMCP
//! `v3-beta` at c50f54c; `docs/uloop-3-wire.md`) over a real Unix domain
//! socket, reached with the editor link's own client (`Connection::unix`).
//! Every socket lives in the test's temporary folder (`Config::endpoint`),
//! never in `/tmp/uloop`.

use std::path::{Path, PathBuf};

use editor_link::{
    connection::{Connection, Options},
    endpoint::{Endpoint, canonical_project_root, uloop3_endpoint},
    framing::{DEFAULT_RESPONSE_LIMIT, Framing},
    jsonrpc::{ErrorObject, Id, Message, Request, Response},
};
use fake_unity::{EditorKind, editor::CrashOptions};
use serde_json::{Value, json};

use crate::support::{Client, TestEditor, WAIT, eventually};

/// A uLoopMCP 3 Editor on a copy of the fixture project, listening on a
/// socket in its own temporary folder.
struct Uloop3 {
    editor: TestEditor,
    _sockets: tempfile::TempDir,
    socket: PathBuf,
}

impl Uloop3 {
    async fn start() -> Uloop3 {
        Self::start_with(|_| {}).await
    }

    async fn start_with(configure: impl FnOnce(&mut fake_unity::Config)) -> Uloop3 {
        let sockets = tempfile::tempdir().unwrap();
        let socket = sockets.path().join("UnityCliLoop-test.sock");
        let endpoint = Endpoint::Unix(socket.clone());
        let editor = TestEditor::start_with(|c| {
            c.editor = EditorKind::Uloop3;
            c.endpoint = Some(endpoint);
            c.state.editor.reload_downtime_ms = 2000;
            configure(c);
        })
        .await;
        Uloop3 { editor, _sockets: sockets, socket }
    }

    /// What the Editor compares `x-uloop.expectedProjectRoot` with.
    fn root(&self) -> String {
        canonical_project_root(self.editor.path()).unwrap()
    }

    async fn connect(&self) -> Client {
        let stream = tokio::time::timeout(WAIT, tokio::net::UnixStream::connect(&self.socket))
            .await
            .expect("connecting in time")
            .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", self.socket.display()));
        Client::over(Connection::unix(stream, Options::client(Framing::Header, DEFAULT_RESPONSE_LIMIT)))
    }
}

/// A request as uLoopMCP 3's CLI sends it: `x-uloop` a top-level member.
fn request(id: u64, method: &str, params: Value, uloop: Option<Value>) -> Message {
    let mut request = Request::new(Id::from(id), method, params);
    if let Some(uloop) = uloop {
        request.extra.insert("x-uloop".into(), uloop);
    }
    Message::Request(request)
}

async fn call(client: &mut Client, id: u64, method: &str, params: Value, uloop: Option<Value>) -> Response {
    client.send(&request(id, method, params, uloop)).await;
    client.response(&Id::from(id)).await
}

fn error(response: Response) -> ErrorObject {
    match response.outcome {
        Ok(result) => panic!("expected an error, got {result}"),
        Err(e) => e,
    }
}

fn error_json(e: &ErrorObject) -> Value {
    serde_json::to_value(e).unwrap()
}

fn socket_exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

#[tokio::test]
async fn a_tool_call_is_answered_over_the_unix_socket() {
    let v3 = Uloop3::start().await;
    assert!(socket_exists(&v3.socket), "the socket file is there once it listens");
    assert_eq!(v3.editor.fake.endpoint(), Endpoint::Unix(v3.socket.clone()));
    assert_eq!(v3.editor.port(), 0, "no TCP port");
    let project = v3.editor.path();
    assert!(!project.join("Library/MCPInstance.json").exists(), "no discovery file");
    assert!(!project.join("UserSettings/UnityMcpSettings.json").exists(), "no 2.x settings file");
    assert!(!project.join("Temp/serverstarting.lock").exists(), "deleted once it listens");

    let mut client = v3.connect().await;
    let root = json!({"expectedProjectRoot": v3.root()});
    let logs = call(&mut client, 1, "get-logs", json!({"MaxCount": 5}), Some(root.clone())).await;
    let result = logs.outcome.expect("get-logs answered");
    assert_eq!(result["Ver"], "3.0.0-beta.1");
    assert!(result.get("TotalCount").is_some() || result.get("Logs").is_some(), "{result}");

    // The internal commands: answered, never listed.
    let version = call(&mut client, 2, "get-version", json!({}), Some(root.clone())).await.outcome.unwrap();
    assert_eq!(version["IsEditor"], true);
    assert_eq!(version["Ver"], "3.0.0-beta.1");
    for include in [false, true] {
        let params = json!({"IncludeDevelopmentOnly": include});
        let details = call(&mut client, 3 + u64::from(include), "get-tool-details", params, Some(root.clone())).await;
        let details = details.outcome.unwrap();
        let names: Vec<&str> =
            details["Tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names.len(), 14, "{names:?}");
        assert!(!names.contains(&"get-version") && !names.contains(&"get-tool-details"), "{names:?}");
        for tool in details["Tools"].as_array().unwrap() {
            let keys: Vec<&String> = tool.as_object().unwrap().keys().collect();
            assert_eq!(keys, ["name", "parameterSchema", "displayDevelopmentOnly"], "{tool}");
        }
    }
    // The result members are C# property names, the id echoed.
    let cleared = call(&mut client, 9, "clear-console", json!({}), None).await;
    assert_eq!(cleared.id, Some(Id::from(9_u64)));
    assert_eq!(cleared.outcome.unwrap()["Success"], true);
}

#[tokio::test]
async fn x_uloop_is_checked_as_the_v3_editor_checks_it() {
    let v3 = Uloop3::start().await;
    let mut client = v3.connect().await;

    let other =
        call(&mut client, 1, "get-version", json!({}), Some(json!({"expectedProjectRoot": "/not/this/project"})));
    assert_eq!(
        error_json(&error(other.await)),
        json!({"code": -32603, "message": "Connected Unity instance belongs to a different project.",
               "data": {"type": "internal_error", "message": ""}})
    );
    // Compared byte for byte: a trailing separator is another project.
    let trailing = json!({"expectedProjectRoot": format!("{}/", v3.root())});
    let refused = error(call(&mut client, 2, "get-logs", json!({}), Some(trailing)).await);
    assert_eq!(refused.message, "Connected Unity instance belongs to a different project.");

    let required = json!({"code": -32603, "message": "Invalid x-uloop metadata: expectedProjectRoot is required.",
                          "data": {"type": "internal_error", "message": ""}});
    for (id, uloop) in
        [(3, json!({"expectedProjectRoot": ""})), (4, json!({"expectedProjectRoot": "  "})), (5, json!({}))]
    {
        let e = error(call(&mut client, id, "get-version", json!({}), Some(uloop.clone())).await);
        assert_eq!(error_json(&e), required, "{uloop}");
    }
    // v2's session field means nothing to v3.
    let session = json!({"expectedProjectRoot": v3.root(), "expectedServerSessionId": "whatever"});
    call(&mut client, 6, "get-version", json!({}), Some(session)).await.outcome.expect("the session is not checked");

    // Absent or null: no check at all.
    call(&mut client, 7, "get-version", json!({}), None).await.outcome.expect("no x-uloop is accepted");
    call(&mut client, 8, "get-version", json!({}), Some(Value::Null)).await.outcome.expect("null is accepted");

    // Not an object: thrown while the request is read, so the id is null.
    client.send(&request(9, "get-version", json!({}), Some(json!("root")))).await;
    let unreadable = client.null_id_error().await;
    assert_eq!(unreadable.code, -32603);
    assert_eq!(unreadable.message, "Internal error");

    // Every refusal was logged to the console as the Editor logs them.
    let logs = call(&mut client, 10, "get-logs", json!({"LogType": "Error", "MaxCount": 50}), None).await;
    let text = logs.outcome.unwrap().to_string();
    assert!(
        text.contains(
            "[JsonRpcProcessor] Parameter validation error: Connected Unity instance belongs to a different project."
        ),
        "{text}"
    );
}

#[tokio::test]
async fn an_unknown_method_and_unreadable_frames_are_answered_32603() {
    let v3 = Uloop3::start().await;
    let mut client = v3.connect().await;
    for (id, gone) in [(1, "ping"), (2, "set-client-name"), (3, "debug-sleep"), (4, "focus-window"), (5, "tools/list")]
    {
        let response = call(&mut client, id, gone, json!({}), Some(json!({"expectedProjectRoot": v3.root()}))).await;
        assert_eq!(response.id, Some(Id::from(id)));
        assert_eq!(
            error_json(&error(response)),
            json!({"code": -32603, "message": "Internal error",
                   "data": {"type": "internal_error", "message": format!("Unknown tool: {gone}")}}),
        );
    }
    // A disabled tool: v3's settings menu.
    v3.editor.fake.control().post("/settings", json!({"disabledTools": ["screenshot"]})).await.unwrap();
    let disabled = error(call(&mut client, 6, "screenshot", json!({}), None).await);
    assert_eq!(
        disabled.message,
        "Tool 'screenshot' is disabled. To enable it, go to Window > Unity CLI Loop > Settings"
    );

    // Not JSON: Newtonsoft's error, id null; the connection goes on.
    client.send_raw(b"Content-Length: 5\r\n\r\n{\"a\":").await;
    let e = client.null_id_error().await;
    assert_eq!((e.code, e.message.as_str()), (-32603, "Internal error"));
    // A notification is never answered: the next answer is the next request's.
    client.notify("focus-window", json!({})).await;
    let after = call(&mut client, 7, "get-version", json!({}), None).await;
    assert!(after.outcome.is_ok());
}

#[tokio::test]
async fn two_connections_are_served_at_once_and_one_in_order() {
    // A compile that takes far longer than any test: it is never awaited.
    let v3 = Uloop3::start_with(|c| c.state.compile.duration_ms = 600_000).await;
    let mut busy = v3.connect().await;
    busy.send(&request(1, "compile", json!({"ForceRecompile": true}), None)).await;
    busy.send(&request(2, "get-version", json!({}), None)).await;
    eventually("the compile is running", || v3.editor.path().join("Temp/compiling.lock").exists()).await;

    // Another connection is answered while the first one's compile runs.
    let mut other = v3.connect().await;
    let answered = call(&mut other, 1, "get-version", json!({}), None).await;
    assert!(answered.outcome.is_ok());
    let stats = v3.editor.fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["runs"]["get-version"], 1, "the first connection's get-version waits for its compile: {stats}");
}

#[tokio::test]
async fn the_socket_is_gone_during_a_reload_and_back_after() {
    let v3 = Uloop3::start_with(|c| c.state.compile.duration_ms = 600_000).await;
    let mut client = v3.connect().await;
    client.send(&request(1, "compile", json!({"ForceRecompile": true}), None)).await;
    eventually("the compile is running", || v3.editor.path().join("Temp/compiling.lock").exists()).await;

    // The reload has begun when this answers: the listener is closed.
    v3.editor.fake.control().post("/reload", json!({})).await.unwrap();
    assert!(!socket_exists(&v3.socket), "the socket file is deleted while the domain reloads");
    assert!(v3.editor.path().join("Temp/domainreload.lock").exists());
    assert!(tokio::net::UnixStream::connect(&v3.socket).await.is_err(), "nothing to connect to");
    // No notification, no answer to the call in flight: the socket closes.
    assert!(client.until_closed().await.is_empty());

    eventually("the socket is back", || socket_exists(&v3.socket)).await;
    let mut again = v3.connect().await;
    assert!(call(&mut again, 1, "get-version", json!({}), None).await.outcome.is_ok());
    eventually("the lock files are deleted once it listens", || {
        let temp = v3.editor.path().join("Temp");
        ["compiling.lock", "domainreload.lock", "serverstarting.lock"].iter().all(|l| !temp.join(l).exists())
    })
    .await;
}

#[tokio::test]
async fn a_crash_leaves_a_stale_socket_that_a_restart_replaces() {
    let v3 = Uloop3::start().await;
    v3.editor.fake.crash(CrashOptions { restart_after: None, move_port: false }).await;
    assert!(socket_exists(&v3.socket), "a dead process leaves its socket file");
    let refused = tokio::net::UnixStream::connect(&v3.socket).await;
    assert!(refused.is_err(), "but nothing listens on it");

    v3.editor.fake.restart(false).await.expect("a new Editor process");
    let mut client = v3.connect().await;
    assert!(call(&mut client, 1, "get-version", json!({}), None).await.outcome.is_ok());
}

#[tokio::test]
async fn quitting_deletes_the_socket_file() {
    let v3 = Uloop3::start().await;
    let socket = v3.socket.clone();
    assert!(socket_exists(&socket));
    let Uloop3 { editor, _sockets, .. } = v3;
    editor.fake.quit().await;
    assert!(!socket_exists(&socket));
}

#[test]
fn without_an_endpoint_the_project_names_its_socket() {
    // What `serve --editor uloop-3` listens on when not told: computed here
    // only (binding /tmp/uloop would meet other runs).
    let root = canonical_project_root(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
    let Endpoint::Unix(path) = uloop3_endpoint(&root) else { panic!("a Unix socket on Unix") };
    assert!(path.starts_with("/tmp/uloop"));
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("UnityCliLoop-") && name.ends_with(".sock") && name.len() == 13 + 16 + 5, "{name}");
}
