//! How an Editor answers a request it cannot run (protocol §3), and which
//! of those failures it also writes to its console.
//!
//! The core says what went wrong as a [`Failure`]; the [`ErrorPolicy`]
//! words and shapes it. The package answers with the protocol's codes and
//! `data.type`s. uLoopMCP 2.1.1 answers everything `-32603` in one of two
//! shapes — `"Internal error"` with the explanation in `data.message`, or
//! the explanation in `message` and an empty `data.message` — and logs most
//! failures with `Debug.LogError` (`Api/JsonRpcProcessor.cs`, read at
//! v2.1.1; the texts are those of its recordings).

use editor_link::jsonrpc::{ErrorKind, ErrorObject, ParseFailure, Response};
use serde_json::{Value, json};

/// What went wrong with a request, before any tool ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure<'a> {
    /// No tool has that name.
    UnknownTool { method: &'a str },
    /// `x-uloop.expectedProjectRoot` names another project.
    ProjectMismatch { expected: &'a str, actual: &'a str },
    /// `x-uloop.expectedServerSessionId` names another session.
    SessionChanged { expected: &'a str, actual: &'a str },
    /// `x-uloop` lacks a field the Editor requires (uLoopMCP 2.1.1 wants both).
    ExpectationIncomplete { field: &'static str },
    /// A tool turned off in the project's settings.
    Disabled { tool: &'a str },
    /// A tool the security settings do not allow.
    Blocked { tool: &'a str, reason: &'a str },
}

/// The stack of a failure uLoopMCP 2.1.1 logs, as its recordings show it
/// (mono frames; a real Editor names files and lines instead).
const MVID: &str = "<57a4c1002c7c44cb80e254c84a73a1a8>:0";

fn frames(frames: &[(&str, &str)]) -> String {
    let lines: Vec<String> = frames.iter().map(|(call, offset)| format!("  at {call} [{offset}] in {MVID}")).collect();
    lines.join(" \n")
}

const EXECUTE_METHOD: (&str, &str) = (
    "io.github.hatayama.uLoopMCP.JsonRpcProcessor.ExecuteMethod (System.String method, Newtonsoft.Json.Linq.JToken paramsToken)",
    "0x0006b",
);
const PROCESS_RPC: (&str, &str) = (
    "io.github.hatayama.uLoopMCP.JsonRpcProcessor.ProcessRpcRequest (io.github.hatayama.uLoopMCP.JsonRpcRequest request, System.String originalJson)",
    "0x00115",
);
const EXECUTE_COMMAND: (&str, &str) = (
    "io.github.hatayama.uLoopMCP.UnityApiHandler.ExecuteCommandAsync (System.String commandName, Newtonsoft.Json.Linq.JToken paramsToken)",
    "0x0009d",
);

/// Where in uLoopMCP 2.1.1 a logged failure was thrown: its stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Thrown {
    /// `UnityToolRegistry.ExecuteToolAsync` (unknown, disabled, blocked tools).
    Registry,
    /// `JsonRpcRequestIdentityValidator.Validate` (`x-uloop`), at this IL offset.
    IdentityValidator(&'static str),
    /// `AbstractUnityTool.ConvertToSchema` (parameters that do not convert).
    ConvertToSchema,
    /// A tool's body.
    Tool,
}

impl Thrown {
    fn stack(self) -> String {
        match self {
            Thrown::Registry | Thrown::Tool => frames(&[
                (
                    "io.github.hatayama.uLoopMCP.UnityToolRegistry.ExecuteToolAsync (System.String toolName, Newtonsoft.Json.Linq.JToken paramsToken)",
                    "0x00056",
                ),
                EXECUTE_COMMAND,
                EXECUTE_METHOD,
                PROCESS_RPC,
            ]),
            Thrown::IdentityValidator(offset) => frames(&[
                (
                    "io.github.hatayama.uLoopMCP.JsonRpcRequestIdentityValidator.Validate (io.github.hatayama.uLoopMCP.JsonRpcRequestUloopMetadata metadata, System.String actualProjectRoot, System.String actualServerSessionId)",
                    offset,
                ),
                (
                    "io.github.hatayama.uLoopMCP.JsonRpcProcessor.ValidateClientIdentityIfNeeded (io.github.hatayama.uLoopMCP.JsonRpcRequest request)",
                    "0x00019",
                ),
                (
                    "io.github.hatayama.uLoopMCP.JsonRpcProcessor.ProcessRpcRequest (io.github.hatayama.uLoopMCP.JsonRpcRequest request, System.String originalJson)",
                    "0x00045",
                ),
            ]),
            Thrown::ConvertToSchema => frames(&[
                (
                    "io.github.hatayama.uLoopMCP.AbstractUnityTool`2[TSchema,TResponse].ConvertToSchema (Newtonsoft.Json.Linq.JToken paramsToken)",
                    "0x000f1",
                ),
                (
                    "io.github.hatayama.uLoopMCP.AbstractUnityTool`2[TSchema,TResponse].ExecuteAsync (Newtonsoft.Json.Linq.JToken paramsToken)",
                    "0x00021",
                ),
                (
                    "io.github.hatayama.uLoopMCP.UnityToolRegistry.ExecuteToolAsync (System.String toolName, Newtonsoft.Json.Linq.JToken paramsToken)",
                    "0x00160",
                ),
                EXECUTE_COMMAND,
                EXECUTE_METHOD,
                PROCESS_RPC,
            ]),
        }
    }
}

/// uLoopMCP 2.1.1's first shape: `"Internal error"`, the explanation in
/// `data.message` (unknown tools, reader errors, what a tool throws).
pub fn uloop_internal(explanation: impl Into<String>) -> ErrorObject {
    ErrorObject {
        code: -32603,
        message: "Internal error".into(),
        data: Some(json!({"type": "internal_error", "message": explanation.into()})),
    }
}

/// uLoopMCP 2.1.1's second shape (`ParameterValidationException`): the
/// explanation in `message`, `data.message` empty.
pub fn uloop_validation(explanation: impl Into<String>) -> ErrorObject {
    ErrorObject {
        code: -32603,
        message: explanation.into(),
        data: Some(json!({"type": "internal_error", "message": ""})),
    }
}

/// The retryable `x-uloop` answer uLoopMCP does not log.
const SESSION_CHANGED: &str = "Unity CLI Loop server session changed. Retry the command.";

/// How an Editor words and shapes its failures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorPolicy {
    /// Protocol §3: the codes and `data.type`s of the error table.
    Package,
    /// uLoopMCP 2.1.1: always `-32603`, in its two shapes (three with security).
    Uloop211,
    /// uLoopMCP 3 (`v3-beta` at c50f54c): 2.1.1's shapes and reader errors
    /// (`ED/Infrastructure/Api/JsonRpcProcessor.cs`,
    /// `ED/Application/ErrorHandling/ImprovedErrorHandler.cs`), its own
    /// menu path for a disabled tool, and only `expectedProjectRoot` in
    /// `x-uloop` (`ED/Domain/ProjectRootIdentityValidator.cs`).
    Uloop3,
}

/// How an Editor reads the `x-uloop` member of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Identity {
    /// Each of `expectedProjectRoot` and `expectedServerSessionId` checked
    /// when sent; the root compared as a folder (protocol §3).
    EitherField,
    /// Both fields required when `x-uloop` is sent (uLoopMCP 2.1.1).
    BothFields,
    /// Only `expectedProjectRoot`, required when `x-uloop` is sent (not
    /// null), compared ordinally with the canonical project root
    /// (uLoopMCP 3: `string.Equals(expected, actual, Ordinal)`).
    ProjectRootExact,
}

