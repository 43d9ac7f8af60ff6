//! §3 Messages.

use std::time::Duration;

use editor_link::{framing::Framing, methods};
use serde_json::{Value, json};

use crate::{
    case::{Case, CheckFuture, CheckResult, Extension, Level, Needs, Requires, check},
    editor_client::{EditorClient, Read},
    ensure,
    reference::{TOOLS, ToolRef},
    target::Session,
};

const REF: &str = "docs/editor-link-protocol.md §3";

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
            requires: Requires::catalogue_tool(tool.name).and_extension(Extension::ErrorCodes),
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
                reference: "docs/editor-link-protocol.md §3, §6",
                level: Level::Must,
                needs: Needs::Link,
                requires: Requires::catalogue_tool(tool.name).and_extension(Extension::ErrorCodes),
                check: check(move |s| Box::pin(unknown_enum_refused(s, tool.name, param.name))),
            });
        }
    }
    cases
}

/// Error situations of the §3 table a client can cause: the request, the
/// code and `data.type` it must get.
/// (The codes and `data.type` names are this project's: the `error-codes`
/// extension; `timeout` is the `timeouts` one's.)
const ERROR_SHAPES: &[(&str, &str, i64, &str)] = &[
    ("method_not_found", r#"{"method":"no-such-tool-xyz","params":{}}"#, -32601, "method_not_found"),
    ("invalid_params", r#"{"method":"get-logs","params":{"MaxCount":"ten"}}"#, -32602, "invalid_params"),
    ("timeout", r#"{"method":"debug-sleep","params":{"SleepSeconds":3,"TimeoutSeconds":0.2}}"#, -32603, "timeout"),
    (
        "project_mismatch",
        r#"{"method":"ping","params":{},"x-uloop":{"expectedProjectRoot":"/no/such/project"}}"#,
        -32603,
        "project_mismatch",
    ),
    (
        "session_changed",
        r#"{"method":"ping","params":{},"x-uloop":{"expectedServerSessionId":"not-this-session"}}"#,
        -32603,
        "session_changed",
    ),
];

fn error_shape_cases() -> Vec<Case> {
    ERROR_SHAPES
        .iter()
        .map(|(kind, request, code, data_type)| Case {
            id: format!("3.error.{kind}").into(),
            requirement: format!(
                "The error for {kind} has code {code}, a message, and data.type \"{data_type}\" with data.message (the §3 table); the id is echoed."
            )
            .into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: match *kind {
                "timeout" => Requires::extension(Extension::Timeouts).and_tool("debug-sleep"),
                "invalid_params" => Requires::extension(Extension::ErrorCodes).and_tool("get-logs"),
                _ => Requires::extension(Extension::ErrorCodes),
            },
            check: check(move |s| Box::pin(error_shape(s, request, *code, data_type))),
        })
        .collect()
}

fn fixed_cases() -> Vec<Case> {
    let mut cases = error_shape_cases();
    cases.extend([
        Case {
            id: "3.params-case-insensitive".into(),
            requirement: "Parameter names are matched case-insensitively (logtype = LogType), as uLoopMCP does through Newtonsoft.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(params_case_insensitive),
        },
        Case {
            id: "3.params-absent-or-null".into(),
            requirement: "Absent or null params mean {}: the tool runs with its defaults.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(params_absent_or_null),
        },
        Case {
            id: "3.notification-runs-nothing".into(),
            requirement: "A tool sent as a notification (no id) is not run: clear-console as a notification leaves the console as it was.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(notification_runs_nothing),
        },
        Case {
            id: "3.batch-single".into(),
            requirement: "A batch of one request is still a batch: one error, id null, -32600, and the request is not run.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(batch_single),
        },
        Case {
            id: "3.pipelining".into(),
            requirement: "Ten requests sent at once, without waiting, are each answered once, with their own ids.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(pipelining),
        },
        Case {
            id: "3.extra-fields-ignored".into(),
            requirement: "Extra top-level fields of a request are ignored.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(extra_fields_ignored),
        },
    ]);
    cases.extend(vec![
        Case {
            id: "3.id-echo".into(),
            requirement: "The response id has the same JSON type and value as the request id (strings and numbers), numbers written exactly as they came (a 30-digit integer, -0).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(id_echo),
        },
        Case {
            id: "3.notification-unanswered".into(),
            requirement: "A request without an id is a notification: nothing answers it.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(notification_unanswered),
        },
        Case {
            id: "3.batch-rejected".into(),
            requirement: "A JSON array (batch) is answered with one error: id null, -32600.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(batch_rejected),
        },
        Case {
            id: "3.unknown-tool".into(),
            requirement: "An unknown tool is answered -32601 method_not_found (uLoopMCP's -32603 'Unknown tool: X' is understood too).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(unknown_tool),
        },
        Case {
            id: "3.invalid-params".into(),
            requirement: "A parameter of the wrong type is refused with an error (-32602 with the error-codes extension, -32603 from uLoopMCP) whose message names the parameter.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::tools(&["get-logs"]),
            check: check(invalid_params),
        },
        Case {
            id: "3.result-ver".into(),
            requirement: "Every result carries \"Ver\", the package version.".into(),
            reference: "docs/editor-link-protocol.md §3, §6",
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(result_ver),
        },
    ]);
    cases
}

fn id_echo(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        for id in [json!("b-1"), json!("7"), json!(7), json!(0), json!(-3), json!(1.5), json!(u64::MAX)] {
            link.send_json(&link.probe().request(id.clone(), "id")).await?;
            let answer = link.message().await?;
            ensure!(
                answer["id"] == id && answer["id"].is_string() == id.is_string(),
                "request id {id} was echoed as {}",
                answer["id"]
            );
        }
        // Numbers no float holds exactly: the Editor echoes the text it got.
        for id in ["123456789012345678901234567890", "-0"] {
            let method = link.probe().method();
            link.send_body(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{}}}}"#).as_bytes())
                .await?;
            let body = link.body().await?;
            let echoed = match editor_link::jsonrpc::Message::parse(&body) {
                Ok(editor_link::jsonrpc::Message::Response(r)) => r.id.map(|id| id.to_string()),
                _ => None,
            };
            ensure!(echoed.as_deref() == Some(id), "request id {id} was echoed as {}", String::from_utf8_lossy(&body));
        }
        Ok(())
    })
}

