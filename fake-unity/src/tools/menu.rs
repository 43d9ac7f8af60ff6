//! Menu items: `get-menu-items` and `execute-menu-item`, whose effects change
//! the simulation (refresh, play mode, a new GameObject, console lines).

use serde_json::{Value, json};

use super::{After, Outcome, ToolCall, editor_ui, invalid_param, result};
use crate::editor::{
    ConsoleEntry,
    state::{Component, GameObject, LogEntry, MenuEffect, MenuItem},
};

pub const FILTER_TYPES: &[(&str, i64)] = &[("contains", 0), ("exact", 1), ("startswith", 2)];

pub fn get_menu_items(call: &ToolCall) -> Outcome {
    let args = &call.args;
    let text = args.str("FilterText");
    let filter_type = args.str("FilterType");
    let include_validation = args.bool("IncludeValidation");
    let max = args.int("MaxCount").max(1) as usize;
    let items = &call.editor.base.menu_items;
    let needle = text.to_lowercase();
    let matches = |item: &&MenuItem| {
        let path = item.path.to_lowercase();
        text.is_empty()
            || match filter_type {
                "exact" => path == needle,
                "startswith" => path.starts_with(&needle),
                _ => path.contains(&needle),
            }
    };
    let shown: Vec<Value> = items
        .iter()
        .filter(|i| !i.native)
        .filter(|i| include_validation || !i.is_validate_function)
        .filter(matches)
        .take(max)
        .map(|i| {
            json!({"Path": i.path, "MethodName": i.method_name, "TypeName": i.type_name,
                   "AssemblyName": i.assembly_name, "Priority": i.priority, "IsValidateFunction": i.is_validate_function})
        })
        .collect();
    Outcome::Reply(result([
        ("MenuItems", Value::from(shown.clone())),
        ("TotalCount", items.iter().filter(|i| !i.native).count().into()),
        ("FilteredCount", shown.len().into()),
        ("AppliedFilter", text.into()),
        ("AppliedFilterType", filter_type.into()),
    ]))
}

pub fn execute_menu_item(call: &ToolCall) -> Outcome {
    let path = call.args.str("MenuItemPath").trim().to_owned();
    if path.is_empty() {
        return invalid_param("MenuItemPath", "Parameter 'MenuItemPath' must not be empty".into());
    }
    let editor = &call.editor;
    let reply = |success: bool, found: bool, error: String, details: String| {
        result([
            ("MenuItemPath", path.clone().into()),
            ("Success", success.into()),
            ("ExecutionMethod", if success { "EditorApplication".into() } else { "".into() }),
            ("ErrorMessage", error.into()),
            ("Details", details.into()),
            ("MenuItemFound", found.into()),
        ])
    };
    let Some(item) = editor.base.menu_items.iter().find(|i| i.path == path && !i.is_validate_function) else {
        return Outcome::Reply(reply(false, false, format!("Menu item not found: {path}"), String::new()));
    };
    let details = "Menu item executed successfully".to_owned();
    match &item.effect {
        MenuEffect::None => Outcome::Reply(reply(true, true, String::new(), details)),
        MenuEffect::Refresh => Outcome::ReplyThen(reply(true, true, String::new(), details), After::Refresh),
        MenuEffect::TogglePlay => {
            let action = if editor.sim().playing { "Stop" } else { "Play" };
            let (_, after) = editor_ui::apply_play_action(editor, action);
            let details = format!("{details}; play mode {}", if action == "Play" { "entered" } else { "exited" });
            match after {
                Some(after) => Outcome::ReplyThen(reply(true, true, String::new(), details), after),
                None => Outcome::Reply(reply(true, true, String::new(), details)),
            }
        }
        MenuEffect::TogglePause => {
            let paused = {
                let mut sim = editor.sim();
                sim.paused = !sim.paused;
                sim.paused
            };
            Outcome::Reply(reply(true, true, String::new(), format!("{details}; paused: {paused}")))
        }
        MenuEffect::CreateEmpty => {
            let name = {
                let mut sim = editor.sim();
                let id = sim.next_instance_id;
                sim.next_instance_id -= 2;
                let taken = |n: &str| sim.scene_roots.iter().any(|g| g.name == n);
                let mut name = "GameObject".to_owned();
                let mut n = 1;
                while taken(&name) {
                    name = format!("GameObject ({n})");
                    n += 1;
                }
                sim.scene_roots.push(GameObject {
                    name: name.clone(),
                    instance_id: id,
                    tag: "Untagged".into(),
                    layer: 0,
                    active: true,
                    components: vec![Component {
                        type_name: "Transform".into(),
                        namespace: "UnityEngine".into(),
                        assembly: "UnityEngine.CoreModule".into(),
                        properties: serde_json::from_value(json!({"position": {"x": 0.0, "y": 0.0, "z": 0.0}}))
                            .unwrap_or_default(),
                        inherited_properties: Default::default(),
                    }],
                    children: Vec::new(),
                });
                name
            };
            Outcome::Reply(reply(true, true, String::new(), format!("{details}; created '{name}'")))
        }
        MenuEffect::Log { log_type, message } => {
            editor.log([ConsoleEntry {
                entry: LogEntry {
                    log_type: *log_type,
                    message: message.clone(),
                    stack_trace: format!("{}:{} ()", item.type_name, item.method_name),
                },
                from_compile: false,
            }]);
            Outcome::Reply(reply(true, true, String::new(), details))
        }
    }
}
