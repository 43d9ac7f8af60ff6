//! Protocol §1–§4 on real sockets: both framings, ids, notifications,
//! pipelining, concurrent and probe connections, `x-uloop`.

use std::time::Duration;

use editor_link::{
    framing::Framing,
    jsonrpc::{Id, Message, Request, notifications},
};
use rstest::rstest;
use serde_json::{Value, json};

use crate::support::{Client, TestEditor, kind, none};

#[rstest]
#[case::header(Framing::Header)]
#[case::newline(Framing::Newline)]
#[tokio::test]
async fn every_framing_is_answered_in_kind(#[case] framing: Framing) {
    let editor = TestEditor::start().await;
    let mut client = editor.connect_with(framing).await;
    let result = client.ok("ping", json!({"Message": "héllo ☃"})).await;
    assert_eq!(result["Message"], "Unity MCP Bridge received: héllo ☃");
    assert_eq!(result["Ver"], "0.1.0");
    // The client's decoder is fixed to its own framing, so a reply in the
    // other framing would have failed above; check the Editor agrees.
    let state = editor.state().await;
    assert_eq!(state["connections"][0]["framing"], framing.as_str());
}

#[tokio::test]
async fn ids_are_echoed_with_their_json_type_and_value() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    for raw in [r#""b-1""#, r#""7""#, r#""""#, "7", "0", "-3", "1.5", "18446744073709551615", r#""日本""#] {
        let id: Id = serde_json::from_str(raw).unwrap();
        client.send(&Message::Request(Request::new(id.clone(), "ping", json!({})))).await;
        let response = client.response(&id).await;
        assert_eq!(serde_json::to_string(&response.id.unwrap()).unwrap(), raw);
    }
}

#[tokio::test]
async fn notifications_and_null_ids_are_never_answered() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    client.notify("ping", json!({})).await;
    client
        .send_raw(
            &editor_link::framing::frame_bytes(
                Framing::Header,
                br#"{"jsonrpc":"2.0","id":null,"method":"clear-console"}"#,
            )
            .unwrap(),
        )
        .await;
    client.notify("notifications/initialized", json!({})).await;
    let id = client.request("ping", json!({"Message": "after"})).await;
    // The first message back is the answer to the request: nothing answered
    // the three notifications, and the null-id clear-console did not run.
    match client.recv().await.unwrap() {
        Message::Response(r) => assert_eq!(r.id, Some(id)),
        other => panic!("expected the ping answer first, got {other:?}"),
    }
    let logs = client.ok("get-logs", json!({})).await;
    assert_ne!(logs["TotalCount"], 1, "the notification must not have cleared the console");
    let stats = editor.fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["notificationsReceived"], 3);
}

