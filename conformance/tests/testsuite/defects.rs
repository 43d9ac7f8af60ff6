//! Every check can be shown failing: `unity-conformance prove` runs each
//! deliberate defect (of the fake, and of the bridge for the `mcp` cases)
//! against the cases it claims to break. The whole matrix, and every fake
//! defect served over TCP, is `.ci/run`'s `unity-conformance prove
//! --over-tcp`; here a few defects show the command working and failing.

use assert_cmd::Command;

fn conformance() -> Command {
    Command::cargo_bin("unity-conformance").unwrap()
}

#[test]
fn prove_shows_each_chosen_defect_failing_its_cases() {
    let run = conformance()
        .args(["prove", "--defect", "no-ver", "--defect", "bridge:ids-as-strings", "--defect", "fragile-listener"])
        .assert()
        .code(0);
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).into_owned();
    for (defect, case) in [
        ("fake no-ver", "3.result-ver"),
        ("fake no-ver", "6.result-fields.ping"),
        ("bridge ids-as-strings", "mcp.id-echo"),
        ("fake fragile-listener", "2.vanish-mid-frame"),
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("SHOWN") && l.contains(defect) && l.contains(case) && l.contains("FAIL")),
            "{defect} {case}:\n{stdout}"
        );
    }
    assert!(!stdout.contains("MISSED"), "{stdout}");
    assert!(stdout.contains(", 0 not shown"), "{stdout}");
}

/// A name both sides have is both; an unknown one is a usage error.
#[test]
fn prove_names_defects_of_either_side() {
    let run = conformance().args(["prove", "--defect", "ids-as-floats", "--defect", "ids-as-strings"]).assert().code(0);
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).into_owned();
    assert!(stdout.contains("fake ids-as-strings") && stdout.contains("bridge ids-as-strings"), "{stdout}");
    let run = conformance().args(["prove", "--defect", "no-such-defect"]).assert().code(2);
    assert!(String::from_utf8_lossy(&run.get_output().stderr).contains("no defect is named no-such-defect"));
}
