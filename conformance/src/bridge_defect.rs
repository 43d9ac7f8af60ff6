//! A deliberately broken bridge, so that every `mcp` case can be shown
//! failing: `unity-conformance bridge --defect NAME` runs the embedded bridge
//! as a child and relays its stdio line by line, breaking one MCP rule on
//! the way (what `fake-unity --defect` is for the Editor side).

use std::{
    collections::HashMap,
    ffi::OsString,
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    process::Command,
    sync::mpsc,
};

/// One MCP rule broken on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum BridgeDefect {
    /// Prints a banner on stdout before serving.
    Banner,
    /// Answers every `initialize` with protocol version 2024-11-05.
    PinsVersion,
    /// Answers `initialize` with an error when the version is not one it knows.
    RejectsUnknownVersion,
    /// Does not declare `tools.listChanged`.
    NoListChangedCapability,
    /// Exits at a notification that comes before `initialize`.
    DiesOnEarlyNotification,
    /// Echoes integer ids as strings.
    IdsAsStrings,
    /// Exits at a line that is not JSON.
    DiesOnBadJson,
    /// Never answers a batch.
    IgnoresBatches,
    /// Never answers `ping`.
    IgnoresPing,
    /// Never answers `server/discover`.
    IgnoresDiscover,
    /// Advertises a tool whose input schema is not a valid JSON Schema.
    InvalidSchema,
    /// Leaves the last of the Editor's tools out of `tools/list`.
    HidesATool,
    /// Answers `tools/list` with an invalid cursor as if it were the end.
    AcceptsAnyCursor,
    /// Marks every parameter of every tool required.
    RequiresEveryParameter,
    /// Changes what Unity answered: a suffix on every description, text
    /// and error message.
    AltersResults,
    /// Leaves `structuredContent` out of tool results.
    NoStructuredContent,
    /// Leaves `isError` out of failed tool results.
    NoIsError,
    /// Answers an unknown tool with a tool result, not a JSON-RPC error.
    UnknownToolAsResult,
    /// Sends images as text.
    ImagesAsText,
    /// Never forwards `notifications/tools/list_changed`.
    NoListChanged,
    /// Sends `notifications/tools/list_changed` before `initialized`.
    EarlyListChanged,
    /// Never sends `notifications/progress`.
    NoProgress,
    /// Sends `notifications/progress` for calls that did not ask for it.
    ProgressUnasked,
    /// Answers a request the client cancelled.
    AnswersCancelled,
    /// Loses the answer of every other tool call (the first, third …).
    LosesAnswers,
    /// Answers every tool call with an error ("Unity is not reachable")
    /// instead of its result, as a bridge that gives up instead of waiting
    /// through a reload or a fault would.
    GivesUp,
    /// Takes the Editor for itself from the start: a second bridge for the
    /// same project refuses to run while the first lives, initialized or not.
    TakesTheEditor,
    /// Keeps running after stdin closes.
    IgnoresEof,
    /// Sends a tool call again when its error says it may have run (as a
    /// bridge that retries after an Editor crash would: it runs twice).
    ResendsWhatMayHaveRun,
    /// Says a call did not run when the bridge said it may have run.
    SaysDidNotRun,
    /// Answers every failed tool call 30 s late (a bridge that waits for
    /// something besides the call's deadline).
    MissesDeadlines,
    /// Runs a second request with the id of one in flight, and answers only
    /// one of them.
    RunsDuplicateIds,
    /// Answers methods of capabilities it does not declare (resources,
    /// prompts, completions, logging) with empty results, and an unknown
    /// method with -32602.
    AnswersUndeclaredMethods,
    /// Fails with a JSON-RPC error (a panicked task) on a TimeoutSeconds of
    /// 1e18 or more.
    FailsOnHugeTimeout,
    /// Serves only after `initialize`: a 2026-07-28 request before it gets
    /// -32600 "before initialize" (the bridge before it spoke 2026-07-28).
    RequiresHandshake,
    /// Says `"requested": null` in its -32022 refusal.
    NullRequested,
    /// Answers the methods 2026-07-28 removed (ping, logging/setLevel) in
    /// that revision as if they were still there.
    AnswersRemovedMethods,
    /// Leaves `resultType` out of its results.
    NoResultType,
    /// Answers `subscriptions/listen` with -32601 (the bridge before it
    /// served 2026-07-28's list changes).
    NoSubscriptions,
    /// Still sends `notifications/tools/list_changed` on a subscription the
    /// client cancelled.
    TellsCancelledSubscriptions,
    /// Sends one tool call at a time to the Editor: a call waits until the
    /// one before it is answered (a bridge with one connection to an Editor
    /// that answers in order).
    OneCallAtATime,
    /// Never lets go of a call the client cancelled: it keeps waiting for
    /// the Editor's answer, and relays it.
    IgnoresCancellation,
    /// Answers a compile before the domain reload it causes is over (as if
    /// the client had not asked for `WaitForDomainReload`).
    NoReloadWait,
    /// Says nothing of what holds the Editor's main thread (a bridge that
    /// does not ask `get-editor-state`): progress and answers cut before it.
    HidesWhatBlocks,
    /// Declares every output member a string in tools' `outputSchema`s.
    WrongOutputSchema,
}

