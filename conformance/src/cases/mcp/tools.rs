//! The `mcp` cases of tools: listing, schemas, calls, results, progress
//! and cancellation.

use editor_link::methods;

use super::*;
use crate::finding::{Finding, violation};

// ---- tools ----

pub(super) fn name_is_valid(name: &str) -> bool {
    (1..=128).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// Why `tool` is not a valid MCP tool definition, if it is not.
pub(super) fn tool_problem(tool: &Value) -> Option<String> {
    let name = tool["name"].as_str().unwrap_or("");
    if !name_is_valid(name) {
        return Some(format!("tool name {:?} is not 1-128 of [A-Za-z0-9_.-]", tool["name"]));
    }
    if tool["description"].as_str().is_none_or(|d| d.trim().is_empty()) {
        return Some(format!("{name}: no description"));
    }
    let schema = &tool["inputSchema"];
    if schema["type"] != "object" {
        return Some(format!("{name}: inputSchema must be a schema of type object, got {schema}"));
    }
    if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
        return Some(format!("{name}: inputSchema is not a valid JSON Schema: {e} (at {})", e.instance_path()));
    }
    for (param, property) in schema["properties"].as_object().into_iter().flatten() {
        if let Some(default) = property.get("default") {
            if let Err(e) = jsonschema::validate(property, default) {
                return Some(format!("{name}: the default of {param}, {default}, does not satisfy its schema: {e}"));
            }
        }
    }
    None
}

pub(super) fn schemas(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let tools = mcp.list_tools().await?;
        ensure!(!tools.is_empty(), "tools/list is empty with the Editor connected");
        let problems: Vec<String> = tools.iter().filter_map(tool_problem).collect();
        ensure!(problems.is_empty(), "{}", problems.join("; "));
        mcp.finish().await
    })
}

/// The Editor's own public tools, straight from `get-tool-details`.
pub(super) async fn editor_tool_names(s: &Session) -> Result<Vec<String>, Finding> {
    let mut link = s.link(Framing::Header).await?;
    let details = link.result(methods::GET_TOOL_DETAILS, json!({"IncludeDevelopmentOnly": false})).await?;
    let tools = details["Tools"].as_array().cloned().unwrap_or_default();
    Ok(tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect())
}

pub(super) fn editor_tools(s: Session) -> CheckFuture {
    Box::pin(async move {
        let editor = editor_tool_names(&s).await?;
        ensure!(!editor.is_empty(), "get-tool-details lists no tools");
        let mut mcp = initialized(&s).await?;
        let first: Vec<String> =
            mcp.list_tools().await?.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect();
        let missing: Vec<&String> = editor.iter().filter(|name| !first.contains(name)).collect();
        ensure!(missing.is_empty(), "tools/list leaves out the Editor's tools {missing:?}");
        let second: Vec<String> =
            mcp.list_tools().await?.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect();
        ensure!(first == second, "tools/list changed order between two calls: {first:?} then {second:?}");
        mcp.finish().await
    })
}

pub(super) fn invalid_cursor(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let answer = mcp.call_method("tools/list", json!({"cursor": "not-a-cursor-we-gave"})).await?;
        ensure!(error_code(&answer) == Some(-32602), "an invalid cursor must get -32602, got {answer}");
        mcp.finish().await
    })
}

pub(super) fn call_result(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let direct = link.result("get-logs", json!({"MaxCount": 3})).await?;
        let mut mcp = initialized(&s).await?;
        let result = mcp.call_ok("get-logs", json!({"MaxCount": 3})).await?;
        let structured = &result["structuredContent"];
        ensure!(structured.is_object(), "no structuredContent object in {result}");
        let keys = |v: &Value| v.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>()).unwrap_or_default();
        ensure!(
            keys(structured) == keys(&direct),
            "structuredContent must be Unity's result: its fields {:?}, Unity's {:?}",
            keys(structured),
            keys(&direct)
        );
        let text = result["content"][0]["text"].as_str().unwrap_or("");
        ensure!(result["content"][0]["type"] == "text", "the first content block must be text: {result}");
        let parsed: Value = serde_json::from_str(text)
            .map_err(|e| Finding::Violation(format!("the text block is not the result as JSON ({e}): {text:.200}")))?;
        ensure!(&parsed == structured, "the text block and structuredContent differ");
        mcp.finish().await
    })
}

