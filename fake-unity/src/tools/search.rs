//! Unity Search: `unity-search` over the providers the fake models (project
//! assets, the scene, menu items, settings pages, packages) and
//! `get-provider-details`.
//!
//! Query syntax: words match names and paths (case-insensitive, all must
//! match); `*` and `?` are wildcards (against the path when the word has a
//! `/`, else the name); `t:Type` filters by asset type (by component type in
//! the scene); a provider's filter id (`p:`, `h:`, `m:`, `se:`, `pkg:`)
//! selects that provider.

use std::time::Instant;

use serde_json::{Value, json};

use super::{Outcome, ToolCall, result, scene::walk, wildcard_regex};
use crate::editor::{Editor, state::SearchProvider};

pub const SEARCH_FLAGS: &[(&str, i64)] =
    &[("Default", 0), ("Synchronous", 1), ("WantsMore", 2), ("Packages", 4), ("Sorted", 8)];
pub const OUTPUT_FORMATS: &[(&str, i64)] = &[("JSON", 0), ("CSV", 1), ("TSV", 2)];

/// One search result.
#[derive(Clone, Debug)]
struct Item {
    id: String,
    label: String,
    description: String,
    provider: String,
    item_type: String,
    path: String,
    extension: String,
    /// Component types, for `t:` on scene objects.
    components: Vec<String>,
    size: Option<u64>,
    modified: Option<String>,
}

