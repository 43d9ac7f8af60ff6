//! MCP through the bridge: the bridge under test is started in front of the
//! target Editor and driven over stdio by a raw JSON-lines client
//! ([`crate::bridge::McpProcess`]). Every case ends by checking that stdout
//! carried nothing but JSON-RPC messages.

mod answers;
mod blocked;
mod broken_assembly;
mod jsonrpc;
mod output_schema;
mod reloads;
pub mod scenarios;
mod side_by_side;
pub mod snapshots;
mod stateless;
mod tools;
mod which_editor;

use jsonrpc::*;
use reloads::*;
use tools::*;

use std::time::Duration;

use editor_link::{
    dialect::{PACKAGE, ULOOP_2_1_1},
    framing::Framing,
};
use serde_json::{Value, json};

use crate::{
    bridge::{McpProcess, stateless_meta},
    case::{Case, CheckFuture, Level, Needs, Requires, check},
    ensure,
    finding::{Finding, violation},
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
    Case {
        id: id.into(),
        requirement: requirement.into(),
        reference,
        level,
        needs,
        requires: requires(id),
        check: check(f),
    }
}

/// What an `mcp` case needs of the Editor behind the bridge: they test the
/// bridge, so most need only the core protocol; these call particular tools
/// or rely on an extension of the Editor's.
fn requires(id: &str) -> Requires {
    use crate::case::Extension;
    match id {
        // Every tool of the package's catalogue, with its parameters.
        "mcp.tools-call.arguments-schema" => Requires::catalogue(&PACKAGE),
        // get-logs' LogType enum; get-hierarchy's result.
        "mcp.tools-call.invalid-arguments" => Requires::catalogue_tool("get-logs"),
        "mcp.tools-call.concurrent" => Requires::catalogue_tool("get-hierarchy"),
        "mcp.tools-call.editor-failure" => Requires::tools(&["execute-menu-item"]),
        // From ImageDataBase64 (image-data) or from the file at ImagePath.
        "mcp.tools-call.image" => Requires::tools(&["screenshot"]),
        "mcp.compile.broken-assembly-fixed" => Requires::tools(&["compile", "get-logs"]),
        "mcp.progress" => Requires::extension(Extension::Progress).and_tool("run-tests"),
        "mcp.run-tests.playmode-across-reload" | "mcp.run-tests.playmode-reload-off" => Requires::tools(&["run-tests"]),
        // A tool disabled and enabled again.
        "mcp.list-changed" | "mcp.stateless.subscription" => Requires::tools(&["unity-search"]),
        // Its sleep, off the main thread, is what the quick call must not wait behind.
        "mcp.tools-call.beside-a-slow-call" | "mcp.cancellation.frees-the-editor" => {
            Requires::tools(&["debug-sleep", "get-logs"])
        }
        // uLoopMCP's compile parameter (its own server waits the same way).
        "mcp.uloop-2.1.1.wait-for-domain-reload" => Requires::catalogue(&ULOOP_2_1_1).and_tool("compile"),
        _ => Requires::CORE,
    }
}

/// Every `mcp.*` case: the bridge's MCP, its answers, the fault scenarios
/// and the output snapshots.
pub fn cases() -> Vec<Case> {
    let mut cases = protocol_cases();
    cases.extend(answers::cases());
    cases.extend(blocked::cases());
    cases.extend(which_editor::cases());
    cases.extend(output_schema::cases());
    cases.extend(scenarios::cases());
    cases.extend(snapshots::cases());
    cases
}

