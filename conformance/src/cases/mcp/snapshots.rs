//! MCP output snapshots: scripted agent workflows (those recorded in
//! `fixtures/sessions/`, and more) run through the bridge against the
//! target; the redacted answers must equal the snapshot of the Editor's
//! catalogue: `fixtures/snapshots/mcp/NAME.snap` for the package's
//! (`mcp.snapshot.NAME`), `fixtures/snapshots/mcp/uloop-2.1.1/NAME.snap`
//! for uLoopMCP 2.1.1's (`mcp.snapshot.uloop-2.1.1.NAME`): the same
//! workflows, the answers each Editor gives. The snapshots are insta
//! snapshots, written and reviewed with `cargo insta`
//! (`conformance/tests/testsuite/snapshots.rs`) from each catalogue's fake
//! Editor; they are built into this program, so it needs no checkout.

use editor_link::{
    dialect::{PACKAGE, ULOOP_2_1_1},
    redaction::Redactor,
};
use serde_json::{Value, json};

use crate::{
    bridge::McpProcess,
    case::{Case, Dialect, Level, Needs, Requires, check},
    finding::Finding,
    snapshot,
    target::Session,
    workflow::{Revision, Step, Workflow},
};

/// The workflows of `fixtures/workflows.json` (built in); the first five
/// are the sessions recorded in `fixtures/sessions/`.
pub fn workflows() -> Vec<Workflow> {
    Workflow::parse_all(include_str!("../../../../fixtures/workflows.json"))
        .expect("fixtures/workflows.json is valid (a test reads it)")
}

fn needs(workflow: &Workflow) -> Needs {
    if workflow.steps.iter().any(|s| matches!(s, Step::Reload { reload } if reload.move_port)) {
        Needs::Control("a domain reload that moves the port")
    } else if workflow.steps.iter().any(|s| matches!(s, Step::Reload { .. })) {
        Needs::Reload
    } else if workflow.steps.iter().any(|s| matches!(s, Step::Write { .. })) {
        Needs::Project
    } else {
        Needs::Link
    }
}

/// The committed snapshots of the workflows named, for each catalogue:
/// `fixtures/snapshots/mcp/NAME.snap` and, in `snapshot_folder`'s folder,
/// `uloop-2.1.1/NAME.snap` (a test checks each file is built in).
macro_rules! snapshots {
    ($($name:literal),* $(,)?) => {
        &[
            $((&PACKAGE, $name, include_str!(concat!("../../../../fixtures/snapshots/mcp/", $name, ".snap"))),)*
            $((
                &ULOOP_2_1_1,
                $name,
                include_str!(concat!("../../../../fixtures/snapshots/mcp/uloop-2.1.1/", $name, ".snap")),
            ),)*
        ]
    };
}

/// The committed snapshot of each workflow, for each catalogue.
const SNAPSHOTS: &[(&Dialect, &str, &str)] = snapshots![
    "inspect-scene",
    "edit-compile-fix",
    "run-tests-read-failures",
    "search-assets",
    "reload-moves-port",
    "tools-list",
    "refusals",
    "scene-queries",
    "run-code",
    "stateless-session",
    "stateless-edit-compile-fix",
];

/// The catalogues with MCP output snapshots (`fixtures/snapshots/mcp/`):
/// those of the Editors the bridge reaches. Not uLoopMCP 3's yet: the
/// bridge under test does not speak to it.
pub const WITH_SNAPSHOTS: [&Dialect; 2] = [&PACKAGE, &ULOOP_2_1_1];

/// The folder of a catalogue's snapshots, under `fixtures/snapshots/mcp/`:
/// the package's there, another's in a folder of its name.
pub fn snapshot_folder(catalogue: &Dialect) -> String {
    match catalogue {
        package if *package == PACKAGE => String::new(),
        other => format!("{}/", other.name),
    }
}

