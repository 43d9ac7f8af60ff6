//! Selecting cases and running them, each against a fresh session and with a
//! deadline.

use std::time::{Duration, Instant};

use futures_util::StreamExt;

use crate::{
    bridge::BridgeCommand,
    case::{Case, Level, Needs, Status},
    finding::Finding,
    profile::Scope,
    target::Target,
    wire_log::WireLog,
};

/// How many cases run side by side against the embedded fake by default.
/// Most of a case is waiting (a silence timed, a reload, a bridge starting):
/// the suite used 6.7 s of CPU in 107 s one case at a time.
pub const DEFAULT_JOBS: usize = 8;

/// The longest one case may take before it is reported as a harness error.
pub const CASE_DEADLINE: Duration = Duration::from_secs(60);

/// One case's result.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseResult {
    pub id: String,
    /// What it checks: `core`, `catalogue`, or its extensions.
    pub profile: String,
    pub requirement: String,
    pub reference: &'static str,
    pub level: Level,
    pub status: Status,
    /// Why it did not pass (empty when it passed).
    pub detail: String,
    pub duration_ms: u64,
    /// The case's wire traffic, for failures.
    pub wire: Vec<String>,
    /// What it ended with, typed (`status` and `detail` say it in words).
    #[serde(skip)]
    pub finding: Option<Finding>,
}

