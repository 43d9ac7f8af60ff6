//! uLoopMCP 2.1.1's `screenshot` (`ScreenshotTool`: a PNG file per matching
//! Editor window, its absolute path answered, never the bytes) and
//! `execute-dynamic-code` (the package's C# subset, answered in 2.1.1's shape).

use serde_json::{Map, Value, json};

use super::super::{Outcome, ToolCall, dynamic_code, editor_ui::render_png};
use crate::editor::model::errors::{uloop_internal, uloop_validation};

fn reply(fields: Vec<(&str, Value)>) -> Outcome {
    Outcome::Reply(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<Map<String, Value>>())
}

/// `yyyyMMdd_HHmmss_fff` of now (the fake's clock, UTC).
fn shot_stamp(call: &ToolCall) -> String {
    let text = humantime::format_rfc3339_millis(call.editor.now()).to_string();
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    format!("{}_{}_{}", &digits[..8], &digits[8..14], &digits[14..17])
}

pub fn screenshot(call: &ToolCall) -> Outcome {
    let args = &call.args;
    let editor = &call.editor;
    let window_name = args.get("WindowName").as_str().unwrap_or("");
    let scale = args.float("ResolutionScale");
    let rendering = args.int("CaptureMode") == 1;
    let (annotate, elements_only) = (args.bool("AnnotateElements"), args.bool("ElementsOnly"));
    // ParameterValidationException: the second shape.
    if !rendering && window_name.is_empty() {
        return Outcome::Fail(uloop_validation("WindowName cannot be null or empty"));
    }
    if !(0.1..=1.0).contains(&scale) {
        return Outcome::Fail(uloop_validation(format!("ResolutionScale must be between 0.1 and 1.0, got: {scale}")));
    }
    if annotate && !rendering {
        return Outcome::Fail(uloop_validation("AnnotateElements is only supported when CaptureMode=rendering"));
    }
    if elements_only && !rendering {
        return Outcome::Fail(uloop_validation("ElementsOnly is only supported when CaptureMode=rendering"));
    }
    if elements_only && !annotate {
        return Outcome::Fail(uloop_validation("ElementsOnly requires AnnotateElements=true"));
    }
    let directory = match args.str("OutputDirectory") {
        "" => editor.project.join(".uloop/outputs/Screenshots"),
        dir => editor.project.join(dir),
    };
    let (names, coordinates): (Vec<(String, u32, u32)>, &str) = if rendering {
        // The Game view as it renders, only while playing.
        let game = editor.base.windows.iter().find(|w| w.name == "Game");
        let shots = match (editor.sim().playing, game) {
            (true, Some(game)) => vec![("Rendering".to_owned(), game.width, game.height)],
            _ => Vec::new(),
        };
        (shots, "gameView")
    } else {
        let wanted = window_name.to_lowercase();
        let matches = |title: &str| match args.int("MatchMode") {
            1 => title.starts_with(&wanted),
            2 => title.contains(&wanted),
            _ => title == wanted,
        };
        let found = editor.base.windows.iter().filter(|w| matches(&w.name.to_lowercase()));
        (found.map(|w| (w.name.clone(), w.width, w.height)).collect(), "window")
    };
    let roots = editor.sim().scene_roots.clone();
    let stamp = shot_stamp(call);
    let many = names.len() > 1;
    let mut screenshots = Vec::new();
    for (i, (name, width, height)) in names.iter().enumerate() {
        let (width, height) =
            (((f64::from(*width) * scale).round() as u32).max(1), ((f64::from(*height) * scale).round() as u32).max(1));
        let safe: String = name.chars().map(|c| if c.is_alphanumeric() || c == '-' { c } else { '_' }).collect();
        let file = if many { format!("{safe}_{}_{stamp}.png", i + 1) } else { format!("{safe}_{stamp}.png") };
        let path = directory.join(file);
        let png = match render_png(width, height, name, &roots) {
            Ok(png) => png,
            Err(err) => return Outcome::Fail(uloop_internal(format!("PNG encoding failed: {err}"))),
        };
        if let Err(err) = std::fs::create_dir_all(&directory).and_then(|()| std::fs::write(&path, &png)) {
            return Outcome::Fail(uloop_internal(format!("Failed to save screenshot: {err}")));
        }
        screenshots.push(json!({
            "ImagePath": editor_link::discovery::unity_path(&path), "FileSizeBytes": png.len(), "Width": width,
            "Height": height, "CoordinateSystem": coordinates, "ResolutionScale": scale, "YOffset": 0,
            "AnnotatedElements": [],
        }));
    }
    let count = screenshots.len();
    reply(vec![("Screenshots", screenshots.into()), ("ScreenshotCount", count.into())])
}

