//! From the Editor's tools to MCP tools and back: valid, simple JSON Schemas
//! from `get-tool-details` (protocol §6), Unity results and errors as MCP
//! tool results a model can act on, oversized results to files, and the
//! per-project cache of the last tool list.
//!
//! Everything here is plain JSON in MCP's shapes; only `mcp.rs` knows rmcp.

use std::{
    path::{Path, PathBuf},
    time::SystemTime,
};

use serde_json::{Map, Value, json};

use crate::{
    link::{CallError, CutOff, NotSent},
    raw_json::{self, RawJson},
};
use editor_link::{
    discovery::{iso_timestamp, write_atomic, write_atomic_with},
    jsonrpc::ErrorKind,
    tool_details::{ParameterProperty, ParameterSchema, ParameterType, ToolDetail, ToolDetails},
};

/// A tool as the bridge offers it.
#[derive(Clone, Debug, PartialEq)]
pub struct McpTool {
    /// The tool in MCP's shape: `name`, `description`, `inputSchema`,
    /// `annotations`.
    pub definition: Value,
    /// Resending it after a reload cannot change anything.
    pub read_only: bool,
    /// Default deadline in seconds.
    pub timeout_seconds: Option<f64>,
}

impl McpTool {
    pub fn name(&self) -> &str {
        self.definition["name"].as_str().unwrap_or("")
    }
}

/// Tools of uLoopMCP known to only read, for Editors that send no annotations.
const READ_ONLY: &[&str] = &[
    "ping",
    "get-version",
    "get-tool-details",
    "get-logs",
    "find-game-objects",
    "unity-search",
    "get-hierarchy",
    "get-provider-details",
    "get-menu-items",
    "screenshot",
];

/// MCP's rule for tool names: 1–128 of `[A-Za-z0-9_.-]`.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// The MCP tools for an Editor's tool list, sorted by name; internal tools
/// only with `include_internal`. Tools that cannot be offered are returned
/// as warnings.
pub fn from_editor(details: &ToolDetails, include_internal: bool) -> (Vec<McpTool>, Vec<String>) {
    let mut tools = Vec::new();
    let mut warnings = Vec::new();
    for detail in &details.tools {
        if detail.display_development_only && !include_internal {
            continue;
        }
        if !valid_tool_name(&detail.name) {
            warnings.push(format!("tool {:?} has a name MCP does not allow; it is not offered", detail.name));
            continue;
        }
        tools.push(from_detail(detail));
    }
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    tools.dedup_by(|a, b| a.name() == b.name());
    (tools, warnings)
}

fn from_detail(detail: &ToolDetail) -> McpTool {
    let mut definition = json!({
        "name": detail.name,
        "description": if detail.description.is_empty() { format!("The Unity Editor's {} tool", detail.name) } else { detail.description.clone() },
        "inputSchema": input_schema(&detail.name, &detail.parameter_schema),
    });
    if let Some(annotations) = &detail.annotations {
        if let Ok(value) = serde_json::to_value(annotations) {
            if value.as_object().is_some_and(|o| !o.is_empty()) {
                definition["annotations"] = value;
            }
        }
    }
    let read_only =
        detail.annotations.as_ref().and_then(|a| a.read_only_hint).unwrap_or(READ_ONLY.contains(&detail.name.as_str()));
    let timeout_seconds = detail.timeout_seconds.or_else(|| {
        detail
            .parameter_schema
            .properties
            .get("TimeoutSeconds")
            .and_then(|p| p.default_value.as_ref())
            .and_then(Value::as_f64)
    });
    McpTool { definition, read_only, timeout_seconds }
}

/// A JSON Schema for `tool`'s parameters (protocol §6 → MCP).
pub fn input_schema(tool: &str, schema: &ParameterSchema) -> Value {
    let mut properties = Map::new();
    for (name, property) in &schema.properties {
        let mut property = property.clone();
        if let Some(name) = enum_default_name(tool, name, &property) {
            property.default_value = Some(name.into());
        }
        properties.insert(name.clone(), property_schema(&property));
    }
    let mut out = json!({"type": "object", "properties": properties});
    let required: Vec<&String> = schema.required.iter().filter(|r| schema.properties.contains_key(*r)).collect();
    if !required.is_empty() {
        out["required"] = json!(required);
    }
    out
}

fn property_schema(property: &ParameterProperty) -> Value {
    let mut out = Map::new();
    match &property.ty {
        ParameterType::String => {
            out.insert("type".into(), "string".into());
        }
        ParameterType::Boolean => {
            out.insert("type".into(), "boolean".into());
        }
        ParameterType::Number => {
            out.insert("type".into(), "number".into());
        }
        ParameterType::Array => {
            out.insert("type".into(), "array".into());
            // The Editor does not say; every array of the protocol holds strings.
            out.insert("items".into(), json!({"type": "string"}));
        }
        ParameterType::Object => {
            out.insert("type".into(), "object".into());
        }
        // Unknown types accept anything (the Editor will check).
        ParameterType::Other(_) => {}
    }
    if !property.description.is_empty() {
        out.insert("description".into(), property.description.clone().into());
    }
    if let Some(values) = property.enum_values.as_ref().filter(|v| !v.is_empty()) {
        out.insert("enum".into(), json!(values));
    }
    if let Some(default) = &property.default_value {
        if default_fits(property, default) {
            out.insert("default".into(), default.clone());
        }
    }
    Value::Object(out)
}