fn notification_unanswered(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let probe = link.probe().method();
        link.send_json(&json!({"jsonrpc": "2.0", "method": probe, "params": {}})).await?;
        link.send_json(&json!({"jsonrpc": "2.0", "id": null, "method": probe})).await?;
        let id = link.request(probe, json!({})).await?;
        let first = link.message().await?;
        ensure!(first["id"] == id, "the first message after two notifications was {first}, not the answer to {id}");
        Ok(())
    })
}

fn batch_rejected(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let probe = link.probe().method();
        link.send_body(
            format!(r#"[{{"jsonrpc":"2.0","id":1,"method":"{probe}"}},{{"jsonrpc":"2.0","id":2,"method":"{probe}"}}]"#)
                .as_bytes(),
        )
        .await?;
        let answer = link.message().await?;
        ensure!(answer["id"].is_null() && answer["error"]["code"] == -32600, "a batch was answered {answer}");
        match link.receive(Duration::from_millis(300)).await {
            Read::Silence => Ok(()),
            other => crate::finding::violation(format!("more than one answer to a batch: {other:?}")),
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
        // -32602 is the error-codes extension's (3.error.invalid_params);
        // uLoopMCP answers -32603.
        ensure!(error["code"] == -32602 || error["code"] == -32603, "MaxCount: \"ten\" was answered {answer}");
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
        for tool in [link.probe().method(), methods::GET_TOOL_DETAILS] {
            let result = link.result(tool, json!({})).await?;
            ensure!(result["Ver"].is_string(), "{tool}'s result has no Ver: {result}");
        }
        Ok(())
    })
}

