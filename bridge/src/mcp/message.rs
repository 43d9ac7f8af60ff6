//! The client's messages, read once: a line of the input becomes a typed
//! [`Incoming`] — a [`Request`] with its [`Method`] and the revision its
//! `_meta` names, a [`Notification`], or a response (the bridge asks the
//! client nothing) — or is refused with the error it gets ([`Unread`]).
//!
//! Everything JSON-RPC and MCP say of a message on its own is checked here:
//! JSON, one object (batches were removed in 2025-06-18), `"jsonrpc":
//! "2.0"`, an id that is a string or an integer (never `null`), a method,
//! and for a request that names its revision in `_meta` (2026-07-28-style)
//! that revision's own rules. What depends on the session (the lifecycle,
//! ids in flight) is the [dispatcher](super::dispatch)'s.

use serde_json::{Map, Value, json};

use super::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, STATELESS_VERSION, SUPPORTED_VERSIONS};
use editor_link::jsonrpc::code;

/// MCP 2026-07-28's error for a revision the server does not serve.
pub(super) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// One message from the client.
#[derive(Debug)]
pub(super) enum Incoming {
    Request(Request),
    Notification(Notification),
    /// A response or an error: the bridge asks the client nothing, so it is
    /// not waited for.
    Response,
}

/// A request: answered exactly once (unless the client cancels it).
#[derive(Debug)]
pub(super) struct Request {
    pub id: Value,
    pub method: Method,
    /// As sent (`None` when absent).
    pub params: Option<Value>,
    /// The revision its `_meta` names, already checked; `None` for a
    /// request of the handshake revisions.
    pub versioned: Option<Versioned>,
}

/// A request that names its revision in `_meta`
/// (`io.modelcontextprotocol/protocolVersion`): one of those served, with
/// the client's capabilities beside it, as 2026-07-28 asks of every request.
#[derive(Debug)]
pub(super) struct Versioned {
    pub version: String,
    pub meta: Map<String, Value>,
}

impl Versioned {
    /// 2026-07-28 or later: results carry `resultType` and cache hints.
    pub fn stateless(&self) -> bool {
        self.version.as_str() >= STATELESS_VERSION
    }
}

/// A message without an id: nothing answers it.
#[derive(Debug)]
pub(super) struct Notification {
    pub method: String,
    pub params: Option<Value>,
}

impl Notification {
    /// The request a `notifications/cancelled` names.
    pub fn cancelled_request(&self) -> Option<&Value> {
        (self.method == "notifications/cancelled").then(|| self.params.as_ref()?.get("requestId")).flatten()
    }
}

/// The methods this server serves; any other is not found (MCP's own for
/// capabilities it does not declare among them: prompts, completions,
/// logging, resource subscriptions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Method {
    Initialize,
    Ping,
    ServerDiscover,
    ToolsList,
    ToolsCall,
    ResourcesList,
    ResourceTemplatesList,
    ResourcesRead,
    SubscriptionsListen,
    /// The tasks extension's (2026-07-28).
    TasksGet,
    TasksUpdate,
    TasksCancel,
    Other(String),
}

