//! The MCP output of a typical session, as it goes over stdout, snapshotted
//! with insta. Volatile values (times, paths, ports, ids, durations) are
//! redacted; the text block of a result is checked to be its structured
//! content and then elided, so each snapshot shows the content once.

use serde_json::{Value, json};

use crate::{
    client::McpClient,
    service::{fake, project},
};

/// Keys whose values change from run to run.
const VOLATILE: &[&str] = &[
    "CompletedAt",
    "ImagePath",
    "XmlPath",
    "ResultsFilePath",
    "hierarchyFilePath",
    "SearchDurationMs",
    "DataPath",
    "serverSessionId",
    "port",
    "project",
    "connectedSince",
    "uptimeSeconds",
    "fetchedAt",
    "startedAt",
    "timestamp",
];

fn redact(value: &mut Value, project: &str) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if VOLATILE.contains(&k.as_str()) && !v.is_null() && v.as_str() != Some("") {
                    *v = json!(format!("[{k}]"));
                } else {
                    redact(v, project);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact(v, project)),
        Value::String(s) if s.contains(project) => *s = s.replace(project, "[project]"),
        _ => {}
    }
}

/// A result with its text block checked against its structured content.
pub fn tidy(mut answer: Value, project: &str) -> Value {
    if let Some(result) = answer.get_mut("result") {
        if let (Some(text), Some(structured)) = (result["content"][0]["text"].as_str(), result.get("structuredContent"))
        {
            let parsed: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            if &parsed == structured {
                result["content"][0]["text"] = json!("[the structuredContent, as JSON text]");
            }
        }
    }
    redact(&mut answer, project);
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typical_session() {
    let project = project();
    let fake = fake(project.path()).await;
    let root = std::fs::canonicalize(project.path()).unwrap().to_string_lossy().into_owned();
    let mut raw = McpClient::in_memory(project.path(), &[]);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"snapshot","version":"1"}}}"#);
    insta::assert_json_snapshot!("initialize", tidy(raw.answer(&json!(1)), &root));
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    insta::assert_json_snapshot!("tools_list", tidy(raw.answer(&json!(2)), &root));

    let calls: &[(&str, Value)] = &[
        ("get_logs", json!({"name": "get-logs", "arguments": {"LogType": "Error", "MaxCount": 1}})),
        (
            "find_game_objects",
            json!({"name": "find-game-objects", "arguments": {"NamePattern": "Enemy_0", "SearchMode": "Contains", "MaxResults": 1}}),
        ),
        (
            "get_hierarchy",
            json!({"name": "get-hierarchy", "arguments": {"RootPath": "Player", "IncludeComponents": false}}),
        ),
        (
            "unity_search",
            json!({"name": "unity-search", "arguments": {"SearchQuery": "t:Material", "IncludeMetadata": true}}),
        ),
        ("compile", json!({"name": "compile", "arguments": {}})),
        (
            "run_tests_failing",
            json!({"name": "run-tests", "arguments": {"FilterType": "regex", "FilterValue": "ScoreKeeperTests"}}),
        ),
        (
            "execute_dynamic_code",
            json!({"name": "execute-dynamic-code", "arguments": {"Code": "Debug.Log(\"hi\"); return 6 * 7;"}}),
        ),
        ("invalid_params", json!({"name": "get-logs", "arguments": {"LogType": "Fatal"}})),
        ("unknown_tool", json!({"name": "make-coffee", "arguments": {}})),
        ("bridge_status", json!({"name": "bridge-status", "arguments": {}})),
    ];
    for (n, (name, params)) in calls.iter().enumerate() {
        let id = 100 + n;
        raw.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string());
        insta::assert_json_snapshot!(*name, tidy(raw.answer(&json!(id)), &root));
    }
    fake.control().post("/settings", json!({"allowMenuItemExecution": false})).await.unwrap();
    raw.send(r#"{"jsonrpc":"2.0","id":200,"method":"tools/call","params":{"name":"execute-menu-item","arguments":{"MenuItemPath":"Tools/Fixture/Log Hello"}}}"#);
    insta::assert_json_snapshot!("security_blocked", tidy(raw.answer(&json!(200)), &root));
}
