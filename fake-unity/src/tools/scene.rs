//! The open scene: `find-game-objects` and `get-hierarchy`.

use serde_json::{Map, Value, json};

use super::{Outcome, ToolCall, invalid_param, result};
use crate::editor::state::GameObject;

pub const SEARCH_MODES: &[(&str, i64)] = &[("Exact", 0), ("Path", 1), ("Regex", 2), ("Contains", 3)];

/// A GameObject with where it sits.
#[derive(Debug)]
pub struct Placed<'a> {
    pub object: &'a GameObject,
    /// `Parent/Child`, as `GameObject.Find` takes it.
    pub path: String,
    pub depth: usize,
    /// `activeInHierarchy`: itself and every ancestor active.
    pub active_in_hierarchy: bool,
}

/// Every object of the scene, depth first, in hierarchy order.
pub fn walk(roots: &[GameObject]) -> Vec<Placed<'_>> {
    fn visit<'a>(go: &'a GameObject, parent: Option<&str>, depth: usize, active: bool, out: &mut Vec<Placed<'a>>) {
        let path = match parent {
            Some(p) => format!("{p}/{}", go.name),
            None => go.name.clone(),
        };
        let active = active && go.active;
        out.push(Placed { object: go, path: path.clone(), depth, active_in_hierarchy: active });
        for child in &go.children {
            visit(child, Some(&path), depth + 1, active, out);
        }
    }
    let mut out = Vec::new();
    for root in roots {
        visit(root, None, 0, true, &mut out);
    }
    out
}

/// Whether `go` has a component named `want`, short or namespace-qualified.
pub fn has_component(go: &GameObject, want: &str) -> bool {
    go.components
        .iter()
        .any(|c| c.type_name == want || (!c.namespace.is_empty() && format!("{}.{}", c.namespace, c.type_name) == want))
}

pub fn find_game_objects(call: &ToolCall) -> Outcome {
    let args = &call.args;
    let pattern = args.str("NamePattern");
    let mode = args.str("SearchMode");
    let required = args.str_list("RequiredComponents");
    let tag = args.str("Tag");
    let layer = args.opt_int("Layer");
    let include_inactive = args.bool("IncludeInactive");
    let max = args.int("MaxResults").max(1) as usize;
    let inherited = args.bool("IncludeInheritedProperties");

    let finish = |results: Vec<Value>, total: usize, error: &str| {
        Outcome::Reply(result([
            ("results", results.into()),
            ("totalFound", total.into()),
            ("errorMessage", error.into()),
        ]))
    };
    if pattern.is_empty() && required.is_empty() && tag.is_empty() && layer.is_none() {
        return finish(
            Vec::new(),
            0,
            "At least one search criterion is required (NamePattern, RequiredComponents, Tag or Layer)",
        );
    }
    let regex = if mode == "Regex" && !pattern.is_empty() {
        match regex::Regex::new(pattern) {
            Ok(re) => Some(re),
            Err(err) => {
                return invalid_param(
                    "NamePattern",
                    format!("Parameter 'NamePattern' is not a valid regular expression: {err}"),
                );
            }
        }
    } else {
        None
    };
    let name_matches = |p: &Placed<'_>| -> bool {
        if pattern.is_empty() {
            return true;
        }
        match mode {
            "Path" => p.path == pattern,
            "Regex" => regex.as_ref().is_some_and(|re| re.is_match(&p.object.name)),
            "Contains" => p.object.name.to_lowercase().contains(&pattern.to_lowercase()),
            _ => p.object.name == pattern,
        }
    };

    let sim = call.editor.sim();
    let found: Vec<Placed<'_>> = walk(&sim.scene_roots)
        .into_iter()
        .filter(|p| include_inactive || p.active_in_hierarchy)
        .filter(|p| name_matches(p))
        .filter(|p| tag.is_empty() || p.object.tag == tag)
        .filter(|p| layer.is_none_or(|l| i64::from(p.object.layer) == l))
        .filter(|p| required.iter().all(|want| has_component(p.object, want)))
        .collect();
    let results: Vec<Value> = found
        .iter()
        .take(max)
        .map(|p| {
            let components: Vec<Value> = p
                .object
                .components
                .iter()
                .map(|c| {
                    let mut properties: Map<String, Value> = c.properties.clone();
                    if inherited {
                        properties.insert("name".into(), p.object.name.clone().into());
                        properties.insert("tag".into(), p.object.tag.clone().into());
                        properties.insert("hideFlags".into(), 0.into());
                        if c.has_enabled() {
                            properties.insert("enabled".into(), true.into());
                        }
                        properties.extend(c.inherited_properties.clone());
                    }
                    json!({"TypeName": c.type_name, "AssemblyQualifiedName": c.assembly_qualified_name(), "Properties": properties})
                })
                .collect();
            json!({"name": p.object.name, "path": p.path, "isActive": p.object.active, "tag": p.object.tag,
                   "layer": p.object.layer, "components": components})
        })
        .collect();
    finish(results, found.len(), "")
}

