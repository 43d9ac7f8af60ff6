//! JSON-RPC 2.0 messages of the editor link (protocol §3, §4): parsed from
//! a frame body and written back exactly. Request ids are in `id.rs`, the
//! error table of §3 in `error.rs`.
//!
//! Small nouns, as in lsp-server: a [`Message`] is a [`Request`], a
//! [`Notification`] or a [`Response`]. Ids keep their JSON type and value
//! exactly; params keep their key order (`serde_json` is built with
//! `preserve_order` in this workspace).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The request member that carries the Editor's token (extension `token`).
pub const TOKEN_MEMBER: &str = "x-token";

/// The request member that asks for a cut-off call's journaled answer
/// (extension `resume`, protocol §5): `"x-resume": true`.
pub const RESUME_MEMBER: &str = "x-resume";

/// uLoopMCP 3's request member (`docs/uloop-3-wire.md` §5): the project
/// root and server session the client expects.
pub const ULOOP_MEMBER: &str = "x-uloop";

mod error;
mod id;

pub use error::{ErrorKind, ErrorObject, code};
pub use id::{Id, IdNumber};

/// Any message on the editor link.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    Request(Request),
    Notification(Notification),
    Response(Response),
}

/// A call that expects exactly one response.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub id: Id,
    pub method: String,
    /// `None` when absent; `Some(Value::Null)` is kept as sent.
    pub params: Option<Value>,
    /// Top-level fields other than `jsonrpc`, `id`, `method` and `params`, in
    /// order: the extensions `x-resume`, `x-token` and `x-uloop` live here.
    pub extra: Map<String, Value>,
}

/// A message without an id; nothing answers it.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    pub method: String,
    pub params: Option<Value>,
}

/// The answer to a request. `id` is `None` (sent as `null`) when the request
/// could not be read far enough to know its id.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub id: Option<Id>,
    pub outcome: Result<Value, ErrorObject>,
}

/// Why a frame body is not a message.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ParseFailure {
    /// Not JSON at all: answer `parse_error`.
    #[error("invalid JSON: {0}")]
    NotJson(String),
    /// A JSON array: batches are not supported (answer `invalid_request`).
    #[error("batch requests are not supported")]
    Batch,
    /// JSON, but not a JSON-RPC message. `id` is the request's id when it could
    /// be read, so the error can be addressed to it.
    #[error("invalid request: {reason}")]
    Invalid { id: Option<Id>, reason: String },
}

impl ParseFailure {
    /// The error response this failure is answered with.
    pub fn to_response(&self) -> Response {
        match self {
            ParseFailure::NotJson(detail) => {
                Response::error(None, ErrorObject::new(ErrorKind::ParseError, detail.clone()))
            }
            ParseFailure::Batch => Response::error(
                None,
                ErrorObject::new(ErrorKind::InvalidRequest, "batch requests (JSON arrays) are not supported"),
            ),
            ParseFailure::Invalid { id, reason } => {
                Response::error(id.clone(), ErrorObject::new(ErrorKind::InvalidRequest, reason.clone()))
            }
        }
    }
}

impl Message {
    /// Parses one frame body.
    pub fn parse(body: &[u8]) -> Result<Message, ParseFailure> {
        let value: Value = serde_json::from_slice(body).map_err(|e| ParseFailure::NotJson(e.to_string()))?;
        // A numeric id that is not a 64-bit integer was read as a float:
        // its exact text is read again from the body (rare, so the common
        // case parses once).
        let inexact = matches!(value.get("id"), Some(Value::Number(n)) if n.is_f64());
        let mut parsed = Message::from_value(value);
        if inexact {
            if let Some(exact) = exact_id(body) {
                match &mut parsed {
                    Ok(Message::Request(r)) => r.id = exact,
                    Ok(Message::Response(Response { id: Some(id), .. }))
                    | Err(ParseFailure::Invalid { id: Some(id), .. }) => *id = exact,
                    _ => {}
                }
            }
        }
        parsed
    }

