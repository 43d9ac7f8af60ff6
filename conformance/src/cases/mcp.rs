//! MCP through the bridge: the bridge under test is started in front of the
//! target Editor and driven over stdio by a raw JSON-lines client
//! ([`crate::bridge::McpProcess`]). Every case ends by checking that stdout
//! carried nothing but JSON-RPC messages.

use std::time::Duration;

use editor_link::framing::Framing;
use serde_json::{Value, json};

use crate::{
    bridge::McpProcess,
    case::{Case, CheckFuture, Finding, Level, Needs, check, violation},
    ensure,
    target::Session,
};

/// The MCP versions a bridge must accept as asked (mcp-stdio.md, Lifecycle).
pub const MCP_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

const LIFECYCLE: &str = "MCP 2025-11-25 §basic/lifecycle; mcp-stdio.md";
const TRANSPORT: &str = "MCP 2025-11-25 §basic/transports (stdio); mcp-stdio.md";
const JSONRPC: &str = "MCP 2025-11-25 §basic (JSON-RPC messages); mcp-stdio.md";
const TOOLS: &str = "MCP 2025-11-25 §server/tools; mcp-stdio.md";
const UTILITIES: &str = "MCP 2025-11-25 §basic/utilities; mcp-stdio.md";

fn case(
    id: &'static str,
    level: Level,
    needs: Needs,
    reference: &'static str,
    requirement: &'static str,
    f: fn(Session) -> CheckFuture,
) -> Case {
    Case { id: id.into(), requirement: requirement.into(), reference, level, needs, check: check(f) }
}

