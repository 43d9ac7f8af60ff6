//! A compile across the domain reload it causes, on an Editor without a
//! resume journal (uLoopMCP 2.1.1, protocol §5): the bridge asks for
//! `WaitForDomainReload` with a `RequestId` of its own, and when the reload
//! cuts the answer off, reads the result the Editor wrote before reloading,
//! `<project>/Temp/uLoopMCP/compile-results/<RequestId>.json` (UTF-8 with a
//! BOM) — what uLoopMCP's own TypeScript server does.

use std::{
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant},
};

use serde_json::{Map, Value};

/// Where uLoopMCP writes a compile's result, under the project.
pub const RESULTS_DIR: &str = "Temp/uLoopMCP/compile-results";

/// How long after the cut-off the file may take to appear.
const APPEAR_WITHIN: Duration = Duration::from_secs(2);

/// A compile that will leave its result in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultFile {
    pub path: PathBuf,
}

/// Prepares `arguments` of a `compile` whose `inputSchema` offers
/// `WaitForDomainReload`, for an Editor in `project` that cannot resume:
/// `WaitForDomainReload: true` (unless the caller said otherwise) and a
/// `RequestId` (the caller's, when it is a safe file name). `None`: the
/// call goes as it is.
pub fn prepare(input_schema: &Value, project: Option<&Path>, arguments: &mut Map<String, Value>) -> Option<ResultFile> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let project = project?;
    input_schema["properties"].get("WaitForDomainReload")?;
    let wait = arguments.entry("WaitForDomainReload").or_insert(Value::Bool(true));
    if *wait != Value::Bool(true) {
        return None;
    }
    let safe = |id: &str| !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let id = match arguments.get("RequestId").and_then(Value::as_str) {
        Some(id) if safe(id) => id.to_owned(),
        _ => {
            let id = format!("compile_bridge_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
            arguments.insert("RequestId".into(), id.clone().into());
            id
        }
    };
    Some(ResultFile { path: project.join(RESULTS_DIR).join(format!("{id}.json")) })
}

impl ResultFile {
    /// The result the Editor wrote, waiting a moment for it (never past
    /// `deadline`); `None` when none came (the compile may or may not have
    /// run, and the caller says so).
    pub async fn read(&self, deadline: Instant) -> Option<Value> {
        let until = deadline.min(Instant::now() + APPEAR_WITHIN);
        loop {
            if let Ok(bytes) = tokio::fs::read(&self.path).await {
                let text = String::from_utf8_lossy(&bytes);
                if let Ok(result @ Value::Object(_)) = serde_json::from_str(text.trim_start_matches('\u{feff}')) {
                    return Some(result);
                }
            }
            if Instant::now() >= until {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn a_compile_asks_for_its_result_file_and_reads_it_with_its_bom() {
        let project = tempfile::tempdir().unwrap();
        let schema = json!({"type": "object", "properties": {"ForceRecompile": {}, "WaitForDomainReload": {}}});
        let mut arguments = Map::new();
        let file = prepare(&schema, Some(project.path()), &mut arguments).unwrap();
        assert_eq!(arguments["WaitForDomainReload"], true);
        let id = arguments["RequestId"].as_str().unwrap();
        assert!(id.starts_with("compile_bridge_"), "{id}");
        assert_eq!(file.path, project.path().join(RESULTS_DIR).join(format!("{id}.json")));

        let soon = Instant::now() + Duration::from_millis(200);
        assert_eq!(file.read(soon).await, None, "no file, no result");
        std::fs::create_dir_all(file.path.parent().unwrap()).unwrap();
        std::fs::write(&file.path, "\u{feff}{\"Success\":true,\"ErrorCount\":0,\"Ver\":\"2.1.1\"}").unwrap();
        let read = file.read(Instant::now() + Duration::from_secs(1)).await.unwrap();
        assert_eq!(read, json!({"Success": true, "ErrorCount": 0, "Ver": "2.1.1"}));
    }

    #[test]
    fn only_where_the_editor_offers_it_and_the_caller_did_not_refuse_it() {
        let project = Path::new("/p");
        let without = json!({"type": "object", "properties": {"ForceRecompile": {}}});
        assert_eq!(prepare(&without, Some(project), &mut Map::new()), None);
        let with = json!({"properties": {"WaitForDomainReload": {}}});
        assert_eq!(prepare(&with, None, &mut Map::new()), None, "no project, no file to read");
        let mut refused = json!({"WaitForDomainReload": false}).as_object().unwrap().clone();
        assert_eq!(prepare(&with, Some(project), &mut refused), None);
        let mut own = json!({"RequestId": "mine-1"}).as_object().unwrap().clone();
        assert_eq!(
            prepare(&with, Some(project), &mut own).unwrap().path,
            project.join(RESULTS_DIR).join("mine-1.json")
        );
        let mut unsafe_id = json!({"RequestId": "../x"}).as_object().unwrap().clone();
        let file = prepare(&with, Some(project), &mut unsafe_id).unwrap();
        assert!(unsafe_id["RequestId"].as_str().unwrap().starts_with("compile_bridge_"), "{unsafe_id:?}");
        assert!(file.path.starts_with(project.join(RESULTS_DIR)));
    }
}