impl BridgeDefect {
    pub fn all() -> Vec<BridgeDefect> {
        <BridgeDefect as clap::ValueEnum>::value_variants().to_vec()
    }
}

impl std::fmt::Display for BridgeDefect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = clap::ValueEnum::to_possible_value(self).ok_or(std::fmt::Error)?;
        f.write_str(value.get_name())
    }
}

/// What the relay knows of the requests in flight.
#[derive(Debug, Default)]
struct Requests {
    /// Id (as JSON text) → the request.
    pending: HashMap<String, Value>,
    /// Ids of requests the relay sent itself → the client's id they stand for.
    standing_for: HashMap<String, Value>,
    /// Ids of requests the relay sent whose answers nobody gets.
    hidden: std::collections::HashSet<String>,
    next: u64,
    /// `OneCallAtATime`: tool calls sent to the bridge and not answered.
    calls_out: usize,
    /// `OneCallAtATime`: tool calls held until those are answered.
    held: std::collections::VecDeque<String>,
}

type Pending = Arc<Mutex<Requests>>;

/// How late `MissesDeadlines` answers: as a bridge that waits for a
/// reconnect or a retry would (5 to 60 s), and more than any stall a
/// deadline check forgives (`stall_meter::MOST_ALLOWED`).
pub const MISSED_BY: Duration = Duration::from_secs(30);

/// Methods of capabilities the bridge does not declare, and what a bridge
/// that serves them anyway answers.
fn undeclared_answer(method: &str) -> Option<Value> {
    Some(match method {
        "resources/list" => json!({"resources": []}),
        "resources/templates/list" => json!({"resourceTemplates": []}),
        "prompts/list" => json!({"prompts": []}),
        "completion/complete" => json!({"completion": {"values": []}}),
        "logging/setLevel" => json!({}),
        _ => return None,
    })
}

/// `TakesTheEditor`: a lock file per Editor (working folder and port), held
/// while this bridge lives; a lock whose holder died is taken over.
struct EditorLock(std::path::PathBuf);

impl EditorLock {
    fn take() -> Result<EditorLock, String> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        std::env::current_dir().ok().hash(&mut hasher);
        std::env::var("UNITY_TCP_PORT").ok().hash(&mut hasher);
        let path = std::env::temp_dir().join(format!("unity-conformance-editor-{:016x}.lock", hasher.finish()));
        if let Ok(holder) = std::fs::read_to_string(&path) {
            let alive =
                holder.trim().parse::<u32>().is_ok_and(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists());
            if alive {
                return Err(format!("another bridge (pid {}) holds this Editor", holder.trim()));
            }
        }
        std::fs::write(&path, std::process::id().to_string()).map_err(|e| format!("cannot take the Editor: {e}"))?;
        Ok(EditorLock(path))
    }
}

impl Drop for EditorLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