/// The call must be refused -32602 with `param` named in the error.
async fn refused_naming(link: &mut EditorClient, tool: &str, param: &str, value: Value) -> CheckResult {
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

async fn error_shape(s: Session, request: &str, code: i64, data_type: &str) -> CheckResult {
    let mut link = s.link(Framing::Header).await?;
    let mut message: Value =
        serde_json::from_str(request).map_err(|e| crate::finding::Finding::Harness(e.to_string()))?;
    message["jsonrpc"] = json!("2.0");
    message["id"] = json!("e-1");
    link.send_json(&message).await?;
    let answer = link.response(&json!("e-1")).await?;
    let error = &answer["error"];
    ensure!(error["code"] == code, "code {} (must be {code}): {answer}", error["code"]);
    ensure!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "no message: {answer}");
    ensure!(error["data"]["type"] == data_type, "data.type {} (must be {data_type}): {answer}", error["data"]["type"]);
    ensure!(error["data"]["message"].is_string(), "no data.message: {answer}");
    Ok(())
}

fn params_case_insensitive(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let result = link.result("get-logs", json!({"logtype": "Error", "maxcount": 1})).await?;
        ensure!(result["LogType"] == "Error", "logtype was not taken as LogType: {result}");
        ensure!(result["MaxCount"] == 1, "maxcount was not taken as MaxCount: {result}");
        Ok(())
    })
}

fn params_absent_or_null(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        for (id, request) in [
            ("absent", json!({"jsonrpc": "2.0", "id": "absent", "method": "get-logs"})),
            ("null", json!({"jsonrpc": "2.0", "id": "null", "method": "get-logs", "params": null})),
        ] {
            link.send_json(&request).await?;
            let answer = link.response(&json!(id)).await?;
            ensure!(answer["result"]["LogType"] == "All", "params {id}: answered {answer}");
        }
        Ok(())
    })
}

fn pipelining(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        for n in 0..10 {
            let method = if n % 2 == 0 { link.probe().method() } else { methods::GET_TOOL_DETAILS };
            link.send_json(&json!({"jsonrpc": "2.0", "id": n, "method": method, "params": {}})).await?;
        }
        let mut seen = Vec::new();
        while seen.len() < 10 {
            let message = link.message().await?;
            if message.get("method").is_some() {
                continue;
            }
            ensure!(message.get("result").is_some(), "a pipelined request failed: {message}");
            seen.push(message["id"].as_i64().unwrap_or(-1));
        }
        seen.sort_unstable();
        ensure!(seen == (0..10).collect::<Vec<_>>(), "answers for ids {seen:?}");
        match link.receive(Duration::from_millis(200)).await {
            Read::Message(m) if m.get("method").is_none() => {
                crate::finding::violation(format!("an eleventh answer: {m}"))
            }
            _ => Ok(()),
        }
    })
}

fn extra_fields_ignored(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        link.send_json(
            &json!({"jsonrpc": "2.0", "id": "x", "method": link.probe().method(), "params": {}, "trace": {"span": 1}}),
        )
        .await?;
        let answer = link.response(&json!("x")).await?;
        ensure!(answer.get("result").is_some(), "answered {answer}");
        Ok(())
    })
}

async fn total_logs(link: &mut EditorClient) -> Result<u64, crate::finding::Finding> {
    let result = link.result("get-logs", json!({"LogType": "All"})).await?;
    result["TotalCount"].as_u64().ok_or_else(|| crate::finding::Finding::Violation(format!("no TotalCount: {result}")))
}

fn notification_runs_nothing(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        // A console of one entry: clearing with a confirmation leaves it.
        link.result("clear-console", json!({"AddConfirmationMessage": true})).await?;
        let before = total_logs(&mut link).await?;
        ensure!(before > 0, "clear-console with AddConfirmationMessage left an empty console");
        link.send_json(
            &json!({"jsonrpc": "2.0", "method": "clear-console", "params": {"AddConfirmationMessage": false}}),
        )
        .await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let after = total_logs(&mut link).await?;
        ensure!(after >= before, "a clear-console notification ran: {before} entries before, {after} after");
        Ok(())
    })
}

fn batch_single(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let probe = link.probe().method();
        link.send_body(format!(r#"[{{"jsonrpc":"2.0","id":"in-batch","method":"{probe}","params":{{}}}}]"#).as_bytes())
            .await?;
        let answer = link.message().await?;
        ensure!(answer["id"].is_null() && answer["error"]["code"] == -32600, "a batch of one was answered {answer}");
        match link.receive(Duration::from_millis(300)).await {
            Read::Silence => Ok(()),
            other => crate::finding::violation(format!("the request inside the batch was answered: {other:?}")),
        }
    })
}