/// The bridge's MCP: lifecycle, transport, JSON-RPC, tools, reloads.
fn protocol_cases() -> Vec<Case> {
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
            "A server/discover probe (MCP 2026-07-28) gets a DiscoverResult naming 2026-07-28 and the handshake revisions, with resultType, ttlMs, cacheScope and the tools capability; initialize still works after it.",
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
            Control("a call slowed by a fault"),
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
            "mcp.tools-call.beside-a-slow-call",
            Must,
            Link,
            TOOLS,
            "A call made while another runs (a 20 s debug-sleep) is answered first: the bridge never holds a call behind another, whether the Editor answers requests on one connection side by side or in order.",
            side_by_side::beside_a_slow_call,
        ),
        case(
            "mcp.cancellation.frees-the-editor",
            Must,
            Link,
            UTILITIES,
            "Ten 20 s calls cancelled (notifications/cancelled) hold nothing: none is answered, and a quick call made after them is answered before a 10 s call made before it.",
            side_by_side::cancellation_frees_the_editor,
        ),
        case(
            "mcp.uloop-2.1.1.wait-for-domain-reload",
            Must,
            Project,
            TOOLS,
            "A compile with WaitForDomainReload that reloads the Editor (a script changed) is answered with its result once the reload is over: neither Temp/compiling.lock nor Temp/domainreload.lock exists, and the Editor is ready (uLoopMCP's own server waits the same way).",
            compile_waits_for_reload,
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
            Control("a call slowed by a fault"),
            UTILITIES,
            "After notifications/cancelled the bridge sends no answer for that request, and keeps serving.",
            cancellation,
        ),
        case(
            "mcp.list-changed",
            Must,
            Control("tools removed at a reload (a fault)"),
            TOOLS,
            "When the Editor's tools change across a reload the bridge sends notifications/tools/list_changed, and tools/list shows the new set.",
            list_changed,
        ),
        case(
            "mcp.list-changed-after-initialized",
            Must,
            Control("tools removed at a reload (a fault)"),
            LIFECYCLE,
            "notifications/tools/list_changed is never sent before notifications/initialized.",
            list_changed_after_initialized,
        ),
        case(
            "mcp.reload.call-waits",
            Must,
            Reload,
            "docs/editor-link-protocol.md §5; mcp-stdio.md",
            "A call made while the Editor reloads waits for it and succeeds.",
            reload_call_waits,
        ),
        case(
            "mcp.reload.in-flight",
            Must,
            Control("calls slowed by a fault"),
            "docs/editor-link-protocol.md §5; mcp-stdio.md",
            "Read-only calls in flight when the Editor reloads are each answered once, successfully.",
            reload_in_flight,
        ),
        case(
            "mcp.compile.broken-assembly-fixed",
            Must,
            Project,
            TOOLS,
            "An agent breaks the project's second assembly (a script with an #error in Assets/Gameplay, FixtureProject.Gameplay) and fixes it: compile reports the error naming the script, then, with the script removed, no error; the Editor serves on.",
            broken_assembly::broken_and_fixed,
        ),
        case(
            "mcp.run-tests.playmode-across-reload",
            Must,
            Project,
            "docs/editor-link-protocol.md §5; Unity Test Framework (RegisterCallbacks across domain reloads)",
            "A PlayMode run-tests with the project's domain reload on (Unity's default) is answered with the run's counts at the first call, whether the Editor takes the run up after the reload of entering play mode (resumed) or turns the reload off for the run.",
            playmode_across_reload,
        ),
        case(
            "mcp.run-tests.playmode-reload-off",
            Must,
            Control("the Editor's count of domain reloads"),
            "docs/editor-link-protocol.md §5; Unity's Enter Play Mode settings",
            "With the project's domain reload off for entering play mode, a PlayMode run-tests is answered with the run's counts on the connection that asked, and nothing reloads.",
            playmode_reload_off,
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
    .into_iter()
    .chain(stateless::cases())
    .collect()
}

// ---- helpers ----

/// A bridge, initialized.
async fn initialized(s: &Session) -> Result<McpProcess, Finding> {
    let mut mcp = s.mcp().await?;
    mcp.initialize().await?;
    Ok(mcp)
}

/// A bridge offering the Editor's internal tools too, initialized.
async fn initialized_with_internal_tools(s: &Session) -> Result<McpProcess, Finding> {
    let mut mcp = s.mcp_with_internal_tools().await?;
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

/// How long the Editor takes over a [`slow_call`].
const SLOW_CALL: Duration = Duration::from_secs(2);

/// A `get-logs` call under way, which the Editor is made to answer only
/// after [`SLOW_CALL`].
struct SlowCall {
    id: Value,
    sent: tokio::time::Instant,
}

impl SlowCall {
    /// Whether what the harness sends now surely reaches the bridge while
    /// the call still runs. On a loaded machine the harness itself can be
    /// held up for the call's whole 2 s; what it sends then proves nothing
    /// (a ping answered after the call, a cancellation after the answer),
    /// so the case makes its call again rather than judge the bridge by it.
    fn under_way(&self) -> bool {
        self.sent.elapsed() + Duration::from_millis(700) < SLOW_CALL
    }
}

/// How often a case sends its [`SlowCall`] before it gives up on a harness
/// too slow to act while the call runs.
const SLOW_CALL_ATTEMPTS: u32 = 3;

/// A [`SlowCall`] (a fault rule named `rule`, through the control API),
/// given the time to reach the Editor.
async fn slow_call(s: &Session, mcp: &mut McpProcess, rule: &str) -> Result<SlowCall, Finding> {
    let ms = SLOW_CALL.as_millis() as u64;
    add_fault(
        s,
        json!({"name": rule, "match": {"method": "get-logs"}, "fault": {"kind": "slowTool", "ms": ms}, "times": 1}),
    )
    .await?;
    let sent = tokio::time::Instant::now();
    let id = mcp.request("tools/call", json!({"name": "get-logs", "arguments": {"MaxCount": 1}})).await?;
    // Long enough for the call to reach the Editor.
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(SlowCall { id, sent })
}

/// The finding when every attempt of a [`SlowCall`] case came too late.
fn harness_too_slow(what: &str) -> Finding {
    Finding::Harness(format!(
        "{SLOW_CALL_ATTEMPTS} times the harness was held up so long that it could not {what} while the {} s call ran (a badly loaded machine)",
        SLOW_CALL.as_secs()
    ))
}

/// Waits for a notification with `method` (already received ones count).
async fn notification(mcp: &mut McpProcess, method: &str, within: Duration) -> Result<Option<Value>, Finding> {
    if let Some(n) = mcp.notifications().iter().find(|n| n["method"] == method) {
        return Ok(Some(n.clone()));
    }
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        match mcp.next_message(left).await? {
            None => return Ok(None),
            Some(m) if m["method"] == method => return Ok(Some(m)),
            Some(m) if m.get("method").is_some() => mcp.notifications().push(m),
            Some(m) => return violation(format!("waiting for {method}, an answer nobody was waiting for came: {m}")),
        }
    }
}
