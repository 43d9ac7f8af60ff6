//! A second assembly of the project broken and fixed, as an agent does it:
//! a script with a compile error written into `Assets/Gameplay` (the
//! fixture project's `FixtureProject.Gameplay` assembly definition), then
//! `compile`; the script removed, `compile` again. The project itself always
//! compiles, so a real Unity opens it without Safe Mode; only this case
//! breaks it, for as long as it runs.

use super::*;
use crate::finding::{Finding, violation};

/// The broken script, in the second assembly's folder.
const BROKEN: &str = "Assets/Gameplay/UnityConformanceBroken.cs";

/// What a compile said: its result's fields, from `structuredContent` or
/// from the JSON of its text.
fn compiled(answer: &Value) -> Value {
    let result = &answer["result"];
    if result["structuredContent"].is_object() {
        return result["structuredContent"].clone();
    }
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .find_map(|text| serde_json::from_str::<Value>(text).ok())
        .unwrap_or_default()
}

fn errors(answer: &Value) -> Option<u64> {
    compiled(answer)["ErrorCount"].as_u64()
}

pub(super) fn broken_and_fixed(s: Session) -> CheckFuture {
    Box::pin(async move {
        let project = s.project.clone().ok_or_else(|| Finding::Harness("the project folder is not known".into()))?;
        if !project.join("Assets/Gameplay").is_dir() {
            return Err(Finding::NotApplicable(
                "not applicable: the project has no Assets/Gameplay assembly (the fixture project's second one)".into(),
            ));
        }
        let mut mcp = initialized(&s).await?;
        let before = mcp.call("compile", json!({})).await?;
        ensure!(errors(&before) == Some(0), "the project does not compile to begin with: {before}");
        let broken = project.join(BROKEN);
        let source = "// Written by unity-conformance (mcp.compile.broken-assembly-fixed) and removed by it.\nnamespace FixtureProject.Gameplay\n{\n#error unity-conformance breaks this assembly on purpose\n}\n";
        std::fs::write(&broken, source).map_err(|e| Finding::Harness(format!("writing {BROKEN}: {e}")))?;
        let failed = mcp.call("compile", json!({})).await;
        // The project as it was, whatever the compile said.
        let _ = std::fs::remove_file(&broken);
        let _ = std::fs::remove_file(project.join(format!("{BROKEN}.meta")));
        let fixed = mcp.call("compile", json!({})).await;
        let failed = failed?;
        let said = compiled(&failed);
        ensure!(
            errors(&failed).is_some_and(|n| n >= 1),
            "compile with {BROKEN} (an #error) reported no error: {failed}"
        );
        ensure!(
            said.to_string().contains("UnityConformanceBroken.cs"),
            "compile's errors do not name the broken script {BROKEN}: {said}"
        );
        let fixed = fixed?;
        if errors(&fixed) != Some(0) {
            return violation(format!("with {BROKEN} removed, compile still reports errors: {fixed}"));
        }
        // The Editor serves on after the fix (a reload may follow it).
        mcp.call_ok("get-logs", json!({"MaxCount": 1})).await?;
        mcp.finish().await
    })
}
