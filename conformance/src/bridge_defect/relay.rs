//! The relay in front of the embedded bridge: the client's lines in, the
//! bridge's lines out, each message handed to the defect on its way
//! ([`Breaks`]). What is true of every defect is done here: which requests
//! are in flight (an answer knows the request it answers), answers nobody
//! gets, a request sent again in another's name, one writer for stdout.

use std::{
    collections::{HashMap, HashSet},
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

use super::{Answering, Breaks, BridgeDefect, Flow, FromClient};
use editor_link::lock;

/// What the relay knows of the requests in flight.
#[derive(Debug, Default)]
struct Requests {
    /// Id (as JSON text) → the request.
    pending: HashMap<String, Value>,
    /// Ids of requests the relay sent itself → the client's id they stand for.
    standing_for: HashMap<String, Value>,
    /// Ids of requests whose answers nobody gets.
    hidden: HashSet<String>,
    next: u64,
}

/// What a defect may do besides changing the message in its hands: speak
/// to the client, send to the bridge, keep a request's answer from the
/// client or give it another request's id.
#[derive(Clone, Debug)]
pub struct Relay {
    to_client: mpsc::UnboundedSender<String>,
    to_bridge: mpsc::UnboundedSender<String>,
    requests: Arc<Mutex<Requests>>,
}

impl Relay {
    /// A relay whose lines go to these channels.
    fn new(to_client: mpsc::UnboundedSender<String>, to_bridge: mpsc::UnboundedSender<String>) -> Relay {
        Relay { to_client, to_bridge, requests: Arc::default() }
    }

    /// Sends `line` to the client.
    pub fn say(&self, line: impl Into<String>) {
        let _ = self.to_client.send(line.into());
    }

    /// Sends `message` to the client after `delay`.
    pub fn say_later(&self, delay: Duration, message: &Value) {
        let (to_client, line) = (self.to_client.clone(), message.to_string());
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let _ = to_client.send(line);
        });
    }

    /// Answers the client's request `id` with `result`.
    pub fn answer(&self, id: &Value, result: &Value) {
        self.say(json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string());
    }

    /// Answers the client's request `id` with an error.
    pub fn refuse(&self, id: &Value, code: i64, message: &str) {
        self.say(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string());
    }

    /// Sends `line` to the bridge.
    pub fn send(&self, line: String) {
        let _ = self.to_bridge.send(line);
    }

    /// Whether a request with `id` is in flight.
    pub fn in_flight(&self, id: &Value) -> bool {
        lock(&self.requests).pending.contains_key(&id.to_string())
    }

    /// An id of the relay's own, `PREFIX-N`, which no client uses.
    pub fn fresh_id(&self, prefix: &str) -> Value {
        let mut requests = lock(&self.requests);
        requests.next += 1;
        json!(format!("{prefix}-{}", requests.next))
    }

    /// The answer to the request with `id` goes to no one.
    pub fn hide(&self, id: &Value) {
        lock(&self.requests).hidden.insert(id.to_string());
    }

    /// Sends `request` to the bridge again under an id of the relay's own;
    /// its answer goes to the client as the answer to `standing_for`.
    pub fn resend(&self, request: &Value, standing_for: Value) {
        let mut again = request.clone();
        again["id"] = self.fresh_id("relay-retry");
        {
            let mut requests = lock(&self.requests);
            requests.standing_for.insert(again["id"].to_string(), standing_for);
            requests.pending.insert(again["id"].to_string(), again.clone());
        }
        self.send(again.to_string());
    }

    /// Notes the client's request (or one the relay holds for later).
    pub(super) fn note(&self, request: &Value) {
        lock(&self.requests).pending.insert(request["id"].to_string(), request.clone());
    }

    /// The request `message` answers, taken out of flight; `None` when
    /// nobody gets the answer. An answer to a request sent in another's
    /// name gets that one's id.
    pub(super) fn answered(&self, message: &mut Value) -> Option<Option<Value>> {
        let Some(id) = message.get("id").filter(|_| message.get("method").is_none()).map(Value::to_string) else {
            return Some(None);
        };
        let mut requests = lock(&self.requests);
        let request = requests.pending.remove(&id);
        if requests.hidden.remove(&id) {
            return None;
        }
        if let Some(original) = requests.standing_for.remove(&id) {
            message["id"] = original;
        }
        Some(request)
    }
}

