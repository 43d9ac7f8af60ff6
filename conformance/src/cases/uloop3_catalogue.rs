//! §3 and §6 for uLoopMCP 3's catalogue and wire ("Unity CLI Loop", branch
//! `v3-beta` at c50f54c): what `docs/uloop-3-wire.md` read in its source,
//! checked against an Editor that says it is that one (`Ver`
//! `3.0.0-beta.1` and no `ping`).
//!
//! - `6.uloop-3.project-identity`: `x-uloop.expectedProjectRoot` (§5 of the
//!   fact sheet): absent or `null`, nothing is checked; empty, or not the
//!   canonical project root byte for byte (a trailing `/` is another
//!   root), `-32603` with the Editor's own message.
//! - `6.uloop-3.tool-list`: the 14 first-party tools, listed as
//!   `{name, parameterSchema, displayDevelopmentOnly}`, no internal command.
//! - `6.uloop-3.get-version`: the internal `get-version` answers its fields
//!   and `Ver`.
//! - `6.uloop-3.error-shape`: every error is `-32603` with
//!   `data: {type, message}` (an unknown tool: `Unknown tool: NAME`).

use editor_link::{
    dialect::{ULOOP_3, uloop_3::OTHER_PROJECT},
    framing::Framing,
    methods,
};
use serde_json::{Value, json};

use crate::{
    case::{Case, CheckFuture, Level, Needs, Requires, check},
    editor_client::EditorClient,
    ensure,
    finding::Finding,
    target::Session,
};

const REF: &str = "uLoopMCP 3, v3-beta c50f54c (docs/uloop-3-wire.md §5-§7); docs/editor-link-protocol.md §3, §6";

/// uLoopMCP 3's first-party tools at c50f54c (`docs/uloop-3-wire.md` §7).
pub const ULOOP3_TOOLS: &[&str] = &[
    "clear-console",
    "compile",
    "control-play-mode",
    "execute-dynamic-code",
    "find-game-objects",
    "get-hierarchy",
    "get-logs",
    "record-input",
    "replay-input",
    "run-tests",
    "screenshot",
    "simulate-keyboard",
    "simulate-mouse-input",
    "simulate-mouse-ui",
];

/// The fields of `get-version`'s result (`GetVersionResponse.cs:8-18`).
const GET_VERSION_FIELDS: &[&str] = &[
    "UnityVersion",
    "Platform",
    "DataPath",
    "PersistentDataPath",
    "TemporaryCachePath",
    "IsEditor",
    "ProductName",
    "CompanyName",
    "Ver",
];

/// `ProjectRootIdentityValidator`'s messages (`docs/uloop-3-wire.md` §5).
const ROOT_REQUIRED: &str = "Invalid x-uloop metadata: expectedProjectRoot is required.";

pub fn cases() -> Vec<Case> {
    let requires = |tool: &'static str| Requires::catalogue(&ULOOP_3).and_tool(tool);
    vec![
        Case {
            id: "6.uloop-3.project-identity".into(),
            requirement: "A request without x-uloop, or with x-uloop null, is run; one whose x-uloop.expectedProjectRoot is empty, or is not the Editor's canonical project root byte for byte (another folder, the root with a trailing /), is refused -32603 with uLoopMCP 3's message, and not run.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Project,
            requires: requires(methods::GET_VERSION),
            check: check(project_identity),
        },
        Case {
            id: "6.uloop-3.tool-list".into(),
            requirement: "get-tool-details lists uLoopMCP 3's 14 first-party tools, each as {name, parameterSchema, displayDevelopmentOnly: false}, with IncludeDevelopmentOnly or without, and never an internal command (get-version, get-tool-details) or a tool v3 removed (ping, set-client-name, debug-sleep, focus-window).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: requires(methods::GET_TOOL_DETAILS),
            check: check(tool_list),
        },
        Case {
            id: "6.uloop-3.get-version".into(),
            requirement: "The internal command get-version answers UnityVersion, Platform, DataPath, PersistentDataPath, TemporaryCachePath, IsEditor (a boolean), ProductName, CompanyName and Ver (3.0.0-beta.1).".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: requires(methods::GET_VERSION),
            check: check(get_version),
        },
        Case {
            id: "6.uloop-3.error-shape".into(),
            requirement: "A call of an unknown tool is answered with its id, -32603, message \"Internal error\" and data {type: internal_error, message: \"Unknown tool: NAME\"}: uLoopMCP 3 answers every error -32603 with data.".into(),
            reference: REF,
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::catalogue(&ULOOP_3),
            check: check(error_shape),
        },
    ]
}