pub fn cases() -> Vec<Case> {
    use Level::*;
    use Needs::*;
    vec![
        case(
            "mcp.initialize.version-echo",
            Must,
            Link,
            LIFECYCLE,
            "initialize is answered with the client's protocolVersion when the bridge supports it (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25).",
            version_echo,
        ),
        case(
            "mcp.initialize.unknown-version",
            Must,
            Link,
            LIFECYCLE,
            "An unsupported protocolVersion is answered with a version the bridge supports, never an error.",
            unknown_version,
        ),
        case(
            "mcp.initialize.capabilities",
            Must,
            Link,
            LIFECYCLE,
            "The initialize result names the server (serverInfo name and version) and declares tools with listChanged.",
            capabilities,
        ),
        case(
            "mcp.initialize.server-discover",
            Should,
            Link,
            LIFECYCLE,
            "A server/discover probe gets an error promptly (-32022 with the supported versions in data), and initialize works after it.",
            server_discover,
        ),
        case(
            "mcp.initialize.notifications-before",
            Must,
            Link,
            LIFECYCLE,
            "Notifications before initialize are ignored, never fatal.",
            notifications_before_initialize,
        ),
        case(
            "mcp.stdout-only-mcp",
            Must,
            Link,
            TRANSPORT,
            "Every line the bridge writes on stdout is one JSON-RPC message, through a session with successes, failures and bad input.",
            stdout_only_mcp,
        ),
        case(
            "mcp.stdin-eof-exits",
            Must,
            Link,
            TRANSPORT,
            "When stdin closes the bridge exits, with status 0, within 5 s.",
            stdin_eof_exits,
        ),
        case(
            "mcp.parse-error",
            Must,
            Link,
            JSONRPC,
            "A line that is not JSON gets -32700 with id null, and the bridge keeps serving.",
            parse_error,
        ),
        case(
            "mcp.batch-rejected",
            Must,
            Link,
            JSONRPC,
            "A JSON array (a batch) gets -32600, and the bridge keeps serving.",
            batch_rejected,
        ),
        case(
            "mcp.id-echo",
            Must,
            Link,
            JSONRPC,
            "Request ids are echoed exactly: integers as integers, strings as strings.",
            id_echo,
        ),
        case("mcp.ping", Must, Link, UTILITIES, "ping is answered {} before initialize and after it.", ping),
        case(
            "mcp.ping-during-call",
            Must,
            Control,
            UTILITIES,
            "ping is answered while a tool call is still running (the call answered later).",
            ping_during_call,
        ),
        case(
            "mcp.tools-list.schemas",
            Must,
            Link,
            TOOLS,
            "Every tool has a valid name, a description and an inputSchema that is a valid JSON Schema (2020-12) of type object whose defaults satisfy their own schemas.",
            schemas,
        ),
        case(
            "mcp.tools-list.editor-tools",
            Must,
            Link,
            TOOLS,
            "tools/list offers every public tool the Editor lists in get-tool-details, in the same order each time it is asked.",
            editor_tools,
        ),
        case(
            "mcp.tools-list.invalid-cursor",
            Must,
            Link,
            TOOLS,
            "tools/list with a cursor the bridge never gave gets -32602.",
            invalid_cursor,
        ),
        case(
            "mcp.tools-call.result",
            Must,
            Link,
            TOOLS,
            "A tool's result is structuredContent (Unity's result object) and a text block holding it as JSON.",
            call_result,
        ),
        case(
            "mcp.tools-call.arguments-schema",
            Must,
            Link,
            TOOLS,
            "The arguments the suite calls each tool with are valid against the tool's advertised inputSchema, and each call succeeds.",
            arguments_schema,
        ),
        case(
            "mcp.tools-call.unknown-tool",
            Must,
            Link,
            TOOLS,
            "A call to a tool that does not exist is a JSON-RPC error -32602.",
            unknown_tool,
        ),
        case(
            "mcp.tools-call.invalid-arguments",
            Must,
            Link,
            TOOLS,
            "Invalid arguments (an enum name that does not exist) give a result with isError true and a message naming the parameter.",
            invalid_arguments,
        ),
        case(
            "mcp.tools-call.editor-failure",
            Must,
            Link,
            TOOLS,
            "A call that fails in Unity (Success false: a menu item that does not exist) gives a result with isError true and Unity's message.",
            editor_failure,
        ),
        case(
            "mcp.tools-call.image",
            Must,
            Link,
            TOOLS,
            "A screenshot comes back as MCP image content: type image, mimeType image/png, base64 PNG data.",
            image,
        ),
        case(
            "mcp.tools-call.concurrent",
            Must,
            Link,
            TOOLS,
            "32 calls in flight at once are each answered exactly once, with their own id and their own tool's result.",
            concurrent_calls,
        ),
        case(
            "mcp.progress",
            Must,
            Link,
            UTILITIES,
            "A call with _meta.progressToken gets notifications/progress with that token and increasing progress, none after the answer.",
            progress,
        ),
        case(
            "mcp.progress-only-when-asked",
            Must,
            Link,
            UTILITIES,
            "A call without a progressToken gets no notifications/progress.",
            progress_only_when_asked,
        ),
        case(
            "mcp.cancellation",
            Must,
            Control,
            UTILITIES,
            "After notifications/cancelled the bridge sends no answer for that request, and keeps serving.",
            cancellation,
        ),
        case(
            "mcp.list-changed",
            Must,
            Control,
            TOOLS,
            "When the Editor's tools change across a reload the bridge sends notifications/tools/list_changed, and tools/list shows the new set.",
            list_changed,
        ),
        case(
            "mcp.list-changed-after-initialized",
            Must,
            Control,
            LIFECYCLE,
            "notifications/tools/list_changed is never sent before notifications/initialized.",
            list_changed_after_initialized,
        ),
        case(
            "mcp.reload.call-waits",
            Must,
            Control,
            "docs/editor-link-protocol.md §5; mcp-stdio.md",
            "A call made while the Editor reloads waits for it and succeeds.",
            reload_call_waits,
        ),
        case(
            "mcp.reload.in-flight",
            Must,
            Control,
            "docs/editor-link-protocol.md §5; mcp-stdio.md",
            "Read-only calls in flight when the Editor reloads are each answered once, successfully.",
            reload_in_flight,
        ),
        case(
            "mcp.probe-start",
            Should,
            Link,
            LIFECYCLE,
            "A bridge started and stopped before initialize (a client's probe) takes nothing from the Editor: the next bridge serves at once.",
            probe_start,
        ),
    ]
}

