//! §6 for uLoopMCP 2.1.1's catalogue: the Editor lists its tools as the
//! real 2.1.1 server does (`fixtures/editor-models/uloop-2.1.1.tool-details.json`,
//! its recorded `get-tool-details` with development-only tools) and answers
//! with the fields the real server's recorded answers have
//! (`fixtures/recordings/uloop-2.1.1/raw-requests.jsonl`). Both are the
//! real server's words, built in: nothing here was written from the fake.
//!
//! A person running a uLoopMCP 2.1.1 Editor on a new Unity version sees
//! here whether the package still describes and answers as it did.

use std::collections::BTreeMap;

use editor_link::{dialect::ULOOP_2_1_1, framing::Framing, jsonrpc::json_type, methods};
use serde_json::{Value, json};

use crate::{
    case::{Case, CheckResult, Level, Needs, Requires, check},
    ensure,
    target::Session,
};

const REF: &str = "uLoopMCP 2.1.1 (fixtures/editor-models/uloop-2.1.1.tool-details.json, \
                   fixtures/recordings/uloop-2.1.1/); docs/editor-link-protocol.md §6";

/// The real server's `get-tool-details` answer, development-only tools included.
const TOOL_DETAILS: &str = include_str!("../../../fixtures/editor-models/uloop-2.1.1.tool-details.json");

/// The real server's answers to requests sent to it one by one.
const RECORDED: &str = include_str!("../../../fixtures/recordings/uloop-2.1.1/raw-requests.jsonl");

/// The recorded calls that are harmless in someone's Editor, so the cases
/// make them again: not `control-play-mode` (it enters play mode) nor
/// `focus-window` (it moves the user's windows).
const HARMLESS: &[&str] = &[
    methods::PING,
    methods::SET_CLIENT_NAME,
    methods::GET_VERSION,
    methods::GET_TOOL_DETAILS,
    "get-logs",
    "clear-console",
    "debug-sleep",
];

/// Every tool of the recorded answer, in its order.
pub fn reference_tools() -> Vec<Value> {
    let details: Value = serde_json::from_str(TOOL_DETAILS).expect("the recorded get-tool-details is JSON");
    details["Tools"].as_array().cloned().unwrap_or_default()
}

/// The first recorded call of each harmless tool: its params and the
/// result the real server gave.
pub fn recorded_calls() -> BTreeMap<String, (Value, Value)> {
    let mut requests: BTreeMap<(u64, String), (String, Value)> = BTreeMap::new();
    let mut calls = BTreeMap::new();
    for line in RECORDED.lines() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else { continue };
        let message = &entry["message"];
        let key = (entry["conn"].as_u64().unwrap_or(0), message["id"].to_string());
        if let Some(method) = message["method"].as_str() {
            requests.insert(key, (method.to_owned(), message["params"].clone()));
        } else if let (Some(result), Some((method, params))) = (message.get("result"), requests.get(&key)) {
            if HARMLESS.contains(&method.as_str()) && !calls.contains_key(method) {
                calls.insert(method.clone(), (params.clone(), result.clone()));
            }
        }
    }
    calls
}

pub fn cases() -> Vec<Case> {
    let requires = |tool: &str| Requires::catalogue(&ULOOP_2_1_1).and_tool(tool.to_owned());
    let mut cases = vec![Case {
        id: "6.uloop-2.1.1.tool-list".into(),
        requirement:
            "get-tool-details lists uLoopMCP 2.1.1's public tools, in its order; with IncludeDevelopmentOnly, \
                      its public and development-only tools, in its order."
                .into(),
        reference: REF,
        level: Level::Must,
        needs: Needs::Link,
        requires: requires(methods::GET_TOOL_DETAILS),
        check: check(|s| Box::pin(tool_list(s))),
    }];
    for tool in reference_tools() {
        let name = tool["name"].as_str().unwrap_or_default().to_owned();
        cases.push(Case {
            id: format!("6.uloop-2.1.1.schema.{name}").into(),
            requirement: format!(
                "get-tool-details describes {name} as uLoopMCP 2.1.1 does: its description, displayDevelopmentOnly, \
                 and every parameter's Type, Description, DefaultValue and Enum, in its order."
            )
            .into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: requires(&name),
            check: check(move |s| {
                let tool = tool.clone();
                Box::pin(schema(s, tool))
            }),
        });
    }
    for (name, (params, recorded)) in recorded_calls() {
        cases.push(Case {
            id: format!("6.uloop-2.1.1.answer-fields.{name}").into(),
            requirement: format!(
                "{name} called with {params} succeeds, with the fields uLoopMCP 2.1.1's answer has ({}), each of its type.",
                recorded.as_object().map(|o| o.keys().cloned().collect::<Vec<_>>().join(", ")).unwrap_or_default()
            )
            .into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: requires(&name),
            check: check(move |s| {
                let (name, params, recorded) = (name.clone(), params.clone(), recorded.clone());
                Box::pin(answer_fields(s, name, params, recorded))
            }),
        });
    }
    cases
}