/// uLoopMCP 3's `TOOL_SETTINGS_MENU_PATH` (`ED/Application/Config/UnityCliLoopUIConstants.cs:10`).
const ULOOP3_SETTINGS_MENU: &str = "Window > Unity CLI Loop > Settings";

impl ErrorPolicy {
    /// The error answered for `failure`.
    pub fn answer(self, failure: &Failure<'_>) -> ErrorObject {
        match self {
            ErrorPolicy::Package => package_answer(failure),
            ErrorPolicy::Uloop211 => uloop_answer(failure, "Window > uLoop > Tool Settings"),
            ErrorPolicy::Uloop3 => uloop_answer(failure, ULOOP3_SETTINGS_MENU),
        }
    }

    /// The answer to a frame that is not a request (`None`: no answer).
    /// uLoopMCP answers with Newtonsoft's reading error, id `null`, and
    /// logs nothing (`JsonRpcProcessor.ProcessRequest`'s outer catch).
    pub fn unreadable(self, failure: &ParseFailure, body: &[u8]) -> Option<Response> {
        if self == ErrorPolicy::Package {
            return Some(failure.to_response());
        }
        let text = String::from_utf8_lossy(body);
        let explanation = match failure {
            ParseFailure::NotJson(_) => newtonsoft_parse_error(&text),
            ParseFailure::Batch => not_an_object("StartArray", 1),
            ParseFailure::Invalid { .. } => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(_)) | Err(_) => return None,
                Ok(value) => {
                    let token = match &value {
                        Value::String(_) => "String",
                        Value::Number(n) if n.is_f64() => "Float",
                        Value::Number(_) => "Integer",
                        Value::Bool(_) => "Boolean",
                        _ => "Null",
                    };
                    not_an_object(token, text.trim().chars().count())
                }
            },
        };
        Some(Response::error(None, uloop_internal(explanation)))
    }

    /// Whether `params` must be an object before anything else is looked at
    /// (protocol §3); uLoopMCP only finds out when it binds the tool's schema.
    pub fn params_object_first(self) -> bool {
        self == ErrorPolicy::Package
    }

    /// How the Editor reads `x-uloop`.
    pub fn identity(self) -> Identity {
        match self {
            ErrorPolicy::Package => Identity::EitherField,
            ErrorPolicy::Uloop211 => Identity::BothFields,
            ErrorPolicy::Uloop3 => Identity::ProjectRootExact,
        }
    }

    /// The console entry (an error) the Editor writes for a failed request,
    /// if it logs them: uLoopMCP 2.1.1 logs every failure but its
    /// retryable session change (`JsonRpcProcessor.cs:190-228`); uLoopMCP 3
    /// logs every failure of a request (`ProcessRpcRequest`'s catches), with
    /// the same texts. Its stack is not modelled (no recording of a v3
    /// Editor exists): the entry ends at `Stack trace:`.
    pub fn console_entry(self, answer: &ErrorObject, thrown: Thrown) -> Option<String> {
        if self == ErrorPolicy::Package || answer.message == SESSION_CHANGED {
            return None;
        }
        let explanation = answer.data.as_ref().and_then(|d| d["message"].as_str()).unwrap_or("");
        let text = match (answer.message.as_str(), explanation) {
            // The second shape: a ParameterValidationException.
            (message, "") => format!("[JsonRpcProcessor] Parameter validation error: {message}"),
            (_, explanation) => format!("[JsonRpcProcessor] Error: {explanation}"),
        };
        let stack = if self == ErrorPolicy::Uloop211 { thrown.stack() } else { String::new() };
        Some(format!("{text}\nStack trace: {stack}").trim().to_owned())
    }
}

