//! MCP 2026-07-28, the stateless revision: no handshake; every request
//! carries the protocol version and the client's capabilities in `_meta`
//! and is answered on its own; the revision's own errors.

use super::*;
use crate::finding::violation;

const STATELESS: &str = "MCP 2026-07-28 §basic (_meta), §basic/versioning, §server/discover; mcp-stdio.md";
const SUBSCRIPTIONS: &str = "MCP 2026-07-28 §basic/utilities/subscriptions (subscriptions/listen), §server/tools (list_changed), §basic/transports/stdio";

pub(super) fn cases() -> Vec<Case> {
    use Level::*;
    use Needs::*;
    vec![
        case(
            "mcp.stateless.call",
            Must,
            Link,
            STATELESS,
            "With no initialize, a tools/list and a tools/call carrying the 2026-07-28 _meta are answered: results with resultType \"complete\", tools/list with ttlMs and cacheScope, the call with content and structuredContent.",
            stateless_call,
        ),
        case(
            "mcp.stateless.unsupported-version",
            Must,
            Link,
            STATELESS,
            "A request naming a protocol version the bridge does not serve gets -32022 with data.supported (the versions served, 2026-07-28 among them) and data.requested (the version asked for, as a string).",
            unsupported_version,
        ),
        case(
            "mcp.stateless.removed-method",
            Must,
            Link,
            STATELESS,
            "A method 2026-07-28 removed (ping, logging/setLevel) asked in that revision gets -32601, and the bridge keeps serving.",
            removed_method,
        ),
        case(
            "mcp.stateless.missing-meta",
            Must,
            Link,
            STATELESS,
            "A 2026-07-28 request without its required clientCapabilities in _meta gets -32602 naming the key.",
            missing_meta,
        ),
        case(
            "mcp.stateless.subscription",
            Must,
            Control("tools removed at a reload (a fault)"),
            SUBSCRIPTIONS,
            "With no initialize, subscriptions/listen for toolsListChanged is acknowledged first (notifications/subscriptions/acknowledged carrying the listen's id); when the Editor's tools change, notifications/tools/list_changed comes tagged with that id; once the client cancels the subscription, nothing more comes on it and it gets no answer.",
            subscription,
        ),
    ]
}

/// `params` with the 2026-07-28 `_meta` added.
fn with_meta(mut params: Value) -> Value {
    params["_meta"] = stateless_meta();
    params
}

fn stateless_call(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        let list = mcp.call_method("tools/list", with_meta(json!({}))).await?;
        let result = &list["result"];
        ensure!(result["tools"].is_array(), "tools/list without a handshake: expected tools, got {list}");
        ensure!(result["resultType"] == "complete", "tools/list: resultType must be \"complete\": {}", short(result));
        ensure!(
            result["ttlMs"].is_u64() && matches!(result["cacheScope"].as_str(), Some("public" | "private")),
            "tools/list in 2026-07-28 needs ttlMs and cacheScope: {}",
            short(result)
        );
        let has_logs = result["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["name"] == "get-logs"));
        ensure!(has_logs, "tools/list without a handshake lacks get-logs");
        let call =
            mcp.call_method("tools/call", with_meta(json!({"name": "get-logs", "arguments": {"MaxCount": 1}}))).await?;
        let result = &call["result"];
        ensure!(
            result["resultType"] == "complete"
                && result["content"].is_array()
                && result["structuredContent"].is_object(),
            "tools/call without a handshake: expected a complete result with content and structuredContent, got {call}"
        );
        ensure!(result["isError"] != json!(true), "get-logs failed: {call}");
        mcp.finish().await
    })
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 300 { format!("{}…", text.chars().take(300).collect::<String>()) } else { text }
}

fn unsupported_version(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        let meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let answer = mcp.call_method("tools/list", json!({"_meta": meta})).await?;
        ensure!(error_code(&answer) == Some(-32022), "an unsupported version: expected -32022, got {answer}");
        let data = &answer["error"]["data"];
        let supported = data["supported"].as_array();
        ensure!(
            supported
                .is_some_and(|v| !v.is_empty() && v.iter().all(Value::is_string) && v.contains(&json!("2026-07-28"))),
            "data.supported must list the versions served as strings, 2026-07-28 among them: {data}"
        );
        ensure!(
            data["requested"] == "2099-01-01",
            "data.requested must be the version asked for, \"2099-01-01\": {data}"
        );
        mcp.finish().await
    })
}

