//! The input, line by line: the one place the client's JSON-RPC is read
//! and validated before rmcp sees it.

use std::future::Future;

use futures_util::StreamExt;
use rmcp::{
    RoleServer,
    model::{ClientJsonRpcMessage, ErrorCode, ServerJsonRpcMessage},
    transport::Transport,
};
use serde_json::{Value, json};
use tokio::{io::AsyncRead, sync::mpsc};
use tokio_util::{codec::FramedRead, sync::CancellationToken};

use super::{
    CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, STATELESS_VERSION, SUPPORTED_VERSIONS,
    calls::{Calls, ToolCall},
    out::Out,
    session::{InFlight, SERVER_INFO_KEY, server_info},
    tasks,
};
use editor_link::framing::{Frame, FrameDecoder, Framing};

/// Largest line accepted on the input.
const INPUT_LIMIT: usize = 16 * 1024 * 1024;

/// Reads the client's messages from `input`, one per line: those the
/// [`Guard`] lets through go to rmcp, `tools/call` to [`Calls`]; cancels
/// `closed` at the input's end.
pub(super) async fn read_input(
    input: impl AsyncRead + Send + Unpin,
    to_rmcp: mpsc::Sender<ClientJsonRpcMessage>,
    out: Out,
    calls: Calls,
    in_flight: InFlight,
    closed: CancellationToken,
) {
    let mut lines = FramedRead::new(input, FrameDecoder::new(Framing::Newline, INPUT_LIMIT));
    let mut guard = Guard { initialize_seen: false, stateless_seen: false, in_flight, calls };
    while let Some(frame) = lines.next().await {
        match frame {
            Ok(Frame::Body(line)) => {
                let passed = match guard.check(&line, &out) {
                    Some(Passed::Rmcp(message)) => to_rmcp.send(message).await.is_ok(),
                    Some(Passed::ToolCall(call)) => {
                        guard.calls.start(call);
                        true
                    }
                    None => true,
                };
                if !passed {
                    break;
                }
            }
            Ok(Frame::TooLarge { size, limit, .. }) => {
                out.error(
                    None,
                    -32600,
                    &format!("Invalid Request: a message of {size} bytes is over the {limit}-byte limit"),
                    None,
                );
            }
            Err(e) => {
                tracing::debug!(%e, "the input ended");
                break;
            }
        }
    }
    closed.cancel();
}

/// What the guard knows of the session.
#[derive(Debug)]
struct Guard {
    /// A handshake-era session began (`initialize`).
    initialize_seen: bool,
    /// A 2026-07-28 request was served: rmcp runs its stateless lifecycle.
    stateless_seen: bool,
    in_flight: InFlight,
    calls: Calls,
}

/// Where a message the guard let through goes.
#[derive(Debug)]
enum Passed {
    Rmcp(ClientJsonRpcMessage),
    ToolCall(ToolCall),
}

/// The revision a message says it speaks: a request carrying
/// `_meta["io.modelcontextprotocol/protocolVersion"]` is 2026-07-28-style
/// (stateless); anything else belongs to the handshake revisions.
#[derive(Debug)]
enum Era<'a> {
    Handshake,
    Stateless(&'a serde_json::Map<String, Value>),
}

