//! The control API's client (which the conformance runner uses to reload a
//! remote Editor) against wiremock stand-ins: what it sends, and every kind
//! of answer it can get, error answers included; and the control API itself
//! refusing callers that are not loopback ones.

use fake_unity::{ControlClient, control::ControlError};
use serde_json::json;
use wiremock::{
    Mock, MockServer, ResponseTemplate,
    matchers::{body_json, header, method, path},
};

fn client(server: &MockServer) -> ControlClient {
    ControlClient::from_url(&server.uri()).expect("wiremock's URI is a control URL")
}

#[tokio::test]
async fn a_reload_posts_its_options_and_returns_the_report() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/reload"))
        .and(header("content-type", "application/json"))
        .and(body_json(json!({"downtimeMs": 250, "movePort": true, "wait": true})))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"port": 8712, "sessionId": "s-2"})))
        .named("reload with a port move")
        .expect(1)
        .mount(&server)
        .await;
    let report = client(&server).reload(250, true).await.unwrap();
    assert_eq!(report["port"], 8712);
}

#[tokio::test]
async fn get_put_and_delete_reach_their_paths() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/stats"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"requests": 3})))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("PUT"))
        .and(path("/faults"))
        .and(body_json(json!([])))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"faults": []})))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("DELETE"))
        .and(path("/faults/slow"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"removed": "slow"})))
        .expect(1)
        .mount(&server)
        .await;
    let control = client(&server);
    assert_eq!(control.get("/stats").await.unwrap()["requests"], 3);
    assert_eq!(control.put("/faults", json!([])).await.unwrap()["faults"], json!([]));
    assert_eq!(control.delete("/faults/slow").await.unwrap()["removed"], "slow");
}

#[tokio::test]
async fn an_error_status_keeps_its_code_and_body() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/faults"))
        .respond_with(ResponseTemplate::new(400).set_body_string(r#"{"error":"rule 1: unknown fault kind"}"#))
        .expect(1)
        .mount(&server)
        .await;
    match client(&server).post("/faults", json!({"fault": {"kind": "nope"}})).await {
        Err(ControlError::Status { status: 400, body }) => assert!(body.contains("unknown fault kind"), "{body}"),
        other => panic!("expected the 400 with its body, got {other:?}"),
    }
}

#[tokio::test]
async fn a_body_that_is_not_json_is_an_error() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/state"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<html>a proxy page</html>"))
        .mount(&server)
        .await;
    assert!(matches!(client(&server).get("/state").await, Err(ControlError::Json(_))));
}

#[tokio::test]
async fn nothing_listening_and_bad_urls_are_told_apart() {
    // A port just released (wiremock keeps its servers in a pool).
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    match ControlClient::from_url(&format!("http://127.0.0.1:{port}")).unwrap().get("/stats").await {
        Err(e @ ControlError::Connect { .. }) => assert!(e.to_string().contains("cannot reach")),
        other => panic!("expected a connection error, got {other:?}"),
    }
    for bad in ["127.0.0.1:9", "https://127.0.0.1:9", "http://localhost"] {
        assert!(matches!(ControlClient::from_url(bad), Err(ControlError::Url(_))), "{bad}");
    }
}

/// One raw HTTP/1.1 request to the fake's control API; its status and body.
async fn raw_http(addr: std::net::SocketAddr, request: String) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, answer.split("\r\n\r\n").nth(1).unwrap_or("").to_owned())
}

/// A web page may POST text/plain to any local port (no preflight), and DNS
/// rebinding gives one a name that resolves to 127.0.0.1: both are refused,
/// and change nothing; a loopback caller (curl, the suite) gets in.
#[tokio::test]
async fn the_control_api_refuses_cross_origin_and_foreign_host_requests() {
    let editor = crate::support::TestEditor::start().await;
    let addr = editor.fake.control_addr();
    let switch = r#"{"dynamicCodeSecurityLevel":"FullAccess"}"#;
    let post = |host: &str, origin: Option<&str>| {
        format!(
            "POST /settings HTTP/1.1\r\nHost: {host}\r\n{}Content-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{switch}",
            origin.map(|o| format!("Origin: {o}\r\n")).unwrap_or_default(),
            switch.len()
        )
    };
    let loopback = format!("127.0.0.1:{}", addr.port());
    for (host, origin) in [
        (loopback.as_str(), Some("https://evil.example")),
        (loopback.as_str(), Some("null")),
        ("evil.example", None),
        ("rebound.example:8080", Some("http://rebound.example:8080")),
    ] {
        let (status, body) = raw_http(addr, post(host, origin)).await;
        assert_eq!(status, 403, "Host {host}, Origin {origin:?}: {body}");
        assert!(body.contains("loopback callers only"), "{body}");
    }
    // Two Host headers (a loopback one first) are a malformed request: 400.
    let twice = post(&loopback, None).replacen("Host: ", &format!("Host: {loopback}\r\nHost: "), 1);
    let (status, body) = raw_http(addr, twice).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("one Host header"), "{body}");
    let state = editor.state().await;
    assert_ne!(state["settings"]["dynamicCodeSecurityLevel"], "FullAccess", "{state}");
    for (host, origin) in [(loopback.as_str(), None), ("localhost", Some("http://localhost:3000"))] {
        let (status, body) = raw_http(addr, post(host, origin)).await;
        assert_eq!(status, 200, "Host {host}, Origin {origin:?}: {body}");
    }
}

#[test]
fn loopback_authorities_are_told_from_others() {
    use fake_unity::control::is_loopback_authority as loopback;
    for yes in ["127.0.0.1", "127.0.0.1:80", "localhost:9", "LOCALHOST", "[::1]:8700", "127.1.2.3:1"] {
        assert!(loopback(yes), "{yes}");
    }
    for no in ["evil.example", "10.0.0.1:80", "[::2]:1", "localhost.evil.example", "", "127.0.0.1.evil.example:80"] {
        assert!(!loopback(no), "{no}");
    }
}