pub(super) fn arguments_schema(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let tools = mcp.list_tools().await?;
        let mut problems = Vec::new();
        for reference in crate::reference::TOOLS.iter().filter(|t| !t.internal) {
            let Some(tool) = tools.iter().find(|t| t["name"] == reference.name) else {
                problems.push(format!("{} is not offered", reference.name));
                continue;
            };
            let arguments: Value = serde_json::from_str(reference.call_with)
                .map_err(|e| Finding::Harness(format!("{}: call_with {e}", reference.name)))?;
            if let Err(e) = jsonschema::validate(&tool["inputSchema"], &arguments) {
                problems.push(format!("{}: {arguments} is invalid against its inputSchema: {e}", reference.name));
                continue;
            }
            // Tools that change the Editor are left to their own cases.
            if [
                "compile",
                "run-tests",
                "clear-console",
                "execute-menu-item",
                "execute-dynamic-code",
                "control-play-mode",
            ]
            .contains(&reference.name)
            {
                continue;
            }
            let answer = mcp.call(reference.name, arguments).await?;
            if answer.get("result").is_none() || is_error_result(&answer) {
                problems.push(format!(
                    "{} failed: {}",
                    reference.name,
                    crate::wire_log::excerpt(answer.to_string().as_bytes())
                ));
            }
        }
        ensure!(problems.is_empty(), "{}", problems.join("; "));
        mcp.finish().await
    })
}

pub(super) fn unknown_tool(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let answer = mcp.call("no-such-tool", json!({})).await?;
        ensure!(error_code(&answer) == Some(-32602), "an unknown tool must be JSON-RPC error -32602, got {answer}");
        mcp.finish().await
    })
}

pub(super) fn invalid_arguments(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let answer = mcp.call("get-logs", json!({"LogType": "Nope"})).await?;
        ensure!(
            is_error_result(&answer),
            "invalid arguments must give a result with isError true (a model can read it), got {answer}"
        );
        ensure!(text_of(&answer).contains("LogType"), "the message must name the parameter: {answer}");
        mcp.finish().await
    })
}

pub(super) fn editor_failure(s: Session) -> CheckFuture {
    Box::pin(async move {
        let arguments = json!({"MenuItemPath": "Conformance/Does Not Exist"});
        let mut link = s.link(Framing::Header).await?;
        let direct = link.call("execute-menu-item", arguments.clone()).await?;
        if direct["result"]["Success"] == json!(true) {
            return Err(Finding::Harness(format!("the Editor ran a menu item that should not exist: {direct}")));
        }
        let mut mcp = initialized(&s).await?;
        let answer = mcp.call("execute-menu-item", arguments).await?;
        ensure!(is_error_result(&answer), "a call that failed in Unity must give isError true, got {answer}");
        ensure!(!text_of(&answer).trim().is_empty(), "the failure must say why: {answer}");
        mcp.finish().await
    })
}

pub(super) fn image(s: Session) -> CheckFuture {
    Box::pin(async move {
        use base64::Engine;
        let mut mcp = initialized(&s).await?;
        let result = mcp.call_ok("screenshot", json!({"ResolutionScale": 0.25, "IncludeImageData": true})).await?;
        let blocks = result["content"].as_array().cloned().unwrap_or_default();
        let Some(image) = blocks.iter().find(|b| b["type"] == "image") else {
            return violation(format!(
                "no image content block in {}",
                crate::wire_log::excerpt(result.to_string().as_bytes())
            ));
        };
        ensure!(image["mimeType"] == "image/png", "image mimeType {}", image["mimeType"]);
        let data = base64::engine::general_purpose::STANDARD
            .decode(image["data"].as_str().unwrap_or(""))
            .map_err(|e| Finding::Violation(format!("the image data is not base64: {e}")))?;
        ensure!(data.starts_with(b"\x89PNG\r\n\x1a\n"), "the image data is not a PNG");
        mcp.finish().await
    })
}