const KNOWN_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// Relays stdio to the embedded bridge (`program bridge -- args`) with
/// `defect`; returns the exit status.
pub async fn relay(defect: BridgeDefect, program: std::path::PathBuf, args: Vec<OsString>) -> i32 {
    let mut child = match Command::new(program)
        .arg("bridge")
        .arg("--")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            eprintln!("unity-conformance bridge: cannot start the bridge: {e}");
            return 2;
        }
    };
    let (Some(mut to_bridge), Some(from_bridge)) = (child.stdin.take(), child.stdout.take()) else {
        return 2;
    };
    let pending: Pending = Arc::default();
    // Everything for our stdout goes through one writer.
    let (out, mut out_rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = out_rx.recv().await {
            if stdout.write_all(line.as_bytes()).await.is_err() || stdout.write_all(b"\n").await.is_err() {
                break;
            }
            let _ = stdout.flush().await;
        }
    });
    if defect == BridgeDefect::Banner {
        let _ = out.send("unity-mcp-bridge ready (serving MCP on stdio)".into());
    }

    let _lock = match defect {
        BridgeDefect::TakesTheEditor => match EditorLock::take() {
            Ok(lock) => Some(lock),
            Err(why) => {
                eprintln!("unity-conformance bridge: {why}");
                return 1;
            }
        },
        _ => None,
    };
    let (out_up, pending_up) = (out.clone(), pending.clone());
    // Requests the relay itself sends to the bridge.
    let (inject, mut injected) = mpsc::unbounded_channel::<String>();
    let upstream = tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        let mut initialize_seen = false;
        let mut relay_tokens = 0u64;
        loop {
            let mut line = tokio::select! {
                line = lines.next_line() => match line {
                    Ok(Some(line)) => line,
                    _ => break,
                },
                Some(line) = injected.recv() => {
                    if to_bridge.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                        break;
                    }
                    continue;
                }
            };
            let parsed: Option<Value> = serde_json::from_str(&line).ok();
            let Some(message) = parsed else {
                if defect == BridgeDefect::DiesOnBadJson {
                    std::process::exit(70);
                }
                if to_bridge.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                    break;
                }
                continue;
            };
            let method = message.get("method").and_then(Value::as_str).unwrap_or("").to_owned();
            let id = message.get("id").map(Value::to_string);
            initialize_seen |= method == "initialize";
            if defect == BridgeDefect::DiesOnEarlyNotification && !initialize_seen && id.is_none() {
                std::process::exit(70);
            }
            if defect == BridgeDefect::ProgressUnasked
                && method == "tools/call"
                && message["params"]["_meta"]["progressToken"].is_null()
            {
                relay_tokens += 1;
                let mut asked = message.clone();
                asked["params"]["_meta"] = json!({"progressToken": format!("relay-{relay_tokens}")});
                line = asked.to_string();
            }
            if defect == BridgeDefect::NoReloadWait
                && method == "tools/call"
                && message["params"]["name"] == "compile"
                && message["params"]["arguments"].is_object()
            {
                let mut early = message.clone();
                early["params"]["arguments"]["WaitForDomainReload"] = json!(false);
                line = early.to_string();
            }
            let stateless = message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].is_string();
            let dropped = match defect {
                BridgeDefect::RequiresHandshake if stateless && id.is_some() && !initialize_seen => {
                    let _ = out_up.send(
                        json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32600,
                        "message": format!("Invalid Request: {method} before initialize")}})
                        .to_string(),
                    );
                    true
                }
                BridgeDefect::AnswersRemovedMethods
                    if stateless && id.is_some() && matches!(method.as_str(), "ping" | "logging/setLevel") =>
                {
                    let _ = out_up.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}).to_string());
                    true
                }
                BridgeDefect::NoSubscriptions if id.is_some() && method == "subscriptions/listen" => {
                    let _ = out_up.send(
                        json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601,
                        "message": "Method not found: subscriptions/listen"}})
                        .to_string(),
                    );
                    true
                }
                BridgeDefect::TellsCancelledSubscriptions if method == "notifications/cancelled" => {
                    let listen = message["params"]["requestId"].clone();
                    let (out, stale) = (
                        out_up.clone(),
                        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": listen}}}),
                    );
                    tokio::spawn(async move {
                        tokio::time::sleep(Duration::from_millis(1500)).await;
                        let _ = out.send(stale.to_string());
                    });
                    false
                }
                BridgeDefect::IgnoresCancellation => method == "notifications/cancelled",
                BridgeDefect::IgnoresBatches => message.is_array(),
                BridgeDefect::IgnoresPing => method == "ping",
                BridgeDefect::AnswersUndeclaredMethods if id.is_some() && !method.is_empty() => {
                    let known = matches!(method.as_str(), "initialize" | "ping" | "tools/list" | "tools/call");
                    let answer = match undeclared_answer(&method) {
                        Some(result) => Some(json!({"jsonrpc": "2.0", "id": message["id"], "result": result})),
                        None if !known => Some(json!({"jsonrpc": "2.0", "id": message["id"],
                            "error": {"code": -32602, "message": format!("Invalid params for {method}")}})),
                        None => None,
                    };
                    if let Some(answer) = &answer {
                        let _ = out_up.send(answer.to_string());
                    }
                    answer.is_some()
                }
                BridgeDefect::FailsOnHugeTimeout if method == "tools/call" => {
                    let huge = message["params"]["arguments"]["TimeoutSeconds"].as_f64().is_some_and(|t| t >= 1e18);
                    if huge {
                        let _ = out_up.send(json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32603,
                            "message": "the bridge failed while handling tools/call: task panicked with message \"overflow when adding duration to instant\""}}).to_string());
                    }
                    huge
                }
                BridgeDefect::IgnoresDiscover => method == "server/discover",
                BridgeDefect::RejectsUnknownVersion if method == "initialize" => {
                    let version = message["params"]["protocolVersion"].as_str().unwrap_or("");
                    let unknown = !KNOWN_VERSIONS.contains(&version);
                    if unknown {
                        let _ = out_up.send(
                            json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32602, "message": format!("unsupported protocol version {version}")}})
                                .to_string(),
                        );
                    }
                    unknown
                }
                _ => false,
            };
            if dropped {
                continue;
            }
            if let Some(id) = id {
                if !method.is_empty() {
                    if let Ok(mut requests) = pending_up.lock() {
                        if defect == BridgeDefect::RunsDuplicateIds && requests.pending.contains_key(&id) {
                            // Run it under another id; its answer goes nowhere.
                            requests.next += 1;
                            let hidden = json!(format!("relay-dup-{}", requests.next));
                            let mut renamed = message.clone();
                            renamed["id"] = hidden.clone();
                            line = renamed.to_string();
                            requests.hidden.insert(hidden.to_string());
                            requests.pending.insert(hidden.to_string(), renamed);
                        } else {
                            requests.pending.insert(id, message.clone());
                        }
                    }
                }
            }
            if defect == BridgeDefect::AnswersCancelled && method == "notifications/cancelled" {
                let id = &message["params"]["requestId"];
                let _ = out_up.send(
                    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "cancelled"}]}})
                        .to_string(),
                );
            }
            if defect == BridgeDefect::OneCallAtATime && method == "tools/call" {
                if let Ok(mut requests) = pending_up.lock() {
                    requests.calls_out += 1;
                    if requests.calls_out > 1 {
                        // Sent when the calls before it are answered.
                        requests.held.push_back(line);
                        continue;
                    }
                }
            }
            if to_bridge.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                break;
            }
        }
        if defect == BridgeDefect::IgnoresEof {
            std::future::pending::<()>().await;
        }
        // Dropping the pipe closes the bridge's stdin.
    });

    let downstream = tokio::spawn(async move {
        let mut lines = BufReader::new(from_bridge).lines();
        let mut calls_answered = 0u64;
        while let Ok(Some(line)) = lines.next_line().await {
            let Ok(mut message) = serde_json::from_str::<Value>(&line) else {
                let _ = out.send(line);
                continue;
            };
            let answer_id = message.get("id").filter(|_| message.get("method").is_none()).map(Value::to_string);
            let (request, hidden, standing_for) = match (&answer_id, pending.lock()) {
                (Some(id), Ok(mut requests)) => {
                    (requests.pending.remove(id), requests.hidden.remove(id), requests.standing_for.remove(id))
                }
                _ => (None, false, None),
            };
            if hidden {
                continue;
            }
            if let Some(original) = standing_for {
                message["id"] = original;
            }
            let method = request.as_ref().and_then(|r| r["method"].as_str()).unwrap_or("");
            if method == "tools/call" && defect == BridgeDefect::ResendsWhatMayHaveRun {
                let failed_text = (message["result"]["isError"] == json!(true)).then(|| tool_text(&message));
                if let (Some(text), Some(request)) = (failed_text, &request) {
                    if crate::did_it_run::claims(&text).0 {
                        // Again, under a new id; its answer stands for this one.
                        if let Ok(mut requests) = pending.lock() {
                            requests.next += 1;
                            let retry_id = json!(format!("relay-retry-{}", requests.next));
                            let mut retry = request.clone();
                            retry["id"] = retry_id.clone();
                            requests.standing_for.insert(retry_id.to_string(), message["id"].clone());
                            requests.pending.insert(retry_id.to_string(), retry.clone());
                            let _ = inject.send(retry.to_string());
                        }
                        continue;
                    }
                }
            }
            if method == "tools/call" && defect == BridgeDefect::OneCallAtATime {
                if let Ok(mut requests) = pending.lock() {
                    requests.calls_out = requests.calls_out.saturating_sub(1);
                    if let Some(next) = requests.held.pop_front() {
                        let _ = inject.send(next);
                    }
                }
            }
            if method == "tools/call" {
                calls_answered += 1;
                if defect == BridgeDefect::LosesAnswers && calls_answered % 2 == 1 {
                    continue;
                }
                if defect == BridgeDefect::MissesDeadlines && message["result"]["isError"] == json!(true) {
                    let (out, late) = (out.clone(), message.to_string());
                    tokio::spawn(async move {
                        tokio::time::sleep(MISSED_BY).await;
                        let _ = out.send(late);
                    });
                    continue;
                }
            }
            if let Some(text) = break_message(defect, method, &mut message) {
                let _ = out.send(text);
            }
            if defect == BridgeDefect::EarlyListChanged && method == "initialize" {
                let _ = out.send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}).to_string());
            }
        }
    });

    let _ = downstream.await;
    upstream.abort();
    let status = child.wait().await.ok().and_then(|s| s.code()).unwrap_or(1);
    // The writer ends once both relays (its senders) are gone.
    let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
    status
}