/// `method` called with `x-uloop` as given (`None`: no member at all).
async fn call_with_uloop(link: &mut EditorClient, id: &str, uloop: Option<Value>) -> Result<Value, Finding> {
    let mut request = json!({"jsonrpc": "2.0", "id": id, "method": methods::GET_VERSION, "params": {}});
    if let Some(uloop) = uloop {
        request[editor_link::jsonrpc::ULOOP_MEMBER] = uloop;
    }
    link.send_json(&request).await?;
    link.response(&json!(id)).await
}

fn project_identity(s: Session) -> CheckFuture {
    Box::pin(async move {
        let Some(root) = s.identity().map(str::to_owned) else {
            return Err(Finding::NotApplicable(
                "not applicable: the Editor's canonical project root is not known (--project DIR)".into(),
            ));
        };
        let mut link = s.link_without_identity(Framing::Header).await?;
        for (id, uloop) in [("absent", None), ("null", Some(Value::Null))] {
            let answer = call_with_uloop(&mut link, id, uloop).await?;
            ensure!(answer.get("result").is_some(), "a request with x-uloop {id} was refused: {answer}");
        }
        let answer = call_with_uloop(&mut link, "same", Some(json!({"expectedProjectRoot": root}))).await?;
        ensure!(answer.get("result").is_some(), "a request naming the project's root {root:?} was refused: {answer}");
        let refused = [
            ("empty", String::new(), ROOT_REQUIRED),
            ("other", format!("{root}-other"), OTHER_PROJECT),
            ("slash", format!("{root}/"), OTHER_PROJECT),
        ];
        for (id, expected, message) in refused {
            let answer = call_with_uloop(&mut link, id, Some(json!({"expectedProjectRoot": expected}))).await?;
            let error = &answer["error"];
            ensure!(
                error["code"] == -32603 && error["message"] == message,
                "expectedProjectRoot {expected:?} (the root is {root:?}) must be refused -32603 {message:?}; answered {answer}"
            );
            ensure!(answer["id"] == id, "the refusal does not carry the request's id: {answer}");
        }
        Ok(())
    })
}

fn tool_list(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        for include in [false, true] {
            let details = link.result(methods::GET_TOOL_DETAILS, json!({"IncludeDevelopmentOnly": include})).await?;
            let tools = details["Tools"].as_array().cloned().unwrap_or_default();
            let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
            names.sort_unstable();
            ensure!(
                names == ULOOP3_TOOLS,
                "IncludeDevelopmentOnly {include}: get-tool-details lists {names:?}, uLoopMCP 3 lists {ULOOP3_TOOLS:?}"
            );
            for tool in &tools {
                let mut members: Vec<&str> =
                    tool.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
                members.sort_unstable();
                ensure!(
                    members == ["displayDevelopmentOnly", "name", "parameterSchema"],
                    "a listed tool has the members {members:?}, not uLoopMCP 3's name, parameterSchema, displayDevelopmentOnly: {tool}"
                );
                ensure!(tool["displayDevelopmentOnly"] == false, "listed as development-only: {tool}");
            }
        }
        Ok(())
    })
}

fn get_version(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let version = link.result(methods::GET_VERSION, json!({})).await?;
        let missing: Vec<&str> = GET_VERSION_FIELDS.iter().copied().filter(|f| version.get(*f).is_none()).collect();
        ensure!(missing.is_empty(), "get-version lacks {missing:?}: {version}");
        ensure!(version["IsEditor"].is_boolean(), "IsEditor is not a boolean: {version}");
        let versions = ULOOP_3.catalogue.versions;
        ensure!(versions.iter().any(|v| version["Ver"] == *v), "Ver is {}, not one of {versions:?}", version["Ver"]);
        Ok(())
    })
}

fn error_shape(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        let answer = link.call("no-such-tool", json!({})).await?;
        let error = &answer["error"];
        ensure!(error["code"] == -32603, "an unknown tool was answered {answer}, not -32603");
        ensure!(error["message"] == "Internal error", "error.message is not \"Internal error\": {answer}");
        ensure!(
            error["data"]["type"] == "internal_error" && error["data"]["message"] == "Unknown tool: no-such-tool",
            "error.data is not {{type: internal_error, message: \"Unknown tool: no-such-tool\"}}: {answer}"
        );
        Ok(())
    })
}