/// Matches a case id against a glob (`*` any run of characters, `?` one).
pub fn glob_matches(pattern: &str, id: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match (p.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => go(&p[1..], s) || (!s.is_empty() && go(p, &s[1..])),
            (Some(b'?'), Some(_)) => go(&p[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &s[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), id.as_bytes())
}

/// The cases matching any of `include` (all when empty) and none of `exclude`.
/// A pattern without `*` or `?` also matches as an id prefix (`2.` selects §2).
pub fn select(cases: Vec<Case>, include: &[String], exclude: &[String]) -> Vec<Case> {
    let matches = |pattern: &String, id: &str| {
        glob_matches(pattern, id) || (!pattern.contains(['*', '?']) && id.starts_with(pattern.as_str()))
    };
    cases
        .into_iter()
        .filter(|c| include.is_empty() || include.iter().any(|p| matches(p, &c.id)))
        .filter(|c| !exclude.iter().any(|p| matches(p, &c.id)))
        .collect()
}

/// Runs one case (the `mcp` cases start `bridge` in front of the target),
/// unless `scope` says it does not apply.
pub async fn run_case(target: &Target, bridge: &BridgeCommand, scope: &Scope, case: &Case) -> CaseResult {
    let started = Instant::now();
    let log = WireLog::default();
    // Each reason checked in turn (a case may need the control API and the
    // fixture project both): the first that holds is said.
    let not_applicable = match target {
        Target::Tcp(remote) => {
            let control = match case.needs {
                Needs::Control(what) => remote.cannot_control(what),
                Needs::Reload => remote.cannot_reload(),
                _ => None,
            };
            let fixture = case.requires.fixture_project.then(|| remote.not_the_fixture_project());
            let project = (case.needs == Needs::Project && remote.project.is_none()).then(|| {
                "not applicable: this case compares the Editor with its project's files (--project DIR)".to_owned()
            });
            control.or(fixture.flatten()).or(project)
        }
        _ => None,
    }
    .or_else(|| scope.not_applicable(case));
    let (status, finding) = if let Some(why) = not_applicable {
        (Status::Skip, Some(Finding::NotApplicable(why)))
    } else {
        let outcome = match target.open(log.clone(), bridge).await {
            Err(finding) => Err(finding),
            Ok(session) => match tokio::time::timeout(CASE_DEADLINE, (case.check)(session)).await {
                Ok(outcome) => outcome,
                Err(_) => Err(Finding::Harness(format!("the case did not finish within {CASE_DEADLINE:?}"))),
            },
        };
        let status = match &outcome {
            Ok(()) => Status::Pass,
            Err(Finding::Violation(_)) => match case.level {
                Level::Must => Status::Fail,
                Level::Should => Status::Warn,
                Level::Info => Status::Info,
            },
            Err(Finding::Harness(_) | Finding::Unreachable(_)) => Status::Error,
            Err(Finding::NotApplicable(_)) => Status::Skip,
        };
        (status, outcome.err())
    };
    case_result(case, status, finding, started.elapsed().as_millis() as u64, log.lines())
}

/// `case`'s result, as the report shows it.
fn case_result(
    case: &Case,
    status: Status,
    finding: Option<Finding>,
    duration_ms: u64,
    wire: Vec<String>,
) -> CaseResult {
    CaseResult {
        id: case.id.to_string(),
        profile: case.requires.profile(),
        requirement: case.requirement.to_string(),
        reference: case.reference,
        level: case.level,
        status,
        detail: finding.as_ref().map(|f| f.detail().to_owned()).unwrap_or_default(),
        duration_ms,
        wire,
        finding,
    }
}

/// Runs `cases` and hands each result to `each` in the catalogue's order,
/// as soon as it and those before it are done.
///
/// Against the embedded fake every case has an Editor of its own, so `jobs`
/// of them run side by side (each keeps its own wire log). An Editor reached
/// over TCP is shared by every case (a reload, a setting, the quit of one is
/// what the next one meets), so there they run one at a time, each followed
/// by [`EditorWatch::check`].
pub async fn run_all(
    target: &Target,
    bridge: &BridgeCommand,
    scope: &Scope,
    cases: &[Case],
    jobs: usize,
    baseline: &Baseline,
    mut each: impl FnMut(Option<&CaseResult>, &CaseResult),
) -> Vec<CaseResult> {
    let mut results = Vec::with_capacity(cases.len());
    if target.gives_each_case_its_own_editor() {
        // Finished in any order (a long case holds up nobody), reported in
        // the catalogue's: a result waits here until those before it are in.
        //
        // Each case is a task of its own, never polled where the others are:
        // a case held in a blocking call (a file removed on a busy disk took
        // up to 9 s) then holds no other case's reading of its bridge's
        // answers (issue 34: answers written in time, read seconds late).
        let shared = std::sync::Arc::new((target.clone(), bridge.clone(), scope.clone()));
        let mut running = futures_util::stream::iter(cases.iter().cloned().enumerate())
            .map(|(n, case)| {
                let shared = shared.clone();
                let task = tokio::spawn(async move {
                    let (target, bridge, scope) = &*shared;
                    run_case(target, bridge, scope, &case).await
                });
                async move { (n, task.await) }
            })
            .buffer_unordered(jobs.max(1));
        let mut waiting = std::collections::BTreeMap::new();
        while let Some((n, joined)) = running.next().await {
            let result = joined.unwrap_or_else(|e| panicked(&cases[n], &e));
            waiting.insert(n, result);
            while let Some(mut result) = waiting.remove(&results.len()) {
                baseline.apply(&mut result);
                each(results.last(), &result);
                results.push(result);
            }
        }
    } else {
        let mut watch = EditorWatch::default();
        for case in cases {
            let mut result = match &watch {
                EditorWatch::Fell { after } => not_run_after(case, after),
                _ => run_case(target, bridge, scope, case).await,
            };
            // A case that reloaded the Editor the real way leaves its script
            // in the project: compiled away before the next case.
            if let Err(why) = crate::reload::restore(target, bridge).await {
                let passed = result.status == Status::Pass;
                result.detail = format!(
                    "{}the project could not be put back after the case: {why}",
                    if result.detail.is_empty() { String::new() } else { format!("{}; ", result.detail) }
                );
                if passed {
                    result.status = Status::Error;
                }
            }
            watch.check(target, bridge, &mut result, RECOVERY).await;
            baseline.apply(&mut result);
            each(results.last(), &result);
            results.push(result);
        }
    }
    results
}

/// How long a shared Editor may take to answer again after a case (a
/// saturated listener draining, a reload) before it counts as stopped.
pub const RECOVERY: Duration = Duration::from_secs(30);

/// A case not run: the Editor every case shares stopped answering after `after`.
fn not_run_after(case: &Case, after: &str) -> CaseResult {
    let finding = Finding::NotApplicable(format!(
        "not run: the Editor stopped answering after {after} and did not answer again within {RECOVERY:?}"
    ));
    case_result(case, Status::Skip, Some(finding), 0, Vec::new())
}

/// The result of a case whose task panicked: a harness error, the run goes on.
fn panicked(case: &Case, error: &tokio::task::JoinError) -> CaseResult {
    let finding = Finding::Harness(format!("the case panicked: {error}"));
    case_result(case, Status::Error, Some(finding), 0, Vec::new())
}

/// What the runner has seen of an Editor that every case shares (one it
/// reaches over TCP or a local socket), so that one stressful case is
/// judged alone: after each case the Editor has time to recover before the
/// next, and only one that does not is reported as stopped — once, on the
/// case after which it stopped; the cases after it are not run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum EditorWatch {
    /// No case has reached it yet.
    #[default]
    NotYetReached,
    /// A case reached it.
    Answered,
    /// It stopped answering after this case and did not recover.
    Fell { after: String },
}

impl EditorWatch {
    /// After `result`'s case, waits up to `patience` (with backoff) for the
    /// Editor to accept a connection and answer the handshake again, twice
    /// in a row:
    /// - if it does, the case keeps its result (a case that could not
    ///   connect stays an error: the cause is in its finding);
    /// - if it does not, the case fails, saying the Editor stopped
    ///   answering after it and why the last connection failed, and the
    ///   watch remembers it, so the cases after it are not run.
    ///
    /// An Editor never reached is not waited for (a wrong address is a
    /// harness error at once), nor one a case ends on purpose.
    pub async fn check(
        &mut self,
        target: &Target,
        bridge: &BridgeCommand,
        result: &mut CaseResult,
        patience: Duration,
    ) {
        if !target.is_shared_editor() || matches!(self, EditorWatch::Fell { .. }) {
            return;
        }
        let reached = matches!(result.status, Status::Pass | Status::Fail | Status::Warn | Status::Info);
        if *self == EditorWatch::NotYetReached {
            if !reached {
                return;
            }
            *self = EditorWatch::Answered;
        }
        if crate::cases::ends_the_editor(&result.id) || result.status == Status::Skip {
            return;
        }
        let started = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        // Recovered once it answers twice in a row: one connection slipping
        // through a listener still draining its backlog is not recovery.
        let mut answered = 0;
        loop {
            let left = patience.saturating_sub(started.elapsed());
            let attempt =
                tokio::time::timeout(left.max(Duration::from_millis(1)), still_listening(target, bridge)).await;
            let why = match attempt {
                Ok(Ok(())) if answered == 1 => return,
                Ok(Ok(())) => {
                    answered = 1;
                    continue;
                }
                Ok(Err(why)) => why,
                Err(_) => format!("no handshake within {patience:?}"),
            };
            answered = 0;
            if started.elapsed() + pause >= patience {
                result.status = Status::Fail;
                result.detail = format!(
                    "the Editor stopped answering after this case and did not answer again within {patience:?}: {why}{}",
                    if result.detail.is_empty() { String::new() } else { format!(" (the case: {})", result.detail) }
                );
                *self = EditorWatch::Fell { after: result.id.clone() };
                return;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(2));
        }
    }
}

/// Connects to the target's Editor (waiting through a reload), makes the
/// handshake, and leaves; why not, in words.
async fn still_listening(target: &Target, bridge: &BridgeCommand) -> Result<(), String> {
    let session = target.open(WireLog::default(), bridge).await.map_err(|f| f.detail().to_owned())?;
    session.link(editor_link::framing::Framing::Header).await.map(drop).map_err(|f| f.detail().to_owned())
}

/// Cases known to fail on a target (`--baseline FILE`: one case id per
/// line, `#` comments): their failures are expected, and one that passes
/// makes the baseline stale.
#[derive(Clone, Debug, Default)]
pub struct Baseline {
    ids: std::collections::BTreeSet<String>,
}

impl Baseline {
    /// Reads a baseline; every id must be a case of `cases`.
    pub fn parse(text: &str, cases: &[Case]) -> Result<Baseline, String> {
        let mut ids = std::collections::BTreeSet::new();
        for (n, line) in text.lines().enumerate() {
            let id = line.split('#').next().unwrap_or("").trim();
            if id.is_empty() {
                continue;
            }
            if !cases.iter().any(|c| c.id == id) {
                return Err(format!("line {}: {id:?} is not a case of the catalogue", n + 1));
            }
            ids.insert(id.to_owned());
        }
        Ok(Baseline { ids })
    }

    /// The baseline that expects what failed in `results`.
    pub fn of_failures(results: &[CaseResult]) -> String {
        let mut out = String::from("# unity-conformance baseline: cases expected to fail on this target\n");
        for r in results.iter().filter(|r| matches!(r.status, Status::Fail | Status::ExpectedFailure)) {
            out.push_str(&format!("{}  # {}\n", r.id, r.detail.lines().next().unwrap_or("")));
        }
        out
    }

    /// Marks expected failures and stale entries.
    pub fn apply(&self, result: &mut CaseResult) {
        if !self.ids.contains(&result.id) {
            return;
        }
        match result.status {
            Status::Fail | Status::Warn => result.status = Status::ExpectedFailure,
            Status::Pass => {
                result.status = Status::StaleBaseline;
                result.detail = "passes, but the baseline expects it to fail: remove it from the baseline".into();
            }
            _ => {}
        }
    }
}

/// Counts by status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
    pub warnings: usize,
    pub info: usize,
    pub skipped: usize,
    pub errors: usize,
    pub expected_failures: usize,
    pub stale_baseline: usize,
}

