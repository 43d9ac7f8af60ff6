//! From the Editor's tools to MCP tools: valid, simple JSON Schemas from
//! `get-tool-details` (protocol §6), arguments checked against them, and the
//! per-project cache of the last tool list. (Results go the other way, in
//! [`crate::results`].)
//!
//! Everything here is plain JSON in MCP's shapes; the MCP session is `mcp`'s.

use std::{
    path::{Path, PathBuf},
    time::SystemTime,
};

use serde_json::{Map, Value, json};

use editor_link::{
    discovery::{iso_timestamp, write_atomic},
    methods,
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
    methods::PING,
    methods::GET_VERSION,
    methods::GET_TOOL_DETAILS,
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
        // The Editor's own schema, else one known for its catalogue (uLoopMCP
        // 2.1.1's, from its recorded answers): see crate::output_schemas.
        let output_schema = match detail.extra.get("outputSchema") {
            Some(schema) if schema.is_object() => Some(schema),
            _ if details.ver.as_deref() == Some("2.1.1") => crate::output_schemas::uloop_2_1_1().get(&detail.name),
            _ => None,
        };
        tools.push(from_detail(detail, output_schema));
    }
    tools.sort_by(|a, b| a.name().cmp(b.name()));
    tools.dedup_by(|a, b| a.name() == b.name());
    (tools, warnings)
}

/// The MCP tool for one of the Editor's, its members in the order of MCP's
/// schema (`name`, `description`, `inputSchema`, `outputSchema`,
/// `annotations`), which clients were tested with.
fn from_detail(detail: &ToolDetail, output_schema: Option<&Value>) -> McpTool {
    let mut definition = json!({
        "name": detail.name,
        "description": if detail.description.is_empty() { format!("The Unity Editor's {} tool", detail.name) } else { detail.description.clone() },
        "inputSchema": input_schema(&detail.name, &detail.parameter_schema),
    });
    if let Some(schema) = output_schema {
        definition["outputSchema"] = schema.clone();
    }
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
    fn the_cache_round_trips() {
        let project = tempfile::tempdir().unwrap();
        let cache = ToolCache::for_project(project.path());
        assert!(cache.load().is_none());
        cache.store(&details(ULOOP_STYLE));
        assert_eq!(cache.load().unwrap(), details(ULOOP_STYLE));
    }

    #[test]
    fn tool_names() {
        assert!(valid_tool_name("get-logs") && valid_tool_name("a.b_c-1"));
        assert!(!valid_tool_name("") && !valid_tool_name("bad name") && !valid_tool_name(&"x".repeat(129)));
    }
}
