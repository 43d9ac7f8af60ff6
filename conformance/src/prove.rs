//! `unity-conformance prove`: every check can be shown failing.
//!
//! A conformance check that cannot fail proves nothing. Each deliberate
//! defect of the fake ([`fake_unity::Defect`]) and of the bridge
//! ([`BridgeDefect`]) claims the cases it breaks (globs over case ids, in
//! [`fake_claims`] and [`bridge_claims`]); proving runs each claimed case
//! against the broken side and requires it to fail (or warn, for a SHOULD)
//! and say why. Every case of the catalogue must be claimed by some defect
//! and every defect must claim a case ([`Coverage`]). With `--over-tcp`,
//! each fake defect is also served by a `fake-unity serve` process of its
//! own and the whole suite (but the `mcp` cases, which test the bridge) run
//! against it over TCP must fail.
//!
//! The clean side passing every case is the suite's main job
//! (`unity-conformance run`), not repeated here.

use std::{
    collections::BTreeSet,
    io::{BufRead, BufReader},
    path::Path,
    process::{Child, Command, Stdio},
};

use editor_link::{dialect::PACKAGE, endpoint::Endpoint};
use fake_unity::{Defect, EditorKind};
use futures_util::StreamExt;

use crate::{
    bridge::BridgeCommand,
    bridge_defect::BridgeDefect,
    case::{Case, Level, Status},
    profile::{Offers, Scope},
    runner::{self, Baseline, CaseResult, glob_matches},
    target::{Remote, RemoteKind, Target},
};

/// The cases each defect of the fake breaks (globs over case ids).
pub fn fake_claims(defect: Defect) -> &'static [&'static str] {
    use Defect as D;
    match defect {
        D::WrongReplyFraming => &["2.header-framing", "2.reply-header-exact"],
        D::NoNewlineFraming => &["2.newline-*"],
        D::OneFramePerRead => {
            &["2.coalesced-frames", "2.newline-coalesced", "2.property.*-chunks-512", "2.property.*-chunks-1024"]
        }
        D::NoPartialFrames => &[
            "2.split-frames",
            "2.slow-client",
            "2.partial-frame-waits",
            "2.property.*-chunks-1",
            "2.property.*-chunks-10",
            "2.property.*-chunks-64",
        ],
        D::ParseErrorCloses => &["2.parse-error", "2.newline-parse-error"],
        D::OversizeCloses => &["2.frame-too-large"],
        D::FramingErrorKeepsOpen => &["2.bad-header.*"],
        D::StrictHeaders => &["2.header-name-case.*", "2.header-extra-*", "2.header-value-*"],
        D::LengthInCharacters => &["2.length-in-bytes"],
        D::IdsAsStrings => &["3.id-echo", "3.pipelining"],
        D::IdsAsFloats => &["3.id-echo"],
        D::AnswersNotifications => &["3.notification-unanswered", "3.notification-runs-nothing"],
        D::IgnoresBatches => &["3.batch-rejected", "3.batch-single"],
        D::UnknownToolWrongCode => &["3.unknown-tool", "3.error.method_not_found"],
        D::AcceptsWrongTypes => {
            &["3.invalid-params", "3.invalid-params.*", "3.unknown-enum.*", "3.error.invalid_params"]
        }
        D::StrictParams => &["3.params-case-insensitive", "3.params-absent-or-null"],
        D::RejectsExtraFields => &["3.extra-fields-ignored"],
        D::IgnoresExpectations => {
            &["3.error.project_mismatch", "3.error.session_changed", "6.uloop-3.project-identity"]
        }
        D::ErrorsWithoutData => &["3.error.*", "6.disabled-tool", "6.security-blocked", "6.uloop-3.error-shape"],
        D::NoVer => &["3.result-ver", "6.result-fields.*", "6.uloop-2.1.1.answer-fields.*", "6.uloop-3.get-version"],
        D::AllInterfaces => &["1.loopback-only"],
        D::ListsInternalTools => &["6.internal-tools-hidden", "6.uloop-2.1.1.tool-list"],
        D::IntegerEnumDefaults => &["6.enum-default-names"],
        D::EnumDefaultsOutsideEnum => &[
            "6.enum-defaults",
            "6.enum-default-names",
            "6.uloop-2.1.1.schema.control-play-mode",
            "6.uloop-2.1.1.schema.run-tests",
        ],
        D::SchemaTypesAsStrings => &["6.schema.*", "6.uloop-2.1.1.schema.get-logs", "6.uloop-2.1.1.schema.compile"],
        D::RewordedDescriptions => {
            &["6.uloop-2.1.1.schema.*", "mcp.snapshot.tools-list", "mcp.snapshot.uloop-2.1.1.tools-list"]
        }
        D::NoExtensions => &["6.protocol-version", "6.annotations"],
        D::IgnoresLogFilter => &["6.get-logs.*"],
        D::WrongTestCounts => &["6.run-tests.counts-*"],
        D::LosesPlayModeAnswer => &["6.run-tests.counts-playmode", "mcp.run-tests.playmode-across-reload"],
        D::IgnoresEnterPlayModeSettings => {
            &["mcp.run-tests.playmode-reload-off", "5.play-mode-keeps-domain-when-settings-say"]
        }
        D::ProgressGoesBack => &["4.progress-grows"],
        D::CompileMissesNewErrors => &["mcp.compile.broken-assembly-fixed", "6.compile.new-errors"],
        D::NoShutdownNotification => &["5.reload-shutdown-notification", "5.quit"],
        D::SameSessionAfterReload => &["5.reload-new-session"],
        D::NoListChangedAfterReload => &["5.reload-list-changed", "4.list-changed-params"],
        D::AnswersAfterShutdown => &["5.reload-in-flight-unanswered"],
        D::StaleDiscoveryPort => &["7.discovery-port"],
        D::DiscoveryDeadPid => &["7.discovery-pid"],
        D::DiscoveryWithoutSession => &["7.discovery-fields"],
        D::NoTimeoutParameter => &["6.timeout-parameter.*"],
        D::FragileListener => &["2.garbage-survived", "2.vanish-mid-frame", "1.reset-connections"],
        D::ResumeReruns => &["5.resume-completed", "5.resume-interrupted"],
        D::SerializesClients => &["1.concurrent-clients"],
        D::LeaksConnections => &["1.connection-churn", "1.held-connections"],
        D::QueuesWithoutBound => &["1.non-reading-client"],
        D::QuitLeavesReady => &["5.quit"],
        D::BlockingAccept => &["1.probe-connections"],
        D::DiscoveryInPlace => &["7.discovery-atomic"],
        D::DiscoveryStaysReady => &["7.discovery-reload-state"],
        D::IgnoresToken => &["1.token-required"],
        D::DiscoveryWorldReadable => &["7.discovery-token-private"],
        D::EntityIdsAsNumbers => &["6.object-identity"],
        D::ListsInternalCommands => &["6.uloop-3.tool-list"],
    }
}

