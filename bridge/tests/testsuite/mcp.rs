//! The MCP server in memory (the same server and command line the binary
//! runs, on an in-memory pipe): bad input answered, versions negotiated,
//! ping during a call, cancelled calls unanswered.

use serde_json::{Value, json};

use crate::{
    client::{self, Expect},
    service::{fake, project},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_answered_and_the_server_keeps_running() {
    let project = project();
    let _fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &[]);
    // Before initialize: a notification is ignored, a probe refused, garbage answered.
    raw.line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    raw.line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#).await;
    raw.line(
        &json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {"_meta": stateless_meta()}})
            .to_string(),
    )
    .await;
    let discover = raw.answer(&json!("d")).await;
    assert_eq!(discover["result"]["supportedVersions"][0], "2026-07-28", "{discover}");
    assert_eq!(discover["result"]["resultType"], "complete");
    raw.line(r#"{"jsonrpc":"2.0","id":"p0","method":"ping"}"#).await;
    assert_eq!(raw.answer(&json!("p0")).await["result"], json!({}));
    raw.handshake().await;
    for (line, code) in [
        ("this is not json", -32700),
        ("{\"jsonrpc\":\"2.0\",\"id\":", -32700),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, -32600),
        (r#""a string""#, -32600),
        (r#"{"jsonrpc":"2.0","id":{"nested":true},"method":"ping"}"#, -32600),
    ] {
        raw.line(line).await;
        let answer = raw.next_json().await;
        assert_eq!((answer["id"].clone(), answer["error"]["code"].as_i64()), (Value::Null, Some(code)), "{line}");
    }
    raw.line(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":7}}"#).await;
    assert_eq!(raw.answer(&json!(9)).await["error"]["code"], -32602);
    raw.line(r#"{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"cursor":"not-a-cursor"}}"#).await;
    assert_eq!(raw.answer(&json!(10)).await["error"]["code"], -32602);
    raw.line(r#"{"jsonrpc":"2.0","id":11,"method":"no/such/method"}"#).await;
    assert_eq!(raw.answer(&json!(11)).await["error"]["code"], -32601);
    // Logging is not declared, so not served.
    raw.line(r#"{"jsonrpc":"2.0","id":12,"method":"logging/setLevel","params":{"level":"debug"}}"#).await;
    assert_eq!(raw.answer(&json!(12)).await["error"]["code"], -32601);
    // Still serving, ids echoed exactly.
    raw.line(r#"{"jsonrpc":"2.0","id":"s-1","method":"ping"}"#).await;
    assert_eq!(raw.answer(&json!("s-1")).await["result"], json!({}));
    raw.line(
        r#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"get-logs","arguments":{"MaxCount":1}}}"#,
    )
    .await;
    let logs = raw.answer(&json!(13)).await;
    assert_eq!(logs["result"]["structuredContent"]["DisplayedCount"], 1);
    // What 2026-07-28 adds to results stays out of the handshake revisions'.
    assert!(logs["result"].get("resultType").is_none() && logs["result"].get("_meta").is_none(), "{logs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_is_answered_while_a_call_runs_and_cancelled_calls_get_no_answer() {
    let project = project();
    let _fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &["--dev"]);
    raw.handshake().await;
    raw.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"debug-sleep","arguments":{"SleepSeconds":2,"TimeoutSeconds":10}}}"#).await;
    raw.line(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await;
    assert_eq!(raw.answer(&json!(2)).await["result"], json!({}), "ping is not held up by the call");
    raw.line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}"#).await;
    raw.line(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"debug-sleep","arguments":{"SleepSeconds":2.5,"TimeoutSeconds":10}}}"#).await;
    // The cancelled call's answer never comes: the next answer is call 3's.
    let next = raw.answer(&json!(3)).await;
    assert_eq!(next["result"]["structuredContent"]["ActualSleepSeconds"], 2.5, "{next}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_are_echoed_when_supported_and_the_newest_answered_otherwise() {
    let project = project();
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2099-01-01", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ] {
        let mut raw = client::in_memory(project.path(), &[]);
        raw.line(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "v", "version": "1"}}}).to_string()).await;
        let answer = raw.answer(&json!(1)).await;
        assert_eq!(answer["result"]["protocolVersion"], answered, "asked {asked}");
        assert_eq!(answer["result"]["capabilities"]["tools"]["listChanged"], true);
    }
}

/// `structuredContent` (and `outputSchema`) came with MCP 2025-06-18: a
/// client of an older revision gets the result as text only, a newer one
/// both; a relayed result and one the bridge built alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structured_content_goes_only_to_revisions_that_define_it() {
    let project = project();
    let _fake = fake(project.path()).await;
    for (version, structured) in
        [("2024-11-05", false), ("2025-03-26", false), ("2025-06-18", true), ("2025-11-25", true)]
    {
        let mut raw = client::in_memory(project.path(), &[]);
        raw.line(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "v", "version": "1"}}}).to_string()).await;
        assert_eq!(raw.answer(&json!(1)).await["result"]["protocolVersion"], version);
        raw.line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
        for (id, tool) in [(2, "get-logs"), (3, "bridge-status")] {
            raw.line(
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
                    .to_string(),
            )
            .await;
            let answer = raw.answer(&json!(id)).await;
            let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
            assert!(!text.is_empty(), "{version} {tool}: {answer}");
            assert_eq!(answer["result"].get("structuredContent").is_some(), structured, "{version} {tool}: {answer}");
        }
    }
    let mut raw = client::in_memory(project.path(), &[]);
    let mut meta = stateless_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = "2026-07-28".into();
    raw.line(&json!({"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": {"name": "get-logs", "arguments": {}, "_meta": meta}}).to_string()).await;
    assert!(raw.answer(&json!("s")).await["result"].get("structuredContent").is_some());
}

