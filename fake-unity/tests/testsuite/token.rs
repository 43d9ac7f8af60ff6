//! The token extension (protocol §7) as the package enforces it: published
//! in a private discovery file, one per Editor process, required in every
//! request after the checks that need none, and let go only by the setting.

use editor_link::{
    discovery::{DiscoveryFile, EditorState},
    framing::Framing,
    jsonrpc::{ErrorKind, Id, Message, Request},
};
use fake_unity::{Defect, EditorKind, editor::CrashOptions};
use serde_json::{Value, json};

use crate::support::{Client, TestEditor, eventually, none};

/// A package Editor that wants the token, as a real one does by default.
async fn strict(defect: Option<Defect>) -> TestEditor {
    TestEditor::start_with(|c| {
        c.state.settings.allow_clients_without_token = false;
        c.defect = defect;
    })
    .await
}

async fn runs(editor: &TestEditor, tool: &str) -> u64 {
    let stats = editor.fake.control().get("/stats").await.unwrap();
    stats["runs"][tool].as_u64().unwrap_or(0)
}

fn capabilities(version: &Value) -> Vec<String> {
    version["Capabilities"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_request_without_the_right_token_is_refused_and_runs_nothing() {
    let editor = strict(None).await;
    let token = editor.token().expect("the package publishes a token");
    assert_eq!(token.len(), 43, "32 bytes, base64url without padding: {token}");

    let mut anonymous = Client::connect(editor.port(), Framing::Header).await;
    let refused = anonymous.err("ping", json!({"Message": "no token"})).await;
    assert_eq!((refused.code, refused.kind()), (-32603, ErrorKind::Unauthorized), "{refused}");
    assert!(refused.detail().contains("Library/MCPInstance.json"), "says where the token is: {refused}");
    assert!(refused.detail().contains("Allow clients without a token"), "says how to let legacy clients in: {refused}");

    let mut wrong = Client::connect(editor.port(), Framing::Header).await.with_token(Some("A".repeat(43)));
    assert_eq!(wrong.err("ping", none()).await.kind(), ErrorKind::Unauthorized);
    // A token that is not a string is no token.
    let mut request = Request::new(Id::from(7_u64), "ping", none());
    request.extra.insert("x-token".into(), json!([token.clone()]));
    anonymous.send(&Message::Request(request)).await;
    assert_eq!(anonymous.response(&Id::from(7_u64)).await.outcome.unwrap_err().kind(), ErrorKind::Unauthorized);
    assert_eq!(runs(&editor, "ping").await, 0, "nothing ran for a refused request");

    let mut client = editor.connect().await;
    assert_eq!(client.ok("ping", json!({"Message": "hi"})).await["Message"], "Unity MCP Bridge received: hi");
    assert_eq!(runs(&editor, "ping").await, 1);
    let version = client.ok("get-version", none()).await;
    assert!(capabilities(&version).contains(&"token".to_owned()), "{version}");
}

#[tokio::test]
async fn framing_parse_and_batch_errors_come_before_the_token() {
    let editor = strict(None).await;
    let mut anonymous = Client::connect(editor.port(), Framing::Header).await;
    anonymous.send_raw(b"Content-Length: 5\r\n\r\n{oops").await;
    assert_eq!(anonymous.null_id_error().await.kind(), ErrorKind::ParseError);
    anonymous.send_raw(b"Content-Length: 2\r\n\r\n[]").await;
    assert_eq!(anonymous.null_id_error().await.kind(), ErrorKind::InvalidRequest);
    // A notification without the token is ignored like any other.
    anonymous.send(&Message::Notification(editor_link::jsonrpc::Notification::new("ping", none()))).await;
    assert_eq!(anonymous.err("ping", none()).await.kind(), ErrorKind::Unauthorized);
}

#[tokio::test]
async fn the_setting_lets_clients_without_a_token_in_and_stops_advertising_it() {
    let editor = strict(None).await;
    let mut client = editor.connect().await;
    let mut anonymous = Client::connect(editor.port(), Framing::Header).await.ids_from(100);
    assert_eq!(anonymous.err("ping", none()).await.kind(), ErrorKind::Unauthorized);
    editor.fake.control().post("/settings", json!({"allowClientsWithoutToken": true})).await.unwrap();
    anonymous.ok("ping", none()).await;
    let version = client.ok("get-version", none()).await;
    assert!(!capabilities(&version).contains(&"token".to_owned()), "{version}");
    assert!(editor.token().is_some(), "the token is still published, for clients that send it");
    client.ok("ping", none()).await;
}

#[tokio::test]
async fn the_token_outlives_a_reload_and_dies_with_the_process() {
    let editor = strict(None).await;
    let first = editor.token().unwrap();
    editor.fake.control().post("/reload", json!({})).await.unwrap();
    let path = editor.path().to_owned();
    let ready = || DiscoveryFile::read(&path).map(|d| d.state == Some(EditorState::Ready)).unwrap_or(false);
    eventually("reloading", || !ready()).await;
    eventually("ready again", ready).await;
    assert_eq!(editor.token().as_deref(), Some(first.as_str()), "one token per Editor process");
    editor.connect().await.ok("ping", none()).await;

    assert!(editor.fake.crash(CrashOptions::default()).await.is_none());
    eventually("the crash", || editor.fake.editor().is_crashed()).await;
    editor.fake.control().post("/restart", json!({})).await.unwrap();
    let second = editor.token().unwrap();
    assert_ne!(second, first, "a new Editor process has a new token");
    let mut stale = Client::connect(editor.port(), Framing::Header).await.with_token(Some(first));
    assert_eq!(stale.err("ping", none()).await.kind(), ErrorKind::Unauthorized, "the old token opens nothing");
    editor.connect().await.ok("ping", none()).await;
}

#[cfg(unix)]
#[tokio::test]
async fn the_discovery_file_is_private_unless_the_defect_publishes_it() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |editor: &TestEditor| {
        std::fs::metadata(DiscoveryFile::path_in(editor.path())).unwrap().permissions().mode() & 0o777
    };
    assert_eq!(mode(&strict(None).await), 0o600);
    assert_eq!(mode(&strict(Some(Defect::DiscoveryWorldReadable)).await), 0o644);
}

#[tokio::test]
async fn the_ignores_token_defect_runs_requests_without_it() {
    let editor = strict(Some(Defect::IgnoresToken)).await;
    let mut anonymous = Client::connect(editor.port(), Framing::Header).await;
    anonymous.ok("ping", none()).await;
    let version = anonymous.ok("get-version", none()).await;
    assert!(capabilities(&version).contains(&"token".to_owned()), "it still says it wants one: {version}");
}

#[tokio::test]
async fn uloop_2_1_1_has_no_token() {
    let editor = TestEditor::start_with(|c| {
        c.editor = EditorKind::Uloop211;
        c.state.settings.allow_clients_without_token = false;
    })
    .await;
    assert!(editor.token().is_none());
    Client::connect(editor.port(), Framing::Header).await.ok("ping", none()).await;
}