fn not_an_object(token: &str, position: usize) -> String {
    format!(
        "Error reading JObject from JsonReader. Current JsonReader item is not an object: {token}. Path '', line 1, position {position}."
    )
}

/// Newtonsoft's `JObject.Parse` error for text that is not JSON: for text
/// that ends early (the common case), "Unexpected end of content while
/// loading JObject" at the path it was in; otherwise where it stopped.
fn newtonsoft_parse_error(text: &str) -> String {
    let mut containers: Vec<(bool, Option<String>, usize)> = Vec::new(); // (object?, property, index)
    let mut chars = text.chars().peekable();
    let mut position = 0;
    let mut expecting_key = false;
    while let Some(c) = chars.next() {
        position += 1;
        match c {
            '{' => {
                containers.push((true, None, 0));
                expecting_key = true;
            }
            '[' => containers.push((false, None, 0)),
            '}' | ']' => {
                containers.pop();
            }
            ',' => {
                if let Some(last) = containers.last_mut() {
                    last.2 += 1;
                    expecting_key = last.0;
                }
            }
            '"' => {
                let mut string = String::new();
                let mut closed = false;
                while let Some(c) = chars.next() {
                    position += 1;
                    match c {
                        '\\' => {
                            if let Some(escaped) = chars.next() {
                                position += 1;
                                string.push(escaped);
                            }
                        }
                        '"' => {
                            closed = true;
                            break;
                        }
                        c => string.push(c),
                    }
                }
                if expecting_key && closed {
                    if let Some(last) = containers.last_mut() {
                        last.1 = Some(string);
                    }
                    expecting_key = false;
                }
            }
            _ => {}
        }
    }
    if containers.is_empty() {
        return format!("Unexpected character encountered while parsing value. Path '', line 1, position {position}.");
    }
    // The path of the values being read; the innermost container counts
    // once it has named a property or started an element.
    let depth = containers.len();
    let parts: Vec<String> = containers
        .iter()
        .enumerate()
        .filter_map(|(i, (object, property, index))| match (object, property) {
            (true, Some(name)) => Some(name.clone()),
            (false, _) if i + 1 < depth || *index > 0 => Some(format!("[{index}]")),
            _ => None,
        })
        .collect();
    let path = parts.join(".").replace(".[", "[");
    format!("Unexpected end of content while loading JObject. Path '{path}', line 1, position {position}.")
}