fn removed_method(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        for method in ["ping", "logging/setLevel"] {
            let params = if method == "ping" { json!({}) } else { json!({"level": "info"}) };
            let answer = mcp.call_method(method, with_meta(params)).await?;
            ensure!(error_code(&answer) == Some(-32601), "{method} in 2026-07-28: expected -32601, got {answer}");
        }
        let list = mcp.call_method("tools/list", with_meta(json!({}))).await?;
        ensure!(list["result"]["tools"].is_array(), "after a removed method the bridge must keep serving: {list}");
        mcp.finish().await
    })
}

fn missing_meta(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
        let answer = mcp.call_method("tools/list", json!({"_meta": meta})).await?;
        ensure!(error_code(&answer) == Some(-32602), "_meta without clientCapabilities: expected -32602, got {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or("");
        ensure!(
            message.contains("clientCapabilities"),
            "the error must name the missing key (io.modelcontextprotocol/clientCapabilities): {answer}"
        );
        mcp.finish().await
    })
}

/// The subscription a notification belongs to.
fn subscription_id(notification: &Value) -> &Value {
    &notification["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
}

fn subscription(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        let offered = |list: &Value, tool: &str| {
            list["result"]["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["name"] == tool))
        };
        // Listed first, so that the Editor's tools are known when the
        // subscription begins.
        let list = mcp.call_method("tools/list", with_meta(json!({}))).await?;
        ensure!(offered(&list, "unity-search"), "unity-search is not offered to begin with: {list}");
        let listen = mcp
            .request("subscriptions/listen", with_meta(json!({"notifications": {"toolsListChanged": true}})))
            .await?;
        let Some(ack) =
            notification(&mut mcp, "notifications/subscriptions/acknowledged", Duration::from_secs(10)).await?
        else {
            return violation("subscriptions/listen: no notifications/subscriptions/acknowledged within 10 s");
        };
        ensure!(
            ack["params"]["notifications"]["toolsListChanged"] == true && *subscription_id(&ack) == listen,
            "the acknowledgement must accept toolsListChanged and carry the listen's id ({listen}) in _meta: {ack}"
        );
        reload_without(&s, &["unity-search"]).await?;
        let changed = notification(&mut mcp, "notifications/tools/list_changed", Duration::from_secs(10)).await;
        let Some(changed) = changed? else {
            restore_tools(&s).await?;
            return violation(
                "no notifications/tools/list_changed on the subscription within 10 s of a reload that removed unity-search",
            );
        };
        if *subscription_id(&changed) != listen {
            restore_tools(&s).await?;
            return violation(format!("list_changed must carry the subscription's id ({listen}) in _meta: {changed}"));
        }
        let after = mcp.call_method("tools/list", with_meta(json!({}))).await?;
        if offered(&after, "unity-search") {
            restore_tools(&s).await?;
            return violation("tools/list still offers unity-search after list_changed");
        }
        // Cancelled, the subscription ends: the tools coming back is not told.
        let mut cancel = with_meta(json!({"requestId": listen}));
        cancel["reason"] = json!("the conformance suite");
        mcp.notify("notifications/cancelled", cancel).await?;
        restore_tools(&s).await?;
        s.control()?.reload(200, false).await.map_err(control_failed)?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match mcp.next_message(left).await? {
                None => break,
                Some(m) if m.get("method").is_some() && *subscription_id(&m) != listen => {}
                Some(m) => return violation(format!("after the subscription was cancelled: {m}")),
            }
        }
        let back = mcp.call_method("tools/list", with_meta(json!({}))).await?;
        ensure!(offered(&back, "unity-search"), "after the Editor got its tools back, tools/list lacks unity-search");
        mcp.finish().await
    })
}
