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
    /// Changes what Unity answered: a suffix on every description and text.
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

/// The requests in flight: id (as JSON text) → method.
type Pending = Arc<Mutex<HashMap<String, String>>>;

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
    let upstream = tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        let mut initialize_seen = false;
        let mut relay_tokens = 0u64;
        while let Ok(Some(mut line)) = lines.next_line().await {
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
            let dropped = match defect {
                BridgeDefect::IgnoresBatches => message.is_array(),
                BridgeDefect::IgnoresPing => method == "ping",
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
                    if let Ok(mut p) = pending_up.lock() {
                        p.insert(id, method.clone());
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
            let request = message
                .get("id")
                .filter(|_| message.get("method").is_none())
                .and_then(|id| pending.lock().ok().and_then(|mut p| p.remove(&id.to_string())));
            let method = request.as_deref().unwrap_or("");
            if method == "tools/call" {
                calls_answered += 1;
                if defect == BridgeDefect::LosesAnswers && calls_answered % 2 == 1 {
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

/// The line to relay for one message of the bridge, broken by `defect`;
/// `None` drops it. `method` is the request's when `message` answers one.
fn break_message(defect: BridgeDefect, method: &str, message: &mut Value) -> Option<String> {
    let notification = message.get("method").and_then(Value::as_str).unwrap_or("");
    match defect {
        BridgeDefect::PinsVersion if method == "initialize" => {
            message["result"]["protocolVersion"] = json!("2024-11-05");
        }
        BridgeDefect::NoListChangedCapability if method == "initialize" => {
            if let Some(tools) = message["result"]["capabilities"]["tools"].as_object_mut() {
                tools.remove("listChanged");
            }
        }
        BridgeDefect::IdsAsStrings if message.get("method").is_none() => {
            if let Some(n) = message.get("id").and_then(Value::as_i64) {
                message["id"] = json!(n.to_string());
            }
        }
        BridgeDefect::InvalidSchema if method == "tools/list" => {
            if let Some(tool) = message["result"]["tools"].get_mut(0) {
                tool["inputSchema"]["type"] = json!("objekt");
            }
        }
        BridgeDefect::NoStructuredContent if method == "tools/call" => {
            if let Some(result) = message["result"].as_object_mut() {
                result.remove("structuredContent");
            }
        }
        BridgeDefect::NoIsError if method == "tools/call" => {
            if let Some(result) = message["result"].as_object_mut() {
                result.remove("isError");
            }
        }
        BridgeDefect::UnknownToolAsResult if method == "tools/call" && message["error"]["code"] == json!(-32602) => {
            let text = message["error"]["message"].as_str().unwrap_or("unknown tool").to_owned();
            let id = message["id"].clone();
            *message = json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}], "isError": true}});
        }
        BridgeDefect::ImagesAsText if method == "tools/call" => {
            if let Some(content) = message["result"]["content"].as_array_mut() {
                for block in content.iter_mut().filter(|b| b["type"] == "image") {
                    *block = json!({"type": "text", "text": block["data"]});
                }
            }
        }
        BridgeDefect::NoListChanged if notification == "notifications/tools/list_changed" => return None,
        BridgeDefect::NoProgress if notification == "notifications/progress" => return None,
        BridgeDefect::GivesUp if method == "tools/call" => {
            let id = message["id"].clone();
            *message = json!({"jsonrpc": "2.0", "id": id, "result": {"isError": true,
                "content": [{"type": "text", "text": "Unity is not reachable: the connection was lost"}]}});
        }
        BridgeDefect::HidesATool if method == "tools/list" => {
            if let Some(tools) = message["result"]["tools"].as_array_mut() {
                tools.pop();
            }
        }
        BridgeDefect::AcceptsAnyCursor if method == "tools/list" && message["error"]["code"] == json!(-32602) => {
            let id = message["id"].clone();
            *message = json!({"jsonrpc": "2.0", "id": id, "result": {"tools": []}});
        }
        BridgeDefect::RequiresEveryParameter if method == "tools/list" => {
            for tool in message["result"]["tools"].as_array_mut().into_iter().flatten() {
                let names: Vec<Value> = tool["inputSchema"]["properties"]
                    .as_object()
                    .map(|p| p.keys().map(|k| json!(k)).collect())
                    .unwrap_or_default();
                tool["inputSchema"]["required"] = Value::Array(names);
            }
        }
        BridgeDefect::AltersResults => {
            for tool in message["result"]["tools"].as_array_mut().into_iter().flatten() {
                if let Some(d) = tool["description"].as_str() {
                    tool["description"] = json!(format!("{d} (relayed)"));
                }
            }
            for block in message["result"]["content"].as_array_mut().into_iter().flatten() {
                if let Some(t) = block["text"].as_str() {
                    block["text"] = json!(format!("{t} (relayed)"));
                }
            }
        }
        _ => {}
    }
    Some(message.to_string())
}
