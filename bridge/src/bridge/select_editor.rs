//! `select-unity-editor`: outside every project, where several Editors
//! are open and the bridge does not guess, the agent picks the one for the
//! session (`bridge-status` shows the choice). Offered only to a bridge
//! started outside any project; in a project only that project's Editor is
//! ever used.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::Bridge;
use crate::{link::open_editors::OpenEditor, results::ToolResult};

/// The tool's name.
pub const SELECT_TOOL: &str = "select-unity-editor";

/// Its definition.
pub fn definition() -> Value {
    json!({
        "name": SELECT_TOOL,
        "description": "Choose which open Unity Editor this session uses, when the bridge runs outside any Unity project and several Editors are open (it never guesses). Give the project's path, or its folder name when no other open project has it; without arguments, lists the open Editors. The choice holds for the session; bridge-status shows it.",
        "inputSchema": {"type": "object", "properties": {
            "project": {"type": "string", "description": "The project's folder (a path, or its name when unique among the open Editors)"}
        }},
        "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
    })
}

impl Bridge {
    /// Chooses the Editor `arguments.project` names.
    pub(super) fn select_editor(&self, arguments: &Map<String, Value>) -> ToolResult {
        let open = self.link.status().open_editors;
        let listed = json!(open);
        let Some(wanted) = arguments.get("project").filter(|v| !v.is_null()) else {
            return built(json!({"chosen": self.link.project(), "openEditors": listed}));
        };
        let Some(wanted) = wanted.as_str().filter(|w| !w.trim().is_empty()) else {
            return ToolResult::error(format!("project must be a project's path or folder name, not {wanted}"));
        };
        let project = match pick(&open, wanted) {
            Ok(project) => project,
            Err(why) => return ToolResult::error(why),
        };
        if let Err(why) = self.link.choose(project.clone()) {
            return ToolResult::error(format!("Nothing to choose: {why}."));
        }
        tracing::info!(project = %project.display(), "the agent chose the Unity Editor of this project");
        let editor = open.iter().find(|e| e.project == project);
        built(json!({
            "chosen": project,
            "editor": editor,
            "openEditors": listed,
            "note": match editor {
                Some(_) => "This Editor is used for the rest of the session.",
                None => "No Editor has this project open now: the bridge connects when Unity opens it.",
            },
        }))
    }
}

/// The project `wanted` names among `open`: its path, or the name of its
/// folder when one open project alone has it; else a Unity project folder
/// not open yet.
fn pick(open: &[OpenEditor], wanted: &str) -> Result<PathBuf, String> {
    let path = Path::new(wanted);
    let canonical = dunce::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    if let Some(e) = open.iter().find(|e| e.project == canonical || e.project == path) {
        return Ok(e.project.clone());
    }
    let named: Vec<&OpenEditor> = open.iter().filter(|e| e.project.file_name().is_some_and(|n| n == wanted)).collect();
    match named.as_slice() {
        [one] => return Ok(one.project.clone()),
        [] => {}
        several => {
            let paths: Vec<String> = several.iter().map(|e| e.project.display().to_string()).collect();
            return Err(format!(
                "{wanted:?} names {} open projects ({}): give the path",
                several.len(),
                paths.join(", ")
            ));
        }
    }
    if editor_link::discovery::Locator::find_project(&canonical).is_some_and(|p| p == canonical) {
        return Ok(canonical);
    }
    let open: Vec<String> = open.iter().map(OpenEditor::line).collect();
    Err(format!(
        "{wanted:?} is neither an open Editor's project nor a Unity project folder (with Assets/ and ProjectSettings/). Open: {}",
        if open.is_empty() { "none".to_owned() } else { open.join("; ") }
    ))
}

fn built(result: Value) -> ToolResult {
    let mut built = json!({"content": [{"type": "text", "text": result.to_string()}]});
    built["structuredContent"] = result;
    ToolResult::Built(built)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn editor(project: &str) -> OpenEditor {
        OpenEditor {
            project: project.into(),
            unity_version: None,
            pid: None,
            endpoint: "port 1".into(),
            found_by: "registry".into(),
            local: None,
        }
    }

    #[test]
    fn an_editor_is_picked_by_its_path_or_its_unique_folder_name() {
        let open = [editor("/w/a/Game"), editor("/w/b/Game"), editor("/w/Tools")];
        assert_eq!(pick(&open, "/w/a/Game"), Ok(PathBuf::from("/w/a/Game")));
        assert_eq!(pick(&open, "Tools"), Ok(PathBuf::from("/w/Tools")));
        let two = pick(&open, "Game").unwrap_err();
        assert!(two.contains("names 2 open projects"), "{two}");
        let none = pick(&open, "/nowhere/x").unwrap_err();
        assert!(none.contains("neither") && none.contains("/w/Tools"), "{none}");
    }
}