impl Summary {
    pub fn of(results: &[CaseResult]) -> Summary {
        let count = |s| results.iter().filter(|r| r.status == s).count();
        Summary {
            total: results.len(),
            passed: count(Status::Pass),
            failed: count(Status::Fail),
            warnings: count(Status::Warn),
            info: count(Status::Info),
            skipped: count(Status::Skip),
            errors: count(Status::Error),
            expected_failures: count(Status::ExpectedFailure),
            stale_baseline: count(Status::StaleBaseline),
        }
    }

    /// 0: every required case passed; 1: a conformance failure (even if
    /// later cases could not run: an Editor that falls over is the finding);
    /// 2: the harness failed and nothing failed conformance.
    pub fn exit_code(&self) -> i32 {
        if self.failed > 0 || self.stale_baseline > 0 {
            1
        } else if self.errors > 0 {
            2
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{ConnectCause, Unreachable};

    #[test]
    fn globs_and_prefixes() {
        assert!(glob_matches("2.*", "2.header-framing"));
        assert!(glob_matches("*framing", "2.newline-framing"));
        assert!(glob_matches("?.id-echo", "3.id-echo"));
        assert!(!glob_matches("3.*", "2.header-framing"));
        let cases = crate::cases::catalogue();
        let n = cases.len();
        assert_eq!(select(cases.clone(), &[], &[]).len(), n);
        let framing = select(cases.clone(), &["2.".into()], &[]);
        assert!(!framing.is_empty() && framing.iter().all(|c| c.id.starts_with("2.")));
        let without = select(cases, &["2.".into()], &["*too-large".into()]);
        assert_eq!(without.len(), framing.len() - 1);
    }

    fn result(id: &str, status: Status, finding: Option<Finding>) -> CaseResult {
        CaseResult {
            id: id.into(),
            profile: "core".into(),
            requirement: String::new(),
            reference: "§1",
            level: Level::Must,
            status,
            detail: finding.as_ref().map(|f| f.detail().to_owned()).unwrap_or_default(),
            duration_ms: 0,
            wire: Vec::new(),
            finding,
        }
    }

    #[tokio::test]
    async fn an_editor_that_does_not_recover_fails_the_case_after_which_it_stopped_once() {
        let target: Target = "tcp://127.0.0.1:1".parse().unwrap();
        let bridge = BridgeCommand::parse("unused").unwrap();
        let patience = Duration::from_millis(300);
        let refused = || {
            let error = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
            Some(Finding::Unreachable(Unreachable::connecting("cannot connect to 127.0.0.1:1", &error)))
        };
        // Never reached: the address is wrong, a harness error at once.
        let mut watch = EditorWatch::default();
        let mut first = result("2.a", Status::Error, refused());
        watch.check(&target, &bridge, &mut first, patience).await;
        assert_eq!((first.status, &watch), (Status::Error, &EditorWatch::NotYetReached));
        // Reached before, then gone for longer than the patience: this case fails, once.
        let mut watch = EditorWatch::Answered;
        let mut fell = result("2.b", Status::Error, refused());
        watch.check(&target, &bridge, &mut fell, patience).await;
        assert_eq!(fell.status, Status::Fail);
        assert!(fell.detail.starts_with("the Editor stopped answering after this case"), "{}", fell.detail);
        assert!(fell.detail.contains("refused"), "the cause is said: {}", fell.detail);
        assert_eq!(watch, EditorWatch::Fell { after: "2.b".into() });
        let case = &crate::cases::catalogue()[0];
        let next = not_run_after(case, "2.b");
        assert_eq!(next.status, Status::Skip);
        assert!(next.detail.contains("after 2.b"), "{}", next.detail);
        // A case that passed while nothing listens any more.
        let mut watch = EditorWatch::Answered;
        let mut passed = result("2.d", Status::Pass, None);
        watch.check(&target, &bridge, &mut passed, patience).await;
        assert_eq!(passed.status, Status::Fail, "{}", passed.detail);
    }

    #[test]
    fn connect_failures_are_told_apart_by_kind() {
        use std::io::{Error, ErrorKind};
        for (kind, cause) in [
            (ErrorKind::ConnectionRefused, ConnectCause::Refused),
            (ErrorKind::WouldBlock, ConnectCause::BacklogFull),
            (ErrorKind::PermissionDenied, ConnectCause::PermissionDenied),
            (ErrorKind::NotFound, ConnectCause::Gone),
            (ErrorKind::TimedOut, ConnectCause::TimedOut),
        ] {
            assert_eq!(ConnectCause::of(&Error::from(kind)), cause);
        }
        // By number, as the system reports them (Linux: EAGAIN on a full local socket's backlog).
        #[cfg(target_os = "linux")]
        assert_eq!(ConnectCause::of(&Error::from_raw_os_error(11)), ConnectCause::BacklogFull);
    }

    #[test]
    fn exit_codes() {
        let mut s = Summary { total: 3, passed: 3, ..Summary::default() };
        assert_eq!(s.exit_code(), 0);
        s.warnings = 1;
        assert_eq!(s.exit_code(), 0, "a broken SHOULD is a warning");
        s.errors = 1;
        assert_eq!(s.exit_code(), 2, "could not test");
        s.failed = 1;
        assert_eq!(s.exit_code(), 1, "a failure is the finding, whatever could not run after it");
    }
}