/// The text blocks of a tool result.
fn tool_text(message: &Value) -> String {
    message["result"]["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect()
}

/// The line to relay for one message of the bridge, broken by `defect`;
/// `None` drops it. `method` is the request's when `message` answers one.
fn break_message(defect: BridgeDefect, method: &str, message: &mut Value) -> Option<String> {
    let notification = message.get("method").and_then(Value::as_str).unwrap_or("");
    match defect {
        BridgeDefect::NullRequested if message["error"]["code"] == json!(-32022) => {
            message["error"]["data"]["requested"] = Value::Null;
        }
        BridgeDefect::NoResultType => {
            if let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) {
                result.remove("resultType");
            }
        }
        BridgeDefect::PinsVersion if method == "initialize" => {
            if let Some(version) = message.pointer_mut("/result/protocolVersion") {
                *version = json!("2024-11-05");
            }
        }
        BridgeDefect::NoListChangedCapability if method == "initialize" => {
            if let Some(tools) = message.pointer_mut("/result/capabilities/tools").and_then(Value::as_object_mut) {
                tools.remove("listChanged");
            }
        }
        BridgeDefect::IdsAsStrings if message.get("method").is_none() => {
            if let Some(n) = message.get("id").and_then(Value::as_i64) {
                message["id"] = json!(n.to_string());
            }
        }
        BridgeDefect::InvalidSchema if method == "tools/list" => {
            if let Some(tool) = message.pointer_mut("/result/tools/0") {
                tool["inputSchema"]["type"] = json!("objekt");
            }
        }
        BridgeDefect::NoStructuredContent if method == "tools/call" => {
            if let Some(result) = message.pointer_mut("/result").and_then(Value::as_object_mut) {
                result.remove("structuredContent");
            }
        }
        BridgeDefect::SaysDidNotRun if method == "tools/call" && message["result"]["isError"] == json!(true) => {
            for block in message.pointer_mut("/result/content").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(text) = block["text"].as_str() {
                    let said =
                        text.replace("may or may not have run", "did not run").replace("may have run", "did not run");
                    block["text"] = json!(said);
                }
            }
        }
        BridgeDefect::NoIsError if method == "tools/call" => {
            if let Some(result) = message.pointer_mut("/result").and_then(Value::as_object_mut) {
                result.remove("isError");
            }
        }
        BridgeDefect::UnknownToolAsResult if method == "tools/call" && message["error"]["code"] == json!(-32602) => {
            let text = message["error"]["message"].as_str().unwrap_or("unknown tool").to_owned();
            let id = message["id"].clone();
            *message = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}], "isError": true}});
        }
        BridgeDefect::ImagesAsText if method == "tools/call" => {
            if let Some(content) = message.pointer_mut("/result/content").and_then(Value::as_array_mut) {
                for block in content.iter_mut().filter(|b| b["type"] == "image") {
                    *block = json!({"type": "text", "text": block["data"]});
                }
            }
        }
        BridgeDefect::NoListChanged if notification == "notifications/tools/list_changed" => return None,
        BridgeDefect::NoProgress if notification == "notifications/progress" => return None,
        BridgeDefect::WrongOutputSchema if method == "tools/list" => {
            fn strings(schema: &mut Value) {
                if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
                    for property in properties.values_mut() {
                        *property = json!({"type": "string"});
                    }
                }
            }
            for tool in message.pointer_mut("/result/tools").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(schema) = tool.get_mut("outputSchema") {
                    strings(schema);
                }
            }
        }
        BridgeDefect::HidesWhatBlocks => {
            let cut = |text: &str| match text.find("the Editor's main thread") {
                Some(at) => text[..at].to_owned(),
                None => text.to_owned(),
            };
            if let Some(m) = message.pointer("/params/message").and_then(Value::as_str).map(cut) {
                message["params"]["message"] = json!(m);
            }
            for block in message.pointer_mut("/result/content").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(t) = block["text"].as_str().map(cut) {
                    block["text"] = json!(t);
                }
            }
        }
        BridgeDefect::GivesUp if method == "tools/call" => {
            let id = message["id"].clone();
            *message = json!({"jsonrpc": "2.0", "id": id, "result": {"isError": true,
                "content": [{"type": "text", "text": "Unity is not reachable: the connection was lost"}]}});
        }
        BridgeDefect::HidesATool if method == "tools/list" => {
            if let Some(tools) = message.pointer_mut("/result/tools").and_then(Value::as_array_mut) {
                tools.pop();
            }
        }
        BridgeDefect::AcceptsAnyCursor if method == "tools/list" && message["error"]["code"] == json!(-32602) => {
            let id = message["id"].clone();
            *message = json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}});
        }
        BridgeDefect::RequiresEveryParameter if method == "tools/list" => {
            for tool in message.pointer_mut("/result/tools").and_then(Value::as_array_mut).into_iter().flatten() {
                let names: Vec<Value> = tool["inputSchema"]["properties"]
                    .as_object()
                    .map(|p| p.keys().map(|k| json!(k)).collect())
                    .unwrap_or_default();
                tool["inputSchema"]["required"] = Value::Array(names);
            }
        }
        BridgeDefect::AltersResults => {
            for tool in message.pointer_mut("/result/tools").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(d) = tool["description"].as_str() {
                    tool["description"] = json!(format!("{d} (relayed)"));
                }
            }
            for block in message.pointer_mut("/result/content").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(t) = block["text"].as_str() {
                    block["text"] = json!(format!("{t} (relayed)"));
                }
            }
            if let Some(m) = message["error"]["message"].as_str() {
                message["error"]["message"] = json!(format!("{m} (relayed)"));
            }
        }
        _ => {}
    }
    Some(message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A defect breaks what it says, and nothing else: a message it has no
    /// business with keeps its members (an error answer grows no `result`,
    /// which would make it an answer no client reads).
    #[test]
    fn a_defect_adds_no_member_to_a_message_it_does_not_break() {
        let error = json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32603, "message": "boom"}});
        let result = json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "ok"}]}});
        for defect in BridgeDefect::all() {
            for method in ["tools/call", "tools/list", "initialize", "ping"] {
                // These replace an error answer with a result, as they say.
                let replaces = matches!(
                    defect,
                    BridgeDefect::UnknownToolAsResult | BridgeDefect::AcceptsAnyCursor | BridgeDefect::GivesUp
                );
                let mut message = error.clone();
                if let Some(text) = break_message(defect, method, &mut message) {
                    let message: Value = serde_json::from_str(&text).unwrap();
                    assert!(replaces || message.get("result").is_none(), "{defect} {method}: {message}");
                }
                let mut message = result.clone();
                if let Some(text) = break_message(defect, method, &mut message) {
                    let message: Value = serde_json::from_str(&text).unwrap();
                    assert!(message.get("error").is_none(), "{defect} {method}: {message}");
                }
            }
        }
    }
}