    /// Reads a frame as uLoopMCP 2.1.1's Editor does (`JsonRpcProcessor`):
    /// an object with a non-null `id` is a request whatever the id's type,
    /// `jsonrpc` is not checked, a method that is not a string is taken as
    /// its text (none: the empty name), and without an id it is a
    /// notification. A batch or a non-object is still a failure.
    pub fn parse_lenient(body: &[u8]) -> Result<Message, ParseFailure> {
        let value: Value = serde_json::from_slice(body).map_err(|e| ParseFailure::NotJson(e.to_string()))?;
        let Value::Object(mut obj) = value else { return Message::from_value(value) };
        if obj.contains_key("result") || obj.contains_key("error") {
            return Message::parse(body);
        }
        let id = match obj.remove("id") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(Id::String(s)),
            Some(Value::Number(n)) => Some(exact_id(body).unwrap_or(Id::Number((&n).into()))),
            Some(other) => Some(Id::Other(other.to_string())),
        };
        obj.remove("jsonrpc");
        let method = match obj.remove("method") {
            Some(Value::String(method)) => method,
            None | Some(Value::Null) => String::new(),
            Some(other) => other.to_string(),
        };
        let params = obj.remove("params");
        Ok(match id {
            Some(id) => Message::Request(Request { id, method, params, extra: obj }),
            None => Message::Notification(Notification { method, params }),
        })
    }

    /// Classifies a JSON value as a message (protocol §3).
    pub fn from_value(value: Value) -> Result<Message, ParseFailure> {
        let mut obj = match value {
            Value::Object(obj) => obj,
            Value::Array(_) => return Err(ParseFailure::Batch),
            other => {
                return Err(ParseFailure::Invalid {
                    id: None,
                    reason: format!("a message must be a JSON object, not {}", json_type(&other)),
                });
            }
        };
        let id = match obj.get("id").map(Id::from_value).transpose() {
            Ok(id) => id.flatten(),
            Err(reason) => return Err(ParseFailure::Invalid { id: None, reason }),
        };
        let invalid = |reason: String| ParseFailure::Invalid { id: id.clone(), reason };
        match obj.get("jsonrpc") {
            None => {}
            Some(Value::String(v)) if v == "2.0" => {}
            Some(other) => {
                return Err(invalid(format!("\"jsonrpc\" must be \"2.0\", not {other}")));
            }
        }
        obj.remove("jsonrpc");
        obj.remove("id");

        if let Some(method) = obj.remove("method") {
            let Value::String(method) = method else {
                return Err(invalid(format!("\"method\" must be a string, not {}", json_type(&method))));
            };
            let params = obj.remove("params");
            return Ok(match id {
                Some(id) => Message::Request(Request { id, method, params, extra: obj }),
                None => Message::Notification(Notification { method, params }),
            });
        }

        match (obj.remove("result"), obj.remove("error")) {
            (Some(result), None) => Ok(Message::Response(Response { id, outcome: Ok(result) })),
            (None, Some(error)) => {
                let error: ErrorObject =
                    serde_json::from_value(error).map_err(|e| invalid(format!("malformed \"error\" member: {e}")))?;
                Ok(Message::Response(Response { id, outcome: Err(error) }))
            }
            (Some(_), Some(_)) => Err(invalid("a response has both \"result\" and \"error\"".into())),
            (None, None) => Err(invalid("no \"method\", \"result\" or \"error\" member".into())),
        }
    }

    /// The message as a JSON value, members in the conventional order (a
    /// numeric id that is not a 64-bit integer becomes a float here; use
    /// [`Message::to_bytes`] to send).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The message as compact JSON bytes (never containing a raw newline),
    /// ids exactly as received.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Serialising cannot fail: every map key is a string and every id
        // number is valid JSON text.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// The exact text of a numeric top-level `id` in `body`.
