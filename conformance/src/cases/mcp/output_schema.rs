//! Typed results: a tool that declares an `outputSchema` answers with
//! `structuredContent` that validates against it (MCP 2025-06-18 §tools,
//! output schema: "servers MUST provide structured results that conform to
//! this schema"; strict clients reject a result that does not).

use serde_json::{Value, json};

use super::initialized;
use crate::{
    case::{Case, CheckFuture, Level, Needs, Requires, check},
    ensure,
    finding::Finding,
    target::Session,
};

const REFERENCE: &str = "MCP 2025-06-18 §server/tools (outputSchema, structuredContent)";

/// Tools the case calls, with arguments that change nothing lasting.
const CALLED: &[(&str, &str)] = &[
    ("get-logs", "{}"),
    ("get-logs", r#"{"LogType": "Error", "MaxCount": 1, "IncludeStackTrace": true}"#),
    ("clear-console", "{}"),
    ("focus-window", "{}"),
    ("get-hierarchy", r#"{"MaxDepth": 1}"#),
    ("find-game-objects", r#"{"NamePattern": "Player"}"#),
    ("get-menu-items", r#"{"FilterText": "Tools/"}"#),
];

pub fn cases() -> Vec<Case> {
    vec![Case {
        id: "mcp.tools-call.output-schema".into(),
        requirement: "Every outputSchema a tool declares is a JSON Schema of type object, and the structuredContent of its answers validates against it (get-logs, clear-console, focus-window, get-hierarchy, find-game-objects, get-menu-items, where they declare one).".into(),
        reference: REFERENCE,
        level: Level::Must,
        needs: Needs::Link,
        requires: Requires::tools(&["get-logs"]),
        check: check(output_schemas_hold),
    }]
}

fn output_schemas_hold(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut mcp = initialized(&s).await?;
        let tools = mcp.list_tools().await?;
        let schema_of =
            |name: &str| tools.iter().find(|t| t["name"] == name).and_then(|t| t.get("outputSchema")).cloned();
        let declared: Vec<&str> =
            tools.iter().filter(|t| t.get("outputSchema").is_some()).filter_map(|t| t["name"].as_str()).collect();
        if declared.is_empty() {
            return Err(Finding::NotApplicable("not applicable: no tool declares an outputSchema".into()));
        }
        for name in &declared {
            let schema = schema_of(name).unwrap_or(Value::Null);
            ensure!(schema["type"] == "object", "{name}: outputSchema must be of type object, got {schema}");
            if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
                return crate::finding::violation(format!("{name}: outputSchema is not a valid JSON Schema: {e}"));
            }
        }
        let mut checked = Vec::new();
        for (tool, arguments) in CALLED {
            let Some(schema) = schema_of(tool) else { continue };
            let arguments: Value = serde_json::from_str(arguments).unwrap_or_else(|_| json!({}));
            let answer = mcp.call(tool, arguments.clone()).await?;
            let result = &answer["result"];
            // An error the bridge made (no structuredContent) has no shape to keep.
            let Some(structured) = result.get("structuredContent") else { continue };
            let validator = jsonschema::validator_for(&schema)
                .map_err(|e| Finding::Violation(format!("{tool}: outputSchema does not compile: {e}")))?;
            let errors: Vec<String> =
                validator.iter_errors(structured).take(3).map(|e| format!("{e} (at {})", e.instance_path())).collect();
            ensure!(
                errors.is_empty(),
                "{tool} {arguments}: structuredContent does not fit its outputSchema: {}",
                errors.join("; ")
            );
            checked.push(*tool);
        }
        ensure!(
            !checked.is_empty(),
            "tools declare outputSchemas ({declared:?}) but none of {CALLED:?} was answered with structuredContent"
        );
        s.note(format!("declared by {declared:?}; answers checked: {checked:?}"));
        mcp.finish().await
    })
}
