//! `compile` and the asset refresh: the fake compiles the project's scripts by
//! reporting the state's diagnostics plus the `#error` / `#warning` directives
//! it finds in the live `Assets/**/*.cs` (which a real compiler reports as
//! CS1029 / CS1030). A compile that changed scripts and succeeds reloads the
//! domain, as Unity does, before its response can be sent.

use std::{path::Path, sync::Arc, time::Duration};

use serde_json::{Map, Value, json};

use super::{BoxFuture, Outcome, ToolCall, result};
use crate::editor::simulation::{Fingerprint, scripts_of};
use crate::editor::{
    ConsoleEntry, Editor, ReloadOptions,
    state::{Diagnostic, LogEntry, LogType, Severity},
};

/// `#error` / `#warning` directives in the scripts, as the C# compiler reports them.
fn directive_diagnostics(project: &Path) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (file, text) in scripts_of(project) {
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            let column = (line.len() - trimmed.len() + 1) as u32;
            let (severity, code, rest) = if let Some(rest) = trimmed.strip_prefix("#error") {
                (Severity::Error, "CS1029", rest)
            } else if let Some(rest) = trimmed.strip_prefix("#warning") {
                (Severity::Warning, "CS1030", rest)
            } else {
                continue;
            };
            let directive = if severity == Severity::Error { "#error" } else { "#warning" };
            out.push(Diagnostic {
                severity,
                file: file.clone(),
                line: n as u32 + 1,
                column,
                code: code.into(),
                text: format!("{directive}: '{}'", rest.trim()),
            });
        }
    }
    out
}

/// What one compile found.
#[derive(Debug)]
pub(crate) struct CompileReport {
    pub diagnostics: Vec<Diagnostic>,
    /// Scripts differ from the last compile.
    pub changed: bool,
}

impl CompileReport {
    pub fn count(&self, severity: Severity) -> usize {
        self.diagnostics.iter().filter(|d| d.severity == severity).count()
    }

    fn to_result(&self, completed_at: String) -> Map<String, Value> {
        let (errors, warnings) = (self.count(Severity::Error), self.count(Severity::Warning));
        let list = |severity| {
            self.diagnostics
                .iter()
                .filter(|d| d.severity == severity)
                .map(|d| json!({"Message": d.unity_message(), "File": d.file, "Line": d.line}))
                .collect::<Vec<_>>()
        };
        let message = match (errors, warnings) {
            (0, 0) => "Compilation completed successfully".to_owned(),
            (0, w) => format!("Compilation completed successfully with {w} warning(s)"),
            (e, w) => format!("Compilation failed with {e} error(s) and {w} warning(s)"),
        };
        result([
            ("Success", (errors == 0).into()),
            ("ErrorCount", errors.into()),
            ("WarningCount", warnings.into()),
            ("CompletedAt", completed_at.into()),
            ("Errors", list(Severity::Error).into()),
            ("Warnings", list(Severity::Warning).into()),
            ("Message", message.into()),
        ])
    }
}

/// Compiles: replaces the previous compiler messages in the console with
/// this compile's, and records the scripts as compiled.
pub(crate) fn run_compile(editor: &Editor) -> CompileReport {
    let mut diagnostics = editor.base.compile.diagnostics.clone();
    if !editor.has_defect(crate::Defect::CompileMissesNewErrors) {
        diagnostics.extend(directive_diagnostics(&editor.project));
    }
    let fingerprint = Fingerprint::of_project(&editor.project);
    let mut sim = editor.sim();
    let changed = sim.compiled_scripts != fingerprint;
    sim.compiled_scripts = fingerprint;
    sim.console.retain(|e| !e.from_compile);
    drop(sim);
    editor.log(diagnostics.iter().map(|d| ConsoleEntry {
        entry: LogEntry {
            log_type: if d.severity == Severity::Error { LogType::Error } else { LogType::Warning },
            message: d.unity_message(),
            stack_trace: String::new(),
        },
        from_compile: true,
    }));
    CompileReport { diagnostics, changed }
}

pub fn compile(call: ToolCall) -> BoxFuture {
    Box::pin(async move {
        let force = call.args.bool("ForceRecompile");
        let editor = &call.editor;
        call.progress.report(0, Some(2), "Refreshing assets");
        tokio::time::sleep(Duration::from_millis(editor.base.compile.duration_ms / 2)).await;
        call.progress.report(1, Some(2), "Compiling scripts");
        tokio::time::sleep(Duration::from_millis(editor.base.compile.duration_ms.div_ceil(2))).await;
        let report = run_compile(editor);
        call.progress.report(2, Some(2), "Compilation finished");
        let result = report.to_result(editor.timestamp());
        if report.count(Severity::Error) == 0 && (report.changed || force) {
            // New assemblies: Unity reloads the domain before answering.
            Outcome::ReloadBeforeReply(result)
        } else {
            Outcome::Reply(result)
        }
    })
}

/// `Assets/Refresh`: if scripts changed since the last compile, compile them
/// and, when they compile, reload the domain.
pub async fn refresh(editor: &Arc<Editor>) {
    if Fingerprint::of_project(&editor.project) == editor.sim().compiled_scripts {
        return;
    }
    tokio::time::sleep(Duration::from_millis(editor.base.compile.duration_ms)).await;
    let report = run_compile(editor);
    if report.count(Severity::Error) == 0 {
        editor.request_reload(ReloadOptions::default(), None);
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    #[test]
    fn directives_become_diagnostics_and_edits_change_the_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let scripts = dir.path().join("Assets/Scripts");
        fs::create_dir_all(&scripts).unwrap();
        fs::create_dir_all(dir.path().join("Assets/Ignored~")).unwrap();
        fs::write(dir.path().join("Assets/Ignored~/X.cs"), "#error ignored").unwrap();
        fs::write(scripts.join("A.cs"), "class A {}\n  #warning check this\n#error broken here\n").unwrap();
        let diags = directive_diagnostics(dir.path());
        assert_eq!(diags.len(), 2);
        assert_eq!(diags[0].unity_message(), "Assets/Scripts/A.cs(2,3): warning CS1030: #warning: 'check this'");
        assert_eq!(diags[1].unity_message(), "Assets/Scripts/A.cs(3,1): error CS1029: #error: 'broken here'");

        let before = Fingerprint::of_project(dir.path());
        assert_eq!(before, Fingerprint::of_project(dir.path()));
        fs::write(scripts.join("A.cs"), "class A {}\n").unwrap();
        assert_ne!(before, Fingerprint::of_project(dir.path()));
    }
}