fn package_answer(failure: &Failure<'_>) -> ErrorObject {
    match *failure {
        Failure::UnknownTool { method } => {
            ErrorObject::new(ErrorKind::MethodNotFound, format!("Unknown tool: {method}")).with_data("method", method)
        }
        Failure::ProjectMismatch { expected, actual } => {
            ErrorObject::new(ErrorKind::ProjectMismatch, format!("This Editor has project {actual}, not {expected}"))
                .with_data("actualProjectRoot", actual)
        }
        Failure::SessionChanged { expected, actual } => ErrorObject::new(
            ErrorKind::SessionChanged,
            format!("The Editor's session changed (now {actual}, expected {expected})"),
        )
        .with_data("actualServerSessionId", actual),
        Failure::ExpectationIncomplete { field } => {
            ErrorObject::new(ErrorKind::InvalidRequest, format!("x-uloop: {field} is required"))
        }
        Failure::Disabled { tool } => {
            ErrorObject::new(ErrorKind::ToolDisabled, format!("Tool '{tool}' is disabled in settings"))
                .with_data("command", tool)
        }
        Failure::Blocked { tool, reason } => {
            ErrorObject::new(ErrorKind::SecurityBlocked, reason).with_data("command", tool).with_data("reason", reason)
        }
    }
}

/// uLoopMCP's answers (2.1.1 and 3 alike but for the settings menu named).
fn uloop_answer(failure: &Failure<'_>, settings_menu: &str) -> ErrorObject {
    match *failure {
        Failure::UnknownTool { method } => uloop_internal(format!("Unknown tool: {method}")),
        Failure::ProjectMismatch { .. } => uloop_validation("Connected Unity instance belongs to a different project."),
        Failure::SessionChanged { .. } => uloop_validation(SESSION_CHANGED),
        Failure::ExpectationIncomplete { field } => {
            uloop_validation(format!("Invalid x-uloop metadata: {field} is required."))
        }
        Failure::Disabled { tool } => ErrorObject {
            code: -32603,
            message: format!("Tool '{tool}' is disabled. To enable it, go to {settings_menu}"),
            data: Some(
                json!({"type": "internal_error", "message": "This tool has been disabled in project settings."}),
            ),
        },
        Failure::Blocked { tool, .. } => ErrorObject {
            code: -32603,
            message: "Tool blocked by security settings".into(),
            data: Some(json!({"type": "security_blocked", "command": tool,
                "reason": "Tool is blocked by security settings", "message": "Tool is blocked by security settings"})),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use editor_link::jsonrpc::Message;

    #[test]
    fn uloop_logs_its_failures_as_its_recordings_show() {
        let policy = ErrorPolicy::Uloop211;
        let unknown = policy.answer(&Failure::UnknownTool { method: "unity-search" });
        assert_eq!(
            serde_json::to_value(&unknown).unwrap(),
            json!({"code": -32603, "message": "Internal error",
                   "data": {"type": "internal_error", "message": "Unknown tool: unity-search"}})
        );
        let logged = policy.console_entry(&unknown, Thrown::Registry).unwrap();
        assert!(logged.starts_with("[JsonRpcProcessor] Error: Unknown tool: unity-search\nStack trace:   at io.github.hatayama.uLoopMCP.UnityToolRegistry.ExecuteToolAsync"), "{logged}");
        assert!(logged.ends_with("[0x00115] in <57a4c1002c7c44cb80e254c84a73a1a8>:0"), "{logged}");
        let incomplete = policy.answer(&Failure::ExpectationIncomplete { field: "expectedServerSessionId" });
        assert_eq!(incomplete.message, "Invalid x-uloop metadata: expectedServerSessionId is required.");
        let logged = policy.console_entry(&incomplete, Thrown::IdentityValidator("0x0003c")).unwrap();
        assert!(logged.starts_with("[JsonRpcProcessor] Parameter validation error: Invalid x-uloop"), "{logged}");
        let changed = policy.answer(&Failure::SessionChanged { expected: "a", actual: "b" });
        assert_eq!(policy.console_entry(&changed, Thrown::IdentityValidator("0x000d0")), None);
        // The package logs nothing and answers with the protocol's codes.
        let package = ErrorPolicy::Package.answer(&Failure::UnknownTool { method: "x" });
        assert_eq!(package.code, -32601);
        assert_eq!(ErrorPolicy::Package.console_entry(&package, Thrown::Registry), None);
    }

    #[test]
    fn unreadable_frames_get_newtonsofts_errors_as_recorded() {
        // raw-requests.jsonl bad1 and b1.
        let cut = br#"{"jsonrpc":"2.0","id":"bad1","method":"ping","params":{"#;
        let answer = ErrorPolicy::Uloop211.unreadable(&ParseFailure::NotJson(String::new()), cut).unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&Message::Response(answer).to_bytes()).unwrap()["error"]["data"]["message"],
            "Unexpected end of content while loading JObject. Path 'params', line 1, position 55."
        );
        let batch = ErrorPolicy::Uloop211.unreadable(&ParseFailure::Batch, b"[{}]").unwrap();
        assert_eq!(
            serde_json::from_slice::<Value>(&Message::Response(batch).to_bytes()).unwrap(),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": "Internal error", "data": {"type": "internal_error",
                "message": "Error reading JObject from JsonReader. Current JsonReader item is not an object: StartArray. Path '', line 1, position 1."}}})
        );
    }
}