/// Checks `arguments` against a tool's MCP `inputSchema` before they are
/// sent, as this project's Editors check them (protocol §3): parameter names
/// without regard to case, `null` as absent, names the schema does not know
/// left to the Editor; enum values by name, in any case. The error names the
/// parameter.
pub fn check_arguments(input_schema: &Value, arguments: &Map<String, Value>) -> Result<(), String> {
    let Some(properties) = input_schema["properties"].as_object() else { return Ok(()) };
    for (key, value) in arguments.iter().filter(|(_, v)| !v.is_null()) {
        let Some((name, property)) = properties.iter().find(|(name, _)| name.eq_ignore_ascii_case(key)) else {
            continue;
        };
        let describe = || match value {
            Value::String(s) => format!("string {s:?}"),
            Value::Number(n) => format!("number {n}"),
            Value::Bool(b) => format!("boolean {b}"),
            Value::Array(_) => "an array".to_owned(),
            Value::Object(_) => "an object".to_owned(),
            Value::Null => "null".to_owned(),
        };
        if let Some(names) = property["enum"].as_array() {
            let known = value
                .as_str()
                .is_some_and(|v| names.iter().any(|n| n.as_str().is_some_and(|n| n.eq_ignore_ascii_case(v))));
            if !known {
                let names: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
                return Err(format!("Parameter '{name}' must be one of {}, not {}", names.join(", "), describe()));
            }
            continue;
        }
        let fits = match property["type"].as_str() {
            Some("string") => value.is_string(),
            Some("boolean") => value.is_boolean(),
            Some("number") => value.is_number(),
            Some("object") => value.is_object(),
            Some("array") => value.as_array().is_some_and(|items| match property["items"]["type"].as_str() {
                Some("string") => items.iter().all(Value::is_string),
                _ => true,
            }),
            _ => true,
        };
        if !fits {
            let expected = match property["type"].as_str() {
                Some("array") => "an array of strings".to_owned(),
                Some("object") => "an object".to_owned(),
                Some(ty) => format!("a {ty}"),
                None => "of its type".to_owned(),
            };
            return Err(format!("Parameter '{name}' must be {expected}, not {}", describe()));
        }
    }
    Ok(())
}

/// uLoopMCP enums whose first value is not 0 (read in its 2.1.1 source):
/// run-tests' `RunTestMode { EditMode = 1, PlayMode = 2 }`.
const ENUMS_NOT_FROM_ZERO: &[(&str, &str, i64)] = &[("run-tests", "TestMode", 1)];

/// The name of an enum default uLoopMCP sends as the C# integer. Its `Enum`
/// lists the names sorted by value (`Enum.GetNames`), and its enums number
/// their names one after the other, from 0 but for [`ENUMS_NOT_FROM_ZERO`]:
/// the integer's name is at its distance from the first value. `None` when
/// the default is not an integer, or lands outside the names.
fn enum_default_name(tool: &str, param: &str, property: &ParameterProperty) -> Option<String> {
    let values = property.enum_values.as_ref()?;
    let value = property.default_value.as_ref()?.as_i64()?;
    let first = ENUMS_NOT_FROM_ZERO.iter().find(|(t, p, _)| *t == tool && *p == param).map_or(0, |(_, _, v)| *v);
    usize::try_from(value - first).ok().and_then(|index| values.get(index)).cloned()
}

/// A default is published only when it is valid for the property: one of the
/// enum values (uLoopMCP sends enum defaults as integers) and of its type.
fn default_fits(property: &ParameterProperty, default: &Value) -> bool {
    if let Some(values) = &property.enum_values {
        return default.as_str().is_some_and(|d| values.iter().any(|v| v == d));
    }
    match property.ty {
        ParameterType::String => default.is_string(),
        ParameterType::Boolean => default.is_boolean(),
        ParameterType::Number => default.is_number(),
        ParameterType::Array => default.is_array(),
        ParameterType::Object => default.is_object(),
        ParameterType::Other(_) => false,
    }
}

/// A tool result in MCP's shape (`content`, `structuredContent`, `isError`).
#[derive(Clone, Debug, PartialEq)]
pub enum ToolResult {
    /// Made by the bridge: its own tools' results, errors, the summary of a
    /// result saved to a file, screenshots as image content.
    Built(Value),
    /// The Editor's result as it came: its JSON text is the one text block
    /// and it is itself the `structuredContent` (written out a piece at a
    /// time, never built as a tree: see [`crate::raw_json`]).
    Relayed { result: RawJson, is_error: bool },
}