fn exact_id(body: &[u8]) -> Option<Id> {
    #[derive(Deserialize)]
    struct IdOnly {
        id: Box<serde_json::value::RawValue>,
    }
    let raw = serde_json::from_slice::<IdOnly>(body).ok()?;
    IdNumber::parse(raw.id.get()).map(Id::Number)
}

impl Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        match self {
            Message::Request(req) => {
                map.serialize_entry("id", &req.id)?;
                map.serialize_entry("method", &req.method)?;
                if let Some(params) = &req.params {
                    map.serialize_entry("params", params)?;
                }
                for (k, v) in &req.extra {
                    map.serialize_entry(k, v)?;
                }
            }
            Message::Notification(note) => {
                map.serialize_entry("method", &note.method)?;
                if let Some(params) = &note.params {
                    map.serialize_entry("params", params)?;
                }
            }
            Message::Response(resp) => {
                map.serialize_entry("id", &resp.id)?;
                match &resp.outcome {
                    Ok(result) => map.serialize_entry("result", result)?,
                    Err(error) => map.serialize_entry("error", error)?,
                }
            }
        }
        map.end()
    }
}

impl Request {
    pub fn new(id: impl Into<Id>, method: impl Into<String>, params: Value) -> Self {
        Request { id: id.into(), method: method.into(), params: Some(params), extra: Map::new() }
    }

    /// The params as an object: absent or `null` is `{}` (protocol §3); any
    /// other non-object is an error naming its type.
    pub fn params_object(&self) -> Result<Map<String, Value>, String> {
        match &self.params {
            None | Some(Value::Null) => Ok(Map::new()),
            Some(Value::Object(map)) => Ok(map.clone()),
            Some(other) => Err(format!("params must be an object, not {}", json_type(other))),
        }
    }

    /// True when the request carries `"x-resume": true` (protocol §5).
    pub fn is_resume(&self) -> bool {
        self.extra.get(RESUME_MEMBER).and_then(Value::as_bool).unwrap_or(false)
    }

    /// Marks this request as a resumed one (`"x-resume": true`).
    pub fn resumed(mut self) -> Self {
        self.extra.insert(RESUME_MEMBER.into(), Value::Bool(true));
        self
    }

    /// The `x-token` member (extension `token`, protocol §7), when it is a string.
    pub fn token(&self) -> Option<&str> {
        self.extra.get(TOKEN_MEMBER).and_then(Value::as_str)
    }

    /// Adds the Editor's token (extension `token`) to this request.
    pub fn with_token(mut self, token: Option<&str>) -> Self {
        if let Some(token) = token {
            self.extra.insert(TOKEN_MEMBER.into(), Value::String(token.to_owned()));
        }
        self
    }

    /// uLoopMCP's `x-uloop` member, when present.
    pub fn uloop(&self) -> Option<&Map<String, Value>> {
        self.extra.get(ULOOP_MEMBER).and_then(Value::as_object)
    }
}

impl Notification {
    pub fn new(method: impl Into<String>, params: Value) -> Self {
        Notification { method: method.into(), params: Some(params) }
    }
}

impl Response {
    pub fn ok(id: Id, result: Value) -> Self {
        Response { id: Some(id), outcome: Ok(result) }
    }

    pub fn error(id: Option<Id>, error: ErrorObject) -> Self {
        Response { id, outcome: Err(error) }
    }
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Message::Request(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Message::Notification(n)
    }
}

impl From<Response> for Message {
    fn from(r: Response) -> Self {
        Message::Response(r)
    }
}

/// Method names of the Editor's notifications (protocol §4).
pub mod notifications {
    pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
    pub const SERVER_SHUTDOWN: &str = "notifications/server/shutdown";
    pub const PROGRESS: &str = "notifications/progress";
}

