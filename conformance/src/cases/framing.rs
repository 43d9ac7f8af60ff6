//! §2 Framing.

use std::time::Duration;

use serde_json::json;
use unity_mcp_bridge::framing::{Framing, frame_bytes};

use crate::{
    case::{Case, CheckFuture, CheckResult, Finding, Level, Needs, check},
    ensure,
    target::Session,
};

const REF: &str = "editor-link-protocol.md §2";

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            id: "2.header-framing".into(),
            requirement: "A request in header framing is answered in header framing (Content-Length, then compact JSON).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(header_framing),
        },
        Case {
            id: "2.newline-framing".into(),
            requirement: "A connection whose first byte is '{' speaks newline framing, and is answered in it.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(newline_framing),
        },
        Case {
            id: "2.coalesced-frames".into(),
            requirement: "Several frames arriving in one read are all decoded and answered.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(coalesced_frames),
        },
        Case {
            id: "2.split-frames".into(),
            requirement: "A frame split across reads (one byte at a time, inside the header and inside a multi-byte character) is decoded.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(split_frames),
        },
        Case {
            id: "2.parse-error".into(),
            requirement: "A frame whose body is not JSON is answered with id null, -32700, data.type parse_error, and the connection stays open.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(parse_error),
        },
        Case {
            id: "2.frame-too-large".into(),
            requirement: "A frame over the limit is discarded and answered with id null, -32600, data.type frame_too_large; the connection stays usable (ours; uLoopMCP closes it).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(frame_too_large),
        },
        Case {
            id: "2.bad-header-block".into(),
            requirement: "A header block without Content-Length is answered with id null, -32700, data.type framing_error, then the connection is closed.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(bad_header_block),
        },
    ]
}

/// A ping in `framing`; the link decodes only that framing, so an answer in
/// the other one fails to read.
async fn ping_in(s: Session, framing: Framing) -> CheckResult {
    let mut link = s.link(framing).await?;
    let result = link.result("ping", json!({"Message": framing.as_str()})).await?;
    ensure!(result["Message"] == format!("Unity MCP Bridge received: {framing}"), "ping answered {result}");
    Ok(())
}

fn header_framing(s: Session) -> CheckFuture {
    Box::pin(ping_in(s, Framing::Header))
}

fn newline_framing(s: Session) -> CheckFuture {
    Box::pin(ping_in(s, Framing::Newline))
}

fn coalesced_frames(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let mut bytes = Vec::new();
        for n in 1..=3 {
            let body = json!({"jsonrpc": "2.0", "id": n, "method": "ping", "params": {"Message": n.to_string()}});
            bytes.extend_from_slice(
                &frame_bytes(Framing::Header, body.to_string().as_bytes())
                    .map_err(|e| Finding::Harness(e.to_string()))?,
            );
        }
        link.send_raw(&bytes).await?;
        let mut seen = Vec::new();
        while seen.len() < 3 {
            let message = link.message().await?;
            if let Some(id) = message.get("id").and_then(|i| i.as_u64()) {
                seen.push(id);
            }
        }
        seen.sort_unstable();
        ensure!(seen == [1, 2, 3], "answers for ids {seen:?}");
        Ok(())
    })
}

fn split_frames(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let body = json!({"jsonrpc": "2.0", "id": "split", "method": "ping", "params": {"Message": "日本語 ☃ 𝄞"}});
        let bytes =
            frame_bytes(Framing::Header, body.to_string().as_bytes()).map_err(|e| Finding::Harness(e.to_string()))?;
        for b in bytes.iter() {
            link.send_raw(&[*b]).await?;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let response = link.response(&json!("split")).await?;
        ensure!(response["result"]["Message"] == "Unity MCP Bridge received: 日本語 ☃ 𝄞", "answered {response}");
        Ok(())
    })
}

fn parse_error(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        link.send_body(b"{\"jsonrpc\": \"2.0\", oops").await?;
        let error = link.message().await?;
        ensure!(error["id"].is_null(), "the error's id is {} (must be null)", error["id"]);
        ensure!(error["error"]["code"] == -32700, "code {} (must be -32700)", error["error"]["code"]);
        ensure!(
            error["error"]["data"]["type"] == "parse_error",
            "data.type {} (must be parse_error)",
            error["error"]["data"]["type"]
        );
        let after = link.result("ping", json!({"Message": "after"})).await?;
        ensure!(
            after["Message"] == "Unity MCP Bridge received: after",
            "the connection is not usable after the error: {after}"
        );
        Ok(())
    })
}

fn frame_too_large(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        // Over the 8 MiB default request limit of protocol §2.
        let filler = "x".repeat(9 * 1024 * 1024);
        let big = json!({"jsonrpc": "2.0", "id": "big", "method": "ping", "params": {"Message": filler}});
        link.send_body(big.to_string().as_bytes()).await?;
        let error = link.message().await?;
        ensure!(error["id"].is_null(), "the error's id is {} (must be null)", error["id"]);
        ensure!(error["error"]["code"] == -32600, "code {} (must be -32600)", error["error"]["code"]);
        ensure!(error["error"]["data"]["type"] == "frame_too_large", "data.type {}", error["error"]["data"]["type"]);
        let after = link.result("ping", json!({"Message": "after"})).await?;
        ensure!(after["Message"] == "Unity MCP Bridge received: after", "answered {after}");
        Ok(())
    })
}

fn bad_header_block(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        link.send_raw(b"X-Not-A-Length: 12\r\n\r\n{\"id\":1}").await?;
        let error = link.message().await?;
        ensure!(error["id"].is_null(), "the error's id is {} (must be null)", error["id"]);
        ensure!(error["error"]["code"] == -32700, "code {} (must be -32700)", error["error"]["code"]);
        ensure!(error["error"]["data"]["type"] == "framing_error", "data.type {}", error["error"]["data"]["type"]);
        ensure!(link.closes_within(Duration::from_secs(3)).await, "the connection stayed open after a framing error");
        let mut fresh = s.link(Framing::Header).await?;
        fresh.result("ping", json!({})).await?;
        Ok(())
    })
}