impl ToolResult {
    /// An error a model can act on.
    pub fn error(text: impl Into<String>) -> Self {
        ToolResult::Built(json!({"content": [{"type": "text", "text": text.into()}], "isError": true}))
    }

    pub fn is_error(&self) -> bool {
        match self {
            ToolResult::Built(value) => value["isError"] == true,
            ToolResult::Relayed { is_error, .. } => *is_error,
        }
    }

    /// Its text blocks, one per line.
    pub fn text(&self) -> String {
        match self {
            ToolResult::Built(value) => value["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            ToolResult::Relayed { result, .. } => result.as_str().to_owned(),
        }
    }

    /// Its `structuredContent`, if it has one.
    pub fn structured(&self) -> Option<Value> {
        match self {
            ToolResult::Built(value) => value.get("structuredContent").cloned(),
            ToolResult::Relayed { result, .. } => Some(result.to_value()),
        }
    }

    /// The whole result as a value (for tests and small results: a relayed
    /// result is parsed, twice).
    pub fn to_value(&self) -> Value {
        match self {
            ToolResult::Built(value) => value.clone(),
            ToolResult::Relayed { result, is_error } => {
                let mut out = json!({
                    "content": [{"type": "text", "text": result.as_str()}],
                    "structuredContent": result.to_value(),
                });
                if *is_error {
                    out["isError"] = true.into();
                }
                out
            }
        }
    }
}

/// Where oversized results go, and how large a result may be.
#[derive(Clone, Debug)]
pub struct ResultPolicy {
    /// Largest text a result may carry, bytes (a client output cap of about
    /// 25k tokens is about 80 KB of JSON).
    pub budget_bytes: usize,
    /// The project (results go to `.uloop/outputs/BridgeResults/` there), or
    /// `None` for the system's temporary folder.
    pub project: Option<PathBuf>,
}

impl Default for ResultPolicy {
    fn default() -> Self {
        ResultPolicy { budget_bytes: 80_000, project: None }
    }
}

/// Unity's result object as an MCP result: the object as structured content
/// and as JSON text; `Success: false` is an error; screenshot image data
/// becomes image content; an oversized result goes to a file.
///
/// Only the top level is read: a result without screenshots is relayed (or
/// saved) as the bytes it came in, whatever its size.
pub fn from_editor_result(tool: &str, result: RawJson, policy: &ResultPolicy) -> ToolResult {
    let Some(members) = result.members().filter(|m| !m.contains_key("Screenshots")) else {
        // Screenshots are taken apart; anything but an object is unusual
        // (and small): both are built.
        return from_editor_value(tool, result.to_value(), policy);
    };
    let is_error = members.get("Success").is_some_and(|v| v.get() == "false");
    if result.len() > policy.budget_bytes {
        let scalars: Map<String, Value> = members
            .iter()
            .filter(|(_, v)| is_summary_scalar(v.get()))
            .filter_map(|(k, v)| Some((k.clone(), serde_json::from_str(v.get()).ok()?)))
            .collect();
        let write = |file: &mut std::fs::File| raw_json::write_pretty(result.bytes(), file);
        let (summary, structured) = spill(tool, result.len(), scalars, write, policy);
        return summarised(summary, structured, is_error, Vec::new(), Vec::new());
    }
    ToolResult::Relayed { result, is_error }
}

/// A number, a boolean or a short string, as JSON text.
fn is_summary_scalar(text: &str) -> bool {
    match text.as_bytes().first() {
        Some(b'"') => text.len() <= 202,
        Some(b't' | b'f' | b'-' | b'0'..=b'9') => true,
        _ => false,
    }
}

/// [`from_editor_result`] for a result that must be taken apart.
fn from_editor_value(tool: &str, result: Value, policy: &ResultPolicy) -> ToolResult {
    let mut result = result;
    let is_error = result.get("Success") == Some(&Value::Bool(false));
    let (images, notes) = take_images(&mut result, policy);
    let text = serde_json::to_string(&result).unwrap_or_default();
    if text.len() > policy.budget_bytes {
        let scalars: Map<String, Value> = result
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(_, v)| v.is_number() || v.is_boolean() || v.as_str().is_some_and(|s| s.len() <= 200))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let write = |file: &mut std::fs::File| {
            let mut out = std::io::BufWriter::new(file);
            serde_json::to_writer_pretty(&mut out, &result)?;
            std::io::Write::flush(&mut out)
        };
        let (summary, structured) = spill(tool, text.len(), scalars, write, policy);
        return summarised(summary, structured, is_error, images, notes);
    }
    summarised(text, result, is_error, images, notes)
}

