//! uLoopMCP 2.1.1's scene tools on the simulated scene: `find-game-objects`
//! (`FindGameObjectsUseCase`: lower camelCase keys, ordinal matching) and
//! `get-hierarchy` (`GetHierarchyUseCase`: always a file under
//! `.uloop/outputs/HierarchyResults/`, only its path answered).

use serde_json::{Map, Value, json};

use super::super::{
    Outcome, ToolCall,
    scene::{has_component, walk},
};
use crate::editor::{model::errors::uloop_internal, state::GameObject};

fn reply(fields: Vec<(&str, Value)>) -> Outcome {
    Outcome::Reply(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<Map<String, Value>>())
}

/// The C# type a serialized property's value reads as.
fn property_type(value: &Value) -> &'static str {
    match value {
        Value::Bool(_) => "Boolean",
        Value::Number(n) if n.is_f64() => "Single",
        Value::Number(_) => "Int32",
        Value::String(_) => "String",
        Value::Object(o) if ["x", "y", "z", "w"].iter().all(|k| o.contains_key(*k)) => "Quaternion",
        Value::Object(o) if ["x", "y", "z"].iter().all(|k| o.contains_key(*k)) => "Vector3",
        Value::Object(o) if ["x", "y"].iter().all(|k| o.contains_key(*k)) => "Vector2",
        _ => "Object",
    }
}

fn found(go: &GameObject, path: &str) -> Value {
    let components: Vec<Value> = go
        .components
        .iter()
        .map(|c| {
            let full =
                if c.namespace.is_empty() { c.type_name.clone() } else { format!("{}.{}", c.namespace, c.type_name) };
            let properties: Vec<Value> = c
                .properties
                .iter()
                .map(|(name, value)| json!({"name": name, "type": property_type(value), "value": value}))
                .collect();
            json!({"type": c.type_name, "fullTypeName": full, "properties": properties})
        })
        .collect();
    json!({"name": go.name, "path": path, "isActive": go.active, "tag": go.tag, "layer": go.layer, "components": components})
}

pub fn find_game_objects(call: &ToolCall) -> Outcome {
    let args = &call.args;
    let pattern = args.str("NamePattern");
    let mode = args.int("SearchMode");
    let required = args.str_list("RequiredComponents");
    let tag = args.str("Tag");
    let layer = args.opt_int("Layer");
    let include_inactive = args.bool("IncludeInactive");
    let max = usize::try_from(args.int("MaxResults")).unwrap_or(0);
    let answer = |results: Value, total: usize, error: Value, message: Value| {
        reply(vec![
            ("results", results),
            ("totalFound", total.into()),
            ("errorMessage", error),
            ("resultsFilePath", Value::Null),
            ("message", message),
            ("processingErrors", Value::Null),
        ])
    };
    if mode == 4 {
        // The simulated Editor has nothing selected.
        return answer(json!([]), 0, Value::Null, json!("No GameObjects are currently selected in Unity Editor."));
    }
    if pattern.is_empty() && required.is_empty() && tag.is_empty() && layer.is_none() {
        return answer(json!([]), 0, json!("At least one search criterion must be provided"), Value::Null);
    }
    let regex = match mode {
        2 if !pattern.is_empty() => match regex::Regex::new(pattern) {
            Ok(re) => Some(re),
            Err(_) => {
                return answer(
                    json!([]),
                    0,
                    json!("Search execution failed. Please check the logs for details."),
                    Value::Null,
                );
            }
        },
        _ => None,
    };
    let sim = call.editor.sim();
    let placed = walk(&sim.scene_roots);
    let results: Vec<Value> = placed
        .iter()
        // GameObject.Find (Path) sees active objects only.
        .filter(|p| (include_inactive && mode != 1) || p.active_in_hierarchy)
        .filter(|p| match mode {
            _ if pattern.is_empty() => true,
            1 => p.path == pattern,
            2 => regex.as_ref().is_some_and(|re| re.is_match(&p.object.name)),
            3 => p.object.name.contains(pattern),
            _ => p.object.name == pattern,
        })
        .filter(|p| tag.is_empty() || p.object.tag == tag)
        .filter(|p| layer.is_none_or(|l| i64::from(p.object.layer) == l))
        .filter(|p| required.iter().all(|want| has_component(p.object, want)))
        .take(if mode == 1 { 1.min(max) } else { max })
        .map(|p| found(p.object, &p.path))
        .collect();
    let total = results.len();
    answer(results.into(), total, Value::Null, Value::Null)
}