/// Relays stdio to the embedded bridge (`program bridge -- args`) with
/// `defect`; returns the exit status.
pub async fn relay(defect: BridgeDefect, program: std::path::PathBuf, args: Vec<OsString>) -> i32 {
    let breaks = defect.breaks();
    let mut command = Command::new(program);
    command.arg("bridge").arg("--").args(&args);
    breaks.bridge_command(&mut command, &args);
    let mut child = match command
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
    let (Some(to_bridge), Some(bridge_out)) = (child.stdin.take(), child.stdout.take()) else {
        return 2;
    };
    // Everything for our stdout goes through one writer.
    let (to_client, lines_out) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(write_lines(lines_out));
    let (inject, injected) = mpsc::unbounded_channel::<String>();
    let relay = Relay::new(to_client, inject);
    if let Err(why) = breaks.start(&relay) {
        eprintln!("unity-conformance bridge: {why}");
        return 1;
    }
    let upstream = tokio::spawn(from_the_client(breaks.clone(), relay.clone(), to_bridge, injected));
    let downstream = tokio::spawn(from_the_bridge(breaks.clone(), relay, bridge_out));
    let _ = downstream.await;
    upstream.abort();
    let status = child.wait().await.ok().and_then(|s| s.code()).unwrap_or(1);
    // What the defect holds (the Editor taken) is let go once the bridge is gone.
    drop(breaks);
    // The writer ends once the relays (its senders) are gone.
    let _ = tokio::time::timeout(Duration::from_secs(1), writer).await;
    status
}

/// Writes the client's lines to stdout, one at a time.
async fn write_lines(mut lines: mpsc::UnboundedReceiver<String>) {
    let mut stdout = tokio::io::stdout();
    while let Some(line) = lines.recv().await {
        if stdout.write_all(line.as_bytes()).await.is_err() || stdout.write_all(b"\n").await.is_err() {
            break;
        }
        let _ = stdout.flush().await;
    }
}

/// The client's lines to the bridge, and the relay's own requests.
async fn from_the_client(
    breaks: Arc<dyn Breaks>,
    relay: Relay,
    mut to_bridge: tokio::process::ChildStdin,
    mut injected: mpsc::UnboundedReceiver<String>,
) {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut initialized = false;
    loop {
        let line = tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => line,
                _ => break,
            },
            // The relay's own (a defect's): sent as they are.
            Some(line) = injected.recv() => {
                if to_bridge.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                    break;
                }
                continue;
            }
        };
        let line = match serde_json::from_str::<Value>(&line) {
            Err(_) => match breaks.not_json() {
                Flow::Exit(status) => std::process::exit(status),
                Flow::Pass => Some(line),
                Flow::Stop | Flow::Hold => None,
            },
            Ok(mut message) => {
                let method = message.get("method").and_then(Value::as_str).unwrap_or("").to_owned();
                initialized |= method == "initialize";
                let client = FromClient {
                    method: &method,
                    id: message.get("id").cloned(),
                    stateless: message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"].is_string(),
                    initialized,
                };
                let original = message.clone();
                let flow = breaks.client_message(&mut message, &client, &relay);
                // A request (its id as it goes on) is in flight from now.
                if !matches!(flow, Flow::Stop) && !method.is_empty() && message.get("id").is_some() {
                    relay.note(&message);
                }
                match flow {
                    Flow::Exit(status) => std::process::exit(status),
                    Flow::Pass if message == original => Some(line),
                    Flow::Pass => Some(message.to_string()),
                    Flow::Stop | Flow::Hold => None,
                }
            }
        };
        if let Some(line) = line {
            if to_bridge.write_all(format!("{line}\n").as_bytes()).await.is_err() {
                break;
            }
        }
    }
    if breaks.outlives_input() {
        std::future::pending::<()>().await;
    }
    // Dropping the pipe closes the bridge's stdin.
}

/// The bridge's lines to the client.
async fn from_the_bridge(breaks: Arc<dyn Breaks>, relay: Relay, bridge_out: tokio::process::ChildStdout) {
    let mut lines = BufReader::new(bridge_out).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(mut message) = serde_json::from_str::<Value>(&line) else {
            relay.say(line);
            continue;
        };
        let Some(request) = relay.answered(&mut message) else { continue };
        let method = request.as_ref().and_then(|r| r["method"].as_str()).unwrap_or("");
        let answering = Answering { method, request: request.as_ref() };
        match breaks.bridge_message(&mut message, &answering, &relay) {
            Flow::Pass => relay.say(message.to_string()),
            Flow::Stop | Flow::Hold => {}
            Flow::Exit(status) => std::process::exit(status),
        }
    }
}

/// A relay whose lines to the client are kept, for tests.
#[cfg(test)]
pub(super) fn for_tests() -> (Relay, mpsc::UnboundedReceiver<String>) {
    let (to_client, said) = mpsc::unbounded_channel();
    let (to_bridge, _) = mpsc::unbounded_channel();
    (Relay::new(to_client, to_bridge), said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_finds_its_request_its_standing_and_whether_anyone_gets_it() {
        let (relay, _) = for_tests();
        let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {}});
        relay.note(&request);
        relay.resend(&request, json!(7));
        let mut answer = json!({"jsonrpc": "2.0", "id": "relay-retry-1", "result": {}});
        let found = relay.answered(&mut answer).unwrap().unwrap();
        assert_eq!((found["method"].clone(), answer["id"].clone()), (json!("tools/call"), json!(7)));
        relay.hide(&json!(7));
        assert!(relay.answered(&mut json!({"id": 7, "result": {}})).is_none(), "hidden");
        assert_eq!(relay.answered(&mut json!({"method": "notifications/progress"})), Some(None));
    }
}