/// The `mcp` cases each defect of the bridge breaks.
pub fn bridge_claims(defect: BridgeDefect) -> &'static [&'static str] {
    use BridgeDefect as D;
    match defect {
        D::Banner => &["mcp.stdout-only-mcp", "mcp.ping", "mcp.snapshot.tools-list"],
        D::PinsVersion => &["mcp.initialize.version-echo"],
        D::RejectsUnknownVersion => &["mcp.initialize.unknown-version"],
        D::NoListChangedCapability => &["mcp.initialize.capabilities"],
        D::DiesOnEarlyNotification => &["mcp.initialize.notifications-before"],
        D::IdsAsStrings => &["mcp.id-echo"],
        D::DiesOnBadJson => &["mcp.parse-error"],
        D::IgnoresBatches => &["mcp.batch-rejected"],
        D::IgnoresPing => &["mcp.ping", "mcp.ping-during-call"],
        D::IgnoresDiscover => &["mcp.initialize.server-discover"],
        D::InvalidSchema => &["mcp.tools-list.schemas"],
        D::HidesATool => {
            &["mcp.tools-list.editor-tools", "mcp.snapshot.tools-list", "mcp.snapshot.uloop-2.1.1.tools-list"]
        }
        D::AcceptsAnyCursor => &["mcp.tools-list.invalid-cursor"],
        D::RequiresEveryParameter => &["mcp.tools-call.arguments-schema"],
        D::NoStructuredContent => &["mcp.tools-call.result", "mcp.tools-call.concurrent", "mcp.snapshot.inspect-scene"],
        D::NoIsError => &[
            "mcp.tools-call.invalid-arguments",
            "mcp.tools-call.editor-failure",
            "mcp.snapshot.refusals",
            "mcp.snapshot.uloop-2.1.1.refusals",
            "mcp.snapshot.uloop-2.1.1.edit-compile-fix",
        ],
        D::UnknownToolAsResult => &["mcp.tools-call.unknown-tool", "mcp.snapshot.uloop-2.1.1.search-assets"],
        D::ImagesAsText => &["mcp.tools-call.image"],
        D::NoListChanged => &["mcp.list-changed", "mcp.stateless.subscription"],
        D::EarlyListChanged => &["mcp.list-changed-after-initialized"],
        D::NoProgress => &["mcp.progress"],
        D::ProgressUnasked => &["mcp.progress-only-when-asked"],
        D::AnswersCancelled => &["mcp.cancellation"],
        D::LosesAnswers => &["mcp.reload.in-flight", "mcp.tools-call.concurrent"],
        D::GivesUp => &[
            "mcp.which-editor.starting",
            "mcp.reload.*",
            "mcp.scenario.*",
            "mcp.snapshot.edit-compile-fix",
            "mcp.snapshot.reload-moves-port",
            "mcp.snapshot.run-tests-read-failures",
        ],
        D::TakesTheEditor => &["mcp.probe-start"],
        D::IgnoresEof => &["mcp.stdin-eof-exits"],
        D::AltersResults => &["mcp.snapshot.*"],
        D::ResendsWhatMayHaveRun => &["mcp.scenario.crash-and-restart"],
        D::SaysDidNotRun => &["mcp.scenario.crash-and-restart", "mcp.scenario.hang"],
        D::MissesDeadlines => &["mcp.scenario.dead-listener", "mcp.scenario.hang", "mcp.scenario.deadlocked-test-run"],
        D::RunsDuplicateIds => &["mcp.duplicate-id"],
        D::AnswersUndeclaredMethods => &["mcp.unknown-method"],
        D::FailsOnHugeTimeout => &["mcp.tools-call.timeout-range"],
        D::RequiresHandshake => &[
            "mcp.stateless.call",
            "mcp.stateless.unsupported-version",
            "mcp.stateless.removed-method",
            "mcp.stateless.missing-meta",
        ],
        D::NullRequested => &["mcp.stateless.unsupported-version"],
        D::AnswersRemovedMethods => &["mcp.stateless.removed-method"],
        D::NoResultType => &[
            "mcp.stateless.call",
            "mcp.initialize.server-discover",
            "mcp.snapshot.stateless-session",
            "mcp.snapshot.stateless-edit-compile-fix",
        ],
        D::NoSubscriptions => &["mcp.stateless.subscription"],
        D::TellsCancelledSubscriptions => &["mcp.stateless.subscription"],
        D::OneCallAtATime => &["mcp.tools-call.beside-a-slow-call"],
        D::IgnoresCancellation => &["mcp.cancellation", "mcp.cancellation.frees-the-editor"],
        D::NoReloadWait => &["mcp.uloop-2.1.1.wait-for-domain-reload"],
        D::HidesWhatBlocks => &["mcp.blocked-main-thread-named"],
        D::WrongOutputSchema => &["mcp.tools-call.output-schema", "mcp.snapshot.uloop-2.1.1.tools-list"],
        D::GuessesTheEditor => &["mcp.which-editor.outside-several"],
        D::IgnoresOpenEditors => &["mcp.which-editor.outside-one", "mcp.which-editor.outside-several"],
        D::WaitsForAbsentEditor => &[
            "mcp.which-editor.outside-none",
            "mcp.which-editor.not-running",
            "mcp.which-editor.refused",
            "mcp.which-editor.outside-several",
        ],
    }
}

