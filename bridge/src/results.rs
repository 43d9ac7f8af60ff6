//! Unity's results and errors as MCP tool results a model can act on:
//! structure and text, `Success: false` as an error, screenshots as image
//! content, results over the output budget saved to a file with a summary,
//! and every [`CallError`] said with what to do about it.

use std::{
    path::{Path, PathBuf},
    time::SystemTime,
};

use serde_json::{Map, Value, json};

use crate::{
    link::{CallError, CutOff, NotSent, whereabouts::Absence},
    raw_json::{self, RawJson},
};
use editor_link::{
    discovery::{iso_timestamp, write_atomic_with},
    jsonrpc::ErrorKind,
};

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
    /// What was saved, offered as resources.
    pub saved: SavedResults,
}

impl Default for ResultPolicy {
    fn default() -> Self {
        ResultPolicy { budget_bytes: 80_000, project: None, saved: SavedResults::default() }
    }
}

/// A result saved to a file, offered as a resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedResult {
    /// `file://` URI of the file.
    pub uri: String,
    pub path: PathBuf,
    /// The file's name.
    pub name: String,
    pub tool: String,
    pub size: u64,
}

/// The results this bridge saved, newest last (at most [`SavedResults::KEPT`]):
/// the only files `resources/read` reads.
#[derive(Clone, Debug, Default)]
pub struct SavedResults(std::sync::Arc<std::sync::Mutex<Vec<SavedResult>>>);

impl SavedResults {
    /// Results offered at most (the oldest are no longer offered, their
    /// files stay).
    pub const KEPT: usize = 100;

    fn add(&self, saved: SavedResult) {
        let mut all = editor_link::lock(&self.0);
        if all.len() >= Self::KEPT {
            all.remove(0);
        }
        all.push(saved);
    }

    pub fn all(&self) -> Vec<SavedResult> {
        editor_link::lock(&self.0).clone()
    }

    /// The saved result at `uri`, if this bridge saved one there.
    pub fn find(&self, uri: &str) -> Option<SavedResult> {
        editor_link::lock(&self.0).iter().find(|s| s.uri == uri).cloned()
    }
}

/// A `file://` URI for an absolute path (`file:///C:/…` on Windows),
/// percent-encoding what a URI may not hold.
pub fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut uri = String::from(if text.starts_with('/') { "file://" } else { "file:///" });
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' | b':' => uri.push(byte as char),
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri
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
        let (summary, structured, link) = spill(tool, result.len(), scalars, write, policy);
        return summarised(summary, structured, is_error, Vec::new(), link.into_iter().collect());
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
        let (summary, structured, link) = spill(tool, text.len(), scalars, write, policy);
        let mut notes: Vec<Value> = notes.into_iter().map(|n| json!({"type": "text", "text": n})).collect();
        notes.extend(link);
        return summarised(summary, structured, is_error, images, notes);
    }
    let notes = notes.into_iter().map(|n| json!({"type": "text", "text": n})).collect();
    summarised(text, result, is_error, images, notes)
}

