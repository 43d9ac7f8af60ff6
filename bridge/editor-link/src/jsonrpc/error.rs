//! The error table of protocol §3: JSON-RPC's codes, the kinds of error
//! the editor link names (`data.type`), and the `error` member itself.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// JSON-RPC 2.0's error codes (§5.1 of its specification), the same on the
/// editor link and on MCP: every crate names them through these.
pub mod code {
    /// Not JSON at all.
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON that is not a request of the protocol.
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// The `error` member of an error response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    /// `Some(Value::Null)` when the peer sent `"data": null`, so a message
    /// re-serialises exactly as it arrived.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub data: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The kinds of error of protocol §2 and §3, each with its code and `data.type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A frame body that is not valid JSON (connection stays open).
    ParseError,
    /// A malformed header block (the connection is closed after the answer).
    FramingError,
    /// A frame over the receiver's size limit (connection stays open).
    FrameTooLarge,
    /// Valid JSON that is not a JSON-RPC request: a batch, a wrong `id` type …
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    SecurityBlocked,
    ToolDisabled,
    /// Cut off by a domain reload (`data.reason` is `"DomainReload"`).
    Interrupted,
    Timeout,
    /// `x-uloop.expectedProjectRoot` names another project.
    ProjectMismatch,
    /// `x-uloop.expectedServerSessionId` names an earlier session.
    SessionChanged,
    /// **Extension** `token`: the request lacks the Editor's `x-token`.
    Unauthorized,
    InternalError,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 14] = [
        ErrorKind::ParseError,
        ErrorKind::FramingError,
        ErrorKind::FrameTooLarge,
        ErrorKind::InvalidRequest,
        ErrorKind::MethodNotFound,
        ErrorKind::InvalidParams,
        ErrorKind::SecurityBlocked,
        ErrorKind::ToolDisabled,
        ErrorKind::Interrupted,
        ErrorKind::Timeout,
        ErrorKind::ProjectMismatch,
        ErrorKind::SessionChanged,
        ErrorKind::Unauthorized,
        ErrorKind::InternalError,
    ];

    /// The JSON-RPC error code.
    pub fn code(self) -> i64 {
        match self {
            ErrorKind::ParseError | ErrorKind::FramingError => code::PARSE_ERROR,
            ErrorKind::FrameTooLarge | ErrorKind::InvalidRequest => code::INVALID_REQUEST,
            ErrorKind::MethodNotFound => code::METHOD_NOT_FOUND,
            ErrorKind::InvalidParams => code::INVALID_PARAMS,
            _ => code::INTERNAL_ERROR,
        }
    }

    /// The `data.type` string.
    pub fn type_name(self) -> &'static str {
        match self {
            ErrorKind::ParseError => "parse_error",
            ErrorKind::FramingError => "framing_error",
            ErrorKind::FrameTooLarge => "frame_too_large",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::MethodNotFound => "method_not_found",
            ErrorKind::InvalidParams => "invalid_params",
            ErrorKind::SecurityBlocked => "security_blocked",
            ErrorKind::ToolDisabled => "tool_disabled",
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::Timeout => "timeout",
            ErrorKind::ProjectMismatch => "project_mismatch",
            ErrorKind::SessionChanged => "session_changed",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::InternalError => "internal_error",
        }
    }

    /// The kind named by a `data.type` string.
    pub fn from_type_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|kind| kind.type_name() == name)
    }

    /// The top-level `message` used for this kind.
    pub fn default_message(self) -> &'static str {
        match self {
            ErrorKind::ParseError => "Parse error",
            ErrorKind::FramingError => "Framing error",
            ErrorKind::FrameTooLarge => "Frame too large",
            ErrorKind::InvalidRequest => "Invalid Request",
            ErrorKind::MethodNotFound => "Method not found",
            ErrorKind::InvalidParams => "Invalid params",
            ErrorKind::SecurityBlocked => "Tool blocked by security settings",
            ErrorKind::ToolDisabled => "Tool disabled",
            ErrorKind::Interrupted => "Request interrupted",
            ErrorKind::Timeout => "Request timed out",
            ErrorKind::ProjectMismatch => "Project mismatch",
            ErrorKind::SessionChanged => "Server session changed",
            ErrorKind::Unauthorized => "Unauthorized",
            ErrorKind::InternalError => "Internal error",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.type_name())
    }
}

impl ErrorObject {
    /// An error of `kind`: its code and message, and `data` with `type` and
    /// `message` (the detail).
    pub fn new(kind: ErrorKind, detail: impl Into<String>) -> Self {
        ErrorObject {
            code: kind.code(),
            message: kind.default_message().to_owned(),
            data: Some(json!({"type": kind.type_name(), "message": detail.into()})),
        }
    }

    /// Adds a field to `data` (`command`, `reason`, `parameter` …).
    pub fn with_data(mut self, key: &str, value: impl Into<Value>) -> Self {
        if let Some(Value::Object(data)) = &mut self.data {
            data.insert(key.to_owned(), value.into());
        }
        self
    }

    /// `data.type`, when present.
    pub fn data_type(&self) -> Option<&str> {
        self.data.as_ref()?.get("type")?.as_str()
    }

    /// `data.message`, else the top-level message.
    pub fn detail(&self) -> &str {
        // uLoopMCP 2.1.1 puts the explanation in `data.message` ("Internal
        // error" above it), or in `message` with `data.message` empty.
        let data_message = self.data.as_ref().and_then(|d| d.get("message")).and_then(Value::as_str);
        data_message.filter(|m| !m.trim().is_empty()).unwrap_or(&self.message)
    }

    /// What kind of error this is, understanding uLoopMCP's shapes as well as
    /// ours (protocol §3: uLoopMCP reports an unknown tool as `-32603`
    /// "Unknown tool: X", a disabled tool as an `internal_error`, and an
    /// `x-uloop` it refuses in words). The one place an error's text is read.
    pub fn kind(&self) -> ErrorKind {
        if let Some(kind) = self.data_type().and_then(ErrorKind::from_type_name) {
            if kind != ErrorKind::InternalError {
                return kind;
            }
        }
        let detail = self.detail();
        match self.code {
            code::PARSE_ERROR => ErrorKind::ParseError,
            code::INVALID_REQUEST => ErrorKind::InvalidRequest,
            code::METHOD_NOT_FOUND => ErrorKind::MethodNotFound,
            code::INVALID_PARAMS => ErrorKind::InvalidParams,
            _ if detail.starts_with("Unknown tool") => ErrorKind::MethodNotFound,
            _ if detail.contains("is disabled") && detail.starts_with("Tool ") => ErrorKind::ToolDisabled,
            // uLoopMCP 2.1.1: "Tool 'x' is disabled. To enable it, …" above
            // "This tool has been disabled in project settings."
            _ if self.message.starts_with("Tool '") && self.message.contains("is disabled") => ErrorKind::ToolDisabled,
            // uLoopMCP 2.1.1's ParameterValidationException.
            _ if detail.starts_with("Parameter type mismatch for tool") => ErrorKind::InvalidParams,
            // uLoopMCP's answers to an `x-uloop` it refuses.
            _ if self.message == crate::dialect::uloop_3::OTHER_PROJECT => ErrorKind::ProjectMismatch,
            _ if self.message == crate::dialect::uloop_3::SESSION_CHANGED => ErrorKind::SessionChanged,
            _ => ErrorKind::InternalError,
        }
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.message, self.code, self.detail())
    }
}

impl std::error::Error for ErrorObject {}
