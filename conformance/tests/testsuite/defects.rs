//! Every check can be shown failing: each deliberate defect of the fake (and,
//! for the `mcp` cases, of the bridge) makes the cases it names fail (or
//! warn, for a SHOULD), every case is named by at least one defect, and the
//! clean fake with the clean bridge passes every case.

use std::collections::BTreeSet;

use fake_unity::Defect;
use rstest::rstest;
use unity_conformance::{
    bridge::BridgeCommand,
    bridge_defect::BridgeDefect,
    case::{Case, Level, Status},
    cases::catalogue,
    runner::{glob_matches, run_case},
    target::Target,
};

use crate::embedded_bridge;

/// The cases each defect breaks (globs over case ids).
fn breaks(defect: Defect) -> &'static [&'static str] {
    match defect {
        Defect::WrongReplyFraming => &["2.header-framing", "2.reply-header-exact"],
        Defect::NoNewlineFraming => &["2.newline-*"],
        Defect::OneFramePerRead => {
            &["2.coalesced-frames", "2.newline-coalesced", "2.property.*-chunks-512", "2.property.*-chunks-1024"]
        }
        Defect::NoPartialFrames => &[
            "2.split-frames",
            "2.slow-client",
            "2.partial-frame-waits",
            "2.property.*-chunks-1",
            "2.property.*-chunks-10",
            "2.property.*-chunks-64",
        ],
        Defect::ParseErrorCloses => &["2.parse-error", "2.newline-parse-error"],
        Defect::OversizeCloses => &["2.frame-too-large"],
        Defect::FramingErrorKeepsOpen => &["2.bad-header.*"],
        Defect::StrictHeaders => &["2.header-name-case.*", "2.header-extra-*", "2.header-value-*"],
        Defect::LengthInCharacters => &["2.length-in-bytes"],
        Defect::IdsAsStrings => &["3.id-echo", "3.pipelining"],
        Defect::IdsAsFloats => &["3.id-echo"],
        Defect::AnswersNotifications => &["3.notification-unanswered", "3.notification-runs-nothing"],
        Defect::IgnoresBatches => &["3.batch-rejected", "3.batch-single"],
        Defect::UnknownToolWrongCode => &["3.unknown-tool", "3.error.method_not_found"],
        Defect::AcceptsWrongTypes => {
            &["3.invalid-params", "3.invalid-params.*", "3.unknown-enum.*", "3.error.invalid_params"]
        }
        Defect::StrictParams => &["3.params-case-insensitive", "3.params-absent-or-null"],
        Defect::RejectsExtraFields => &["3.extra-fields-ignored"],
        Defect::IgnoresExpectations => &["3.error.project_mismatch", "3.error.session_changed"],
        Defect::ErrorsWithoutData => &["3.error.*", "6.disabled-tool", "6.security-blocked"],
        Defect::NoVer => &["3.result-ver", "6.result-fields.*"],
        Defect::AllInterfaces => &["1.loopback-only"],
        Defect::ListsInternalTools => &["6.internal-tools-hidden"],
        Defect::IntegerEnumDefaults => &["6.enum-defaults"],
        Defect::SchemaTypesAsStrings => &["6.schema.*"],
        Defect::NoExtensions => &["6.protocol-version", "6.annotations"],
        Defect::IgnoresLogFilter => &["6.get-logs.*"],
        Defect::WrongTestCounts => &["6.run-tests.counts-*"],
        Defect::NoShutdownNotification => &["5.reload-shutdown-notification", "5.quit"],
        Defect::SameSessionAfterReload => &["5.reload-new-session"],
        Defect::NoListChangedAfterReload => &["5.reload-list-changed", "4.list-changed-params"],
        Defect::AnswersAfterShutdown => &["5.reload-in-flight-unanswered"],
        Defect::StaleDiscoveryPort => &["7.discovery-port"],
        Defect::DiscoveryDeadPid => &["7.discovery-pid"],
        Defect::DiscoveryWithoutSession => &["7.discovery-fields"],
        Defect::NoTimeoutParameter => &["6.timeout-parameter.*"],
        Defect::FragileListener => &["2.garbage-survived", "2.vanish-mid-frame"],
        Defect::ResumeReruns => &["5.resume-completed", "5.resume-interrupted"],
        Defect::SerializesClients => &["1.concurrent-clients"],
        Defect::LeaksConnections => &["1.connection-churn"],
        Defect::QuitLeavesReady => &["5.quit"],
        Defect::BlockingAccept => &["1.probe-connections"],
        Defect::DiscoveryInPlace => &["7.discovery-atomic"],
        Defect::DiscoveryStaysReady => &["7.discovery-reload-state"],
    }
}