/// A built result: `text` first, then the images, then the other blocks
/// (notes; the link to a saved result).
fn summarised(text: String, structured: Value, is_error: bool, images: Vec<String>, rest: Vec<Value>) -> ToolResult {
    let mut content = vec![json!({"type": "text", "text": Value::String(text)})];
    for data in images {
        content.push(json!({"type": "image", "data": data, "mimeType": "image/png"}));
    }
    content.extend(rest);
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
/// structured content that replace it, and a `resource_link` to the file
/// (readable with `resources/read`; only revisions from 2025-06-18 get it).
fn spill(
    tool: &str,
    size: usize,
    scalars: Map<String, Value>,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
    policy: &ResultPolicy,
) -> (String, Value, Option<Value>) {
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
            let absolute = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let saved = SavedResult {
                uri: file_uri(&absolute),
                path: absolute,
                name,
                tool: tool.to_owned(),
                size: size as u64,
            };
            let link = json!({"type": "resource_link", "uri": saved.uri, "name": saved.name, "mimeType": "application/json",
                "size": saved.size, "description": format!("The whole result of {tool}, {size_text}")});
            policy.saved.add(saved);
            (summary, Value::Object(structured), Some(link))
        }
        Err(err) => {
            let summary = format!(
                "The result of {tool} is {size_text}, over this bridge's output budget of {budget_text}, and could not be saved to {}: {err}. Ask for less (filters, MaxResults, MaxCount). Its top-level values: {}",
                path.display(),
                Value::Object(scalars.clone())
            );
            (summary, Value::Object(scalars), None)
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
/// Unity's own deadline answered a call while its main thread was held
/// (`held`: what held it): a larger timeout does not help until that is over,
/// and the work Unity queued for its main thread is not taken back, so it
/// may still run.
pub fn timed_out_while_held(tool: &str, error: &editor_link::jsonrpc::ErrorObject, held: &str) -> ToolResult {
    let detail = error.detail().trim().trim_end_matches('.');
    ToolResult::error(format!(
        "Unity gave up on {tool} at its own deadline: {detail}. When the deadline passed, {held}; a larger TimeoutSeconds does not help until that is over. The call reached Unity, and its work may still run once the main thread is free: check its effect before calling it again."
    ))
}

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
                    "Unity gave up on {tool} at its own deadline: {detail}. The call reached Unity, so it may have run in part. If the operation needs longer, call it again with a larger TimeoutSeconds."
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
            "No Unity Editor answered within {seconds} s, so {tool} was not sent and did not run. Tried: {}. If Unity is starting, importing or compiling, call wait-for-editor-ready to wait for it; if it never answers, look at Unity's Console.{}",
            tried.join("; "),
            wsl_advice()
        ),
        CallError::NotSent { why: NotSent::Absent(absence), .. } => absent(tool, absence),
        CallError::NotSent { seconds, why: NotSent::Unanswered { endpoint } } => format!(
            "Unity is open and accepted the bridge's connection ({endpoint}), but has not answered it for {seconds} s, so {tool} was not sent and did not run. Its main thread is likely blocked: a modal dialog waiting for an answer, a long import, or a script in an endless loop. Look at the Unity window (answer the dialog); the bridge connects as soon as Unity answers. A larger TimeoutSeconds does not help while a dialog waits."
        ),
        CallError::NotSent { seconds, why: NotSent::Blocked } => format!(
            "{tool} was not sent within {seconds} s: Unity is connected but is not reading (hung or busy), so it did not run. Check with the bridge-status tool, then call it again."
        ),
        CallError::NotSent { seconds, why: NotSent::Busy { connections } } => format!(
            "{tool} was not sent within {seconds} s: Unity is connected, but it answers one request at a time per connection and all {connections} connections the bridge may open to it were busy with other calls, so {tool} did not run. Let those calls finish (or cancel them), then call it again."
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

/// The answer to a call not sent because a look found, for certain,
/// nothing to wait for: what was seen, and the one step that helps.
pub fn absent(tool: &str, absence: &Absence) -> String {
    match absence {
        Absence::NotRunning { project, other } => {
            let other = match other {
                Some(said) => format!(
                    " Another Editor answered where this project's would ({said}): to use that Editor, start the bridge with --project set to its project."
                ),
                None => String::new(),
            };
            format!(
                "Unity is not running with the project {}, so {tool} was not sent and did not run. No Unity process has it open (Library/EditorInstance.json and Library/MCPInstance.json name none that is running) and nothing answered where its Editor listens. Open the project in Unity (with the Unity MCP package or uLoopMCP installed); to wait while it opens, call wait-for-editor-ready.{other}",
                project.display()
            )
        }
        Absence::NoneOpen => format!(
            "No Unity Editor is open, so {tool} was not sent and did not run. The bridge runs outside any Unity project and looked for every open Editor of this user (the registry of open Editors, uLoopMCP 3's sockets, the ports Editors listen on by default) and found none. Open your project in Unity, or start the bridge in the project's folder or with --project PATH (in the MCP client's configuration).{}",
            wsl_advice()
        ),
        Absence::Several { editors } => {
            let listed: Vec<String> =
                editors.iter().enumerate().map(|(n, e)| format!("{}. {}", n + 1, e.line())).collect();
            format!(
                "{} Unity Editors are open and the bridge runs outside any project, so it does not guess which one {tool} is for: it was not sent and did not run. Open: {}. Choose one for this session with the select-unity-editor tool ({{\"project\": \"<path>\"}}), or start the bridge with --project <path> (in the MCP client's configuration).",
                editors.len(),
                listed.join("; ")
            )
        }
        Absence::Denied { why } => format!(
            "The bridge is not permitted to connect to Unity ({why}), so {tool} was not sent and did not run. If the agent runs in a sandbox, allow it to connect to 127.0.0.1 (and, for uLoopMCP 3, to the sockets in /tmp/uloop), or run the bridge outside the sandbox; a socket of another user is never used."
        ),
    }
}

/// Inside WSL 2 in NAT networking mode (or one that cannot be told): why
/// a Windows Editor cannot be reached, and what to change.
fn wsl_advice() -> String {
    editor_link::wsl::Wsl::detect().and_then(|w| w.advice()).map(|a| format!(" {a}.")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use editor_link::jsonrpc::ErrorObject;

    use super::*;

    #[test]
    fn a_screenshot_without_image_data_is_sent_from_its_image_path() {
        let project = tempfile::tempdir().unwrap();
        let png = b"\x89PNG\r\n\x1a\n rest of a png";
        std::fs::write(project.path().join("shot.png"), png).unwrap();
        std::fs::write(project.path().join("not.png"), b"GIF89a").unwrap();
        std::fs::write(project.path().join("huge.png"), vec![0u8; IMAGE_FILE_LIMIT as usize + 1]).unwrap();
        let absolute = project.path().join("shot.png").display().to_string();
        let policy =
            ResultPolicy { budget_bytes: 80_000, project: Some(project.path().to_owned()), ..ResultPolicy::default() };
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
        let policy =
            ResultPolicy { budget_bytes: 1000, project: Some(project.path().to_owned()), ..ResultPolicy::default() };
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
            CallError::NotSent { seconds: 2.0, why: NotSent::Busy { connections: 8 } },
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
    fn sizes_read_well() {
        assert_eq!(human_size(980), "980 bytes");
        assert_eq!(human_size(12_800), "12.5 KB");
        assert_eq!(human_size(64 * 1024 * 1024), "64.0 MB");
    }
}