/// `yyyy-MM-dd_HH-mm-ss` and `yyyy-MM-dd HH:mm:ss` of now (the fake's clock, UTC).
fn stamps(call: &ToolCall) -> (String, String) {
    let text = humantime::format_rfc3339_seconds(call.editor.now()).to_string();
    let (date, time) = text.trim_end_matches('Z').split_once('T').unwrap_or((&text, ""));
    (format!("{date}_{}", time.replace(':', "-")), format!("{date} {time}"))
}

/// What a hierarchy node shows.
#[derive(Clone, Copy)]
struct Shown {
    include_inactive: bool,
    max_depth: i64,
    include_components: bool,
    include_paths: bool,
}

/// One node and its children; counts nodes and the deepest level in `counters`.
fn node(go: &GameObject, path: &str, depth: usize, shown: Shown, counters: &mut (usize, usize)) -> Option<Value> {
    if !shown.include_inactive && !go.active {
        return None;
    }
    counters.0 += 1;
    counters.1 = counters.1.max(depth);
    let children: Vec<Value> = if shown.max_depth < 0 || (depth as i64) < shown.max_depth {
        go.children.iter().filter_map(|c| node(c, &format!("{path}/{}", c.name), depth + 1, shown, counters)).collect()
    } else {
        Vec::new()
    };
    let mut entry = json!({"name": go.name, "isActive": go.active});
    if shown.include_components {
        entry["components"] = go.components.iter().map(|c| c.type_name.clone()).collect::<Vec<_>>().into();
    }
    entry["children"] = children.into();
    if shown.include_paths {
        entry["path"] = path.into();
    }
    Some(entry)
}

pub fn get_hierarchy(call: &ToolCall) -> Outcome {
    let args = &call.args;
    let shown = Shown {
        include_inactive: args.bool("IncludeInactive"),
        max_depth: args.int("MaxDepth"),
        include_components: args.bool("IncludeComponents"),
        include_paths: args.bool("IncludePaths"),
    };
    let root_path = args.get("RootPath").as_str().filter(|p| !p.is_empty()).map(|p| p.trim_matches('/').to_owned());
    let editor = &call.editor;
    let document = {
        let sim = editor.sim();
        let placed = walk(&sim.scene_roots);
        let roots: Vec<(&GameObject, String)> = match &root_path {
            None => sim.scene_roots.iter().map(|r| (r, r.name.clone())).collect(),
            Some(path) => match placed.iter().find(|p| &p.path == path) {
                Some(p) => vec![(p.object, p.path.clone())],
                None => {
                    return Outcome::Fail(uloop_internal(format!(
                        "Failed to retrieve hierarchy: GameObject not found at path: {path}"
                    )));
                }
            },
        };
        let mut counters = (0usize, 0usize);
        let built: Vec<Value> = roots.iter().filter_map(|(go, path)| node(go, path, 0, shown, &mut counters)).collect();
        let (count, deepest) = counters;
        let scene = &editor.base.scene.name;
        json!({
            "Context": {"sceneType": if sim.playing { "runtime" } else { "editor" }, "sceneName": scene,
                        "nodeCount": count, "maxDepth": deepest},
            "Hierarchy": [{"sceneName": scene, "stats": {"rootCount": built.len(), "nodeCount": count, "maxDepth": deepest},
                           "roots": built}],
        })
    };
    let (file_stamp, export_stamp) = stamps(call);
    let rel = format!(".uloop/outputs/HierarchyResults/hierarchy_{file_stamp}.json");
    let mut file = json!({"ExportTimestamp": export_stamp});
    if let (Some(file), Some(document)) = (file.as_object_mut(), document.as_object()) {
        file.extend(document.clone());
    }
    let path = editor.project.join(&rel);
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, serde_json::to_vec_pretty(&file).unwrap_or_default()));
    if let Err(err) = written {
        return Outcome::Fail(uloop_internal(format!("Failed to retrieve hierarchy: {err}")));
    }
    reply(vec![
        ("message", json!("Hierarchy data saved below. Open the JSON to read 'Context' and 'Hierarchy'.")),
        ("hierarchyFilePath", json!(rel)),
    ])
}
