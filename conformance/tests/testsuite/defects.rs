//! Every check can be shown failing: each deliberate defect of the fake makes
//! its case fail (or warn, for a SHOULD), and every case has such a defect.

use std::collections::BTreeSet;

use fake_unity::Defect;
use unity_conformance::{
    case::{Level, Status},
    cases::catalogue,
    runner::run_case,
    target::Target,
};

/// The case each defect breaks.
fn case_broken_by(defect: Defect) -> &'static str {
    match defect {
        Defect::WrongReplyFraming => "2.header-framing",
        Defect::NoNewlineFraming => "2.newline-framing",
        Defect::OneFramePerRead => "2.coalesced-frames",
        Defect::NoPartialFrames => "2.split-frames",
        Defect::ParseErrorCloses => "2.parse-error",
        Defect::OversizeCloses => "2.frame-too-large",
        Defect::FramingErrorKeepsOpen => "2.bad-header-block",
        Defect::IdsAsStrings => "3.id-echo",
        Defect::AnswersNotifications => "3.notification-unanswered",
        Defect::IgnoresBatches => "3.batch-rejected",
        Defect::UnknownToolWrongCode => "3.unknown-tool",
        Defect::AcceptsWrongTypes => "3.invalid-params",
        Defect::NoVer => "3.result-ver",
        Defect::ListsInternalTools => "6.internal-tools-hidden",
        Defect::IntegerEnumDefaults => "6.enum-defaults",
        Defect::NoShutdownNotification => "5.reload-shutdown-notification",
        Defect::SameSessionAfterReload => "5.reload-new-session",
        Defect::NoListChangedAfterReload => "5.reload-list-changed",
        Defect::StaleDiscoveryPort => "7.discovery-port",
    }
}

#[test]
fn every_case_has_a_defect_that_breaks_it() {
    let broken: BTreeSet<&str> = Defect::ALL.iter().map(|d| case_broken_by(*d)).collect();
    let ids: BTreeSet<&str> = catalogue().iter().map(|c| c.id).collect();
    assert_eq!(broken, ids, "cases without a defect cannot be shown failing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_defect_fails_its_case_and_the_clean_fake_passes_it() {
    let cases = catalogue();
    for defect in Defect::ALL {
        let id = case_broken_by(defect);
        let case = cases.iter().find(|c| c.id == id).unwrap();
        let clean = run_case(&Target::Fake { defect: None }, case).await;
        assert_eq!(clean.status, Status::Pass, "{id} against the clean fake: {}", clean.detail);
        let broken = run_case(&Target::Fake { defect: Some(defect) }, case).await;
        let expected = if case.level == Level::Should { Status::Warn } else { Status::Fail };
        assert_eq!(broken.status, expected, "{id} with defect {defect}: {}", broken.detail);
        assert!(!broken.detail.is_empty(), "{id} with defect {defect} says why");
    }
}