/// The snippets uLoopMCP 2.1.1's own clients run after a compile to warm
/// the dynamic-code compiler up (`dynamic-code-post-compile-warmup.ts`):
/// beyond the simulated C# subset (a `try`/`finally` around the logger's
/// filter), so the model runs them as Unity does — the log filtered out,
/// the string returned.
const PREWARM_SNIPPETS: [&str; 2] = [
    r#"UnityEngine.LogType previous = UnityEngine.Debug.unityLogger.filterLogType; UnityEngine.Debug.unityLogger.filterLogType = UnityEngine.LogType.Warning; try { UnityEngine.Debug.Log("Unity CLI Loop dynamic code prewarm"); return "Unity CLI Loop dynamic code prewarm"; } finally { UnityEngine.Debug.unityLogger.filterLogType = previous; }"#,
    r#"using UnityEngine; LogType previous = Debug.unityLogger.filterLogType; Debug.unityLogger.filterLogType = LogType.Warning; try { Debug.Log("Unity CLI Loop dynamic code prewarm"); return "Unity CLI Loop dynamic code prewarm"; } finally { Debug.unityLogger.filterLogType = previous; }"#,
];

pub fn execute_dynamic_code(call: &ToolCall) -> Outcome {
    let code = call.args.str("Code").to_owned();
    let level = call.editor.sim().settings.dynamic_code_security_level;
    if PREWARM_SNIPPETS.contains(&code.as_str()) {
        return reply(vec![
            ("Success", json!(true)),
            ("Result", json!("Unity CLI Loop dynamic code prewarm")),
            ("Logs", json!([])),
            ("CompilationErrors", json!([])),
            ("ErrorMessage", json!("")),
            ("SecurityLevel", json!(level.as_str())),
            ("Error", json!("")),
            ("UpdatedCode", Value::Null),
            ("DiagnosticsSummary", Value::Null),
            ("Diagnostics", json!([])),
        ]);
    }
    let package = match dynamic_code::execute_dynamic_code(call) {
        Outcome::Reply(result) => result,
        Outcome::Fail(error) => return Outcome::Fail(uloop_internal(error.detail().to_owned())),
        other => return other,
    };
    let success = package.get("Success").and_then(Value::as_bool).unwrap_or(false);
    let errors: Vec<Value> = package
        .get("CompilationErrors")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|e| {
            json!({"Message": e["Message"], "Line": e["Line"], "Column": e["Column"], "ErrorCode": e["ErrorCode"],
                   "Hint": null, "Suggestions": [], "Context": null, "PointerColumn": e["Column"]})
        })
        .collect();
    let package_error = package.get("ErrorMessage").and_then(Value::as_str).unwrap_or("");
    let mut logs: Vec<Value> = package.get("Logs").and_then(Value::as_array).cloned().unwrap_or_default();
    let (error, summary, updated) = if !errors.is_empty() {
        let first = &errors[0];
        let summary = format!(
            "Errors: {n} unique ({n} total). First at L{}: {} {}",
            first["Line"],
            first["ErrorCode"].as_str().unwrap_or(""),
            first["Message"].as_str().unwrap_or(""),
            n = errors.len()
        );
        logs.push(json!(summary.clone()));
        ("Compilation error occurred".to_owned(), json!(summary), json!(code))
    } else if package_error.starts_with("Security violation") {
        ("Security violations detected (Dangerous API call)".to_owned(), Value::Null, Value::Null)
    } else {
        (package_error.to_owned(), Value::Null, Value::Null)
    };
    if success && call.args.bool("CompileOnly") {
        logs.insert(0, json!("Code compiled successfully (no execution)"));
    }
    reply(vec![
        ("Success", json!(success)),
        ("Result", package.get("Result").cloned().unwrap_or(json!(""))),
        ("Logs", logs.into()),
        ("CompilationErrors", errors.clone().into()),
        ("ErrorMessage", json!(error)),
        ("SecurityLevel", json!(level.as_str())),
        ("Error", json!(error)),
        ("UpdatedCode", updated),
        ("DiagnosticsSummary", summary),
        ("Diagnostics", errors.into()),
    ])
}