impl Method {
    fn of(name: &str) -> Method {
        match name {
            "initialize" => Method::Initialize,
            "ping" => Method::Ping,
            "server/discover" => Method::ServerDiscover,
            "tools/list" => Method::ToolsList,
            "tools/call" => Method::ToolsCall,
            "resources/list" => Method::ResourcesList,
            "resources/templates/list" => Method::ResourceTemplatesList,
            "resources/read" => Method::ResourcesRead,
            "subscriptions/listen" => Method::SubscriptionsListen,
            "tasks/get" => Method::TasksGet,
            "tasks/update" => Method::TasksUpdate,
            "tasks/cancel" => Method::TasksCancel,
            other => Method::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::ServerDiscover => "server/discover",
            Method::ToolsList => "tools/list",
            Method::ToolsCall => "tools/call",
            Method::ResourcesList => "resources/list",
            Method::ResourceTemplatesList => "resources/templates/list",
            Method::ResourcesRead => "resources/read",
            Method::SubscriptionsListen => "subscriptions/listen",
            Method::TasksGet => "tasks/get",
            Method::TasksUpdate => "tasks/update",
            Method::TasksCancel => "tasks/cancel",
            Method::Other(name) => name,
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What 2026-07-28 removed, not found for its requests.
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

/// A JSON-RPC error answer (boxed: it is the error of most steps, whose
/// results are small).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Refusal(Box<Refused>);

/// What a [`Refusal`] says.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Refused {
    /// The request's id, when it could be read.
    pub id: Option<Value>,
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl std::ops::Deref for Refusal {
    type Target = Refused;

    fn deref(&self) -> &Refused {
        &self.0
    }
}

impl Refusal {
    pub fn new(id: Option<&Value>, code: i64, message: impl Into<String>) -> Refusal {
        Refusal(Box::new(Refused { id: id.cloned(), code, message: message.into(), data: None }))
    }

    pub fn with_data(mut self, data: Value) -> Refusal {
        self.0.data = Some(data);
        self
    }

    /// `Invalid params for METHOD: WHY`.
    pub fn invalid_params(id: &Value, method: &Method, why: impl std::fmt::Display) -> Refusal {
        Refusal::new(Some(id), code::INVALID_PARAMS, format!("Invalid params for {method}: {why}"))
    }

    /// A method this server does not serve: its name as the message.
    pub fn not_found(id: &Value, method: &Method) -> Refusal {
        Refusal::new(Some(id), code::METHOD_NOT_FOUND, method.as_str())
    }
}

/// Why a line is not a message to serve.
#[derive(Debug, PartialEq)]
pub(super) enum Unread {
    /// Answered with this error.
    Refused(Refusal),
    /// Nothing answers it (a notification or a stray response that cannot
    /// be read): why, for the log.
    Dropped(&'static str),
}

impl From<Refusal> for Unread {
    fn from(refusal: Refusal) -> Self {
        Unread::Refused(refusal)
    }
}

/// Reads one line of the input.
pub(super) fn read(line: &[u8]) -> Result<Incoming, Unread> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| Refusal::new(None, code::PARSE_ERROR, format!("Parse error: {e}")))?;
    let mut message = match value {
        Value::Object(message) => message,
        Value::Array(_) => {
            let why = "Invalid Request: batches are not supported (removed in MCP 2025-06-18)";
            return Err(Refusal::new(None, code::INVALID_REQUEST, why).into());
        }
        _ => {
            return Err(
                Refusal::new(None, code::INVALID_REQUEST, "Invalid Request: a message must be a JSON object").into()
            );
        }
    };
    // MCP forbids a null id (a request's is a string or an integer): it is
    // neither a request to run nor a notification to ignore.
    if message.get("id").is_some_and(Value::is_null) && message.contains_key("method") {
        let why = "Invalid Request: an id must not be null (MCP: a string or an integer)";
        return Err(Refusal::new(None, code::INVALID_REQUEST, why).into());
    }
    let id = message.remove("id").filter(|id| !id.is_null());
    if id.as_ref().is_some_and(|id| !id.is_string() && !id.is_i64()) {
        let why = "Invalid Request: an id must be a string or a 64-bit integer";
        return Err(Refusal::new(None, code::INVALID_REQUEST, why).into());
    }
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(match &id {
            Some(id) => {
                Refusal::new(Some(id), code::INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"").into()
            }
            None => Unread::Dropped("a message without \"jsonrpc\": \"2.0\""),
        });
    }
    let params = message.remove("params");
    let method = match message.remove("method") {
        Some(Value::String(method)) => Some(method),
        _ => None,
    };
    match (id, method) {
        (Some(id), Some(method)) => {
            let method = Method::of(&method);
            let versioned = versioned(&id, &method, params.as_ref())?;
            Ok(Incoming::Request(Request { id, method, params, versioned }))
        }
        (None, Some(method)) => Ok(Incoming::Notification(Notification { method, params })),
        (Some(_), None) if message.contains_key("result") || message.contains_key("error") => Ok(Incoming::Response),
        (Some(id), None) => Err(Refusal::new(Some(&id), code::INVALID_REQUEST, "Invalid Request: no method").into()),
        (None, None) => Err(Unread::Dropped("a message with neither an id nor a method")),
    }
}

/// The revision a request names in `_meta`, checked by that revision's
/// rules: one served (-32022 with the list otherwise), the client's
/// capabilities beside it (-32602), not a method it removed (-32601).
/// `None`: a request of the handshake revisions.
fn versioned(id: &Value, method: &Method, params: Option<&Value>) -> Result<Option<Versioned>, Refusal> {
    let meta = match params.and_then(|p| p.get("_meta")).and_then(Value::as_object) {
        Some(meta) if meta.contains_key(PROTOCOL_VERSION_KEY) => meta,
        _ => return Ok(None),
    };
    let Some(requested) = meta.get(PROTOCOL_VERSION_KEY).and_then(Value::as_str) else {
        let why = format!("Invalid params: _meta[\"{PROTOCOL_VERSION_KEY}\"] must be a string");
        return Err(Refusal::new(Some(id), code::INVALID_PARAMS, why));
    };
    if !SUPPORTED_VERSIONS.contains(&requested) {
        return Err(Refusal::new(Some(id), UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version")
            .with_data(json!({"supported": SUPPORTED_VERSIONS, "requested": requested})));
    }
    if !meta.get(CLIENT_CAPABILITIES_KEY).is_some_and(Value::is_object) {
        let why = format!("Invalid params: _meta is missing the required key {CLIENT_CAPABILITIES_KEY} (an object)");
        return Err(Refusal::new(Some(id), code::INVALID_PARAMS, why));
    }
    if requested == STATELESS_VERSION && REMOVED_IN_STATELESS.contains(&method.as_str()) {
        let why = format!("Method not found: {method} is not part of MCP {STATELESS_VERSION}");
        return Err(Refusal::new(Some(id), code::METHOD_NOT_FOUND, why).with_data(json!(method.as_str())));
    }
    Ok(Some(Versioned { version: requested.to_owned(), meta: meta.clone() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(line: &str) -> (Option<Value>, i64) {
        match read(line.as_bytes()) {
            Err(Unread::Refused(r)) => (r.id.clone(), r.code),
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn a_line_is_read_once_into_what_it_is_or_refused_as_json_rpc_says() {
        assert_eq!(refused("not json"), (None, code::PARSE_ERROR));
        assert_eq!(refused(r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#), (None, code::INVALID_REQUEST));
        assert_eq!(refused(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#), (None, code::INVALID_REQUEST));
        assert_eq!(refused(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#), (None, code::INVALID_REQUEST));
        assert_eq!(refused(r#"{"id":7,"method":"ping"}"#), (Some(json!(7)), code::INVALID_REQUEST));
        assert_eq!(refused(r#"{"jsonrpc":"2.0","id":8}"#), (Some(json!(8)), code::INVALID_REQUEST));
        assert_eq!(
            read(br#"{"method":"notifications/initialized"}"#).unwrap_err(),
            Unread::Dropped("a message without \"jsonrpc\": \"2.0\"")
        );
        assert!(matches!(read(br#"{"jsonrpc":"2.0","id":9,"result":{}}"#), Ok(Incoming::Response)));
        let Ok(Incoming::Request(request)) = read(br#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#) else {
            panic!()
        };
        assert_eq!((request.method, request.versioned.is_none()), (Method::ToolsList, true));
        let cancelled = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#;
        let Ok(Incoming::Notification(note)) = read(cancelled.as_bytes()) else { panic!() };
        assert_eq!(note.cancelled_request(), Some(&json!(3)));
    }

    #[test]
    fn a_request_that_names_its_revision_is_held_to_that_revisions_rules() {
        let line = |method: &str, meta: Value| {
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"_meta": meta}}).to_string()
        };
        let served = json!({PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}});
        let Ok(Incoming::Request(request)) = read(line("tools/list", served.clone()).as_bytes()) else { panic!() };
        assert!(request.versioned.unwrap().stateless());
        let unknown = json!({PROTOCOL_VERSION_KEY: "2099-01-01", CLIENT_CAPABILITIES_KEY: {}});
        assert_eq!(refused(&line("tools/list", unknown)), (Some(json!(1)), UNSUPPORTED_PROTOCOL_VERSION));
        let bare = json!({PROTOCOL_VERSION_KEY: "2026-07-28"});
        assert_eq!(refused(&line("tools/list", bare)), (Some(json!(1)), code::INVALID_PARAMS));
        let number = json!({PROTOCOL_VERSION_KEY: 20260728, CLIENT_CAPABILITIES_KEY: {}});
        assert_eq!(refused(&line("tools/list", number)), (Some(json!(1)), code::INVALID_PARAMS));
        assert_eq!(refused(&line("ping", served.clone())), (Some(json!(1)), code::METHOD_NOT_FOUND));
        let older = json!({PROTOCOL_VERSION_KEY: "2025-11-25", CLIENT_CAPABILITIES_KEY: {}});
        let Ok(Incoming::Request(request)) = read(line("ping", older).as_bytes()) else { panic!() };
        assert!(!request.versioned.unwrap().stateless(), "2025-11-25 named in _meta: served, without resultType");
    }
}