/// The id of the case that holds `catalogue`'s Editors to a workflow's
/// snapshot: `mcp.snapshot.NAME` for the package's (the ids of before
/// there were others), `mcp.snapshot.CATALOGUE.NAME` for the others.
pub fn case_id(catalogue: &Dialect, workflow: &str) -> String {
    match catalogue {
        package if *package == PACKAGE => format!("mcp.snapshot.{workflow}"),
        other => format!("mcp.snapshot.{other}.{workflow}"),
    }
}

/// The snapshot of `name` for `catalogue`, as built into this program.
pub fn snapshot_of(catalogue: &Dialect, name: &str) -> Option<&'static str> {
    SNAPSHOTS.iter().find(|(c, n, _)| *c == catalogue && *n == name).map(|(_, _, text)| *text)
}

/// Runs `workflow` through the bridge against the session's Editor; the
/// redacted answers, one `{"call", "arguments", "answer"}` per call.
///
/// Every workflow starts from an empty console (`clear-console`, not part of
/// the answers), so a snapshot does not depend on what the Editor logged
/// before; files it writes into the project are put back afterwards.
pub async fn run_workflow(s: &Session, workflow: &Workflow) -> Result<Value, Finding> {
    let mut written = Vec::new();
    let outcome = run_steps(s, workflow, &mut written).await;
    for (path, original) in written.into_iter().rev() {
        let _ = match original {
            Some(bytes) => std::fs::write(&path, bytes),
            None => std::fs::remove_file(&path),
        };
    }
    outcome
}

async fn run_steps(
    s: &Session,
    workflow: &Workflow,
    written: &mut Vec<(std::path::PathBuf, Option<Vec<u8>>)>,
) -> Result<Value, Finding> {
    let mut redactor = snapshot::redactor(s.project.as_deref());
    let revision = workflow.revision;
    let mut mcp = s.mcp().await?;
    if revision == Revision::Handshake {
        mcp.initialize().await?;
    }
    let cleared = mcp.call_method_in(revision, "tools/call", json!({"name": "clear-console", "arguments": {}})).await?;
    if cleared.get("result").is_none_or(|r| r["isError"] == true) {
        return Err(Finding::Violation(format!("clear-console before the workflow failed: {cleared}")));
    }
    let mut answers = Vec::new();
    for step in &workflow.steps {
        match step {
            Step::Call { call: tool, arguments } => {
                let params = json!({"name": tool, "arguments": arguments});
                let answer = mcp.call_method_in(revision, "tools/call", params).await?;
                answers.push(json!({"call": tool, "arguments": arguments,
                                    "answer": snapshot::comparable(answer, &mut redactor)}));
            }
            Step::ListTools { .. } => answers.push(list_tools(&mut mcp, revision, &mut redactor).await?),
            Step::Discover { .. } => {
                let answer = mcp.call_method_in(revision, "server/discover", json!({})).await?;
                answers.push(json!({"discover": snapshot::comparable(answer, &mut redactor)}));
            }
            Step::Write { write: path, text } => {
                let dir =
                    s.project.as_ref().ok_or_else(|| Finding::Harness("the project folder is not known".into()))?;
                let file = dir.join(path);
                if !written.iter().any(|(p, _)| *p == file) {
                    written.push((file.clone(), std::fs::read(&file).ok()));
                }
                std::fs::write(&file, text)
                    .map_err(|e| Finding::Harness(format!("writing {path} into the project: {e}")))?;
            }
            Step::Reload { reload } if reload.move_port => {
                s.control()?
                    .reload(200, true)
                    .await
                    .map_err(|e| Finding::Harness(format!("reload through the control API: {e}")))?;
            }
            Step::Reload { .. } => s.reload_and_wait().await?,
        }
    }
    mcp.finish().await?;
    Ok(Value::Array(answers))
}

