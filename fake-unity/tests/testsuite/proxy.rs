//! `fake-unity proxy` in front of an Editor (here a simulated one, whose
//! counters show what reached it): relaying, the wire faults both ways, a
//! hang, and Editor faults refused.

use std::time::Duration;

use editor_link::framing::Framing;
use fake_unity::{
    Fault, RuleSpec, Scenario, Trigger,
    faults::{Corrupt, Drop, Hang, SlowTool},
    proxy::{Proxy, ProxyConfig},
};
use serde_json::json;

use crate::support::{Client, TestEditor, none};

async fn proxy_for(editor: &TestEditor, faults: Vec<RuleSpec>) -> Proxy {
    let config = ProxyConfig {
        upstream: format!("127.0.0.1:{}", editor.port()),
        port: 0,
        control_port: 0,
        scenario: Scenario { faults, ..Scenario::default() },
        seed: Some(3),
        time_scale: 1.0,
        events: Default::default(),
    };
    Proxy::start(config).await.unwrap()
}

fn requests(editor: &TestEditor, method: &str) -> u64 {
    editor.fake.editor().stats.to_json()["calls"][method].as_u64().unwrap_or(0)
}

#[tokio::test]
async fn calls_are_relayed_in_the_client_s_framing() {
    let editor = TestEditor::start().await;
    let proxy = proxy_for(&editor, Vec::new()).await;
    for framing in [Framing::Header, Framing::Newline] {
        let mut client = Client::connect(proxy.port(), framing).await;
        let answer = client.ok("ping", json!({"Message": "through"})).await;
        assert_eq!(answer["Message"], "Unity MCP Bridge received: through");
        client.close().await;
    }
    assert_eq!(requests(&editor, "ping"), 2);
    assert_eq!(proxy.stats()["framesToEditor"], 2);
}

#[tokio::test]
async fn wire_faults_act_between_the_client_and_the_editor() {
    let editor = TestEditor::start().await;
    let proxy = proxy_for(
        &editor,
        vec![
            RuleSpec::new(Fault::Corrupt(Corrupt {}))
                .named("corrupt-logs")
                .method("get-logs")
                .frame(fake_unity::FrameKind::Response),
            RuleSpec::new(Fault::Drop(Drop {}))
                .named("drop-clear")
                .on(Trigger::ToEditor)
                .method("clear-console")
                .times(1),
        ],
    )
    .await;
    let mut client = Client::connect(proxy.port(), Framing::Header).await;
    let bodies = {
        client.request("get-logs", none()).await;
        client.bodies_until(|_| true).await
    };
    assert!(serde_json::from_slice::<serde_json::Value>(&bodies[0]).is_err(), "corrupted on its way to the client");
    assert_eq!(requests(&editor, "get-logs"), 1, "the Editor answered it");
    client.request("clear-console", json!({})).await;
    client.ok("ping", none()).await;
    assert_eq!(requests(&editor, "clear-console"), 0, "dropped before the Editor");
    let stats = proxy.stats();
    let fired: Vec<u64> = stats["faults"].as_array().unwrap().iter().map(|r| r["fired"].as_u64().unwrap()).collect();
    assert_eq!(fired, [1, 1]);
}

#[tokio::test]
async fn a_hang_holds_everything_the_proxy_relays_until_it_ends() {
    let editor = TestEditor::start().await;
    let proxy = proxy_for(
        &editor,
        vec![RuleSpec::new(Fault::Hang(Hang { ms: Some(400) })).named("hang").method("clear-console").times(1)],
    )
    .await;
    let mut client = Client::connect(proxy.port(), Framing::Header).await;
    let id = client.request("clear-console", json!({})).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(requests(&editor, "clear-console"), 0, "held by the hang");
    assert!(client.response(&id).await.outcome.is_ok(), "run once the hang ended");
    assert_eq!(requests(&editor, "clear-console"), 1);
}

#[tokio::test]
async fn editor_faults_are_refused_saying_why() {
    let editor = TestEditor::start().await;
    let config = ProxyConfig {
        upstream: format!("127.0.0.1:{}", editor.port()),
        port: 0,
        control_port: 0,
        scenario: Scenario {
            faults: vec![RuleSpec::new(Fault::SlowTool(SlowTool { ms: 10, progress: true }))],
            ..Scenario::default()
        },
        seed: None,
        time_scale: 1.0,
        events: Default::default(),
    };
    let error = Proxy::start(config).await.unwrap_err().to_string();
    assert!(error.contains("slowTool") && error.contains("wire faults"), "{error}");
    let proxy = proxy_for(&editor, Vec::new()).await;
    let control = fake_unity::ControlClient::from_url(&proxy.control_url()).unwrap();
    let refused = control.post("/faults", json!({"fault": {"kind": "reload"}})).await.unwrap_err().to_string();
    assert!(refused.contains("400") && refused.contains("reload"), "{refused}");
    control.post("/faults", json!({"fault": {"kind": "latency", "ms": 1}})).await.unwrap();
}