/// The `mcp` cases each defect of the bridge breaks.
fn bridge_breaks(defect: BridgeDefect) -> &'static [&'static str] {
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
        D::HidesATool => &["mcp.tools-list.editor-tools", "mcp.snapshot.tools-list"],
        D::AcceptsAnyCursor => &["mcp.tools-list.invalid-cursor"],
        D::RequiresEveryParameter => &["mcp.tools-call.arguments-schema"],
        D::NoStructuredContent => &["mcp.tools-call.result", "mcp.tools-call.concurrent", "mcp.snapshot.inspect-scene"],
        D::NoIsError => &["mcp.tools-call.invalid-arguments", "mcp.tools-call.editor-failure", "mcp.snapshot.refusals"],
        D::UnknownToolAsResult => &["mcp.tools-call.unknown-tool"],
        D::ImagesAsText => &["mcp.tools-call.image"],
        D::NoListChanged => &["mcp.list-changed"],
        D::EarlyListChanged => &["mcp.list-changed-after-initialized"],
        D::NoProgress => &["mcp.progress"],
        D::ProgressUnasked => &["mcp.progress-only-when-asked"],
        D::AnswersCancelled => &["mcp.cancellation"],
        D::LosesAnswers => &["mcp.reload.in-flight", "mcp.tools-call.concurrent"],
        D::GivesUp => &[
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
    }
}

/// The cases whose id matches one of `globs`.
fn named(globs: &[&str], cases: &[Case]) -> Vec<Case> {
    cases.iter().filter(|c| globs.iter().any(|g| glob_matches(g, &c.id))).cloned().collect()
}

/// One broken run: a case against a target and a bridge, one of them broken
/// by `defect`.
struct BrokenRun {
    defect: String,
    target: Target,
    bridge: BridgeCommand,
    case: Case,
}

/// Runs each case (`at_once` at a time); each must fail, or warn for a
/// SHOULD, and say why.
async fn assert_each_fails(runs: Vec<BrokenRun>, at_once: usize) {
    use futures_util::StreamExt;
    let results: Vec<_> = futures_util::stream::iter(runs)
        .map(|run| async move {
            let result = run_case(&run.target, &run.bridge, &run.case).await;
            (run.defect, run.case.level, result)
        })
        .buffer_unordered(at_once)
        .collect()
        .await;
    for (defect, level, broken) in results {
        let expected = if level == Level::Should { Status::Warn } else { Status::Fail };
        assert_eq!(broken.status, expected, "{} with defect {defect}: {}", broken.id, broken.detail);
        assert!(!broken.detail.is_empty(), "{} with defect {defect} says why", broken.id);
    }
}

#[test]
fn every_case_is_broken_by_some_defect_and_every_defect_breaks_a_case() {
    let cases = catalogue();
    let mut covered = BTreeSet::new();
    for &defect in Defect::all() {
        let broken = named(breaks(defect), &cases);
        assert!(!broken.is_empty(), "defect {defect} names no case of the catalogue");
        covered.extend(broken.into_iter().map(|c| c.id.to_string()));
    }
    for defect in BridgeDefect::all() {
        let broken = named(bridge_breaks(defect), &cases);
        assert!(!broken.is_empty(), "bridge defect {defect} names no case of the catalogue");
        covered.extend(broken.into_iter().map(|c| c.id.to_string()));
    }
    let uncovered: Vec<&str> = cases.iter().map(|c| c.id.as_ref()).filter(|id| !covered.contains(*id)).collect();
    assert!(uncovered.is_empty(), "cases no defect can show failing: {uncovered:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_defect_fails_the_cases_it_breaks() {
    let cases = catalogue();
    let runs = Defect::all()
        .iter()
        .flat_map(|&defect| {
            named(breaks(defect), &cases).into_iter().map(move |case| BrokenRun {
                defect: defect.to_string(),
                target: Target::Fake { defect: Some(defect) },
                bridge: embedded_bridge(),
                case,
            })
        })
        .collect();
    assert_each_fails(runs, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_bridge_defect_fails_the_cases_it_breaks() {
    let cases = catalogue();
    let runs = BridgeDefect::all()
        .into_iter()
        .flat_map(|defect| {
            named(bridge_breaks(defect), &cases).into_iter().map(move |case| BrokenRun {
                defect: format!("{defect} (bridge)"),
                target: Target::Fake { defect: None },
                bridge: BridgeCommand::embedded(env!("CARGO_BIN_EXE_unity-conformance"), Some(defect)),
                case,
            })
        })
        .collect();
    // Four at a time: many of these wait out a silence.
    assert_each_fails(runs, 4).await;
}

/// The whole catalogue against the clean fake, a group at a time.
#[rstest]
#[case::framing("2.")]
#[case::transport("1.")]
#[case::json_rpc("3.")]
#[case::notifications("4.")]
#[case::lifecycle("5.")]
#[case::tools("6.")]
#[case::discovery("7.")]
#[case::mcp("mcp.")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clean_fake_passes_every_case(#[case] group: &str) {
    let cases: Vec<Case> = catalogue().into_iter().filter(|c| c.id.starts_with(group)).collect();
    assert!(!cases.is_empty(), "no case in group {group}");
    for case in cases {
        let result = run_case(&Target::Fake { defect: None }, &embedded_bridge(), &case).await;
        assert_eq!(result.status, Status::Pass, "{}: {}\n{}", case.id, result.detail, result.wire.join("\n"));
    }
}
