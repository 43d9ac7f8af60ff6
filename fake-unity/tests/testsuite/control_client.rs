//! The control API's client (which the conformance runner uses to reload a
//! remote Editor) against wiremock stand-ins: what it sends, and every kind
//! of answer it can get, error answers included.

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