// ---- helpers ----

/// A bridge, initialized.
async fn initialized(s: &Session) -> Result<McpProcess, Finding> {
    let mut mcp = s.mcp().await?;
    mcp.initialize().await?;
    Ok(mcp)
}

fn error_code(answer: &Value) -> Option<i64> {
    answer["error"]["code"].as_i64()
}

fn is_error_result(answer: &Value) -> bool {
    answer["result"]["isError"] == json!(true)
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"]
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

fn control_failed(e: impl std::fmt::Display) -> Finding {
    Finding::Harness(format!("the control API: {e}"))
}

/// Adds a fault rule through the control API, replacing one of the same
/// name (left by an earlier run against the same Editor).
async fn add_fault(s: &Session, rule: Value) -> Result<(), Finding> {
    let control = s.control()?;
    if let Some(name) = rule["name"].as_str() {
        let _ = control.delete(&format!("/faults/{name}")).await;
    }
    control.post("/faults", rule).await.map_err(control_failed)?;
    Ok(())
}

/// A `get-logs` call the Editor is made to answer only after 2 s (a fault
/// rule named `rule`, through the control API), under way; its id.
async fn slow_call(s: &Session, mcp: &mut McpProcess, rule: &str) -> Result<Value, Finding> {
    add_fault(
        s,
        json!({"name": rule, "match": {"method": "get-logs"}, "fault": {"kind": "slowTool", "ms": 2000}, "times": 1}),
    )
    .await?;
    let id = mcp.request("tools/call", json!({"name": "get-logs", "arguments": {"MaxCount": 1}})).await?;
    // Long enough for the call to reach the Editor.
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(id)
}

/// Waits for a notification with `method` (already received ones count).
async fn notification(mcp: &mut McpProcess, method: &str, within: Duration) -> Result<Option<Value>, Finding> {
    if let Some(n) = mcp.notifications.iter().find(|n| n["method"] == method) {
        return Ok(Some(n.clone()));
    }
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match mcp.next_message(left).await? {
            None => return Ok(None),
            Some(m) if m["method"] == method => return Ok(Some(m)),
            Some(m) if m.get("method").is_some() => mcp.notifications.push(m),
            Some(m) => return violation(format!("an answer nobody asked for: {m}")),
        }
    }
}

// ---- lifecycle ----

fn version_echo(s: Session) -> CheckFuture {
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

fn unknown_version(s: Session) -> CheckFuture {
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

fn capabilities(s: Session) -> CheckFuture {
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

fn server_discover(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        let id = mcp.request("server/discover", json!({})).await?;
        let answer = mcp.response_within(&id, Duration::from_secs(5)).await?;
        ensure!(error_code(&answer) == Some(-32022), "server/discover: expected error -32022, got {answer}");
        ensure!(
            answer["error"]["data"].to_string().contains("2025-11-25"),
            "the error's data must name the supported versions: {answer}"
        );
        mcp.initialize().await?;
        mcp.finish().await
    })
}

fn notifications_before_initialize(s: Session) -> CheckFuture {
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

fn stdout_only_mcp(s: Session) -> CheckFuture {
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
        mcp.call_ok("get-logs", json!({"MaxCount": 5})).await?;
        mcp.call("get-logs", json!({"LogType": "Nope"})).await?;
        mcp.call("no-such-tool", json!({})).await?;
        mcp.call("execute-menu-item", json!({"MenuItemPath": "Conformance/Does Not Exist"})).await?;
        mcp.call("run-tests", json!({"TestMode": "EditMode"})).await?;
        mcp.call_ok("get-hierarchy", json!({})).await?;
        mcp.finish().await
    })
}

