//! Exactly one answer per request, through the bridge: a request that reuses
//! the id of one in flight is refused (never run behind the client's back),
//! methods the bridge does not serve are not found, and no value of
//! `TimeoutSeconds` breaks a call.

use std::time::Duration;

use fake_unity::{
    Fault, RuleSpec, Scenario, Trigger,
    faults::Latency,
    proxy::{Proxy, ProxyConfig},
};
use serde_json::{Value, json};

use crate::{
    bridge::MCP_TIMEOUT,
    case::{Case, CheckFuture, Level, Needs, Requires, check},
    ensure,
    finding::{Finding, violation},
    target::Session,
};

const TOOLS: &str = "MCP 2025-11-25 §basic (requests: ids unique while in flight), §server/tools; mcp-stdio.md";
const LIFECYCLE: &str = "MCP 2025-11-25 §basic/lifecycle (capability negotiation); JSON-RPC 2.0 §5.1";

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            id: "mcp.duplicate-id".into(),
            requirement: "A tools/call whose id is that of a call still in flight is refused with a JSON-RPC error; the first is answered once, and Unity runs the tool once (counted when the Editor is the fake).".into(),
            reference: TOOLS,
            level: Level::Must,
            needs: Needs::Faults,
            requires: Requires::CORE,
            check: check(duplicate_id),
        },
        Case {
            id: "mcp.unknown-method".into(),
            requirement: "A method the bridge does not serve is answered -32601 method not found: an unknown one (tools/foo), and those of capabilities it did not declare (resources, prompts, completions, logging).".into(),
            reference: LIFECYCLE,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(unknown_method),
        },
        Case {
            id: "mcp.tools-call.timeout-range".into(),
            requirement: "Any TimeoutSeconds (1e19, -5, 0) gets one tool result — the call's, or an error naming TimeoutSeconds — never a JSON-RPC error or silence, and the bridge keeps serving.".into(),
            reference: TOOLS,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(timeout_range),
        },
    ]
}

/// Every message with `id` that arrives within `wait`.
async fn answers_to(mcp: &mut crate::bridge::McpProcess, id: &Value, wait: Duration) -> Result<Vec<Value>, Finding> {
    let deadline = tokio::time::Instant::now() + wait;
    let mut answers = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match mcp.next_message(left).await? {
            None => return Ok(answers),
            Some(m) if m.get("method").is_some() => mcp.notifications().push(m),
            Some(m) if m.get("id") == Some(id) => answers.push(m),
            Some(m) => return violation(format!("an answer to an id that was not asked for: {m}")),
        }
    }
}

fn duplicate_id(mut s: Session) -> CheckFuture {
    Box::pin(async move {
        // The first call stays in flight for a second: its answer is late.
        let late = RuleSpec::new(Fault::Latency(Latency { ms: 1000, jitter_ms: 0 }))
            .on(Trigger::FromEditor)
            .method("clear-console")
            .times(1);
        let proxy = if s.is_embedded_fake() {
            s.restart_fake(|config| config.scenario.faults = vec![late]).await?;
            None
        } else {
            let upstream = s.editor_addr().await?.to_string();
            let scenario = Scenario { faults: vec![late], ..Scenario::default() };
            let config = ProxyConfig {
                upstream,
                port: 0,
                control_port: 0,
                scenario,
                seed: None,
                time_scale: 1.0,
                events: Default::default(),
            };
            Some(Proxy::start(config).await.map_err(|e| Finding::Harness(format!("fake-unity proxy: {e}")))?)
        };
        let mut mcp = match &proxy {
            None => s.mcp().await?,
            Some(proxy) => s.mcp_at(proxy.port())?,
        };
        mcp.initialize().await?;
        let id = json!("same-id");
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "clear-console", "arguments": {}}});
        mcp.send(&call).await?;
        mcp.send(&call).await?;
        // Both answers come within the slow call's second; anything later
        // would be a third.
        let answers = answers_to(&mut mcp, &id, Duration::from_secs(6)).await?;
        let refused = answers.iter().filter(|a| a.get("error").is_some()).count();
        let results: Vec<&Value> = answers.iter().filter(|a| a.get("result").is_some()).collect();
        ensure!(
            answers.len() == 2 && refused == 1 && results.len() == 1,
            "two requests with id {id} in flight: expected one result and one JSON-RPC error, got {} answer(s): {answers:?}",
            answers.len()
        );
        ensure!(results[0]["result"]["isError"] != json!(true), "the first call failed: {}", results[0]);
        if proxy.is_none() {
            // Only the fake counts what it ran.
            let stats =
                s.control()?.get("/stats").await.map_err(|e| Finding::Harness(format!("the control API: {e}")))?;
            let runs = stats["runs"]["clear-console"].as_u64().unwrap_or(0);
            ensure!(runs == 1, "Unity ran clear-console {runs} times for one answered call");
        }
        mcp.finish().await
    })
}

fn unknown_method(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        let info = mcp.initialize().await?;
        let capabilities = &info["capabilities"];
        let undeclared = [
            ("tools/foo", json!({}), None),
            ("resources/list", json!({}), Some("resources")),
            ("resources/templates/list", json!({}), Some("resources")),
            ("prompts/list", json!({}), Some("prompts")),
            ("completion/complete", json!({}), Some("completions")),
            ("logging/setLevel", json!({"level": "info"}), Some("logging")),
        ];
        for (method, params, capability) in undeclared {
            if capability.is_some_and(|c| capabilities.get(c).is_some()) {
                continue;
            }
            let answer = mcp.call_method(method, params).await?;
            ensure!(
                answer["error"]["code"] == json!(-32601),
                "{method} ({}) was answered {answer}, not -32601",
                capability.map_or("no such method".to_owned(), |c| format!("capability {c} not declared"))
            );
        }
        mcp.finish().await
    })
}

fn timeout_range(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        mcp.initialize().await?;
        for timeout in [json!(1e19), json!(-5), json!(0)] {
            let id = mcp
                .request(
                    "tools/call",
                    json!({"name": "get-logs", "arguments": {"MaxCount": 1, "TimeoutSeconds": timeout}}),
                )
                .await?;
            let answer = mcp.response_within(&id, MCP_TIMEOUT).await?;
            let Some(result) = answer.get("result") else {
                return violation(format!("TimeoutSeconds {timeout} was answered with a JSON-RPC error: {answer}"));
            };
            if result["isError"] == json!(true) {
                let text: String =
                    result["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect();
                ensure!(
                    text.contains("TimeoutSeconds"),
                    "the error for TimeoutSeconds {timeout} does not name it: {text}"
                );
            }
        }
        let after = mcp.call("get-logs", json!({"MaxCount": 1})).await?;
        ensure!(after["result"]["isError"] != json!(true), "the bridge stopped serving: {after}");
        mcp.finish().await
    })
}