/// A built result: `text` first, then the images and notes.
fn summarised(text: String, structured: Value, is_error: bool, images: Vec<String>, notes: Vec<String>) -> ToolResult {
    let mut content = vec![json!({"type": "text", "text": Value::String(text)})];
    for data in images {
        content.push(json!({"type": "image", "data": data, "mimeType": "image/png"}));
    }
    for note in notes {
        content.push(json!({"type": "text", "text": note}));
    }
    let mut out = Map::new();
    out.insert("content".into(), Value::Array(content));
    out.insert("structuredContent".into(), structured);
    if is_error {
        out.insert("isError".into(), true.into());
    }
    ToolResult::Built(Value::Object(out))
}

/// The largest screenshot file sent as image content (a full-HD PNG is
/// about 1 to 3 MB; clients count images apart from text).
pub const IMAGE_FILE_LIMIT: u64 = 4 * 1024 * 1024;

/// Screenshots as image content: `ImageDataBase64` (the image-data
/// extension) moved out of the entry, leaving a note; else the PNG at
/// `ImagePath` (uLoopMCP), read when it is within [`IMAGE_FILE_LIMIT`].
/// Returns the images (base64) and notes for those that could not be sent.
fn take_images(result: &mut Value, policy: &ResultPolicy) -> (Vec<String>, Vec<String>) {
    use base64::Engine;
    let (mut images, mut notes) = (Vec::new(), Vec::new());
    let Some(shots) = result.get_mut("Screenshots").and_then(Value::as_array_mut) else { return (images, notes) };
    for shot in shots {
        if let Some(Value::String(data)) = shot.get_mut("ImageDataBase64").map(Value::take) {
            shot["ImageDataBase64"] = format!("(sent as image content: {} bytes of base64)", data.len()).into();
            images.push(data);
            continue;
        }
        let Some(path) = shot.get("ImagePath").and_then(Value::as_str).filter(|p| !p.is_empty()) else { continue };
        let path = match (Path::new(path).is_absolute(), &policy.project) {
            (false, Some(project)) => project.join(path),
            _ => PathBuf::from(path),
        };
        let size = std::fs::metadata(&path).map(|m| m.len());
        match size {
            Ok(size) if size > IMAGE_FILE_LIMIT => notes.push(format!(
                "The screenshot {} ({size} bytes) is larger than the {IMAGE_FILE_LIMIT} bytes the bridge sends as image content; open it from its ImagePath.",
                path.display()
            )),
            Ok(_) => match std::fs::read(&path) {
                Ok(bytes) if bytes.starts_with(b"\x89PNG\r\n\x1a\n") => {
                    images.push(base64::engine::general_purpose::STANDARD.encode(&bytes));
                }
                Ok(_) => notes.push(format!("The screenshot {} is not a PNG; open it from its ImagePath.", path.display())),
                Err(err) => notes.push(format!("The screenshot {} could not be read: {err}.", path.display())),
            },
            Err(err) => notes.push(format!("The screenshot {} could not be read: {err}.", path.display())),
        }
    }
    (images, notes)
}

/// Writes an oversized result to a file; returns the summary text and the
/// structured content that replace it.
fn spill(
    tool: &str,
    size: usize,
    scalars: Map<String, Value>,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
    policy: &ResultPolicy,
) -> (String, Value) {
    let dir = match &policy.project {
        Some(project) => project.join(".uloop/outputs/BridgeResults"),
        None => std::env::temp_dir().join("unity-mcp-bridge"),
    };
    let stamp = iso_timestamp(SystemTime::now()).replace([':', '.'], "-");
    let path = dir.join(format!("{tool}_{stamp}.json"));
    let (size_text, budget_text) = (human_size(size as u64), human_size(policy.budget_bytes as u64));
    match write_atomic_with(&path, write) {
        Ok(()) => {
            let shown = path.display();
            let summary = format!(
                "The result of {tool} is {size_text} (about {} tokens), over this bridge's output budget of {budget_text}, so it was saved to {shown} instead. Read or search that file rather than asking for the whole result again. Its top-level values: {}",
                size / 4,
                Value::Object(scalars.clone())
            );
            let mut structured = scalars;
            structured.insert("resultSavedToFile".into(), shown.to_string().into());
            structured.insert("resultSizeBytes".into(), size.into());
            (summary, Value::Object(structured))
        }
        Err(err) => {
            let summary = format!(
                "The result of {tool} is {size_text}, over this bridge's output budget of {budget_text}, and could not be saved to {}: {err}. Ask for less (filters, MaxResults, MaxCount). Its top-level values: {}",
                path.display(),
                Value::Object(scalars.clone())
            );
            (summary, Value::Object(scalars))
        }
    }
}

/// A byte count for people: `980 bytes`, `12.5 KB`, `3.2 MB`.
pub fn human_size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes} bytes")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{:.1} MB", b / (KB * KB))
    }
}

