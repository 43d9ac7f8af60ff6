//! `unity-conformance bench`: it measures our bridge and another bridge
//! command beside it, and writes every figure. Nothing here judges a figure
//! (the machines are shared and noisy); only that each was measured.

use assert_cmd::Command as Cmd;
use serde_json::Value;
use unity_conformance::bench::report::missing_keys;

#[test]
fn bench_measures_our_bridge_beside_another_command_and_writes_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    // The other bridge: ours again, embedded, found through UNITY_TCP_PORT
    // as any other bridge command is.
    let other = format!("{} bridge -- --dev", env!("CARGO_BIN_EXE_unity-conformance"));
    let run = Cmd::cargo_bin("unity-conformance")
        .unwrap()
        .args(["bench", "--quick", "--no-suite", "--sizes", "1", "--bridge-cmd", &other, "--json"])
        .arg(&json)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).into_owned();
    for row in [
        "overhead (the difference, per pair)",
        "throughput, 64 in flight",
        "1 MiB result, saved-to-file",
        "reload: listening to first real answer",
        "RSS after 1000 calls",
        "requests served per second",
    ] {
        assert!(stdout.contains(row), "no {row:?} row in:\n{stdout}");
    }
    assert!(stdout.contains(&format!("compared: {other}")) && stdout.contains("÷ ours"), "{stdout}");
    assert!(!stdout.contains("failed"), "{stdout}");

    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    // Without the 64 MiB result and the suite, exactly those two are absent.
    assert_eq!(missing_keys(&report), ["rss_kb.peak_64mib", "suite_wall_s"], "{report:#}");
    assert_eq!(report["tool"], "ping");
    let compared = &report["compared"][0];
    assert_eq!(compared["bridge"], other.as_str());
    for key in
        ["overhead_us.p50", "throughput_cps.c8", "reload_recovery_ms.p50", "rss_kb.idle", "startup_ms.initialize"]
    {
        assert!(compared["ratios_to_ours"][key].as_f64().is_some_and(|r| r > 0.0), "ratio {key}: {compared:#}");
    }
    let ours = &report["details"]["bridges"][0];
    assert_eq!(ours["ours"], true);
    assert_eq!(ours["overhead"]["difference_us"]["n"], 300, "{ours:#}");
}

#[test]
fn a_bridge_command_that_does_not_start_is_named() {
    let run = Cmd::cargo_bin("unity-conformance")
        .unwrap()
        .args(["bench", "--quick", "--no-suite", "--sizes", "1", "--bridge-cmd", "exit 3"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    // It exits before or after reading `initialize`: either is named.
    assert!(
        stderr.contains("exit 3: ") && (stderr.contains("closed stdout") || stderr.contains("stopped reading stdin")),
        "{stderr}"
    );
}

/// A bridge that answers every call with a success it made up, never asking
/// Unity (as uLoopMCP's TypeScript server answers a call cut off by a
/// reload): none of its answers counts, in any figure, and the report says
/// how many were not real.
#[test]
fn answers_the_editor_did_not_give_count_for_nothing() {
    if !unity_conformance_have_python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("bench.json");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/fake_success_bridge.py");
    let fake = format!("python3 {}", script.display());
    let run = Cmd::cargo_bin("unity-conformance")
        .unwrap()
        .args(["bench", "--quick", "--no-suite", "--sizes", "1", "--reloads", "1"])
        .args(["--bridge-cmd", &fake, "--json"])
        .arg(&json)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&run.get_output().stdout).into_owned();
    assert!(stdout.contains("counted as success: a tools/call of ping counts only if"), "{stdout}");
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let (ours, theirs) = (&report["details"]["bridges"][0], &report["details"]["bridges"][1]);
    assert_eq!(ours["answers"]["not_run"], 0, "{ours:#}");
    assert!(ours["answers"]["real"].as_u64() > Some(0), "{ours:#}");
    // Every answer of the made-up bridge shaped like a success, none real.
    assert_eq!(theirs["answers"]["real"], 0, "{theirs:#}");
    assert!(theirs["answers"]["not_run"].as_u64() >= Some(300), "{theirs:#}");
    assert_eq!(theirs["throughput_cps"][0][1]["p50"], 0.0, "no real calls, no throughput: {theirs:#}");
    let overhead = theirs["overhead"]["error"].as_str().unwrap_or_default();
    assert!(overhead.contains("were real answers"), "{theirs:#}");
    let recovery = theirs["reload_recovery_ms"]["error"].as_str().unwrap_or_default();
    assert!(recovery.contains("no real answer") && recovery.contains("not_run"), "{theirs:#}");
}

fn unity_conformance_have_python() -> bool {
    crate::have(&["python3"], "apt-get install python3")
}