impl<'a> Era<'a> {
    fn of(message: &'a serde_json::Map<String, Value>) -> Era<'a> {
        match message.get("params").and_then(|p| p.get("_meta")).and_then(Value::as_object) {
            Some(meta) if meta.contains_key(PROTOCOL_VERSION_KEY) => Era::Stateless(meta),
            _ => Era::Handshake,
        }
    }
}

/// What 2026-07-28 removed, answered "method not found" for its requests.
const REMOVED_IN_STATELESS: &[&str] = &[
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    // 2025-11-25's; the tasks extension has no tasks/result or tasks/list.
    "tasks/result",
    "tasks/list",
];

type Refusal = (i64, String, Option<Value>);

/// Checks a 2026-07-28 request's `_meta` and method: the revision's own
/// errors for a version not served (-32022, with the supported list), a
/// required key missing or mistyped (-32602), a removed method (-32601).
fn check_stateless(meta: &serde_json::Map<String, Value>, method: &str) -> Result<(), Refusal> {
    let Some(requested) = meta.get(PROTOCOL_VERSION_KEY).and_then(Value::as_str) else {
        return Err((-32602, format!("Invalid params: _meta[\"{PROTOCOL_VERSION_KEY}\"] must be a string"), None));
    };
    if !SUPPORTED_VERSIONS.contains(&requested) {
        return Err((
            i64::from(ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0),
            "Unsupported protocol version".into(),
            Some(json!({"supported": SUPPORTED_VERSIONS, "requested": requested})),
        ));
    }
    if !meta.get(CLIENT_CAPABILITIES_KEY).is_some_and(Value::is_object) {
        return Err((
            -32602,
            format!("Invalid params: _meta is missing the required key {CLIENT_CAPABILITIES_KEY} (an object)"),
            None,
        ));
    }
    if requested == STATELESS_VERSION && REMOVED_IN_STATELESS.contains(&method) {
        return Err((
            -32601,
            format!("Method not found: {method} is not part of MCP {STATELESS_VERSION}"),
            Some(json!(method)),
        ));
    }
    Ok(())
}

impl Guard {
    /// Checks one line: a message for rmcp, or `None` when the guard has
    /// answered it (or dropped it) itself.
    fn check(&mut self, line: &[u8], out: &Out) -> Option<Passed> {
        let mut value: Value = match serde_json::from_slice(line) {
            Ok(value) => value,
            Err(e) => {
                out.error(None, -32700, &format!("Parse error: {e}"), None);
                return None;
            }
        };
        let obj = match &value {
            Value::Object(obj) => obj,
            Value::Array(_) => {
                out.error(None, -32600, "Invalid Request: batches are not supported (removed in MCP 2025-06-18)", None);
                return None;
            }
            _ => {
                out.error(None, -32600, "Invalid Request: a message must be a JSON object", None);
                return None;
            }
        };
        // MCP forbids a null id (a request's is a string or an integer): it
        // is neither a request to run nor a notification to ignore.
        if obj.get("id").is_some_and(Value::is_null) && obj.get("method").is_some() {
            out.error(None, -32600, "Invalid Request: an id must not be null (MCP: a string or an integer)", None);
            return None;
        }
        let id = obj.get("id").filter(|id| !id.is_null());
        if id.is_some_and(|id| !id.is_string() && !id.is_i64()) {
            out.error(None, -32600, "Invalid Request: an id must be a string or a 64-bit integer", None);
            return None;
        }
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            if id.is_some() {
                out.error(id, -32600, "Invalid Request: \"jsonrpc\" must be \"2.0\"", None);
            }
            return None;
        }
        let method = obj.get("method").and_then(Value::as_str);
        let era = Era::of(obj);
        match (era, method, id) {
            // A 2026-07-28 request is answered on its own: checked here,
            // then served by rmcp with no handshake.
            (Era::Stateless(meta), Some(method), Some(id)) => {
                if let Err((code, message, data)) = check_stateless(meta, method) {
                    out.error(Some(id), code, &message, data);
                    return None;
                }
                if method != "server/discover" {
                    // The probe chooses nothing; a request served starts
                    // rmcp's stateless lifecycle, and notifications may follow.
                    self.stateless_seen = true;
                }
                let stateless = meta.get(PROTOCOL_VERSION_KEY).and_then(Value::as_str) == Some(STATELESS_VERSION);
                if let Some(task_method) = TaskMethod::of(method).filter(|_| stateless) {
                    self.task_request(task_method, id, meta, obj.get("params"), out);
                    return None;
                }
                let task_ids = obj.get("params").and_then(|p| p.pointer("/notifications/taskIds"));
                if let (true, "subscriptions/listen", Some(task_ids)) = (stateless, method, task_ids) {
                    if !tasks::declared(meta) {
                        refuse_undeclared_tasks(id, out);
                        return None;
                    }
                    let named: Vec<String> = task_ids
                        .as_array()
                        .into_iter()
                        .flatten()
                        .take(tasks::MAX_TASKS)
                        .filter_map(|t| t.as_str().map(str::to_owned))
                        .collect();
                    // Acknowledged by rmcp, with these added (GuardedTransport).
                    self.calls.tasks.listen(id, &named);
                }
            }
            (Era::Handshake, Some("server/discover"), Some(id)) => {
                out.error(
                    Some(id),
                    -32602,
                    &format!("Invalid params: server/discover needs params._meta with {PROTOCOL_VERSION_KEY} and {CLIENT_CAPABILITIES_KEY}"),
                    None,
                );
                return None;
            }
            _ if self.initialize_seen || self.stateless_seen => {}
            (_, Some("initialize"), Some(_)) => self.initialize_seen = true,
            (_, Some("ping"), Some(_)) => {}
            (_, Some(method), Some(id)) => {
                out.error(Some(id), -32600, &format!("Invalid Request: {method} before initialize"), None);
                return None;
            }
            // Notifications and stray responses before the session began: ignored.
            _ => {
                tracing::debug!(?method, "message before initialize ignored");
                return None;
            }
        }
        match (method, id) {
            (Some("tools/call"), Some(id)) => {
                let id = id.clone();
                if !self.take(&id, "tools/call", out) {
                    return None;
                }
                let Value::Object(message) = &mut value else { return None };
                return match ToolCall::read(&id, message, &self.calls.negotiated) {
                    Ok(call) => Some(Passed::ToolCall(call)),
                    Err(why) => {
                        self.in_flight.release(&id);
                        out.error(Some(&id), -32602, &format!("Invalid params for tools/call: {why}"), None);
                        None
                    }
                };
            }
            (Some("notifications/cancelled"), None) => {
                let request = obj.get("params").and_then(|p| p.get("requestId"));
                if let Some(request) = request {
                    self.calls.tasks.unlisten(request);
                }
                if request.is_some_and(|request| self.in_flight.cancel(request)) {
                    return None;
                }
            }
            _ => {}
        }
        match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
            // rmcp takes a known method with unreadable params for a custom
            // request and would answer "method not found": say what it is.
            Ok(ClientJsonRpcMessage::Request(r)) if matches!(&r.request, rmcp::model::ClientRequest::CustomRequest(c) if is_mcp_method(&c.method)) =>
            {
                out.error(id, -32602, &format!("Invalid params for {}", method.unwrap_or("")), None);
                None
            }
            Ok(ClientJsonRpcMessage::Request(r)) => {
                if let (Some(id), Some(method)) = (id, method) {
                    if !self.take(id, method, out) {
                        return None;
                    }
                }
                Some(Passed::Rmcp(ClientJsonRpcMessage::Request(r)))
            }
            Ok(message) => Some(Passed::Rmcp(message)),
            Err(e) => {
                match (method, id) {
                    (Some(method), Some(id)) => {
                        out.error(Some(id), -32602, &format!("Invalid params for {method}: {e}"), None)
                    }
                    (None, Some(id)) if obj.get("result").is_none() && obj.get("error").is_none() => {
                        out.error(Some(id), -32600, "Invalid Request: no method", None);
                    }
                    _ => tracing::debug!(%e, "unreadable notification or response ignored"),
                }
                None
            }
        }
    }
}