#[tokio::test]
async fn pipelined_requests_are_answered_out_of_order() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    let slow = client.request("debug-sleep", json!({"SleepSeconds": 0.3})).await;
    let fast = client.request("ping", json!({"Message": "fast"})).await;
    let first = loop {
        match client.recv().await.unwrap() {
            Message::Response(r) => break r,
            Message::Notification(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(first.id, Some(fast), "the quick request must not wait for the slow one");
    let slow_answer = client.response(&slow).await;
    assert_eq!(slow_answer.outcome.unwrap()["WasCancelled"], false);
}

#[tokio::test]
async fn many_concurrent_clients_are_served() {
    let editor = TestEditor::start().await;
    let port = editor.port();
    let mut tasks = Vec::new();
    for n in 0..24 {
        let framing = if n % 2 == 0 { Framing::Header } else { Framing::Newline };
        tasks.push(tokio::spawn(async move {
            let mut client = Client::connect(port, framing).await;
            for i in 0..10 {
                let message = format!("client {n} call {i}");
                let result = client.ok("ping", json!({"Message": message})).await;
                assert_eq!(result["Message"], format!("Unity MCP Bridge received: {message}"));
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let stats = editor.fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["calls"]["ping"], 240);
}

#[tokio::test]
async fn probe_connections_are_tolerated() {
    let editor = TestEditor::start().await;
    for _ in 0..50 {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", editor.port())).await.unwrap();
        drop(stream);
    }
    let mut client = editor.connect().await;
    assert_eq!(client.ok("ping", none()).await["Message"], "Unity MCP Bridge received: ");
    let stats = editor.fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["connectionsAccepted"], 51);
}

#[tokio::test]
async fn params_match_case_insensitively_and_may_be_absent_or_null() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    assert_eq!(client.ok("ping", json!({"message": "lower"})).await["Message"], "Unity MCP Bridge received: lower");
    for raw in
        [r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":null}"#]
    {
        client.send_raw(&editor_link::framing::frame_bytes(Framing::Header, raw.as_bytes()).unwrap()).await;
    }
    for id in [1u64, 2] {
        let r = client.response(&Id::from(id)).await;
        assert_eq!(r.outcome.unwrap()["Message"], "Unity MCP Bridge received: ");
    }
    let err = client.err("ping", json!(["not", "an", "object"])).await;
    assert_eq!((err.code, kind(&err)), (-32602, "invalid_params"));
}

#[tokio::test]
async fn x_uloop_guards_the_project_and_the_session() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    let session = editor.discovery().server_session_id.unwrap();
    let project = editor.path().to_string_lossy().into_owned();
    let send = |uloop: Value| {
        let mut request = Request::new(9u64, "ping", json!({}));
        request.extra.insert("x-uloop".into(), uloop);
        Message::Request(request)
    };
    let good = send(json!({"expectedProjectRoot": project, "expectedServerSessionId": session}));
    client.send(&good).await;
    assert!(client.response(&Id::from(9u64)).await.outcome.is_ok());

    client.send(&send(json!({"expectedProjectRoot": "/some/other/project"}))).await;
    let err = client.response(&Id::from(9u64)).await.outcome.unwrap_err();
    assert_eq!((err.code, kind(&err)), (-32603, "project_mismatch"));

    client.send(&send(json!({"expectedServerSessionId": "00000000-old"}))).await;
    let err = client.response(&Id::from(9u64)).await.outcome.unwrap_err();
    assert_eq!((err.code, kind(&err)), (-32603, "session_changed"));
}

#[tokio::test]
async fn notifications_go_to_every_client_in_its_framing() {
    let editor = TestEditor::start().await;
    let mut header = editor.connect_with(Framing::Header).await;
    let mut newline = editor.connect_with(Framing::Newline).await;
    // Both must have sent a byte for their framing to be known.
    header.ok("ping", none()).await;
    newline.ok("ping", none()).await;
    editor.fake.control().post("/settings", json!({"disabledTools": ["focus-window"]})).await.unwrap();
    for client in [&mut header, &mut newline] {
        let note = client.notification(notifications::TOOLS_LIST_CHANGED).await;
        let params = note.params.unwrap();
        assert_eq!(params["message"], "Unity tools have been updated");
        assert!(params["timestamp"].as_str().unwrap().ends_with('Z'));
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
}

#[tokio::test]
async fn listener_is_loopback_only() {
    let editor = TestEditor::start().await;
    let discovery = editor.discovery();
    assert_eq!(discovery.port, editor.port());
    // Find an address of this machine that is not loopback, if any, and check
    // the Editor cannot be reached there.
    let Some(other) = non_loopback_ipv4() else { return };
    let attempt =
        tokio::time::timeout(Duration::from_secs(2), tokio::net::TcpStream::connect((other, editor.port()))).await;
    assert!(!matches!(attempt, Ok(Ok(_))), "the Editor answered on {other}, not only on loopback");
}

/// A local IPv4 address other than 127.0.0.0/8, found by asking the routing
/// table which source address a datagram to a public address would use.
fn non_loopback_ipv4() -> Option<std::net::Ipv4Addr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    match socket.local_addr().ok()?.ip() {
        std::net::IpAddr::V4(ip) if !ip.is_loopback() && !ip.is_unspecified() => Some(ip),
        _ => None,
    }
}
