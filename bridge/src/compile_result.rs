//! A compile across the domain reload it causes, on an Editor without a
//! resume journal (uLoopMCP 2.1.1, protocol §5): the bridge asks for
//! `WaitForDomainReload` with a `RequestId` of its own and, as uLoopMCP's
//! own TypeScript server does (`waitForCompileCompletion`), answers once the
//! Editor is back: the result the Editor wrote before reloading,
//! `<project>/Temp/uLoopMCP/compile-results/<RequestId>.json` (UTF-8 with a
//! BOM), read when neither `Temp/compiling.lock` nor `Temp/domainreload.lock`
//! has existed for [`SETTLE`] and the link is connected again. A client that
//! asked to wait gets a ready Editor, or at its deadline an answer saying
//! the reload was not over. uLoopMCP 3 does the same with its own folder
//! (`Temp/UnityCliLoop/compile-results`) and a third lock,
//! `Temp/serverstarting.lock`: where each looks is its
//! [dialect](editor_link::dialect::Dialect)'s.

use std::{
    path::{Path, PathBuf},
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant},
};

use editor_link::dialect::Dialect;
use serde_json::{Map, Value};

/// Between the end of a compile and the start of the reload it causes
/// neither lock exists for a moment (about 50 ms, as uLoopMCP measured): the
/// Editor counts as done only after this long without one (uLoopMCP's
/// `LOCK_GRACE_PERIOD_MS`).
pub const SETTLE: Duration = Duration::from_millis(500);

/// How often the files are looked at (uLoopMCP polls every 100 ms).
const POLL: Duration = Duration::from_millis(50);

/// A compile that will leave its result in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultFile {
    pub path: PathBuf,
    pub project: PathBuf,
    /// The Editor's, whose locks say it is busy.
    pub dialect: &'static Dialect,
}

/// Where a waited-for compile stands at the end of [`ResultFile::settle`].
#[derive(Clone, Debug, PartialEq)]
pub enum Settled {
    /// The Editor is back and ready; the compile's result.
    Ready(Value),
    /// The Editor is back, and wrote no result: the compile did not finish.
    NoResult,
    /// The deadline passed first; the result, if the Editor wrote it.
    NotBack(Option<Value>),
}

/// Prepares `arguments` of a `compile` whose `inputSchema` offers
/// `WaitForDomainReload`, for an Editor of `dialect` in `project` that
/// cannot resume: `WaitForDomainReload: true` (unless the caller said
/// otherwise) and a `RequestId` (the caller's, when it is a safe file
/// name). `None`: the call goes as it is.
pub fn prepare(
    dialect: &'static Dialect,
    input_schema: &Value,
    project: Option<&Path>,
    arguments: &mut Map<String, Value>,
) -> Option<ResultFile> {
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
    Some(ResultFile {
        path: project.join(dialect.compile_results).join(format!("{id}.json")),
        project: project.to_owned(),
        dialect,
    })
}

impl ResultFile {
    /// The result the Editor wrote, if it is there and whole.
    async fn result(&self) -> Option<Value> {
        let bytes = tokio::fs::read(&self.path).await.ok()?;
        let text = String::from_utf8_lossy(&bytes);
        match serde_json::from_str(text.trim_start_matches('\u{feff}')) {
            Ok(result @ Value::Object(_)) => Some(result),
            // Being written, or cut: the next look reads it whole.
            _ => None,
        }
    }

    fn busy(&self) -> bool {
        self.dialect.busy_locks.iter().any(|lock| self.project.join(lock).exists())
    }

    /// Waits, never past `deadline`, until the Editor is done: no lock for
    /// [`SETTLE`], then `connected` (the link back on the Editor, waited for
    /// by the deadline); then the result it wrote, if it wrote one (a compile
    /// cut off by a reload it did not cause never finishes, and writes none).
    pub async fn settle<F, C>(&self, deadline: Instant, connected: C) -> Settled
    where
        C: FnOnce(Instant) -> F,
        F: std::future::Future<Output = bool>,
    {
        let mut idle_since = None::<Instant>;
        loop {
            if self.busy() {
                idle_since = None;
            } else if idle_since.get_or_insert_with(Instant::now).elapsed() >= SETTLE {
                let back = connected(deadline).await;
                return match (self.result().await, back) {
                    (Some(result), true) => Settled::Ready(result),
                    (None, true) => Settled::NoResult,
                    (result, false) => Settled::NotBack(result),
                };
            }
            if Instant::now() >= deadline {
                return Settled::NotBack(self.result().await);
            }
            tokio::time::sleep_until(deadline.min(Instant::now() + POLL).into()).await;
        }
    }
}

/// The answer when the deadline passed before the Editor was back: what
/// ran, and what it means for the next call.
pub fn not_back(result: Option<&Value>, seconds: f64) -> String {
    let seconds = (seconds * 10.0).round() / 10.0;
    match result {
        Some(result) => format!(
            "Unity compiled, but had not finished the domain reload that follows within {seconds} s (WaitForDomainReload), so its tools may not answer yet: call wait-for-editor-ready before the next call. The compile's result: {result}"
        ),
        None => format!(
            "Unity had not finished compiling and the domain reload that follows within {seconds} s (WaitForDomainReload): the compile was sent and may still be running. Call wait-for-editor-ready, then get-logs for its messages."
        ),
    }
}

#[cfg(test)]
mod tests {
    use editor_link::dialect::{ULOOP_2_1_1, uloop_2_1_1::COMPILE_RESULTS as RESULTS_DIR};
    use serde_json::json;

    use super::*;

    fn prepare(input_schema: &Value, project: Option<&Path>, arguments: &mut Map<String, Value>) -> Option<ResultFile> {
        super::prepare(&ULOOP_2_1_1, input_schema, project, arguments)
    }

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

        let ready = |_| async { true };
        let later = Instant::now() + Duration::from_secs(30);
        assert_eq!(file.settle(later, ready).await, Settled::NoResult, "the Editor is back and wrote none");
        std::fs::create_dir_all(file.path.parent().unwrap()).unwrap();
        std::fs::write(&file.path, "\u{feff}{\"Success\":true,\"ErrorCount\":0,\"Ver\":\"2.1.1\"}").unwrap();
        let result = json!({"Success": true, "ErrorCount": 0, "Ver": "2.1.1"});
        // The domain reload is under way: the result is there, the Editor is not.
        std::fs::write(project.path().join("Temp/domainreload.lock"), "").unwrap();
        let soon = Instant::now() + Duration::from_millis(700);
        assert_eq!(file.settle(soon, ready).await, Settled::NotBack(Some(result.clone())));
        // Over: ready once no lock has existed for SETTLE and the link is back.
        std::fs::remove_file(project.path().join("Temp/domainreload.lock")).unwrap();
        assert_eq!(file.settle(later, ready).await, Settled::Ready(result.clone()));
        assert_eq!(file.settle(later, |_| async { false }).await, Settled::NotBack(Some(result)));
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