fn stdin_eof_exits(s: Session) -> CheckFuture {
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

fn probe_start(s: Session) -> CheckFuture {
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

fn parse_error(s: Session) -> CheckFuture {
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

fn batch_rejected(s: Session) -> CheckFuture {
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

fn id_echo(s: Session) -> CheckFuture {
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

fn kind(value: &Value) -> &'static str {
    if value.is_string() { "string" } else { "number" }
}

fn ping(s: Session) -> CheckFuture {
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

fn ping_during_call(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let call = slow_call(&s, &mut mcp, "mcp.ping-during-call").await?;
        let ping = mcp.request("ping", json!({})).await?;
        let first = match mcp.next_message(Duration::from_secs(10)).await? {
            Some(m) => m,
            None => return violation("neither the call nor the ping was answered within 10 s"),
        };
        ensure!(first["id"] == ping, "the ping must be answered while the call runs; first came {first}");
        ensure!(first["result"] == json!({}), "ping: {first}");
        let answer = mcp.response(&call).await?;
        ensure!(!is_error_result(&answer) && answer.get("result").is_some(), "the slow call: {answer}");
        mcp.finish().await
    })
}

// ---- tools ----

fn name_is_valid(name: &str) -> bool {
    (1..=128).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// Why `tool` is not a valid MCP tool definition, if it is not.
fn tool_problem(tool: &Value) -> Option<String> {
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

fn schemas(s: Session) -> CheckFuture {
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
async fn editor_tool_names(s: &Session) -> Result<Vec<String>, Finding> {
    let mut link = s.link(Framing::Header).await?;
    let details = link.result("get-tool-details", json!({"IncludeDevelopmentOnly": false})).await?;
    let tools = details["Tools"].as_array().cloned().unwrap_or_default();
    Ok(tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect())
}

fn editor_tools(s: Session) -> CheckFuture {
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

fn invalid_cursor(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let answer = mcp.call_method("tools/list", json!({"cursor": "not-a-cursor-we-gave"})).await?;
        ensure!(error_code(&answer) == Some(-32602), "an invalid cursor must get -32602, got {answer}");
        mcp.finish().await
    })
}

fn call_result(s: Session) -> CheckFuture {
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

fn arguments_schema(s: Session) -> CheckFuture {
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
                    crate::target::excerpt(answer.to_string().as_bytes())
                ));
            }
        }
        ensure!(problems.is_empty(), "{}", problems.join("; "));
        mcp.finish().await
    })
}

fn unknown_tool(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let answer = mcp.call("no-such-tool", json!({})).await?;
        ensure!(error_code(&answer) == Some(-32602), "an unknown tool must be JSON-RPC error -32602, got {answer}");
        mcp.finish().await
    })
}

fn invalid_arguments(s: Session) -> CheckFuture {
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

fn editor_failure(s: Session) -> CheckFuture {
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

fn image(s: Session) -> CheckFuture {
    Box::pin(async move {
        use base64::Engine;
        let mut mcp = initialized(&s).await?;
        let result = mcp.call_ok("screenshot", json!({"ResolutionScale": 0.25, "IncludeImageData": true})).await?;
        let blocks = result["content"].as_array().cloned().unwrap_or_default();
        let Some(image) = blocks.iter().find(|b| b["type"] == "image") else {
            return violation(format!(
                "no image content block in {}",
                crate::target::excerpt(result.to_string().as_bytes())
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

fn concurrent_calls(s: Session) -> CheckFuture {
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
                crate::target::excerpt(answer.to_string().as_bytes())
            );
        }
        mcp.finish().await
    })
}

// ---- progress and cancellation ----

fn progress(s: Session) -> CheckFuture {
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
            mcp.notifications.drain(..).filter(|n| n["method"] == "notifications/progress").collect();
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

fn progress_only_when_asked(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let answer = mcp.call("run-tests", json!({"TestMode": "EditMode"})).await?;
        ensure!(answer.get("result").is_some(), "run-tests: {answer}");
        let _ = notification(&mut mcp, "notifications/progress", Duration::from_millis(300)).await?;
        let progress: Vec<&Value> =
            mcp.notifications.iter().filter(|n| n["method"] == "notifications/progress").collect();
        ensure!(progress.is_empty(), "progress sent for a call without a progressToken: {}", progress[0]);
        mcp.finish().await
    })
}

fn cancellation(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let id = slow_call(&s, &mut mcp, "mcp.cancellation").await?;
        mcp.notify("notifications/cancelled", json!({"requestId": id, "reason": "the conformance suite"})).await?;
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
        mcp.finish().await
    })
}

// ---- reloads ----

/// Removes `tools` at the next reload, then reloads (and waits for it).
async fn reload_without(s: &Session, tools: &[&str]) -> Result<(), Finding> {
    add_fault(
        s,
        json!({"name": "tools-removed", "on": "reload", "fault": {"kind": "toolsChange", "remove": tools}, "times": 1}),
    )
    .await?;
    s.control()?.reload(200, false).await.map_err(control_failed)?;
    Ok(())
}

/// Gives the Editor its tools back (the next cases share a remote Editor).
async fn restore_tools(s: &Session) -> Result<(), Finding> {
    s.control()?.post("/reset", json!({})).await.map_err(control_failed)?;
    Ok(())
}

fn list_changed(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let before = mcp.list_tools().await?;
        ensure!(before.iter().any(|t| t["name"] == "unity-search"), "unity-search is not offered to begin with");
        reload_without(&s, &["unity-search"]).await?;
        if notification(&mut mcp, "notifications/tools/list_changed", Duration::from_secs(10)).await?.is_none() {
            return violation("no notifications/tools/list_changed within 10 s of a reload that removed unity-search");
        }
        let after = mcp.list_tools().await?;
        restore_tools(&s).await?;
        ensure!(
            !after.iter().any(|t| t["name"] == "unity-search"),
            "tools/list still offers unity-search after list_changed"
        );
        mcp.finish().await
    })
}