/// "string", "number" … as JSON Schema names types, for error messages.
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(s: &str) -> Result<Message, ParseFailure> {
        Message::parse(s.as_bytes())
    }

    #[test]
    fn uloops_two_error_shapes_both_have_their_explanation_read() {
        // fixtures/recordings/uloop-2.1.1/raw-requests.jsonl r12 and r11.
        let first: ErrorObject =
            serde_json::from_value(serde_json::json!({"code": -32603, "message": "Internal error",
            "data": {"type": "internal_error", "message": "Unknown tool: no-such-tool"}}))
            .unwrap();
        assert_eq!((first.detail(), first.kind()), ("Unknown tool: no-such-tool", ErrorKind::MethodNotFound));
        let text = "Parameter type mismatch for tool 'get-tool-details': Error converting value \"yes\" to type 'System.Boolean'. Path 'IncludeDevelopmentOnly', line 1, position 104.";
        let second: ErrorObject = serde_json::from_value(
            serde_json::json!({"code": -32603, "message": text, "data": {"type": "internal_error", "message": ""}}),
        )
        .unwrap();
        assert_eq!((second.detail(), second.kind()), (text, ErrorKind::InvalidParams));
        let disabled: ErrorObject = serde_json::from_value(serde_json::json!({"code": -32603,
            "message": "Tool 'run-tests' is disabled. To enable it, go to Window > uLoop > Tool Settings",
            "data": {"type": "internal_error", "message": "This tool has been disabled in project settings."}}))
        .unwrap();
        assert_eq!(disabled.kind(), ErrorKind::ToolDisabled);
        // docs/uloop-3-wire.md §5: an x-uloop refused, in words only.
        let refused = |text: &str| ErrorObject {
            code: code::INTERNAL_ERROR,
            message: text.into(),
            data: Some(serde_json::json!({"type": "internal_error", "message": ""})),
        };
        assert_eq!(refused(crate::dialect::uloop_3::OTHER_PROJECT).kind(), ErrorKind::ProjectMismatch);
        assert_eq!(refused(crate::dialect::uloop_3::SESSION_CHANGED).kind(), ErrorKind::SessionChanged);
    }

    #[test]
    fn ids_round_trip_type_and_value() {
        for raw in [
            r#""b-1""#,
            "7",
            "-3",
            "1.5",
            "18446744073709551615",
            "123456789012345678901234567890",
            "-0",
            "1e3",
            r#""""#,
            r#""7""#,
        ] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"ping","params":{{}}}}"#);
            let msg = parse(&text).unwrap();
            let Message::Request(req) = &msg else { panic!("{msg:?}") };
            let echoed = Message::Response(Response::ok(req.id.clone(), json!({})));
            let bytes = String::from_utf8(echoed.to_bytes()).unwrap();
            assert_eq!(bytes, format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#));
            assert_eq!(String::from_utf8(msg.to_bytes()).unwrap(), text);
        }
        // A response's id, and the id of a request that is otherwise invalid, too.
        let big = r#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":1}"#;
        assert_eq!(String::from_utf8(parse(big).unwrap().to_bytes()).unwrap(), big);
        let Err(ParseFailure::Invalid { id: Some(id), .. }) = parse(r#"{"id":-0,"method":5}"#) else { panic!() };
        assert_eq!(id.to_string(), "-0");
    }

    #[test]
    fn params_keep_key_order() {
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"z":1,"a":2,"m":{"y":0,"b":1}}}"#;
        assert_eq!(String::from_utf8(parse(text).unwrap().to_bytes()).unwrap(), text);
    }

    #[test]
    fn null_or_missing_id_is_a_notification() {
        for text in [r#"{"jsonrpc":"2.0","method":"ping"}"#, r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#] {
            assert!(matches!(parse(text).unwrap(), Message::Notification(n) if n.method == "ping"));
        }
    }

    #[test]
    fn extensions_are_kept() {
        let msg = parse(r#"{"jsonrpc":"2.0","id":"r","method":"compile","params":{},"x-resume":true,"x-uloop":{"expectedProjectRoot":"/p"}}"#)
            .unwrap();
        let Message::Request(req) = msg else { panic!() };
        assert!(req.is_resume());
        assert_eq!(req.uloop().unwrap()["expectedProjectRoot"], "/p");
    }

    #[test]
    fn bad_messages_are_classified() {
        assert!(matches!(parse("{nope"), Err(ParseFailure::NotJson(_))));
        assert!(matches!(parse(""), Err(ParseFailure::NotJson(_))));
        assert_eq!(parse(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#), Err(ParseFailure::Batch));
        assert!(matches!(parse("42"), Err(ParseFailure::Invalid { id: None, .. })));
        assert!(matches!(parse(r#"{"id":true,"method":"x"}"#), Err(ParseFailure::Invalid { id: None, .. })));
        assert!(matches!(parse(r#"{"id":3,"method":5}"#), Err(ParseFailure::Invalid { id: Some(Id::Number(_)), .. })));
        assert!(matches!(parse(r#"{"jsonrpc":"1.0","id":3,"method":"x"}"#), Err(ParseFailure::Invalid { .. })));
        assert!(matches!(parse(r#"{"id":3}"#), Err(ParseFailure::Invalid { .. })));
        assert!(matches!(
            parse(r#"{"id":3,"result":1,"error":{"code":1,"message":"m"}}"#),
            Err(ParseFailure::Invalid { .. })
        ));
    }

    #[test]
    fn failures_answer_with_the_table_of_section_3() {
        let resp = ParseFailure::NotJson("x".into()).to_response();
        let err = resp.outcome.unwrap_err();
        assert_eq!((resp.id, err.code, err.data_type()), (None, -32700, Some("parse_error")));
        let err = ParseFailure::Batch.to_response().outcome.unwrap_err();
        assert_eq!((err.code, err.data_type()), (-32600, Some("invalid_request")));
    }

    #[test]
    fn responses_round_trip() {
        let ok = r#"{"jsonrpc":"2.0","id":"a","result":{"Message":"hi","Ver":"1.0.0"}}"#;
        assert_eq!(String::from_utf8(parse(ok).unwrap().to_bytes()).unwrap(), ok);
        let err = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Frame too large","data":{"type":"frame_too_large","message":"m"}}}"#;
        let msg = parse(err).unwrap();
        let Message::Response(Response { id: None, outcome: Err(e) }) = &msg else { panic!("{msg:?}") };
        assert_eq!(e.kind(), ErrorKind::FrameTooLarge);
        assert_eq!(String::from_utf8(msg.to_bytes()).unwrap(), err);
    }

    #[test]
    fn error_kinds_have_codes_and_types() {
        for kind in ErrorKind::ALL {
            let err = ErrorObject::new(kind, "detail");
            assert_eq!(err.kind(), kind, "{kind}");
            assert_eq!(ErrorKind::from_type_name(kind.type_name()), Some(kind));
        }
        let blocked = ErrorObject::new(ErrorKind::SecurityBlocked, "no").with_data("command", "run-tests");
        assert_eq!(blocked.data.as_ref().unwrap()["command"], "run-tests");
        assert_eq!(blocked.code, -32603);
    }

    #[test]
    fn uloop_error_shapes_are_understood() {
        let unknown = ErrorObject {
            code: -32603,
            message: "Internal error".into(),
            data: Some(json!({"type": "internal_error", "message": "Unknown tool: nope"})),
        };
        assert_eq!(unknown.kind(), ErrorKind::MethodNotFound);
        let disabled = ErrorObject {
            code: -32603,
            message: "Internal error".into(),
            data: Some(json!({"type": "internal_error", "message": "Tool 'compile' is disabled in settings"})),
        };
        assert_eq!(disabled.kind(), ErrorKind::ToolDisabled);
    }
}
