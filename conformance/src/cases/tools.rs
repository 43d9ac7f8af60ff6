//! §6 Tools.

use editor_link::{framing::Framing, methods, tool_details::ToolDetails};
use serde_json::{Value, json};

use crate::{
    case::{Case, CheckFuture, Level, Needs, Requires, check},
    ensure,
    finding::Finding,
    reference::{TOOLS, ToolRef, Type},
    target::Session,
};

const REF: &str = "docs/editor-link-protocol.md §6";

pub fn cases() -> Vec<Case> {
    let mut cases = fixed_cases();
    for tool in TOOLS {
        cases.push(Case {
            id: format!("6.schema.{}", tool.name).into(),
            requirement: format!(
                "get-tool-details describes {} as §6 does: {}, each parameter ({}) with its Type and enum names, every Type one of the five, defaults of their parameter's type, and TimeoutSeconds, if listed, a number.",
                tool.name,
                if tool.internal { "internal (displayDevelopmentOnly)" } else { "public" },
                tool.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
            )
            .into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: tool.requires(),
            check: check(move |s| Box::pin(schema_as_documented(s, *tool))),
        });
        cases.push(Case {
            id: format!("6.result-fields.{}", tool.name).into(),
            requirement: format!(
                "{} called with {} succeeds, and its result has {}, and Ver.",
                tool.name,
                tool.call_with,
                tool.result.join(", ")
            )
            .into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: match tool.name {
                // Its PackageVersion is this project's (uLoopMCP lists other fields).
                methods::GET_VERSION => Requires::catalogue_tool(tool.name),
                _ => tool.requires(),
            },
            check: check(move |s| Box::pin(result_fields(s, *tool))),
        });
        cases.push(Case {
            id: format!("6.timeout-parameter.{}", tool.name).into(),
            requirement: format!(
                "{} lists the common parameter TimeoutSeconds (a number) and takes it: called with {} and TimeoutSeconds 60 it succeeds.",
                tool.name, tool.call_with
            )
            .into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: tool.requires().and_extension(crate::case::Extension::Timeouts),
            check: check(move |s| Box::pin(takes_timeout(s, *tool))),
        });
    }
    cases
}

fn fixed_cases() -> Vec<Case> {
    vec![
        Case {
            id: "6.protocol-version".into(),
            requirement: "get-version says which protocol it speaks: ProtocolVersion 1, and Capabilities, a list of known names (resume, progress, newline-framing, image-data, token, editor-state, dialog-buttons, output-schema).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::extension(crate::case::Extension::Capabilities),
            check: check(protocol_version),
        },
        Case {
            id: "6.annotations".into(),
            requirement: "Every tool carries the extensions: annotations (readOnlyHint, destructiveHint, idempotentHint, booleans) and a positive timeoutSeconds.".into(),
            reference: REF,
            level: Level::Should,
            needs: Needs::Link,
            requires: Requires::extension(crate::case::Extension::ToolMetadata),
            check: check(annotations),
        },
        Case {
            id: "6.internal-tools-hidden".into(),
            requirement: "get-tool-details lists no displayDevelopmentOnly tool unless IncludeDevelopmentOnly is true; with it, the internal tools are there.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(internal_tools_hidden),
        },
        Case {
            id: "6.enum-defaults".into(),
            requirement: "An enum parameter's DefaultValue is one of its Enum names, or an integer (uLoopMCP sends the C# enum's value).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(enum_defaults),
        },
        Case {
            id: "6.object-identity".into(),
            requirement: "get-hierarchy names each object exactly: entityId, decimal text (a JSON number past 2^53 is rounded by JavaScript clients) unique among the objects, the EntityId from Unity 6000.5 and the instance ID before; and id, uLoopMCP's number, the instance ID (from 6000.5 the EntityId's low 32 bits).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::catalogue_tool("get-hierarchy").and_tool(methods::GET_VERSION),
            check: check(object_identity),
        },
        Case {
            id: "6.enum-default-names".into(),
            requirement: "An enum parameter's DefaultValue is one of its Enum names, never the C# integer.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::extension(crate::case::Extension::ToolMetadata),
            check: check(enum_default_names),
        },
    ]
}

async fn tool_details(s: &Session, include_dev: bool) -> Result<ToolDetails, Finding> {
    let mut link = s.link(Framing::Header).await?;
    let result = link.result(methods::GET_TOOL_DETAILS, json!({"IncludeDevelopmentOnly": include_dev})).await?;
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
        for internal in [methods::PING, methods::GET_TOOL_DETAILS, methods::SET_CLIENT_NAME] {
            ensure!(
                all.get(internal).is_some_and(|t| t.display_development_only),
                "{internal} missing or not marked internal"
            );
        }
        Ok(())
    })
}