/// A deliberate defect: of the fake Editor or of the bridge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    Fake(Defect),
    Bridge(BridgeDefect),
}

impl Broken {
    /// Every defect, the fake's first.
    pub fn all() -> Vec<Broken> {
        Defect::all()
            .iter()
            .map(|&d| Broken::Fake(d))
            .chain(BridgeDefect::all().into_iter().map(Broken::Bridge))
            .collect()
    }

    /// The globs of the cases it breaks.
    pub fn claims(self) -> &'static [&'static str] {
        match self {
            Broken::Fake(d) => fake_claims(d),
            Broken::Bridge(d) => bridge_claims(d),
        }
    }

    /// The cases of `cases` it breaks.
    pub fn claimed(self, cases: &[Case]) -> Vec<Case> {
        cases.iter().filter(|c| self.claims().iter().any(|g| glob_matches(g, &c.id))).cloned().collect()
    }

    /// The Editor its cases are shown failing against, when not the one
    /// of each case's catalogue (the package's for the rest).
    /// `IgnoresCancellation` costs a bridge nothing against an Editor that
    /// answers side by side on one connection; against one that answers in
    /// order (uLoopMCP 2.1.1), each call it keeps holds a connection.
    pub fn shown_against(self) -> Option<EditorKind> {
        match self {
            Broken::Bridge(BridgeDefect::IgnoresCancellation) => Some(EditorKind::Uloop211),
            // Its tools declare output schemas (the package's model does not yet).
            Broken::Bridge(BridgeDefect::WrongOutputSchema) => Some(EditorKind::Uloop211),
            _ => None,
        }
    }

    /// The defect's name as `run --defect` or `run --bridge-defect` takes it.
    pub fn name(self) -> String {
        match self {
            Broken::Fake(d) => d.to_string(),
            Broken::Bridge(d) => d.to_string(),
        }
    }
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Broken::Fake(d) => write!(f, "fake {d}"),
            Broken::Bridge(d) => write!(f, "bridge {d}"),
        }
    }
}