pub(super) fn concurrent_calls(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let (mut ids, mut expected) = (Vec::new(), Vec::new());
        for n in 0..32 {
            let (tool, args, field) = if n % 2 == 0 {
                ("get-logs", json!({"MaxCount": 1 + n % 5}), "TotalCount")
            } else {
                ("get-hierarchy", json!({"MaxDepth": 1}), "hierarchy")
            };
            ids.push(mcp.request("tools/call", json!({"name": tool, "arguments": args})).await?);
            expected.push((tool, field));
        }
        for (answer, (tool, field)) in mcp.responses(&ids).await?.iter().zip(expected) {
            ensure!(
                answer["result"]["structuredContent"].get(field).is_some(),
                "the answer to {} ({tool}) is not {tool}'s result: {}",
                answer["id"],
                crate::wire_log::excerpt(answer.to_string().as_bytes())
            );
        }
        mcp.finish().await
    })
}

// ---- progress and cancellation ----

pub(super) fn progress(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let id = mcp
            .request(
                "tools/call",
                json!({"name": "run-tests", "arguments": {"TestMode": "EditMode"}, "_meta": {"progressToken": "tok-1"}}),
            )
            .await?;
        let answer = mcp.response(&id).await?;
        ensure!(answer.get("result").is_some(), "run-tests: {answer}");
        let during: Vec<Value> =
            mcp.notifications().drain(..).filter(|n| n["method"] == "notifications/progress").collect();
        ensure!(
            !during.is_empty(),
            "no notifications/progress for a call that asked for it (run-tests reports progress)"
        );
        let mut last = f64::MIN;
        for n in &during {
            ensure!(n["params"]["progressToken"] == "tok-1", "progress with another token: {n}");
            let Some(p) = n["params"]["progress"].as_f64() else {
                return violation(format!("progress without a number: {n}"));
            };
            ensure!(p.total_cmp(&last).is_gt(), "progress must increase: {last} then {p}");
            last = p;
        }
        if let Some(late) = notification(&mut mcp, "notifications/progress", Duration::from_millis(500)).await? {
            return violation(format!("progress after the answer: {late}"));
        }
        mcp.finish().await
    })
}

pub(super) fn progress_only_when_asked(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let answer = mcp.call("run-tests", json!({"TestMode": "EditMode"})).await?;
        ensure!(answer.get("result").is_some(), "run-tests: {answer}");
        let _ = notification(&mut mcp, "notifications/progress", Duration::from_millis(300)).await?;
        let progress: Vec<&Value> =
            mcp.notifications().iter().filter(|n| n["method"] == "notifications/progress").collect();
        ensure!(progress.is_empty(), "progress sent for a call without a progressToken: {}", progress[0]);
        mcp.finish().await
    })
}

pub(super) fn cancellation(s: Session) -> CheckFuture {
    Box::pin(async move {
        for attempt in 1..=SLOW_CALL_ATTEMPTS {
            let mut mcp = initialized(&s).await?;
            let call = slow_call(&s, &mut mcp, "mcp.cancellation").await?;
            mcp.notify("notifications/cancelled", json!({"requestId": call.id, "reason": "the conformance suite"}))
                .await?;
            if !call.under_way() {
                s.note(format!(
                    "attempt {attempt}: the cancellation left the harness too late to prove anything; again"
                ));
                mcp.finish().await?;
                continue;
            }
            // Past the time the Editor would have answered.
            let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
            loop {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                match mcp.next_message(left).await? {
                    None => break,
                    Some(m) if m.get("method").is_some() => {}
                    Some(m) => return violation(format!("an answer after notifications/cancelled: {m}")),
                }
            }
            mcp.call_ok("get-logs", json!({"MaxCount": 1})).await?;
            return mcp.finish().await;
        }
        Err(harness_too_slow("send the cancellation"))
    })
}