pub fn get_hierarchy(call: &ToolCall) -> Outcome {
    let args = &call.args;
    let include_inactive = args.bool("IncludeInactive");
    let max_depth = args.int("MaxDepth");
    let root_path = args.non_empty_str("RootPath").map(|p| p.trim_matches('/').to_owned());
    let include_components = args.bool("IncludeComponents");
    let max_bytes = (args.float("MaxResponseSizeKB") * 1024.0) as usize;
    let editor = &call.editor;

    let sim = editor.sim();
    let context = |node_count: usize, depth_reached: usize| {
        json!({"sceneType": if sim.playing { "runtime" } else { "editor" }, "sceneName": editor.base.scene.name,
               "nodeCount": node_count, "maxDepth": depth_reached})
    };
    let roots: Vec<&GameObject> = match &root_path {
        None => sim.scene_roots.iter().collect(),
        Some(path) => match walk(&sim.scene_roots).into_iter().find(|p| &p.path == path) {
            Some(p) => vec![p.object],
            None => {
                return Outcome::Reply(result([
                    ("hierarchy", json!([])),
                    ("context", context(0, 0)),
                    ("Message", "".into()),
                    ("ErrorMessage", format!("GameObject not found at path: {path}").into()),
                ]));
            }
        },
    };

    let mut count = 0;
    let mut deepest = 0;
    let mut build = Builder {
        editor: &editor.base.editor,
        entity_ids_as_numbers: editor.has_defect(crate::Defect::EntityIdsAsNumbers),
        include_inactive,
        max_depth,
        include_components,
        count: &mut count,
        deepest: &mut deepest,
    };
    let hierarchy: Vec<Value> = roots.iter().filter_map(|go| build.node(go, 0)).collect();
    let context = context(count, deepest);
    let hierarchy = Value::Array(hierarchy);
    let size = serde_json::to_vec(&hierarchy).map_or(0, |v| v.len());
    if size > max_bytes {
        let document = json!({"hierarchy": hierarchy, "context": context});
        let bytes = serde_json::to_vec_pretty(&document).unwrap_or_default();
        let rel = match editor.write_output("HierarchyResults", "hierarchy", "json", &bytes) {
            Ok(rel) => rel,
            Err(error) => return Outcome::Fail(error),
        };
        return Outcome::Reply(result([
            ("hierarchySavedToFile", true.into()),
            ("hierarchyFilePath", rel.clone().into()),
            ("saveToFileReason", "auto_threshold".into()),
            ("context", context),
            (
                "Message",
                format!(
                    "Hierarchy is {} KB, over the {} KB limit: saved to {rel}",
                    size.div_ceil(1024),
                    max_bytes / 1024
                )
                .into(),
            ),
        ]));
    }
    Outcome::Reply(result([("hierarchy", hierarchy), ("context", context)]))
}

struct Builder<'a> {
    editor: &'a crate::editor::state::EditorInfo,
    entity_ids_as_numbers: bool,
    include_inactive: bool,
    max_depth: i64,
    include_components: bool,
    count: &'a mut usize,
    deepest: &'a mut usize,
}

impl Builder<'_> {
    fn node(&mut self, go: &GameObject, depth: usize) -> Option<Value> {
        if !self.include_inactive && !go.active {
            return None;
        }
        *self.count += 1;
        *self.deepest = (*self.deepest).max(depth);
        let children: Vec<Value> = if self.max_depth < 0 || (depth as i64) < self.max_depth {
            go.children.iter().filter_map(|c| self.node(c, depth + 1)).collect()
        } else {
            Vec::new()
        };
        let components: Vec<&str> = if self.include_components {
            go.components.iter().map(|c| c.type_name.as_str()).collect()
        } else {
            Vec::new()
        };
        let (id, entity_id) = go.identity(self.editor);
        // The defect: the whole EntityId as a JSON number, which a
        // JavaScript client rounds past 2^53.
        let entity_id = match self.entity_ids_as_numbers {
            true => entity_id.parse::<u64>().map_or_else(|_| json!(entity_id), |n| json!(n)),
            false => json!(entity_id),
        };
        Some(json!({"id": id, "entityId": entity_id, "name": go.name, "depth": depth, "isActive": go.active,
                    "components": components, "children": children}))
    }
}