/// What the claims leave out.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Cases no defect claims: nothing shows them failing.
    pub unclaimed: Vec<String>,
    /// Defects that claim no case of the catalogue (a glob gone stale).
    pub idle: Vec<String>,
}

impl Coverage {
    pub fn of(cases: &[Case]) -> Coverage {
        let mut claimed = BTreeSet::new();
        let mut idle = Vec::new();
        for defect in Broken::all() {
            let broken = defect.claimed(cases);
            if broken.is_empty() {
                idle.push(defect.to_string());
            }
            claimed.extend(broken.into_iter().map(|c| c.id.to_string()));
        }
        let unclaimed = cases.iter().map(|c| c.id.to_string()).filter(|id| !claimed.contains(id)).collect();
        Coverage { unclaimed, idle }
    }

    pub fn is_complete(&self) -> bool {
        self.unclaimed.is_empty() && self.idle.is_empty()
    }
}

/// One claimed case run against its defect.
#[derive(Debug)]
pub struct Proof {
    pub defect: Broken,
    pub result: CaseResult,
    /// It failed (warned, for a SHOULD) and said why.
    pub holds: bool,
}

/// Whether `result` of a case at `level` shows its defect: a MUST fails, a
/// SHOULD warns, an INFO reports, and each says why. A pass, a skip or a
/// harness error proves nothing.
pub fn shows_defect(level: Level, result: &CaseResult) -> bool {
    let expected = match level {
        Level::Must => Status::Fail,
        Level::Should => Status::Warn,
        Level::Info => Status::Info,
    };
    result.status == expected && !result.detail.is_empty()
}

/// Runs every case `defects` claim against the broken side, `at_once` at a
/// time; `program` is this program (its embedded bridge, broken or not).
pub async fn prove(
    defects: &[Broken],
    cases: &[Case],
    program: &Path,
    at_once: usize,
    mut each: impl FnMut(&Proof),
) -> Vec<Proof> {
    let runs: Vec<(Broken, Case)> =
        defects.iter().flat_map(|&d| d.claimed(cases).into_iter().map(move |case| (d, case))).collect();
    let mut proofs = Vec::new();
    let mut results = futures_util::stream::iter(runs)
        .map(|(defect, case)| async move {
            // A case of a catalogue is shown failing by the Editor whose
            // catalogue it is; any other, by the package's (unless the
            // defect shows against another).
            let editor = defect
                .shown_against()
                .unwrap_or_else(|| case.requires.catalogue.map_or(EditorKind::Package, EditorKind::of));
            let (target, bridge) = match defect {
                Broken::Fake(d) => (Target::Fake { editor, defect: Some(d) }, BridgeCommand::embedded(program, None)),
                Broken::Bridge(d) => (Target::Fake { editor, defect: None }, BridgeCommand::embedded(program, Some(d))),
            };
            let result = runner::run_case(&target, &bridge, &Scope::full(), &case).await;
            Proof { defect, holds: shows_defect(case.level, &result), result }
        })
        .buffer_unordered(at_once.max(1));
    while let Some(proof) = results.next().await {
        each(&proof);
        proofs.push(proof);
    }
    proofs
}