/// Every item a provider holds.
fn items_of(editor: &Editor, provider: &str, include_packages: bool) -> Vec<Item> {
    let base = |provider: &str, id: String, label: String, item_type: &str, path: String| Item {
        id,
        label,
        description: String::new(),
        provider: provider.to_owned(),
        item_type: item_type.to_owned(),
        path,
        extension: String::new(),
        components: Vec::new(),
        size: None,
        modified: None,
    };
    match provider {
        "asset" => editor
            .base
            .assets
            .iter()
            .filter(|a| include_packages || !a.path.starts_with("Packages/"))
            .map(|a| Item {
                description: format!("{} ({})", a.path, a.asset_type),
                extension: a.extension(),
                size: Some(a.size_bytes),
                modified: Some(a.modified.clone()),
                ..base("asset", a.guid.clone(), a.file_name().to_owned(), &a.asset_type, a.path.clone())
            })
            .collect(),
        "scene" => {
            let sim = editor.sim();
            walk(&sim.scene_roots)
                .into_iter()
                .map(|p| {
                    let components: Vec<String> = p.object.components.iter().map(|c| c.type_name.clone()).collect();
                    Item {
                        description: format!("{} ({})", p.path, components.join(", ")),
                        components,
                        ..base(
                            "scene",
                            // Unity's scene provider names an item by the
                            // object's EntityId (its instance ID before 6000.5).
                            p.object.identity(&editor.base.editor).1,
                            p.object.name.clone(),
                            "GameObject",
                            p.path.clone(),
                        )
                    }
                })
                .collect()
        }
        "menu" => editor
            .base
            .menu_items
            .iter()
            .filter(|m| !m.is_validate_function)
            .map(|m| Item {
                description: format!("{}.{} ({})", m.type_name, m.method_name, m.assembly_name),
                ..base(
                    "menu",
                    m.path.clone(),
                    m.path.rsplit('/').next().unwrap_or(&m.path).to_owned(),
                    "MenuItem",
                    m.path.clone(),
                )
            })
            .collect(),
        "settings" => [
            "Project/Editor",
            "Project/Player",
            "Project/Physics",
            "Project/Quality",
            "Project/Tags and Layers",
            "Project/Time",
            "Preferences/General",
            "Preferences/External Tools",
        ]
        .iter()
        .map(|page| Item {
            description: format!("Settings page {page}"),
            ..base(
                "settings",
                page.to_string(),
                page.rsplit('/').next().unwrap_or(page).to_owned(),
                "SettingsPage",
                page.to_string(),
            )
        })
        .collect(),
        "packages" => packages(editor)
            .into_iter()
            .map(|(name, version)| Item {
                description: format!("{name}@{version}"),
                ..base("packages", name.clone(), name.clone(), "Package", format!("Packages/{name}"))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Dependencies of the project's `Packages/manifest.json`, read live.
fn packages(editor: &Editor) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(editor.project.join("Packages/manifest.json")).unwrap_or_default();
    let manifest: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    manifest["dependencies"]
        .as_object()
        .map(|deps| deps.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned())).collect())
        .unwrap_or_default()
}

/// A parsed query.
#[derive(Debug, Default)]
struct Query {
    words: Vec<String>,
    patterns: Vec<(regex::Regex, bool)>,
    types: Vec<String>,
    provider_filters: Vec<String>,
}

fn parse_query(query: &str, providers: &[SearchProvider]) -> Result<Query, String> {
    let mut parsed = Query::default();
    for token in query.split_whitespace() {
        if let Some(t) = token.strip_prefix("t:") {
            parsed.types.push(t.to_lowercase());
            continue;
        }
        if token.starts_with("ref:") {
            return Err("fake-unity does not model asset references, so `ref:` queries are not supported".into());
        }
        let by_filter = providers.iter().find(|p| !p.filter_id.is_empty() && token.starts_with(&p.filter_id));
        let token = match by_filter {
            Some(provider) => {
                parsed.provider_filters.push(provider.id.clone());
                &token[provider.filter_id.len()..]
            }
            None => token,
        };
        if token.is_empty() {
            continue;
        }
        if token.contains(['*', '?']) {
            parsed.patterns.push((wildcard_regex(token, true), token.contains('/')));
        } else {
            parsed.words.push(token.to_lowercase());
        }
    }
    Ok(parsed)
}

impl Query {
    fn is_empty(&self) -> bool {
        self.words.is_empty() && self.patterns.is_empty() && self.types.is_empty()
    }

    fn matches(&self, item: &Item) -> bool {
        let label = item.label.to_lowercase();
        let path = item.path.to_lowercase();
        self.words.iter().all(|w| label.contains(w) || path.contains(w))
            && self.patterns.iter().all(|(re, on_path)| re.is_match(if *on_path { &item.path } else { &item.label }))
            && self
                .types
                .iter()
                .all(|t| item.item_type.to_lowercase() == *t || item.components.iter().any(|c| c.to_lowercase() == *t))
    }

    fn score(&self, item: &Item) -> i64 {
        let label = item.label.to_lowercase();
        self.words
            .iter()
            .map(|w| {
                if label == *w {
                    100
                } else if label.starts_with(w.as_str()) {
                    50
                } else {
                    10
                }
            })
            .sum()
    }
}

fn item_json(item: &Item, score: i64, description: bool, metadata: bool) -> Value {
    let mut v = json!({"Id": item.id, "Label": item.label});
    if description {
        v["Description"] = item.description.clone().into();
    }
    v["Provider"] = item.provider.clone().into();
    v["Type"] = item.item_type.clone().into();
    v["Path"] = item.path.clone().into();
    v["Score"] = score.into();
    v["FileExtension"] = item.extension.clone().into();
    if metadata {
        v["FileSize"] = item.size.map_or(Value::Null, Value::from);
        v["LastModified"] = item.modified.clone().map_or(Value::Null, Value::from);
    }
    v
}

pub fn unity_search(call: &ToolCall) -> Outcome {
    let started = Instant::now();
    let args = &call.args;
    let editor = &call.editor;
    let query_text = args.str("SearchQuery");
    let requested = args.str_list("Providers");
    let max = args.int("MaxResults").max(1) as usize;
    let extensions: Vec<String> =
        args.str_list("FileExtensions").iter().map(|e| e.trim_start_matches('.').to_lowercase()).collect();
    let asset_types: Vec<String> = args.str_list("AssetTypes").iter().map(|t| t.to_lowercase()).collect();
    let path_filter = args.str("PathFilter");
    let include_packages = args.str("SearchFlags") == "Packages";
    let all_providers = &editor.base.search_providers;

    let applied = |filtered_out: usize| {
        json!({"FileExtensions": args.str_list("FileExtensions"), "AssetTypes": args.str_list("AssetTypes"),
               "PathFilter": path_filter, "FilteredOutCount": filtered_out})
    };
    let fail = |message: String, providers: Vec<String>| {
        Outcome::Reply(result([
            ("Results", json!([])),
            ("TotalCount", 0.into()),
            ("DisplayedCount", 0.into()),
            ("SearchQuery", query_text.into()),
            ("ProvidersUsed", providers.into()),
            ("SearchDurationMs", editor.elapsed_ms(started).into()),
            ("Success", false.into()),
            ("ErrorMessage", message.into()),
            ("ResultsFilePath", "".into()),
            ("ResultsSavedToFile", false.into()),
            ("SavedFileFormat", "".into()),
            ("SaveToFileReason", "".into()),
            ("AppliedFilters", applied(0)),
        ]))
    };

    if let Some(unknown) = requested.iter().find(|r| !all_providers.iter().any(|p| &p.id == *r)) {
        let known: Vec<&str> = all_providers.iter().map(|p| p.id.as_str()).collect();
        return fail(
            format!("Unknown search provider: {unknown}. Available providers: {}", known.join(", ")),
            requested,
        );
    }
    let query = match parse_query(query_text, all_providers) {
        Ok(query) => query,
        Err(message) => return fail(message, requested),
    };
    let mut providers: Vec<&SearchProvider> = all_providers
        .iter()
        .filter(|p| if requested.is_empty() { p.is_active } else { requested.contains(&p.id) })
        .filter(|p| query.provider_filters.is_empty() || query.provider_filters.contains(&p.id))
        .collect();
    providers.sort_by_key(|p| p.priority);
    let used: Vec<String> = providers.iter().map(|p| p.id.clone()).collect();
    if query.is_empty() && extensions.is_empty() && asset_types.is_empty() && path_filter.is_empty() {
        return fail("The search query is empty: give SearchQuery or a filter".into(), used);
    }

    let path_re = (!path_filter.is_empty()).then(|| {
        if path_filter.contains(['*', '?']) {
            wildcard_regex(path_filter, true)
        } else {
            wildcard_regex(&format!("*{path_filter}*"), true)
        }
    });
    let mut matched: Vec<(Item, i64)> = Vec::new();
    for provider in &providers {
        let mut items: Vec<(Item, i64)> = items_of(editor, &provider.id, include_packages)
            .into_iter()
            .filter(|item| query.matches(item))
            .map(|item| {
                let score = query.score(&item);
                (item, score)
            })
            .collect();
        items.sort_by(|(a, sa), (b, sb)| sb.cmp(sa).then_with(|| a.path.cmp(&b.path)));
        matched.extend(items);
    }
    let before = matched.len();
    matched.retain(|(item, _)| {
        (extensions.is_empty() || extensions.contains(&item.extension))
            && (asset_types.is_empty() || asset_types.contains(&item.item_type.to_lowercase()))
            && path_re.as_ref().is_none_or(|re| re.is_match(&item.path))
    });
    let filtered_out = before - matched.len();
    let total = matched.len();

    let include_description = args.bool("IncludeDescription");
    let include_metadata = args.bool("IncludeMetadata");
    let threshold = args.int("AutoSaveThreshold").max(0) as usize;
    let reason = if args.bool("SaveToFile") {
        "user_request"
    } else if threshold > 0 && total > threshold {
        "auto_threshold"
    } else {
        ""
    };
    let (results, displayed, file_path, format) = if reason.is_empty() {
        let shown: Vec<Value> = matched
            .iter()
            .take(max)
            .map(|(item, score)| item_json(item, *score, include_description, include_metadata))
            .collect();
        let n = shown.len();
        (shown, n, String::new(), String::new())
    } else {
        let format = args.str("OutputFormat").to_owned();
        let all: Vec<Value> = matched
            .iter()
            .map(|(item, score)| item_json(item, *score, include_description, include_metadata))
            .collect();
        match save_results(editor, &format, query_text, &all) {
            Ok(path) => (Vec::new(), 0, path, format),
            Err(message) => return fail(message, used),
        }
    };
    Outcome::Reply(result([
        ("Results", results.into()),
        ("TotalCount", total.into()),
        ("DisplayedCount", displayed.into()),
        ("SearchQuery", query_text.into()),
        ("ProvidersUsed", used.into()),
        ("SearchDurationMs", editor.elapsed_ms(started).into()),
        ("Success", true.into()),
        ("ErrorMessage", "".into()),
        ("ResultsFilePath", file_path.clone().into()),
        ("ResultsSavedToFile", (!file_path.is_empty()).into()),
        ("SavedFileFormat", format.into()),
        ("SaveToFileReason", reason.into()),
        ("AppliedFilters", applied(filtered_out)),
    ]))
}

/// Writes all results to `.uloop/outputs/SearchResults/`; returns the
/// project-relative path.
fn save_results(editor: &Editor, format: &str, query: &str, items: &[Value]) -> Result<String, String> {
    let extension = format.to_lowercase();
    let columns = ["Id", "Label", "Description", "Provider", "Type", "Path", "Score"];
    let body = match format {
        "CSV" | "TSV" => {
            let sep = if format == "CSV" { "," } else { "\t" };
            let cell = |v: &Value| {
                let s = match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                if format == "CSV" && s.contains([',', '"', '\n']) {
                    format!("\"{}\"", s.replace('"', "\"\""))
                } else {
                    s.replace(['\t', '\n'], " ")
                }
            };
            let mut out = columns.join(sep);
            out.push('\n');
            for item in items {
                let row: Vec<String> = columns.iter().map(|c| cell(&item[*c])).collect();
                out.push_str(&row.join(sep));
                out.push('\n');
            }
            out
        }
        _ => serde_json::to_string_pretty(&json!({"SearchQuery": query, "TotalCount": items.len(), "Results": items}))
            .unwrap_or_default(),
    };
    editor
        .write_output("SearchResults", "search_results", &extension, body.as_bytes())
        .map_err(|e| e.detail().to_owned())
}

pub fn get_provider_details(call: &ToolCall) -> Outcome {
    let args = &call.args;
    let wanted = args.str("ProviderId");
    let active_only = args.bool("ActiveOnly");
    let sort = args.bool("SortByPriority");
    let descriptions = args.bool("IncludeDescriptions");
    let all = &call.editor.base.search_providers;
    let mut providers: Vec<&SearchProvider> =
        all.iter().filter(|p| wanted.is_empty() || p.id == wanted).filter(|p| !active_only || p.is_active).collect();
    let error = if !wanted.is_empty() && !all.iter().any(|p| p.id == wanted) {
        format!("Search provider not found: {wanted}")
    } else {
        String::new()
    };
    if sort {
        providers.sort_by_key(|p| p.priority);
    }
    let list: Vec<Value> = providers
        .iter()
        .map(|p| {
            let mut v = json!({"Id": p.id, "DisplayName": p.display_name});
            if descriptions {
                v["Description"] = p.description.clone().into();
            }
            v["IsActive"] = p.is_active.into();
            v["Priority"] = p.priority.into();
            v["FilterId"] = p.filter_id.clone().into();
            v
        })
        .collect();
    let active = providers.iter().filter(|p| p.is_active).count();
    Outcome::Reply(result([
        ("Providers", list.into()),
        ("TotalCount", providers.len().into()),
        ("ActiveCount", active.into()),
        ("InactiveCount", (providers.len() - active).into()),
        ("Success", error.is_empty().into()),
        ("ErrorMessage", error.into()),
        ("AppliedFilter", if wanted.is_empty() { "all".into() } else { wanted.into() }),
        ("SortedByPriority", sort.into()),
    ]))
}