fn list_changed_after_initialized(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = s.mcp().await?;
        let answer = mcp
            .call_method(
                "initialize",
                json!({"protocolVersion": crate::bridge::CLIENT_VERSION, "capabilities": {},
                       "clientInfo": {"name": "unity-conformance", "version": "1"}}),
            )
            .await?;
        ensure!(answer.get("result").is_some(), "initialize: {answer}");
        // Connected, not yet initialized: make the tools change.
        let _ = mcp.call_method("tools/list", json!({})).await?;
        reload_without(&s, &["unity-search"]).await?;
        let early = notification(&mut mcp, "notifications/tools/list_changed", Duration::from_secs(2)).await;
        restore_tools(&s).await?;
        if let Some(early) = early? {
            return violation(format!("list_changed before notifications/initialized: {early}"));
        }
        mcp.finish().await
    })
}

fn reload_call_waits(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        mcp.call_ok("get-logs", json!({"MaxCount": 1})).await?;
        s.control()?.post("/reload", json!({"downtimeMs": 1000})).await.map_err(control_failed)?;
        let result = mcp.call_ok("get-logs", json!({"MaxCount": 1})).await?;
        ensure!(result["structuredContent"].get("TotalCount").is_some(), "not get-logs' result: {result}");
        mcp.finish().await
    })
}

fn reload_in_flight(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        mcp.call_ok("get-logs", json!({"MaxCount": 1})).await?;
        add_fault(
            &s,
            json!({"name": "mcp.reload.in-flight", "match": {"method": "get-hierarchy"},
                   "fault": {"kind": "slowTool", "ms": 1000}, "times": 8}),
        )
        .await?;
        let control = s.control()?;
        let mut ids = Vec::new();
        for _ in 0..8 {
            ids.push(mcp.request("tools/call", json!({"name": "get-hierarchy", "arguments": {"MaxDepth": 1}})).await?);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        control.post("/reload", json!({"downtimeMs": 300})).await.map_err(control_failed)?;
        for answer in mcp.responses(&ids).await? {
            ensure!(
                answer.get("result").is_some() && !is_error_result(&answer),
                "a read-only call in flight at the reload must be answered with its result (resent), got {answer}"
            );
        }
        // Exactly once: nothing more for these ids.
        if let Some(extra) = mcp.next_message(Duration::from_millis(500)).await?.filter(|m| m.get("method").is_none()) {
            return violation(format!("a second answer: {extra}"));
        }
        mcp.finish().await
    })
}