/// A fake Editor with one defect, served by its own process
/// (`PROGRAM fake serve --editor E`), as a user would start one. Killed on drop.
#[derive(Debug)]
pub struct ServedFake {
    child: Child,
    pub remote: Remote,
    _project: tempfile::TempDir,
    /// The folder of uLoopMCP 3's socket (not the shared `/tmp/uloop`).
    _socket_dir: Option<tempfile::TempDir>,
}

impl ServedFake {
    pub fn start(program: &Path, editor: EditorKind, defect: Defect) -> Result<ServedFake, String> {
        let project = crate::target::fixture_copy()?;
        // uLoopMCP 3 listens on a socket (a pipe on Windows) named after its
        // project unless told where: a folder of its own.
        let socket_dir = match editor.dialect().on_project_socket() {
            true => Some(tempfile::tempdir().map_err(|e| format!("a folder for the socket: {e}"))?),
            false => None,
        };
        let endpoint_args: Vec<String> = match &socket_dir {
            Some(_) if cfg!(windows) => {
                vec!["--endpoint".into(), format!("pipe:uloop-conformance-{}-{defect}", std::process::id())]
            }
            Some(dir) => vec!["--endpoint".into(), format!("unix:{}", dir.path().join("uloop-3.sock").display())],
            None => Vec::new(),
        };
        let mut child = Command::new(program)
            .args(["fake", "serve", "--port", "0", "--editor", &editor.to_string()])
            .args(["--defect", &defect.to_string()])
            .args(&endpoint_args)
            .arg("--project")
            .arg(project.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{} fake serve: {e}", program.display()))?;
        let mut line = String::new();
        let read = child.stdout.take().map(|out| BufReader::new(out).read_line(&mut line));
        let listening: serde_json::Value = match read {
            Some(Ok(n)) if n > 0 => {
                serde_json::from_str(&line).map_err(|e| format!("its listening line {line:?}: {e}"))?
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("fake serve --defect {defect} printed no listening line"));
            }
        };
        // Its endpoint (`tcp://127.0.0.1:PORT`, `unix:PATH`), else its port.
        let port = listening["port"].as_u64().and_then(|p| u16::try_from(p).ok()).filter(|p| *p != 0);
        let endpoint = listening["endpoint"]
            .as_str()
            .and_then(|e| e.parse::<Endpoint>().ok())
            .or_else(|| port.map(|port| Endpoint::Tcp(std::net::SocketAddr::from(([127, 0, 0, 1], port)))));
        let Some(endpoint) = endpoint else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("its listening line has no endpoint or port: {line}"));
        };
        let remote = Remote {
            kind: RemoteKind::Tcp,
            endpoint,
            control: listening["control"].as_str().map(str::to_owned),
            project: Some(project.path().to_path_buf()),
            token: None,
        };
        Ok(ServedFake { child, remote, _project: project, _socket_dir: socket_dir })
    }
}

impl Drop for ServedFake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Editor a defect is served as over TCP: the one whose catalogue the
/// cases it claims (but the `mcp` ones) check, if they all check another
/// catalogue than the package's; the package otherwise.
pub fn editor_over_tcp(defect: Defect, cases: &[Case]) -> EditorKind {
    let claimed: Vec<Case> =
        Broken::Fake(defect).claimed(cases).into_iter().filter(|c| !c.id.starts_with("mcp.")).collect();
    match claimed.first().and_then(|c| c.requires.catalogue) {
        Some(catalogue) if claimed.iter().all(|c| c.requires.catalogue == Some(catalogue)) => EditorKind::of(catalogue),
        _ => EditorKind::Package,
    }
}

/// The committed baseline of a fake Editor: what the model breaks on
/// purpose, because the Editor it models does.
fn baseline_of(editor: EditorKind, cases: &[Case]) -> Result<Baseline, String> {
    match editor {
        EditorKind::Package => Ok(Baseline::default()),
        EditorKind::Uloop211 => Baseline::parse(include_str!("../../fixtures/baselines/uloop-2.1.1.txt"), cases),
        EditorKind::Uloop3 => Baseline::parse(include_str!("../../fixtures/baselines/uloop-3.txt"), cases),
    }
}