/// The extension's answer to a task request (or a task subscription) from
/// a request that does not declare it: -32021, naming what is required.
fn refuse_undeclared_tasks(id: &Value, out: &Out) {
    let required = json!({"requiredCapabilities": {"extensions": {tasks::TASKS_EXTENSION: {}}}});
    out.error(Some(id), -32021, "Missing required client capability", Some(required));
}

/// The tasks extension's methods.
#[derive(Clone, Copy, Debug)]
enum TaskMethod {
    Get,
    Update,
    Cancel,
}

impl TaskMethod {
    fn of(method: &str) -> Option<TaskMethod> {
        match method {
            "tasks/get" => Some(TaskMethod::Get),
            "tasks/update" => Some(TaskMethod::Update),
            "tasks/cancel" => Some(TaskMethod::Cancel),
            _ => None,
        }
    }
}

impl Guard {
    /// `tasks/get`, `tasks/update`, `tasks/cancel` (2026-07-28), answered
    /// here from the session's tasks: -32021 for a request that does not
    /// declare the extension, -32602 for a task that is not (or no longer)
    /// kept.
    fn task_request(
        &self,
        method: TaskMethod,
        id: &Value,
        meta: &serde_json::Map<String, Value>,
        params: Option<&Value>,
        out: &Out,
    ) {
        if !tasks::declared(meta) {
            return refuse_undeclared_tasks(id, out);
        }
        let Some(task) = params.and_then(|p| p.get("taskId")).and_then(Value::as_str) else {
            out.error(Some(id), -32602, "Invalid params: taskId must be a string", None);
            return;
        };
        let calls = &self.calls;
        let found = match method {
            TaskMethod::Get => calls.tasks.get(task).map(Value::Object),
            TaskMethod::Cancel => calls.tasks.cancel(task).then(|| json!({})),
            // The bridge asks clients nothing: answers to nothing are accepted.
            TaskMethod::Update => calls.tasks.knows(task).then(|| json!({})),
        };
        match found {
            Some(mut result) => {
                result["resultType"] = "complete".into();
                result["_meta"] = json!({SERVER_INFO_KEY: server_info()});
                out.line(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
            }
            None => out.error(
                Some(id),
                -32602,
                &format!("Failed to retrieve task: Task not found ({task}: not kept by this bridge; results are kept 30 minutes after a task ends, and tasks end with the bridge process)"),
                None,
            ),
        }
    }

    /// Takes a request's id; when a request with it is in flight, answers
    /// this one with an error and returns false.
    fn take(&self, id: &Value, method: &str, out: &Out) -> bool {
        let taken = self.in_flight.take(id);
        if !taken {
            out.error(
                Some(id),
                -32600,
                &format!(
                    "Invalid Request: a request with id {id} is still in flight; this {method} was not run (use a new id for every request)"
                ),
                None,
            );
        }
        taken
    }
}

/// The methods this server serves (their params may be wrong). Any other
/// method — including MCP's for capabilities it does not declare, such as
/// prompts, completions and logging — is not found.
fn is_mcp_method(method: &str) -> bool {
    matches!(
        method,
        "initialize"
            | "ping"
            | "tools/list"
            | "tools/call"
            | "server/discover"
            | "subscriptions/listen"
            | "resources/list"
            | "resources/read"
            | "resources/templates/list"
    )
}

/// The transport rmcp sees: messages the guard let through, and the output.
pub(super) struct GuardedTransport {
    from_guard: mpsc::Receiver<ClientJsonRpcMessage>,
    out: Out,
    in_flight: InFlight,
    tasks: tasks::TaskStore,
}

impl Transport<RoleServer> for GuardedTransport {
    type Error = std::io::Error;