/// Enum defaults that are not one of the enum's names; with `integers`,
/// an integer (uLoopMCP's C# value) is one too.
async fn enum_defaults_outside(s: &Session, integers: bool) -> Result<Vec<String>, Finding> {
    let all = tool_details(s, true).await?;
    let mut bad = Vec::new();
    for tool in &all.tools {
        for (name, property) in &tool.parameter_schema.properties {
            if let (Some(values), Some(default)) = (&property.enum_values, &property.default_value) {
                let integer = integers && (default.is_i64() || default.is_u64());
                if !integer && !values.iter().any(|v| default == v) {
                    bad.push(format!("{}.{name} = {default} (enum {values:?})", tool.name));
                }
            }
        }
    }
    Ok(bad)
}

fn enum_defaults(s: Session) -> CheckFuture {
    Box::pin(async move {
        let bad = enum_defaults_outside(&s, true).await?;
        ensure!(bad.is_empty(), "defaults neither a name of their enum nor an integer: {}", bad.join("; "));
        Ok(())
    })
}

fn enum_default_names(s: Session) -> CheckFuture {
    Box::pin(async move {
        let bad = enum_defaults_outside(&s, false).await?;
        ensure!(bad.is_empty(), "defaults outside their enums: {}", bad.join("; "));
        Ok(())
    })
}

/// What a `DefaultValue` of this type may be (`null` always may).
fn default_fits(ty: Type, default: &Value) -> bool {
    match ty {
        Type::String => default.is_string(),
        Type::Boolean => default.is_boolean(),
        Type::Number => default.is_number(),
        Type::Array => default.is_array(),
        Type::Object => default.is_object(),
    }
}

async fn schema_as_documented(s: Session, tool: ToolRef) -> crate::case::CheckResult {
    let all = tool_details(&s, true).await?;
    let Some(detail) = all.get(tool.name) else {
        return crate::finding::violation(format!("{} is not listed by get-tool-details", tool.name));
    };
    ensure!(
        detail.display_development_only == tool.internal,
        "{} has displayDevelopmentOnly {}, not {}",
        tool.name,
        detail.display_development_only,
        tool.internal
    );
    let properties = &detail.parameter_schema.properties;
    let mut problems = Vec::new();
    for param in tool.params {
        let Some(property) = properties.get(param.name) else {
            problems.push(format!("{} is missing", param.name));
            continue;
        };
        if property.ty.as_str() != param.ty.name() {
            problems.push(format!("{} has Type {}, not {}", param.name, property.ty.as_str(), param.ty.name()));
        }
        if !param.values.is_empty() {
            let listed: Vec<&str> = property.enum_values.iter().flatten().map(String::as_str).collect();
            if listed != param.values {
                problems.push(format!("{} has Enum {listed:?}, not {:?}", param.name, param.values));
            }
        } else if let Some(default) =
            property.default_value.as_ref().filter(|d| !d.is_null() && property.enum_values.is_none())
        {
            // Enum defaults are 6.enum-defaults' business (uLoopMCP sends integers).
            if !default_fits(param.ty, default) {
                problems.push(format!("{} has DefaultValue {default}, not a {}", param.name, param.ty.name()));
            }
        }
    }
    // Listed or not is the timeouts extension's business (6.timeout-parameter.*);
    // listed, it is a number.
    if let Some(timeout) = properties.get("TimeoutSeconds").filter(|p| p.ty.as_str() != "number") {
        problems.push(format!("TimeoutSeconds has Type {}, not number", timeout.ty.as_str()));
    }
    for (name, property) in properties {
        if !["string", "boolean", "number", "array", "object"].contains(&property.ty.as_str()) {
            problems.push(format!("{name} has Type {:?}, none of the five", property.ty.as_str()));
        }
    }
    ensure!(problems.is_empty(), "{}: {}", tool.name, problems.join("; "));
    Ok(())
}

async fn result_fields(s: Session, tool: ToolRef) -> crate::case::CheckResult {
    let mut link = s.link(Framing::Header).await?;
    let args: Value = serde_json::from_str(tool.call_with).map_err(|e| Finding::Harness(e.to_string()))?;
    let result = link.result(tool.name, args).await?;
    let missing: Vec<&str> = tool.result.iter().chain(&["Ver"]).copied().filter(|f| result.get(f).is_none()).collect();
    ensure!(missing.is_empty(), "{}'s result lacks {}: {result}", tool.name, missing.join(", "));
    ensure!(result["Ver"].is_string(), "{}'s Ver is not a string: {}", tool.name, result["Ver"]);
    Ok(())
}