/// The cases `defect` claims (but the `mcp` ones: they start a bridge of
/// their own) run against it served by a process of its own over TCP, as
/// [`editor_over_tcp`] says: the cases that did not pass (it proves the
/// defect when one failed), and how many ran. The claimed cases are the ones
/// that show it; the rest of the suite passing against it says nothing about
/// the defect, and running it for each of fifty defects cost CI minutes. A
/// defect whose claims are all `mcp` cases is held to the whole suite. The
/// package's Editor is held to every case but those of other catalogues
/// (which fail against it whatever the defect); another Editor, as a user
/// would run the suite against it: to what it offers, less its committed
/// baseline.
pub async fn suite_over_tcp(
    program: &Path,
    defect: Defect,
    cases: &[Case],
) -> Result<(Vec<CaseResult>, usize), String> {
    let editor = editor_over_tcp(defect, cases);
    let served = ServedFake::start(program, editor, defect)?;
    let target = Target::Tcp(served.remote.clone());
    let bridge = BridgeCommand::embedded(program, None);
    let baseline = baseline_of(editor, cases)?;
    let scope = match editor {
        EditorKind::Package => Scope::full(),
        _ => Scope { offers: Offers::find_out(&target, &bridge).await.ok(), ..Scope::default() },
    };
    let of_other_catalogue =
        |c: &&Case| editor == EditorKind::Package && c.requires.catalogue.is_some_and(|k| *k != PACKAGE);
    let over_tcp = |cases: Vec<Case>| -> Vec<Case> {
        cases.into_iter().filter(|c| !c.id.starts_with("mcp.")).filter(|c| !of_other_catalogue(&c)).collect()
    };
    let claimed = over_tcp(Broken::Fake(defect).claimed(cases));
    let cases = if claimed.is_empty() { over_tcp(cases.to_vec()) } else { claimed };
    let results = runner::run_all(&target, &bridge, &scope, &cases, 1, &baseline, |_, _| {}).await;
    drop(served);
    let ran = results.len();
    let not_passed = results
        .into_iter()
        .filter(|r| !matches!(r.status, Status::Pass | Status::Skip | Status::ExpectedFailure))
        .collect();
    Ok((not_passed, ran))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::catalogue;

    #[test]
    fn every_case_is_claimed_by_a_defect_and_every_defect_claims_a_case() {
        let coverage = Coverage::of(&catalogue());
        assert!(coverage.is_complete(), "{coverage:?}");
    }

    #[test]
    fn a_case_left_out_of_every_claim_is_named() {
        let mut cases = catalogue();
        let extra = Case { id: "9.nobody-breaks-this".into(), ..cases[0].clone() };
        cases.push(extra);
        assert_eq!(Coverage::of(&cases).unclaimed, ["9.nobody-breaks-this"]);
        // A catalogue without §1 leaves the defects that claim only §1 idle.
        let without: Vec<Case> = catalogue().into_iter().filter(|c| !c.id.starts_with("1.")).collect();
        let idle = Coverage::of(&without).idle;
        assert!(idle.contains(&"fake all-interfaces".to_owned()), "{idle:?}");
    }

    #[test]
    fn only_the_expected_status_with_a_reason_shows_a_defect() {
        let result = |status, detail: &str| CaseResult {
            id: "x".into(),
            profile: "core".into(),
            requirement: String::new(),
            reference: "",
            level: Level::Must,
            status,
            detail: detail.into(),
            duration_ms: 0,
            wire: Vec::new(),
            finding: None,
        };
        assert!(shows_defect(Level::Must, &result(Status::Fail, "why")));
        assert!(!shows_defect(Level::Must, &result(Status::Fail, "")));
        assert!(!shows_defect(Level::Must, &result(Status::Pass, "")));
        assert!(!shows_defect(Level::Must, &result(Status::Skip, "not applicable")));
        assert!(!shows_defect(Level::Must, &result(Status::Error, "harness")));
        assert!(!shows_defect(Level::Should, &result(Status::Fail, "why")));
        assert!(shows_defect(Level::Should, &result(Status::Warn, "why")));
    }
}