fn names(tools: &Value) -> Vec<String> {
    tools.as_array().into_iter().flatten().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect()
}

async fn tool_list(s: Session) -> CheckResult {
    let reference = Value::Array(reference_tools());
    let all = names(&reference);
    let public: Vec<String> = reference
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["displayDevelopmentOnly"] != true)
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    let mut link = s.link(Framing::Header).await?;
    let listed = names(&link.result(methods::GET_TOOL_DETAILS, json!({})).await?["Tools"]);
    ensure!(listed == public, "get-tool-details lists {listed:?}, not 2.1.1's public tools {public:?}");
    let listed =
        names(&link.result(methods::GET_TOOL_DETAILS, json!({"IncludeDevelopmentOnly": true})).await?["Tools"]);
    ensure!(listed == all, "with IncludeDevelopmentOnly it lists {listed:?}, not 2.1.1's tools {all:?}");
    Ok(())
}

async fn schema(s: Session, reference: Value) -> CheckResult {
    let name = reference["name"].as_str().unwrap_or_default();
    let mut link = s.link(Framing::Header).await?;
    let tools = link.result(methods::GET_TOOL_DETAILS, json!({"IncludeDevelopmentOnly": true})).await?["Tools"].take();
    let listed = tools.as_array().into_iter().flatten().find(|t| t["name"] == name);
    let Some(listed) = listed else {
        return crate::finding::violation(format!("{name} is not listed by get-tool-details"));
    };
    let mut problems = Vec::new();
    for field in ["description", "displayDevelopmentOnly"] {
        if listed[field] != reference[field] {
            problems.push(format!("its {field} is {}, not {}", listed[field], reference[field]));
        }
    }
    let (ours, theirs) = (&listed["parameterSchema"], &reference["parameterSchema"]);
    let order = |schema: &Value| -> Vec<String> {
        schema["Properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default()
    };
    if order(ours) != order(theirs) {
        problems.push(format!("its parameters are {:?}, not {:?}", order(ours), order(theirs)));
    }
    for (parameter, expected) in theirs["Properties"].as_object().into_iter().flatten() {
        let Some(actual) = ours["Properties"].get(parameter) else { continue };
        for field in ["Type", "Description", "DefaultValue", "Enum"] {
            if actual[field] != expected[field] {
                problems.push(format!("{parameter}.{field} is {}, not {}", actual[field], expected[field]));
            }
        }
    }
    if ours["Required"] != theirs["Required"] {
        problems.push(format!("Required is {}, not {}", ours["Required"], theirs["Required"]));
    }
    ensure!(problems.is_empty(), "{name}: {}", problems.join("; "));
    Ok(())
}

async fn answer_fields(s: Session, name: String, params: Value, recorded: Value) -> CheckResult {
    let mut link = s.link(Framing::Header).await?;
    let answer = link.result(&name, params).await?;
    let (Some(answer), Some(recorded)) = (answer.as_object(), recorded.as_object()) else {
        return crate::finding::violation(format!("{name}'s result is not an object: {answer}"));
    };
    let mut problems = Vec::new();
    for (field, value) in recorded {
        match answer.get(field) {
            None => problems.push(format!("{field} is missing")),
            // A field 2.1.1 left null may hold a value now, and the other way round.
            Some(ours) if !value.is_null() && !ours.is_null() && json_type(ours) != json_type(value) => {
                problems.push(format!("{field} is a {}, not a {}", json_type(ours), json_type(value)));
            }
            Some(_) => {}
        }
    }
    let extra: Vec<&String> = answer.keys().filter(|k| !recorded.contains_key(*k)).collect();
    if !extra.is_empty() {
        problems.push(format!("it has fields 2.1.1's answer has not: {extra:?}"));
    }
    ensure!(problems.is_empty(), "{name}: {}", problems.join("; "));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_is_the_real_servers_twenty_tools_and_seven_recorded_calls() {
        let tools = reference_tools();
        assert_eq!(tools.len(), 20);
        assert_eq!(tools.iter().filter(|t| t["displayDevelopmentOnly"] == true).count(), 5);
        let calls = recorded_calls();
        assert_eq!(calls.keys().map(String::as_str).collect::<Vec<_>>(), {
            let mut harmless = HARMLESS.to_vec();
            harmless.sort_unstable();
            harmless
        });
        assert_eq!(calls[methods::PING].0, json!({"Message": "hello"}));
        assert!(calls["get-logs"].1.get("TotalCount").is_some());
    }
}