/// A result over the output budget is saved to a file and offered as a
/// `resource_link` (2025-06-18 on), which `resources/read` reads; only
/// files the bridge saved can be read, and older revisions get the text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_result_is_a_resource_link_that_resources_read_reads() {
    let project = project();
    let _fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &["--result-budget", "400"]);
    raw.handshake().await;
    raw.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-logs","arguments":{}}}"#).await;
    let answer = raw.answer(&json!(1)).await;
    let content = answer["result"]["content"].as_array().unwrap().clone();
    let link = content.iter().find(|c| c["type"] == "resource_link").unwrap_or_else(|| panic!("{answer}"));
    let uri = link["uri"].as_str().unwrap().to_owned();
    assert!(uri.starts_with("file://") && uri.ends_with(".json"), "{link}");
    assert_eq!(link["mimeType"], "application/json");
    raw.line(r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#).await;
    let listed = raw.answer(&json!(2)).await;
    assert_eq!(listed["result"]["resources"][0]["uri"], uri.as_str(), "{listed}");
    raw.line(&json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": uri}}).to_string()).await;
    let read = raw.answer(&json!(3)).await;
    let whole: Value = serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(whole["DisplayedCount"], answer["result"]["structuredContent"]["DisplayedCount"], "the whole result");
    assert!(whole["Logs"].as_array().is_some_and(|logs| !logs.is_empty()));
    // Nothing else is read: not another file, not a path the bridge did not save.
    let passwd = if cfg!(windows) { "file:///C:/Windows/win.ini" } else { "file:///etc/passwd" };
    raw.line(&json!({"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {"uri": passwd}}).to_string())
        .await;
    assert_eq!(raw.answer(&json!(4)).await["error"]["code"], -32002);
    raw.line(r#"{"jsonrpc":"2.0","id":5,"method":"resources/templates/list"}"#).await;
    assert_eq!(raw.answer(&json!(5)).await["result"]["resourceTemplates"], json!([]));

    // 2025-03-26 has no resource links: the summary text alone.
    let mut old = client::in_memory(project.path(), &["--result-budget", "400"]);
    old.line(r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}"#).await;
    old.answer(&json!("i")).await;
    old.line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    old.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-logs","arguments":{}}}"#).await;
    let answer = old.answer(&json!(1)).await;
    let content = answer["result"]["content"].as_array().unwrap();
    assert!(content.iter().all(|c| c["type"] == "text"), "{answer}");
    assert!(content[0]["text"].as_str().unwrap().contains("saved to"), "{answer}");
}

/// The `_meta` every MCP 2026-07-28 request carries.
fn stateless_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "stateless-test", "version": "1"},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_client_is_served_with_no_handshake_and_a_handshake_client_after_it() {
    let project = project();
    let _fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &["--dev"]);
    let request = |id: u32, method: &str, mut params: Value| {
        params["_meta"] = stateless_meta();
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
    };
    raw.line(&request(1, "tools/list", json!({}))).await;
    let list = raw.answer(&json!(1)).await;
    assert_eq!((&list["result"]["resultType"], &list["result"]["cacheScope"]), (&json!("complete"), &json!("private")));
    assert!(list["result"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "get-logs"));
    // Every 2026-07-28 result names the server.
    assert_eq!(list["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "unity-mcp-bridge", "{list}");
    // Progress reaches a 2026-07-28 call that asks for it (run-tests reports it).
    let mut call = request(2, "tools/call", json!({"name": "run-tests", "arguments": {"TestMode": "EditMode"}}));
    call = call.replace(r#""_meta":{"#, r#""_meta":{"progressToken":"p2","#);
    raw.line(&call).await;
    let answer = raw.answer(&json!(2)).await;
    assert_eq!(answer["result"]["resultType"], "complete", "{answer}");
    assert_eq!(answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "unity-mcp-bridge");
    let progress: Vec<&Value> = raw.notifications.iter().filter(|n| n["method"] == "notifications/progress").collect();
    assert!(!progress.is_empty() && progress.iter().all(|n| n["params"]["progressToken"] == "p2"), "{progress:?}");
    raw.line(&request(3, "ping", json!({}))).await;
    assert_eq!(raw.answer(&json!(3)).await["error"]["code"], -32601);
    // Cancelled (the notification carries _meta too), a call gets no answer.
    raw.line(&request(4, "tools/call", json!({"name": "debug-sleep", "arguments": {"SleepSeconds": 1.5}}))).await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 4, "reason": "test", "_meta": stateless_meta()}});
    raw.line(&cancel.to_string()).await;
    raw.line(&request(5, "tools/call", json!({"name": "debug-sleep", "arguments": {"SleepSeconds": 2}}))).await;
    let next = raw.next_json().await;
    assert_eq!(
        (&next["id"], &next["result"]["structuredContent"]["ActualSleepSeconds"]),
        (&json!(5), &json!(2)),
        "{next}"
    );
    // An initialize on the same process is still answered (a dual-era
    // server may serve both eras on one stdio connection).
    raw.handshake().await;
}