fn protocol_version(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let version = link.result(methods::GET_VERSION, json!({})).await?;
        ensure!(version["ProtocolVersion"] == 1, "ProtocolVersion is {} (expected 1)", version["ProtocolVersion"]);
        let Some(capabilities) = version["Capabilities"].as_array() else {
            return crate::finding::violation(format!("Capabilities is {}, not a list", version["Capabilities"]));
        };
        // The extensions an Editor names there: those ProtocolVersion 1 does
        // not imply.
        let known: Vec<&str> = crate::case::Extension::ALL
            .iter()
            .filter(|e| !crate::case::Extension::OF_PROTOCOL_1.contains(e))
            .map(|e| e.name())
            .collect();
        let unknown: Vec<&Value> =
            capabilities.iter().filter(|c| !c.as_str().is_some_and(|c| known.contains(&c))).collect();
        ensure!(unknown.is_empty(), "unknown capabilities: {unknown:?}");
        Ok(())
    })
}

fn annotations(s: Session) -> CheckFuture {
    Box::pin(async move {
        let all = tool_details(&s, true).await?;
        let mut bad = Vec::new();
        for tool in &all.tools {
            if tool.annotations.is_none() {
                bad.push(format!("{} has no annotations", tool.name));
            }
            if !tool.timeout_seconds.is_some_and(|t| t > 0.0) {
                bad.push(format!("{} has timeoutSeconds {:?}", tool.name, tool.timeout_seconds));
            }
        }
        ensure!(bad.is_empty(), "{}", bad.join("; "));
        Ok(())
    })
}

async fn takes_timeout(s: Session, tool: ToolRef) -> crate::case::CheckResult {
    let all = tool_details(&s, true).await?;
    let listed = all.get(tool.name).and_then(|t| t.parameter_schema.properties.get("TimeoutSeconds"));
    ensure!(
        listed.is_some_and(|p| p.ty.as_str() == "number"),
        "{} does not list TimeoutSeconds as a number: {listed:?}",
        tool.name
    );
    let mut link = s.link(Framing::Header).await?;
    let mut args: Value = serde_json::from_str(tool.call_with).map_err(|e| Finding::Harness(e.to_string()))?;
    args["TimeoutSeconds"] = json!(60);
    let answer = link.call(tool.name, args).await?;
    ensure!(answer.get("result").is_some(), "{} with TimeoutSeconds 60 was answered {answer}", tool.name);
    Ok(())
}

/// Whether a Unity version names objects by a 64-bit EntityId (6000.5 and newer).
fn entity_ids_are_64_bit(unity_version: &str) -> bool {
    let mut parts = unity_version.split('.');
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    major > 6000 || major == 6000 && minor >= 5
}

fn object_identity(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let version = link.result(methods::GET_VERSION, json!({})).await?;
        let unity = version["UnityVersion"].as_str().unwrap_or_default().to_owned();
        let wide = entity_ids_are_64_bit(&unity);
        let result = link.result("get-hierarchy", json!({"IncludeInactive": true, "IncludeComponents": false})).await?;
        let mut pending: Vec<&Value> = result["hierarchy"].as_array().map(|a| a.iter().collect()).unwrap_or_default();
        ensure!(!pending.is_empty(), "get-hierarchy named no object to check: {result}");
        let mut seen = std::collections::BTreeSet::new();
        let mut problems = Vec::new();
        while let Some(node) = pending.pop() {
            pending.extend(node["children"].as_array().into_iter().flatten());
            let name = node["name"].as_str().unwrap_or("?");
            let Some(entity) = node["entityId"].as_str() else {
                problems.push(format!("{name}: entityId is {}, not decimal text", node["entityId"]));
                continue;
            };
            let Some(id) = node["id"].as_i64() else {
                problems.push(format!("{name}: id is {}, not an integer", node["id"]));
                continue;
            };
            let expected = if wide {
                entity.parse::<u64>().ok().map(|e| i64::from(e as u32 as i32))
            } else {
                entity.parse::<i64>().ok()
            };
            match expected {
                None => problems.push(format!("{name}: entityId {entity:?} is not an integer in decimal")),
                Some(expected) if expected != id => problems.push(format!(
                    "{name}: id {id} is not {} of entityId {entity}",
                    if wide { "the low 32 bits" } else { "the value" }
                )),
                Some(_) => {}
            }
            if !seen.insert(entity.to_owned()) {
                problems.push(format!("{name}: entityId {entity} names another object too"));
            }
        }
        ensure!(problems.is_empty(), "Unity {unity}: {}", problems.join("; "));
        Ok(())
    })
}
