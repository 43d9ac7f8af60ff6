//! Calls side by side through the bridge, against any Editor (over TCP
//! too): a call is never held behind another, and a cancelled call frees
//! what it held. An Editor may serialise its own main-thread work; these
//! cases wait in the Editor's `debug-sleep` (an internal tool, offered with
//! the bridge's internal tools, `UNITY_MCP_DEV=1`), which sleeps off the
//! main thread. Each verdict is an order of answers, not a time: the quick
//! call must be answered before a sleep it must not wait behind.

use std::time::Duration;

use serde_json::{Value, json};

use super::{initialized_with_internal_tools, text_of};
use crate::{
    bridge::McpProcess,
    case::CheckFuture,
    ensure,
    finding::{Finding, violation},
    target::Session,
};

/// The sleep the quick call must not wait behind, seconds.
const SLEEP_S: u64 = 20;

/// More than the bridge keeps connections for calls to an Editor that
/// answers in order (8): a bridge whose cancelled calls hold them has none
/// left.
const CANCELLED_CALLS: usize = 10;

/// Long enough for a call to reach the Editor.
const REACH: Duration = Duration::from_millis(300);

/// A `debug-sleep` of `seconds`, sent; its id.
async fn sleep_call(mcp: &mut McpProcess, seconds: u64) -> Result<Value, Finding> {
    mcp.request(
        "tools/call",
        json!({"name": "debug-sleep", "arguments": {"SleepSeconds": seconds, "TimeoutSeconds": seconds + 30}}),
    )
    .await
}

/// Reads until `first` is answered: a violation if one of `not_before` is
/// answered first. `cancelled` must never be answered.
async fn answered_first(
    mcp: &mut McpProcess,
    first: &Value,
    not_before: &[Value],
    cancelled: &[Value],
) -> Result<Value, Finding> {
    let within = Duration::from_secs(SLEEP_S * 3);
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let Some(message) = mcp.next_message(left).await? else {
            return violation(format!("{first} was not answered within {within:?}"));
        };
        if message.get("method").is_some() {
            mcp.notifications().push(message);
            continue;
        }
        let id = &message["id"];
        if id == first {
            return Ok(message);
        }
        if cancelled.contains(id) {
            return violation(format!("an answer to a call the client cancelled: {message}"));
        }
        if not_before.contains(id) {
            return violation(format!(
                "the {SLEEP_S} s debug-sleep ({id}) was answered before the call made beside it ({first}): the bridge held that call behind it"
            ));
        }
    }
}

/// A get-logs call, sent; its id.
async fn quick_call(mcp: &mut McpProcess) -> Result<Value, Finding> {
    mcp.request("tools/call", json!({"name": "get-logs", "arguments": {"MaxCount": 1}})).await
}

fn ensure_result(answer: &Value) -> Result<(), Finding> {
    ensure!(
        answer.get("result").is_some() && answer["result"]["isError"] != json!(true),
        "get-logs failed: {}{}",
        crate::wire_log::excerpt(answer.to_string().as_bytes()),
        text_of(answer)
    );
    Ok(())
}

pub(super) fn beside_a_slow_call(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized_with_internal_tools(&s).await?;
        let slow = sleep_call(&mut mcp, SLEEP_S).await?;
        tokio::time::sleep(REACH).await;
        let quick = quick_call(&mut mcp).await?;
        let answer = answered_first(&mut mcp, &quick, std::slice::from_ref(&slow), &[]).await?;
        ensure_result(&answer)?;
        mcp.notify("notifications/cancelled", json!({"requestId": slow, "reason": "the conformance suite"})).await?;
        mcp.finish().await
    })
}

pub(super) fn cancellation_frees_the_editor(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized_with_internal_tools(&s).await?;
        let mut cancelled = Vec::new();
        for _ in 0..CANCELLED_CALLS {
            cancelled.push(sleep_call(&mut mcp, SLEEP_S).await?);
        }
        tokio::time::sleep(REACH).await;
        for id in &cancelled {
            mcp.notify("notifications/cancelled", json!({"requestId": id, "reason": "the conformance suite"})).await?;
        }
        // A sleep half as long, not cancelled, then a quick call: the quick
        // one is answered first unless the cancelled calls still hold what
        // both need (then both wait for the cancelled sleeps to end).
        let sentinel = sleep_call(&mut mcp, SLEEP_S / 2).await?;
        let quick = quick_call(&mut mcp).await?;
        let answer = answered_first(&mut mcp, &quick, std::slice::from_ref(&sentinel), &cancelled).await?;
        ensure_result(&answer)?;
        mcp.notify("notifications/cancelled", json!({"requestId": sentinel, "reason": "the conformance suite"}))
            .await?;
        mcp.finish().await
    })
}