    fn send(&mut self, item: ServerJsonRpcMessage) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = match self.with_task_ids(&item) {
            Some((acknowledged, subscription, accepted)) => {
                let sent = self.out.line(&acknowledged);
                // A task that ended before the subscription: told at once.
                for task in accepted.iter().filter(|t| self.tasks.has_ended(t)) {
                    if let Some(notification) = self.tasks.notification(task, &subscription) {
                        self.out.line(&notification);
                    }
                }
                sent
            }
            None => self.out.line(&item),
        };
        self.in_flight.answered(&item);
        std::future::ready(if sent { Ok(()) } else { Err(std::io::Error::other("the output is closed")) })
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.from_guard.recv().await
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.from_guard.close();
        std::future::ready(Ok(()))
    }
}

impl GuardedTransport {
    pub(super) fn new(
        from_guard: mpsc::Receiver<ClientJsonRpcMessage>,
        out: Out,
        in_flight: InFlight,
        tasks: tasks::TaskStore,
    ) -> Self {
        GuardedTransport { from_guard, out, in_flight, tasks }
    }

    /// rmcp's acknowledgement of a subscription that named tasks, with the
    /// task ids accepted added (rmcp's filter has no place for them).
    fn with_task_ids(&self, item: &ServerJsonRpcMessage) -> Option<(Value, Value, Vec<String>)> {
        let ServerJsonRpcMessage::Notification(_) = item else { return None };
        let mut message = serde_json::to_value(item).ok()?;
        if message["method"] != "notifications/subscriptions/acknowledged" {
            return None;
        }
        let subscription =
            message.pointer(&format!("/params/_meta/{}", tasks::SUBSCRIPTION_ID_KEY.replace('/', "~1")))?.clone();
        let accepted = self.tasks.listened(&subscription)?;
        let notifications = message["params"].as_object_mut()?.entry("notifications").or_insert_with(|| json!({}));
        notifications["taskIds"] = json!(accepted);
        Some((message, subscription, accepted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::out::OutItem;

    /// A guard whose calls go to a bridge with no Editor to find.
    fn guard(out: &Out) -> (Guard, tempfile::TempDir) {
        use crate::{
            bridge::{Bridge, BridgeOptions},
            link::{Link, LinkConfig},
        };
        let project = tempfile::tempdir().unwrap();
        let locator =
            editor_link::discovery::Locator { project: Some(project.path().to_owned()), ..Default::default() };
        let bridge = Bridge::start(Link::start(LinkConfig::new(locator), None), BridgeOptions::default(), None);
        let in_flight = InFlight::default();
        let calls = Calls::new(bridge, out.clone(), in_flight.clone(), Default::default(), Default::default());
        (Guard { initialize_seen: false, stateless_seen: false, in_flight, calls }, project)
    }

    fn guard_lines(lines: &[&str]) -> (Vec<String>, Vec<Value>) {
        let (out, mut rx) = Out::new();
        let (mut guard, _project) = guard(&out);
        let mut passed = Vec::new();
        for line in lines {
            match guard.check(line.as_bytes(), &out) {
                Some(Passed::Rmcp(m)) => {
                    passed.push(serde_json::to_value(m).unwrap()["method"].as_str().unwrap_or("").to_owned())
                }
                Some(Passed::ToolCall(call)) => passed.push(format!("tools/call {}", call.name)),
                None => {}
            }
        }
        drop((out, guard));
        let mut answered = Vec::new();
        while let Ok(OutItem::Line(l)) = rx.try_recv() {
            answered.push(serde_json::from_slice(&l).unwrap());
        }
        (passed, answered)
    }

    #[tokio::test]
    async fn the_guard_answers_what_rmcp_would_mishandle() {
        let (passed, answered) = guard_lines(&[
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"not json"#,
            r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"id":7,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
        ]);
        assert_eq!(passed, ["ping", "initialize", "notifications/initialized"]);
        let codes: Vec<(Value, i64)> =
            answered.iter().map(|a| (a["id"].clone(), a["error"]["code"].as_i64().unwrap())).collect();
        assert_eq!(
            codes,
            [
                (json!(1), -32602),
                (json!(2), -32600),
                (Value::Null, -32700),
                (Value::Null, -32600),
                (Value::Null, -32600),
                (json!(6), -32602),
                (json!(7), -32600),
                (Value::Null, -32600)
            ]
        );
        assert!(answered[7]["error"]["message"].as_str().unwrap().contains("must not be null"), "{}", answered[7]);
        assert!(answered[0]["error"]["message"].as_str().unwrap().contains(PROTOCOL_VERSION_KEY), "{}", answered[0]);
    }

    fn stateless(id: u32, method: &str, meta: &Value) -> String {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": meta}}).to_string()
    }

    #[tokio::test]
    async fn a_2026_07_28_request_is_served_without_a_handshake_or_refused_by_the_revisions_rules() {
        let meta = json!({PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}});
        let lines = [
            stateless(1, "server/discover", &meta),
            stateless(2, "tools/list", &json!({PROTOCOL_VERSION_KEY: "2099-01-01", CLIENT_CAPABILITIES_KEY: {}})),
            stateless(3, "tools/list", &json!({PROTOCOL_VERSION_KEY: "2026-07-28"})),
            stateless(4, "tools/list", &json!({PROTOCOL_VERSION_KEY: 20260728, CLIENT_CAPABILITIES_KEY: {}})),
            stateless(5, "ping", &meta),
            stateless(6, "logging/setLevel", &meta),
            // Before any request is served, a notification is not passed on
            // (rmcp would end the session); after one, it is.
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "_meta": meta}})
                .to_string(),
            stateless(7, "tools/list", &meta),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "_meta": meta}})
                .to_string(),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (passed, answered) = guard_lines(&lines);
        assert_eq!(passed, ["server/discover", "tools/list", "notifications/cancelled"]);
        let codes: Vec<(Value, i64)> =
            answered.iter().map(|a| (a["id"].clone(), a["error"]["code"].as_i64().unwrap())).collect();
        assert_eq!(
            codes,
            [(json!(2), -32022), (json!(3), -32602), (json!(4), -32602), (json!(5), -32601), (json!(6), -32601)]
        );
        // The refusal names what was asked, as a string, beside what is served.
        assert_eq!(answered[0]["error"]["data"], json!({"supported": SUPPORTED_VERSIONS, "requested": "2099-01-01"}));
        assert!(answered[1]["error"]["message"].as_str().unwrap().contains(CLIENT_CAPABILITIES_KEY));
    }

    #[tokio::test]
    async fn tools_call_is_served_beside_rmcp_with_its_id_held_until_answered() {
        let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{"Message":"m"},"_meta":{"progressToken":"p"}}}"#;
        let (passed, answered) = guard_lines(&[
            initialize,
            call,
            call,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping","arguments":[]}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call"}"#,
        ]);
        assert_eq!(passed, ["initialize", "tools/call ping"]);
        let refusals: Vec<(Value, &str)> =
            answered.iter().map(|a| (a["id"].clone(), a["error"]["message"].as_str().unwrap())).collect();
        assert_eq!(
            refusals,
            [
                (
                    json!(1),
                    "Invalid Request: a request with id 1 is still in flight; this tools/call was not run (use a new id for every request)"
                ),
                (json!(2), "Invalid params for tools/call: arguments must be an object"),
                (json!(3), "Invalid params for tools/call: params is missing (it names the tool)"),
            ]
        );

        let (out, mut rx) = Out::new();
        let (mut guard, _project) = guard(&out);
        assert!(guard.check(initialize.as_bytes(), &out).is_some());
        let Some(Passed::ToolCall(call)) = guard.check(call.as_bytes(), &out) else { panic!("not a call") };
        assert_eq!((call.progress_token.clone(), call.arguments.len()), (Some(json!("p")), 1));
        guard.calls.start(call);
        // Its cancellation is the call's, not rmcp's; once cancelled it is
        // never answered, and its id is free again.
        let cancelled = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
        assert!(guard.check(cancelled.as_bytes(), &out).is_none());
        for _ in 0..100 {
            if guard.in_flight.take(&json!(1)) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(!guard.in_flight.take(&json!(1)), "the id was released, then taken again above");
        drop((out, guard));
        while let Ok(item) = rx.try_recv() {
            match item {
                OutItem::Line(line) => {
                    let message: Value = serde_json::from_slice(&line).unwrap();
                    assert!(message.get("id") != Some(&json!(1)), "a cancelled call was answered: {message}");
                }
                other => panic!("a cancelled call was answered: {other:?}"),
            }
        }
    }
}
