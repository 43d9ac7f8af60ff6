//! The `mcp` cases of the lifecycle and of JSON-RPC over stdio.

use super::*;
use crate::finding::{Finding, violation};

// ---- lifecycle ----

pub(super) fn version_echo(s: Session) -> CheckFuture {
    Box::pin(async move {
        for version in MCP_VERSIONS {
            let mut mcp = s.mcp().await?;
            let result = mcp.initialize_with(version).await?;
            ensure!(
                result["protocolVersion"] == version,
                "asked for {version}, answered {}",
                result["protocolVersion"]
            );
            mcp.finish().await?;
        }
        Ok(())
    })
}

pub(super) fn unknown_version(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        let answer = mcp
            .call_method(
                "initialize",
                json!({"protocolVersion": "1999-01-01", "capabilities": {},
                       "clientInfo": {"name": "unity-conformance", "version": "1"}}),
            )
            .await?;
        let version = answer["result"]["protocolVersion"].as_str().unwrap_or("");
        ensure!(
            MCP_VERSIONS.contains(&version),
            "initialize with an unknown version must be answered with a supported one, got {answer}"
        );
        mcp.finish().await
    })
}

pub(super) fn capabilities(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        let result = mcp.initialize().await?;
        ensure!(
            result["serverInfo"]["name"].as_str().is_some_and(|n| !n.is_empty())
                && result["serverInfo"]["version"].is_string(),
            "serverInfo must have a name and a version: {}",
            result["serverInfo"]
        );
        ensure!(
            result["capabilities"]["tools"]["listChanged"] == json!(true),
            "capabilities.tools.listChanged must be true (the Editor's tools change across reloads): {}",
            result["capabilities"]
        );
        mcp.finish().await
    })
}

pub(super) fn server_discover(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        let id = mcp.request("server/discover", json!({"_meta": stateless_meta()})).await?;
        let answer = mcp.response_within(&id, Duration::from_secs(5)).await?;
        let result = &answer["result"];
        ensure!(result.is_object(), "server/discover: expected a DiscoverResult, got {answer}");
        let versions = &result["supportedVersions"];
        ensure!(
            versions.as_array().is_some_and(|v| v.contains(&json!("2026-07-28")) && v.contains(&json!("2025-11-25"))),
            "supportedVersions must name 2026-07-28 and the handshake revisions: {versions}"
        );
        ensure!(
            result["resultType"] == "complete"
                && result["ttlMs"].is_u64()
                && matches!(result["cacheScope"].as_str(), Some("public" | "private"))
                && result["capabilities"]["tools"].is_object(),
            "a DiscoverResult needs resultType, ttlMs, cacheScope and capabilities.tools: {result}"
        );
        // A client that probes and then falls back does so on the same process.
        mcp.initialize().await?;
        mcp.finish().await
    })
}

pub(super) fn notifications_before_initialize(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        mcp.notify("notifications/initialized", json!({})).await?;
        mcp.notify("notifications/cancelled", json!({"requestId": 99})).await?;
        mcp.notify("notifications/roots/list_changed", json!({})).await?;
        mcp.initialize().await?;
        mcp.call_ok("get-logs", json!({"MaxCount": 1})).await?;
        mcp.finish().await
    })
}

pub(super) fn stdout_only_mcp(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        mcp.send_line("not json").await?;
        let parse_error = mcp.next_message(Duration::from_secs(5)).await?;
        ensure!(
            parse_error.as_ref().is_some_and(|m| error_code(m) == Some(-32700)),
            "a line that is not JSON must get -32700, got {parse_error:?}"
        );
        mcp.initialize().await?;
        mcp.list_tools().await?;
        // A result, refused arguments, an unknown tool and the bridge's own
        // tool: every kind of answer, from tools every Editor has.
        mcp.call_ok("get-logs", json!({"MaxCount": 5})).await?;
        mcp.call("get-logs", json!({"MaxCount": "ten"})).await?;
        mcp.call("no-such-tool", json!({})).await?;
        mcp.call_ok("bridge-status", json!({})).await?;
        mcp.finish().await
    })
}

