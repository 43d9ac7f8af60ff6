//! uLoopMCP 2.1.1's `compile` (`CompileUseCase`, `CompileController`,
//! `CompileResultPersistenceService`): the same simulated compiler as the
//! package's, answered in 2.1.1's shape, and — with `WaitForDomainReload` —
//! the result written to `Temp/uLoopMCP/compile-results/<RequestId>.json`
//! (UTF-8 with a BOM) before the domain reload that follows a successful
//! compile closes the connection, so a client reads it across the reload.
//! `Temp/compiling.lock` exists while it compiles; `Temp/domainreload.lock`
//! from the reload's start until the Editor listens again (the lifecycle
//! writes it, as Unity's events do for every reload).

use std::{
    path::{Path, PathBuf},
    time::{Duration, SystemTime},
};

use serde_json::{Map, Value, json};

use super::super::{BoxFuture, Outcome, ToolCall, compile::run_compile};
use crate::editor::model::lifecycle::{COMPILING_LOCK, lock_stamp};
use crate::editor::state::Severity;

/// Result files older than this are deleted at every compile.
const STALE_AFTER: Duration = Duration::from_secs(120);

/// A client's request id, when it is safe as a file name (`^[A-Za-z0-9_-]+$`).
fn safe_request_id(id: &str) -> Option<&str> {
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')).then_some(id)
}

/// `compile_<unix ms>_<8 hex>`, as the server makes one when the client sent none.
fn generated_request_id(call: &ToolCall) -> String {
    let ms = call.editor.now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_millis();
    let mut hash = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(&(ms, call.editor.seed), &mut hash);
    format!("compile_{ms}_{:08x}", std::hash::Hasher::finish(&hash) as u32)
}

fn clear_stale_results(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let old = entry.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok());
        if entry.path().extension().is_some_and(|e| e == "json") && old.is_some_and(|age| age > STALE_AFTER) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The result, in `CompileResponse`'s order (`Ver` is added with the reply).
fn response(fields: [(&str, Value); 7]) -> Map<String, Value> {
    fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

pub fn compile(call: ToolCall) -> BoxFuture {
    Box::pin(async move {
        let editor = call.editor.clone();
        let project = editor.project.clone();
        let force = call.args.bool("ForceRecompile");
        let wait = call.args.bool("WaitForDomainReload");
        let request_id = match call.args.get("RequestId").as_str().and_then(safe_request_id) {
            Some(id) => Some(id.to_owned()),
            None if wait => Some(generated_request_id(&call)),
            None => None,
        };
        let results = project.join(editor.model.dialect.compile_results);
        clear_stale_results(&results);
        let project_root = wait.then(|| Value::String(editor_link::discovery::unity_path(&project)));
        let project_root = project_root.unwrap_or(Value::Null);

        let lock = project.join(COMPILING_LOCK);
        // The result, and whether the domain reloads before it can be sent.
        let (result, reloads) = if lock.exists() {
            let issue = "Compilation is already in progress. Please wait for the current compilation to finish.";
            let issue = response([
                ("Success", false.into()),
                ("ErrorCount", 1.into()),
                ("WarningCount", 0.into()),
                ("Errors", json!([{"Message": issue, "File": "", "Line": 0}])),
                ("Warnings", json!([])),
                ("Message", Value::Null),
                ("ProjectRoot", project_root),
            ]);
            (issue, false)
        } else {
            let _ = std::fs::create_dir_all(project.join("Temp"));
            let _ = std::fs::write(&lock, lock_stamp(editor.now()));
            tokio::time::sleep(Duration::from_millis(editor.base.compile.duration_ms)).await;
            let report = run_compile(&editor);
            let _ = std::fs::remove_file(&lock);
            let list = |severity| {
                report
                    .diagnostics
                    .iter()
                    .filter(|d| d.severity == severity)
                    .map(|d| json!({"Message": d.unity_message(), "File": d.file, "Line": d.line}))
                    .collect::<Vec<_>>()
            };
            let (errors, warnings) = (report.count(Severity::Error), report.count(Severity::Warning));
            let result = if force {
                response([
                    ("Success", Value::Null),
                    ("ErrorCount", errors.into()),
                    ("WarningCount", warnings.into()),
                    ("Errors", Value::Null),
                    ("Warnings", Value::Null),
                    (
                        "Message",
                        "Force compilation executed. Use get-logs tool to retrieve compilation messages.".into(),
                    ),
                    ("ProjectRoot", project_root),
                ])
            } else {
                response([
                    ("Success", (errors == 0).into()),
                    ("ErrorCount", errors.into()),
                    ("WarningCount", warnings.into()),
                    ("Errors", list(Severity::Error).into()),
                    ("Warnings", list(Severity::Warning).into()),
                    ("Message", Value::Null),
                    ("ProjectRoot", project_root),
                ])
            };
            // New assemblies load: the domain reloads before the answer can
            // go out, and a waiting client reads the result file instead.
            (result, errors == 0 && (report.changed || force))
        };
        write_result(&results, request_id.as_deref(), &result, &editor);
        if reloads { Outcome::ReloadBeforeReply(result) } else { Outcome::Reply(result) }
    })
}

/// The result file, when the client waits across a reload (`\u{feff}` and the
/// result as `JsonConvert.SerializeObject` writes it, `Ver` included).
fn write_result(dir: &Path, request_id: Option<&str>, result: &Map<String, Value>, editor: &crate::editor::Editor) {
    let Some(id) = request_id else { return };
    let mut full = result.clone();
    full.insert("Ver".into(), editor.model.version.unwrap_or_default().into());
    let path: PathBuf = dir.join(format!("{id}.json"));
    let text = format!("\u{feff}{}", Value::Object(full));
    if let Err(err) = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, text)) {
        tracing::warn!(%err, path = %path.display(), "cannot write the compile result");
    }
}