/// A failed call as an MCP result with a message a model can act on.
pub fn from_call_error(tool: &str, error: &CallError) -> ToolResult {
    let text = match error {
        CallError::Editor(e) => {
            // Each sentence below ends its own; Unity's text may end with one already.
            let detail = e.detail().trim().trim_end_matches('.');
            match e.kind() {
                ErrorKind::SecurityBlocked => {
                    let reason =
                        e.data.as_ref().and_then(|d| d.get("reason")).and_then(Value::as_str).unwrap_or(detail);
                    format!(
                        "Unity blocked {tool} through its security settings: {reason} Only a person can change that setting, in Unity's MCP settings window."
                    )
                }
                ErrorKind::ToolDisabled => {
                    format!(
                        "{tool} is disabled in Unity's MCP settings ({detail}). Only a person can enable it, in Unity."
                    )
                }
                ErrorKind::InvalidParams => {
                    format!(
                        "Unity rejected the arguments of {tool}: {detail}. Check them against the tool's input schema."
                    )
                }
                ErrorKind::MethodNotFound => format!(
                    "Unity does not know the tool {tool} (its tools changed, probably after a script reload). List the tools again."
                ),
                ErrorKind::Timeout => format!(
                    "Unity gave up on {tool} at its own deadline: {detail}. If the operation needs longer, call it again with a larger TimeoutSeconds."
                ),
                ErrorKind::Interrupted => format!(
                    "{tool} was cut off by a domain reload (Unity reloaded its scripts) before it finished: {detail}. Unity says it did not complete; it may have run in part. Check its effect before calling it again."
                ),
                _ => format!(
                    "Unity failed to run {tool}: {detail} (error {}, {}).",
                    e.code,
                    e.data_type().unwrap_or("no type")
                ),
            }
        }
        CallError::NotSent { seconds, why: NotSent::NoEditor { tried } } => format!(
            "No Unity Editor was reachable within {seconds} s, so {tool} was not sent and did not run. Tried: {}. Open the project in Unity (with the bridge package installed), or call wait-for-editor-ready.",
            tried.join("; ")
        ),
        CallError::NotSent { seconds, why: NotSent::Blocked } => format!(
            "{tool} was not sent within {seconds} s: Unity is connected but is not reading (hung or busy), so it did not run. Check with the bridge-status tool, then call it again."
        ),
        CallError::NoAnswer { seconds, after: None } => format!(
            "No answer from Unity within {seconds} s for {tool}. The request reached Unity, so it may have run, or may still be running: Unity may be busy (a long compile or test run, a modal dialog, an unfocused Editor window that is not updating) or hung. Check its effect (for example with get-logs) or bridge-status before calling it again; to wait longer, pass a larger TimeoutSeconds."
        ),
        CallError::NoAnswer { seconds, after: Some(cut) } => format!(
            "{tool} reached Unity, then {}, and Unity was not back within {seconds} s: it may or may not have run. Once Unity is back (wait-for-editor-ready), check its effect (for example with get-logs or get-hierarchy) before calling it again.",
            cut.describe()
        ),
        CallError::CutOff(CutOff::Restarted) => format!(
            "{} while {tool} was running: it may or may not have run in the Editor that went away. The bridge did not give it to the new Editor, so it cannot run twice. Check its effect (for example with get-logs or get-hierarchy) before calling it again.",
            CutOff::Restarted.describe()
        ),
        CallError::CutOff(cut) => format!(
            "{} while {tool} was running, and this Editor cannot report whether it finished: it may or may not have run. Check its effect (for example with get-logs or get-hierarchy) before calling it again.",
            cut.describe()
        ),
        CallError::TooLarge { size, limit } => format!(
            "Unity's answer to {tool} was {}, over the bridge's response limit of {}, and was discarded. Ask for less (filters, MaxResults) or let the tool save to a file (SaveToFile).",
            human_size(*size),
            human_size(*limit as u64)
        ),
        CallError::Unreadable { reason } => format!(
            "Unity's answer to {tool} arrived damaged (not valid JSON: {reason}). The call ran in Unity; check its effect before running it again."
        ),
        CallError::Cancelled => format!("{tool} was cancelled."),
    };
    ToolResult::error(text)
}

/// The last tool list of a project, kept on disk so a fresh bridge can answer
/// `tools/list` before Unity is reachable.
#[derive(Clone, Debug)]
pub struct ToolCache {
    path: PathBuf,
}