pub(super) fn stdin_eof_exits(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        mcp.call_ok("get-logs", json!({"MaxCount": 1})).await?;
        mcp.close_stdin();
        match mcp.exits_within(Duration::from_secs(5)).await {
            None => violation(format!("the bridge still runs 5 s after its stdin closed{}", mcp.stderr_tail())),
            Some(status) if !status.success() => {
                violation(format!("the bridge exited with {status} at stdin EOF{}", mcp.stderr_tail()))
            }
            Some(_) => mcp.finish().await,
        }
    })
}

pub(super) fn probe_start(s: Session) -> CheckFuture {
    Box::pin(async move {
        // A probe: started, never initialized, still running.
        let probe = s.mcp().await?;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut mcp = initialized(&s).await?;
        mcp.call_ok("get-logs", json!({"MaxCount": 1})).await?;
        mcp.finish().await?;
        probe.finish().await
    })
}

// ---- JSON-RPC ----

pub(super) fn parse_error(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        mcp.send_line("{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": ").await?;
        let answer = match mcp.next_message(Duration::from_secs(5)).await? {
            Some(answer) => answer,
            None => return violation("no answer to a line that is not JSON within 5 s"),
        };
        ensure!(
            error_code(&answer) == Some(-32700) && answer["id"].is_null(),
            "a line that is not JSON must get -32700 with id null, got {answer}"
        );
        let pong = mcp.call_method("ping", json!({})).await?;
        ensure!(pong["result"] == json!({}), "ping after the bad line: {pong}");
        mcp.finish().await
    })
}

pub(super) fn batch_rejected(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        mcp.send_line(
            r#"[{"jsonrpc": "2.0", "id": 900, "method": "ping"}, {"jsonrpc": "2.0", "id": 901, "method": "ping"}]"#,
        )
        .await?;
        let answer = match mcp.next_message(Duration::from_secs(5)).await? {
            Some(answer) => answer,
            None => return violation("no answer to a batch within 5 s"),
        };
        ensure!(error_code(&answer) == Some(-32600), "a batch must get -32600, got {answer}");
        let pong = mcp.call_method("ping", json!({})).await?;
        ensure!(pong["result"] == json!({}), "ping after the batch: {pong}");
        mcp.finish().await
    })
}

pub(super) fn id_echo(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        for id in [json!(0), json!(7), json!(9_007_199_254_740_991_i64), json!("42"), json!("abc-Ω"), json!("")] {
            mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).await?;
            let answer = mcp.response(&id).await.map_err(|e| match e {
                Finding::Violation(why) => Finding::Violation(format!("id {id} (a {}): {why}", kind(&id))),
                other => other,
            })?;
            ensure!(answer["id"] == id, "id {id} echoed as {}", answer["id"]);
        }
        mcp.finish().await
    })
}

pub(super) fn kind(value: &Value) -> &'static str {
    if value.is_string() { "string" } else { "number" }
}

pub(super) fn ping(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        let before = mcp.call_method("ping", json!({})).await?;
        ensure!(before["result"] == json!({}), "ping before initialize: {before}");
        mcp.initialize().await?;
        let after = mcp.call_method("ping", json!({})).await?;
        ensure!(after["result"] == json!({}), "ping after initialize: {after}");
        mcp.finish().await
    })
}

pub(super) fn ping_during_call(s: Session) -> CheckFuture {
    Box::pin(async move {
        for attempt in 1..=SLOW_CALL_ATTEMPTS {
            let mut mcp = initialized(&s).await?;
            let call = slow_call(&s, &mut mcp, "mcp.ping-during-call").await?;
            let ping = mcp.request("ping", json!({})).await?;
            if !call.under_way() {
                s.note(format!("attempt {attempt}: the ping left the harness too late to prove anything; again"));
                mcp.finish().await?;
                continue;
            }
            let first = match mcp.next_message(Duration::from_secs(10)).await? {
                Some(m) => m,
                None => return violation("neither the call nor the ping was answered within 10 s"),
            };
            ensure!(first["id"] == ping, "the ping must be answered while the call runs; first came {first}");
            ensure!(first["result"] == json!({}), "ping: {first}");
            let answer = mcp.response(&call.id).await?;
            ensure!(!is_error_result(&answer) && answer.get("result").is_some(), "the slow call: {answer}");
            return mcp.finish().await;
        }
        Err(harness_too_slow("send a ping"))
    })
}
