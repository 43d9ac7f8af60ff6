//! §6 Tools.

use serde_json::json;
use unity_mcp_bridge::{framing::Framing, tool_details::ToolDetails};

use crate::{
    case::{Case, check, CheckFuture, Finding, Level, Needs},
    ensure,
    target::Session,
};

const REF: &str = "editor-link-protocol.md §6";

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            id: "6.internal-tools-hidden".into(),
            requirement: "get-tool-details lists no displayDevelopmentOnly tool unless IncludeDevelopmentOnly is true; with it, the internal tools are there.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(internal_tools_hidden),
        },
        Case {
            id: "6.enum-defaults".into(),
            requirement: "An enum parameter's DefaultValue is one of its Enum names (uLoopMCP sends the C# integer value).".into(),
            reference: REF,
            level: Level::Should,
            needs: Needs::Link,
            check: check(enum_defaults),
        },
    ]
}

async fn tool_details(s: &Session, include_dev: bool) -> Result<ToolDetails, Finding> {
    let mut link = s.link(Framing::Header).await?;
    let result = link.result("get-tool-details", json!({"IncludeDevelopmentOnly": include_dev})).await?;
    serde_json::from_value(result)
        .map_err(|e| Finding::Violation(format!("get-tool-details does not have the shape of §6: {e}")))
}

fn internal_tools_hidden(s: Session) -> CheckFuture {
    Box::pin(async move {
        let public = tool_details(&s, false).await?;
        let listed: Vec<&str> =
            public.tools.iter().filter(|t| t.display_development_only).map(|t| t.name.as_str()).collect();
        ensure!(listed.is_empty(), "internal tools listed by default: {listed:?}");
        let all = tool_details(&s, true).await?;
        for internal in ["ping", "get-tool-details", "set-client-name"] {
            ensure!(
                all.get(internal).is_some_and(|t| t.display_development_only),
                "{internal} missing or not marked internal"
            );
        }
        Ok(())
    })
}

fn enum_defaults(s: Session) -> CheckFuture {
    Box::pin(async move {
        let all = tool_details(&s, true).await?;
        let mut bad = Vec::new();
        for tool in &all.tools {
            for (name, property) in &tool.parameter_schema.properties {
                if let (Some(values), Some(default)) = (&property.enum_values, &property.default_value) {
                    if !values.iter().any(|v| default == v) {
                        bad.push(format!("{}.{name} = {default} (enum {values:?})", tool.name));
                    }
                }
            }
        }
        ensure!(bad.is_empty(), "defaults outside their enums: {}", bad.join("; "));
        Ok(())
    })
}