/// Every tool of `tools/list` (following `nextCursor`); in 2026-07-28 also
/// what the revision adds to the result (`resultType`, the cache hints, the
/// server in `_meta`), as the last page says it.
async fn list_tools(mcp: &mut McpProcess, revision: Revision, redactor: &mut Redactor) -> Result<Value, Finding> {
    if revision == Revision::Handshake {
        return Ok(json!({"list": "tools", "tools": mcp.list_tools().await?}));
    }
    let (mut tools, mut cursor) = (Vec::new(), None::<Value>);
    loop {
        let params = cursor.as_ref().map_or_else(|| json!({}), |c| json!({"cursor": c}));
        let answer = mcp.call_method_in(revision, "tools/list", params).await?;
        let Some(mut result) = answer.get("result").and_then(Value::as_object).cloned() else {
            return Err(Finding::Violation(format!("tools/list failed: {answer}")));
        };
        if let Some(Value::Array(page)) = result.remove("tools") {
            tools.extend(page);
        }
        cursor = result.remove("nextCursor");
        if cursor.is_none() {
            let last = snapshot::comparable(json!({"result": result}), redactor);
            return Ok(json!({"list": "tools", "tools": tools, "result": last["result"]}));
        }
    }
}

pub fn cases() -> Vec<Case> {
    WITH_SNAPSHOTS.into_iter().flat_map(|catalogue| workflows().into_iter().map(move |w| case(catalogue, w))).collect()
}

/// Whether a workflow calls tools or writes files (what comes back depends
/// on the project), not only lists the tools.
fn asks_about_the_project(workflow: &Workflow) -> bool {
    workflow.steps.iter().any(|s| matches!(s, Step::Call { .. } | Step::Write { .. }))
}

fn case(catalogue: &'static Dialect, workflow: Workflow) -> Case {
    let file = format!("fixtures/snapshots/mcp/{}{}.snap", snapshot_folder(catalogue), workflow.name);
    let requirement = format!(
        "Through the bridge, {} gives the MCP answers of {file} (ids, times, paths, ports, durations redacted).",
        workflow.what
    );
    Case {
        id: case_id(catalogue, &workflow.name).into(),
        requirement: requirement.into(),
        reference: match workflow.revision {
            Revision::Handshake => "MCP 2025-11-25 §server/tools; docs/editor-link-protocol.md §6",
            Revision::Stateless => "MCP 2026-07-28 §server/tools, §server/discover; docs/editor-link-protocol.md §6",
        },
        level: Level::Must,
        needs: needs(&workflow),
        // The answers recorded are those of the catalogue's Editor, on
        // fixtures/unity-project once it is asked about the project.
        requires: if asks_about_the_project(&workflow) {
            Requires::catalogue(catalogue).on_the_fixture_project()
        } else {
            Requires::catalogue(catalogue)
        },
        check: check(move |s| {
            let (workflow, file) = (workflow.clone(), file.clone());
            Box::pin(async move {
                let text = snapshot_of(catalogue, &workflow.name)
                    .ok_or_else(|| Finding::Harness(format!("no snapshot {file} is built in")))?;
                let expected = snapshot::parse_insta(text).map_err(Finding::Harness)?;
                let actual = run_workflow(&s, &workflow).await?;
                let differences = snapshot::differences(&expected, &actual, 8);
                if differences.is_empty() {
                    return Ok(());
                }
                Err(Finding::Violation(format!(
                    "the answers differ from {file} (the Editor changed, or the fake drifted from it): {}",
                    differences.iter().map(|d| describe(&actual, d)).collect::<Vec<_>>().join("; ")
                )))
            })
        }),
    }
}

/// A difference with the step it is in named (`step 2 (get-logs)`).
fn describe(actual: &Value, difference: &str) -> String {
    let step =
        difference.strip_prefix('[').and_then(|rest| rest.split(']').next()).and_then(|n| n.parse::<usize>().ok());
    match step.and_then(|n| actual.get(n).map(|a| (n, a))) {
        Some((n, a)) => {
            let what = a["call"].as_str().or(a["list"].as_str()).or(a.get("discover").map(|_| "server/discover"));
            let what = what.unwrap_or("?");
            format!("step {} ({what}) {difference}", n + 1)
        }
        None => difference.to_owned(),
    }
}