impl ToolCache {
    /// The cache of `project`: `Library/UnityMcpBridge/tools.json` (Unity's
    /// `Library/` is the project's own cache folder, never committed).
    pub fn for_project(project: &Path) -> Self {
        ToolCache { path: project.join("Library/UnityMcpBridge/tools.json") }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn load(&self) -> Option<ToolDetails> {
        let bytes = std::fs::read(&self.path).ok()?;
        let stored: Value = serde_json::from_slice(&bytes).ok()?;
        serde_json::from_value(stored.get("toolDetails")?.clone()).ok()
    }

    pub fn store(&self, details: &ToolDetails) {
        let stored = json!({
            "savedBy": format!("unity-mcp-bridge {}", crate::VERSION),
            "savedAt": iso_timestamp(SystemTime::now()),
            "toolDetails": details,
        });
        if let Err(err) = write_atomic(&self.path, &serde_json::to_vec_pretty(&stored).unwrap_or_default()) {
            tracing::warn!(%err, path = %self.path.display(), "cannot write the tool cache");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use editor_link::jsonrpc::ErrorObject;

    fn details(json: &str) -> ToolDetails {
        serde_json::from_str(json).unwrap()
    }

    const ULOOP_STYLE: &str = r#"{"Tools":[
      {"name":"run-tests","description":"Runs tests","parameterSchema":{"Properties":{
         "FilterType":{"Type":"string","Description":"Type of test filter","DefaultValue":0,"Enum":["all","exact","regex","assembly"]},
         "TestMode":{"Type":"string","Description":"Test mode","DefaultValue":1,"Enum":["EditMode","PlayMode"]},
         "MaxCount":{"Type":"number","Description":"","DefaultValue":"lots","Enum":null},
         "Names":{"Type":"array","Description":"Names","DefaultValue":[],"Enum":null},
         "Parameters":{"Type":"object","Description":"Runtime parameters","DefaultValue":{},"Enum":null},
         "Position":{"Type":"vector3","Description":"A type this bridge does not know","DefaultValue":null,"Enum":null},
         "TimeoutSeconds":{"Type":"number","Description":"","DefaultValue":180,"Enum":null}},"Required":["TestMode","Ghost"]},
       "displayDevelopmentOnly":false},
      {"name":"ping","description":"","parameterSchema":{"Properties":{},"Required":[]},"displayDevelopmentOnly":true},
      {"name":"bad name!","description":"","parameterSchema":{"Properties":{},"Required":[]},"displayDevelopmentOnly":false},
      {"name":"compile","description":"Compiles","parameterSchema":{"Properties":{}},"displayDevelopmentOnly":false,
       "annotations":{"readOnlyHint":false,"destructiveHint":false},"timeoutSeconds":300.0}
    ],"Ver":"2.1.1"}"#;

    #[test]
    fn arguments_are_checked_against_the_input_schema_naming_the_parameter() {
        let schema = json!({"type": "object", "properties": {
            "MaxCount": {"type": "number"}, "LogType": {"type": "string", "enum": ["Error", "Log"]},
            "Names": {"type": "array", "items": {"type": "string"}}, "Stack": {"type": "boolean"},
            "Options": {"type": "object"}, "Text": {"type": "string"}}});
        let check = |args: Value| check_arguments(&schema, args.as_object().unwrap());
        assert_eq!(
            check(json!({"maxcount": 5, "LOGTYPE": "error", "Names": ["a"], "Stack": null, "Other": 1})),
            Ok(())
        );
        assert_eq!(
            check(json!({"MaxCount": "ten"})),
            Err("Parameter 'MaxCount' must be a number, not string \"ten\"".into())
        );
        assert_eq!(
            check(json!({"LogType": "Nope"})),
            Err("Parameter 'LogType' must be one of Error, Log, not string \"Nope\"".into())
        );
        assert_eq!(
            check(json!({"LogType": 1})),
            Err("Parameter 'LogType' must be one of Error, Log, not number 1".into())
        );
        assert_eq!(
            check(json!({"Names": [1]})),
            Err("Parameter 'Names' must be an array of strings, not an array".into())
        );
        assert_eq!(
            check(json!({"Stack": "yes"})),
            Err("Parameter 'Stack' must be a boolean, not string \"yes\"".into())
        );
        assert_eq!(
            check(json!({"Options": "{}"})),
            Err("Parameter 'Options' must be an object, not string \"{}\"".into())
        );
        assert_eq!(check(json!({"Text": {"a": 1}})), Err("Parameter 'Text' must be a string, not an object".into()));
    }

    #[test]
    fn an_integer_enum_default_outside_the_names_is_dropped() {
        let text = r#"{"Tools":[{"name":"t","description":"","parameterSchema":{"Properties":{
            "A":{"Type":"string","Description":"","DefaultValue":7,"Enum":["x","y"]},
            "B":{"Type":"string","Description":"","DefaultValue":-1,"Enum":["x","y"]},
            "C":{"Type":"string","Description":"","DefaultValue":1,"Enum":["x","y"]}},"Required":[]},
            "displayDevelopmentOnly":false}],"Ver":"2.1.1"}"#;
        let (tools, _) = from_editor(&details(text), false);
        let props = &tools[0].definition["inputSchema"]["properties"];
        assert!(props["A"].get("default").is_none() && props["B"].get("default").is_none(), "{props}");
        assert_eq!(props["C"]["default"], "y");
    }

    #[test]
    fn schemas_are_valid_and_simple() {
        let (tools, warnings) = from_editor(&details(ULOOP_STYLE), false);
        assert_eq!(tools.iter().map(McpTool::name).collect::<Vec<_>>(), ["compile", "run-tests"]);
        assert_eq!(warnings.len(), 1);
        let run = &tools[1].definition;
        let props = &run["inputSchema"]["properties"];
        assert_eq!(run["inputSchema"]["type"], "object");
        assert_eq!(props["FilterType"]["enum"], json!(["all", "exact", "regex", "assembly"]));
        assert_eq!(props["FilterType"]["default"], "all", "an integer default becomes the name of its value");
        assert_eq!(props["TestMode"]["default"], "EditMode", "RunTestMode starts at EditMode = 1");
        assert!(props["MaxCount"].get("default").is_none(), "a default of the wrong type is dropped");
        assert_eq!(
            props["Names"],
            json!({"type": "array", "items": {"type": "string"}, "description": "Names", "default": []})
        );
        assert_eq!(props["Parameters"]["type"], "object");
        assert_eq!(props["Position"], json!({"description": "A type this bridge does not know"}));
        assert_eq!(run["inputSchema"]["required"], json!(["TestMode"]), "unknown required names are dropped");
        // Key order follows the Editor.
        let keys: Vec<&String> = props.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["FilterType", "TestMode", "MaxCount", "Names", "Parameters", "Position", "TimeoutSeconds"]);
        assert_eq!(tools[1].timeout_seconds, Some(180.0));
        let compile = &tools[0];
        assert_eq!(compile.definition["annotations"], json!({"readOnlyHint": false, "destructiveHint": false}));
        assert_eq!(compile.definition["inputSchema"], json!({"type": "object", "properties": {}}));
        assert_eq!((compile.read_only, compile.timeout_seconds), (false, Some(300.0)));
        let (with_internal, _) = from_editor(&details(ULOOP_STYLE), true);
        assert!(with_internal.iter().any(|t| t.name() == "ping" && t.read_only));
    }

    #[test]
    fn a_screenshot_without_image_data_is_sent_from_its_image_path() {
        let project = tempfile::tempdir().unwrap();
        let png = b"\x89PNG\r\n\x1a\n rest of a png";
        std::fs::write(project.path().join("shot.png"), png).unwrap();
        std::fs::write(project.path().join("not.png"), b"GIF89a").unwrap();
        std::fs::write(project.path().join("huge.png"), vec![0u8; IMAGE_FILE_LIMIT as usize + 1]).unwrap();
        let absolute = project.path().join("shot.png").display().to_string();
        let policy = ResultPolicy { budget_bytes: 80_000, project: Some(project.path().to_owned()) };
        let result = json!({"Screenshots": [
            {"ImagePath": absolute, "Width": 16}, {"ImagePath": "shot.png"}, {"ImagePath": "not.png"},
            {"ImagePath": "huge.png"}, {"ImagePath": "gone.png"}], "ScreenshotCount": 5});
        let shot = from_editor_result("screenshot", RawJson::from_value(&result), &policy);
        let shot = shot.to_value();
        let content = shot["content"].as_array().unwrap();
        let images: Vec<&Value> = content.iter().filter(|c| c["type"] == "image").collect();
        use base64::Engine;
        let encoded = base64::engine::general_purpose::STANDARD.encode(png);
        assert_eq!(images.len(), 2, "{content:?}");
        assert!(images.iter().all(|i| i["data"] == encoded.as_str() && i["mimeType"] == "image/png"));
        let notes: Vec<&str> = content[3..].iter().filter_map(|c| c["text"].as_str()).collect();
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(
            notes[0].contains("not a PNG")
                && notes[1].contains("larger than")
                && notes[2].contains("could not be read")
        );
        assert_eq!(shot["structuredContent"]["Screenshots"][0]["Width"], 16, "the result itself is kept");
    }

    fn raw(text: &'static str) -> RawJson {
        RawJson::new(bytes::Bytes::from_static(text.as_bytes())).unwrap()
    }

    #[test]
    fn a_result_is_relayed_as_the_editor_wrote_it() {
        let text = r#"{"Success": false, "N": 12345678901234567890123, "S": "é\n"}"#;
        let result = from_editor_result("compile", raw(text), &ResultPolicy::default());
        assert_eq!(result, ToolResult::Relayed { result: raw(text), is_error: true });
        assert_eq!(result.text(), text, "number text and spacing kept");
        assert_eq!(
            from_editor_result("x", raw("[1, 2]"), &ResultPolicy::default()).to_value()["structuredContent"],
            json!([1, 2])
        );
    }

    #[test]
    fn results_carry_structure_text_errors_and_images() {
        let ok = from_editor_result(
            "compile",
            RawJson::from_value(&json!({"Success": true, "ErrorCount": 0, "Ver": "1"})),
            &ResultPolicy::default(),
        );
        assert_eq!(ok.to_value()["structuredContent"]["ErrorCount"], 0);
        assert_eq!(ok.to_value()["content"][0]["text"], r#"{"Success":true,"ErrorCount":0,"Ver":"1"}"#);
        assert!(!ok.is_error());
        let failed =
            from_editor_result("compile", raw(r#"{"Success": false, "ErrorCount": 2}"#), &ResultPolicy::default());
        assert!(failed.is_error());
        let shot = from_editor_result(
            "screenshot",
            RawJson::from_value(
                &json!({"Screenshots": [{"ImagePath": "a.png", "ImageDataBase64": "iVBORw0K"}], "ScreenshotCount": 1}),
            ),
            &ResultPolicy::default(),
        );
        assert_eq!(
            shot.to_value()["content"][1],
            json!({"type": "image", "data": "iVBORw0K", "mimeType": "image/png"})
        );
        assert_eq!(
            shot.to_value()["structuredContent"]["Screenshots"][0]["ImageDataBase64"],
            "(sent as image content: 8 bytes of base64)"
        );
    }

    #[test]
    fn oversized_results_go_to_a_file() {
        let project = tempfile::tempdir().unwrap();
        let policy = ResultPolicy { budget_bytes: 1000, project: Some(project.path().to_owned()) };
        let big = json!({"Success": true, "TotalCount": 500, "Results": vec!["x".repeat(50); 100]});
        let result = from_editor_result("unity-search", RawJson::from_value(&big), &policy);
        let value = result.to_value();
        let saved = value["structuredContent"]["resultSavedToFile"].as_str().unwrap();
        assert!(saved.contains(".uloop/outputs/BridgeResults/unity-search_"), "{saved}");
        let on_disk: Value = serde_json::from_slice(&std::fs::read(saved).unwrap()).unwrap();
        assert_eq!(on_disk, big);
        assert_eq!(std::fs::read_to_string(saved).unwrap(), serde_json::to_string_pretty(&big).unwrap(), "indented");
        assert_eq!(result.to_value()["structuredContent"]["TotalCount"], 500);
        assert!(result.text().contains("over this bridge's output budget of 1000 bytes"), "{}", result.text());
        assert!(result.text().len() < 1000);
    }

    #[test]
    fn errors_say_what_to_do() {
        let blocked = ErrorObject::new(ErrorKind::SecurityBlocked, "blocked")
            .with_data("command", "run-tests")
            .with_data("reason", "Test execution is disabled.");
        let text = from_call_error("run-tests", &CallError::Editor(blocked)).text();
        assert!(text.contains("Test execution is disabled.") && text.contains("person"), "{text}");
        let internal = ErrorObject::new(ErrorKind::InternalError, "NullReferenceException in HierarchyService");
        let text = from_call_error("get-hierarchy", &CallError::Editor(internal)).text();
        assert!(text.contains("NullReferenceException in HierarchyService"), "never a bare Internal error: {text}");
        let disabled = ErrorObject::new(ErrorKind::ToolDisabled, "Tool 'focus-window' is disabled in settings");
        let text = from_call_error("focus-window", &CallError::Editor(disabled)).text();
        assert!(text.contains("disabled in Unity's MCP settings") && text.contains("person"), "{text}");
        let interrupted = from_call_error("execute-menu-item", &CallError::CutOff(CutOff::Reload));
        assert!(interrupted.is_error() && interrupted.text().contains("may or may not have run"));
        let no_editor =
            CallError::NotSent { seconds: 2.0, why: NotSent::NoEditor { tried: vec!["port 8700: refused".into()] } };
        let text = from_call_error("x", &no_editor).text();
        assert!(text.contains("port 8700: refused") && text.contains("did not run"), "{text}");
        // Every error says whether the Editor may have run the call, and
        // only what is true.
        let errors = [
            no_editor,
            CallError::NotSent { seconds: 2.0, why: NotSent::Blocked },
            CallError::NoAnswer { seconds: 2.0, after: None },
            CallError::NoAnswer { seconds: 2.0, after: Some(CutOff::Lost) },
            CallError::CutOff(CutOff::Restarted),
            CallError::CutOff(CutOff::Silent),
            CallError::CutOff(CutOff::Quit),
        ];
        for error in errors {
            let text = from_call_error("clear-console", &error).text();
            let says_may = text.contains("may have run") || text.contains("may or may not have run");
            let says_not = text.contains("did not run");
            assert!(says_may != says_not && says_may == error.may_have_run(), "{error:?}: {text}");
        }
    }

    #[test]
    fn the_cache_round_trips() {
        let project = tempfile::tempdir().unwrap();
        let cache = ToolCache::for_project(project.path());
        assert!(cache.load().is_none());
        cache.store(&details(ULOOP_STYLE));
        assert_eq!(cache.load().unwrap(), details(ULOOP_STYLE));
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_size(980), "980 bytes");
        assert_eq!(human_size(12_800), "12.5 KB");
        assert_eq!(human_size(64 * 1024 * 1024), "64.0 MB");
    }

    #[test]
    fn tool_names() {
        assert!(valid_tool_name("get-logs") && valid_tool_name("a.b_c-1"));
        assert!(!valid_tool_name("") && !valid_tool_name("bad name") && !valid_tool_name(&"x".repeat(129)));
    }
}
