//! §3 Messages.

use std::time::Duration;

use serde_json::{Value, json};
use unity_mcp_bridge::framing::Framing;

use crate::{
    case::{Case, CheckFuture, CheckResult, Level, Needs, check},
    ensure,
    reference::{TOOLS, ToolRef},
    target::{Link, Received, Session},
};

const REF: &str = "editor-link-protocol.md §3";

pub fn cases() -> Vec<Case> {
    let mut cases = fixed_cases();
    for tool in TOOLS.iter().filter(|t| !t.params.is_empty()) {
        cases.push(Case {
            id: format!("3.invalid-params.{}", tool.name).into(),
            requirement: format!(
                "{}: a value of the wrong type for any parameter ({}) is answered -32602 invalid_params naming the parameter.",
                tool.name,
                tool.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
            )
            .into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(move |s| Box::pin(wrong_types_refused(s, *tool))),
        });
        for param in tool.params.iter().filter(|p| !p.values.is_empty()) {
            cases.push(Case {
                id: format!("3.unknown-enum.{}.{}", tool.name, param.name).into(),
                requirement: format!(
                    "{}: {} outside its enum ({}) is answered -32602 invalid_params naming the parameter.",
                    tool.name,
                    param.name,
                    param.values.join("/")
                )
                .into(),
                reference: "editor-link-protocol.md §3, §6",
                level: Level::Must,
                needs: Needs::Link,
                check: check(move |s| Box::pin(unknown_enum_refused(s, tool.name, param.name))),
            });
        }
    }
    cases
}

fn fixed_cases() -> Vec<Case> {
    vec![
        Case {
            id: "3.id-echo".into(),
            requirement: "The response id has the same JSON type and value as the request id (strings and numbers).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(id_echo),
        },
        Case {
            id: "3.notification-unanswered".into(),
            requirement: "A request without an id is a notification: nothing answers it.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(notification_unanswered),
        },
        Case {
            id: "3.batch-rejected".into(),
            requirement: "A JSON array (batch) is answered with one error: id null, -32600.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(batch_rejected),
        },
        Case {
            id: "3.unknown-tool".into(),
            requirement: "An unknown tool is answered -32601 method_not_found (uLoopMCP's -32603 'Unknown tool: X' is understood too).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(unknown_tool),
        },
        Case {
            id: "3.invalid-params".into(),
            requirement: "A parameter of the wrong type is answered -32602 invalid_params, and the message names the parameter.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            check: check(invalid_params),
        },
        Case {
            id: "3.result-ver".into(),
            requirement: "Every result carries \"Ver\", the package version.".into(),
            reference: "editor-link-protocol.md §3, §6",
            level: Level::Must,
            needs: Needs::Link,
            check: check(result_ver),
        },
    ]
}

fn id_echo(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        for id in [json!("b-1"), json!("7"), json!(7), json!(0), json!(-3), json!(1.5), json!(u64::MAX)] {
            link.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "ping", "params": {}})).await?;
            let answer = link.message().await?;
            ensure!(
                answer["id"] == id && answer["id"].is_string() == id.is_string(),
                "request id {id} was echoed as {}",
                answer["id"]
            );
        }
        Ok(())
    })
}

fn notification_unanswered(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        link.send_json(&json!({"jsonrpc": "2.0", "method": "ping", "params": {}})).await?;
        link.send_json(&json!({"jsonrpc": "2.0", "id": null, "method": "ping"})).await?;
        let id = link.request("ping", json!({})).await?;
        let first = link.message().await?;
        ensure!(first["id"] == id, "the first message after two notifications was {first}, not the answer to {id}");
        Ok(())
    })
}

fn batch_rejected(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        link.send_body(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#)
            .await?;
        let answer = link.message().await?;
        ensure!(answer["id"].is_null() && answer["error"]["code"] == -32600, "a batch was answered {answer}");
        match link.receive(Duration::from_millis(300)).await {
            Received::Silence => Ok(()),
            other => crate::case::violation(format!("more than one answer to a batch: {other:?}")),
        }
    })
}

fn unknown_tool(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let answer = link.call("no-such-tool-xyz", json!({})).await?;
        let error = &answer["error"];
        let ours = error["code"] == -32601;
        let uloop =
            error["code"] == -32603 && error["data"]["message"].as_str().is_some_and(|m| m.starts_with("Unknown tool"));
        ensure!(ours || uloop, "an unknown tool was answered {answer}");
        Ok(())
    })
}

fn invalid_params(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let answer = link.call("get-logs", json!({"MaxCount": "ten"})).await?;
        let error = &answer["error"];
        ensure!(error["code"] == -32602, "MaxCount: \"ten\" was answered {answer}");
        let names_it = [&error["message"], &error["data"]["message"], &error["data"]["parameter"]]
            .iter()
            .any(|v: &&Value| v.as_str().is_some_and(|m| m.contains("MaxCount")));
        ensure!(names_it, "the error does not name the parameter: {error}");
        Ok(())
    })
}

fn result_ver(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        for tool in ["ping", "get-version", "get-tool-details"] {
            let result = link.result(tool, json!({})).await?;
            ensure!(result["Ver"].is_string(), "{tool}'s result has no Ver: {result}");
        }
        Ok(())
    })
}

/// The call must be refused -32602 with `param` named in the error.
async fn refused_naming(link: &mut Link, tool: &str, param: &str, value: Value) -> CheckResult {
    let answer = link.call(tool, json!({ param: value })).await?;
    let error = &answer["error"];
    ensure!(error["code"] == -32602, "{tool} with {param}: {value} was answered {answer}");
    let names_it = [&error["message"], &error["data"]["message"], &error["data"]["parameter"]]
        .iter()
        .any(|v: &&Value| v.as_str().is_some_and(|m| m.contains(param)));
    ensure!(names_it, "{tool}: the error does not name {param}: {error}");
    Ok(())
}

async fn wrong_types_refused(s: Session, tool: ToolRef) -> CheckResult {
    let mut link = s.link(Framing::Header).await?;
    for param in tool.params {
        refused_naming(&mut link, tool.name, param.name, param.ty.wrong_value()).await?;
    }
    Ok(())
}

async fn unknown_enum_refused(s: Session, tool: &'static str, param: &'static str) -> CheckResult {
    let mut link = s.link(Framing::Header).await?;
    refused_naming(&mut link, tool, param, json!("NoSuchValue")).await
}
