//! The suite against uLoopMCP 3 (fake-unity's `uloop-3` model): embedded
//! (`--target fake:uloop-3`) and over a Unix socket (`--target unix:PATH`
//! in front of `fake-unity serve --editor uloop-3 --endpoint unix:PATH`),
//! each held to its committed baseline.

use assert_cmd::Command as Cmd;

use crate::cli::{not_passed, statuses};

const BASELINE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/baselines/uloop-3.txt");

/// What every run against uLoopMCP 3 must show: no unexpected failure, the
/// baseline neither stale nor short, v3's own cases passing, and what does
/// not apply saying what is missing.
fn check_v3_run(stdout: &str, report: &std::path::Path, listens_on: &str) {
    assert!(stdout.contains("catalogue: uLoopMCP 3's"), "{stdout}");
    assert!(stdout.contains(" 0 failed, 0 warnings, ") && stdout.contains(" 0 errors, "), "{}", not_passed(stdout));
    assert!(stdout.contains(" 0 stale baseline entries"), "{}", not_passed(stdout));
    let statuses = statuses(report);
    let status = |id: &str| statuses.get(id).unwrap_or_else(|| panic!("{id} not in the report")).clone();
    for id in ["6.uloop-3.project-identity", "6.uloop-3.tool-list", "6.uloop-3.get-version", "6.uloop-3.error-shape"] {
        assert_eq!(status(id).0, "pass", "{id}: {}", status(id).1);
    }
    let baseline = std::fs::read_to_string(BASELINE).unwrap();
    for id in baseline.lines().filter_map(|l| l.split('#').next()).map(str::trim).filter(|l| !l.is_empty()) {
        assert_eq!(status(id).0, "expected-failure", "{id}: {}", status(id).1);
    }
    let (loopback, why) = status("1.loopback-only");
    assert!(loopback == "skip" && why.contains(&format!("it has none: it listens on {listens_on}")), "{why}");
    // The wire cases probe it with its own harmless read (get-version):
    // none is skipped for calling ping, which v3 does not have, but those
    // about ping itself (its result, its schema).
    let for_ping: Vec<&String> = statuses
        .iter()
        .filter(|(id, (status, why))| status == "skip" && why.contains("calls ping") && !id.ends_with(".ping"))
        .map(|(id, _)| id)
        .collect();
    assert!(for_ping.is_empty(), "skipped for calling ping: {for_ping:?}");
    for id in ["2.split-frames", "2.length-in-bytes", "3.pipelining", "1.held-connections", "1.non-reading-client"] {
        assert_eq!(status(id).0, "pass", "{id}: {}", status(id).1);
    }
    let (discovery, why) = status("7.discovery-fields");
    assert!(discovery == "skip" && why.contains("uLoopMCP 3 has no discovery file"), "{why}");
    // The bridge in front of it, given its endpoint: a session, calls, a
    // reload under a call; cases of tools v3 lacks say which.
    for id in ["mcp.tools-list.editor-tools", "mcp.tools-call.result", "mcp.reload.in-flight", "mcp.cancellation"] {
        assert_eq!(status(id).0, "pass", "{id}: {}", status(id).1);
    }
    let (beside, why) = status("mcp.tools-call.beside-a-slow-call");
    assert!(beside == "skip" && why.contains("it calls debug-sleep, which this Editor does not list"), "{why}");
}

#[test]
fn the_suite_passes_against_the_embedded_uloop_3_model_less_its_baseline() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let run = Cmd::cargo_bin("unity-conformance")
        .unwrap()
        .args(["run", "--target", "fake:uloop-3", "--baseline", BASELINE, "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(run.status.code(), Some(0), "{}", not_passed(&stdout));
    // Each embedded Editor listens on a socket of a temporary folder (a pipe on Windows).
    check_v3_run(&stdout, &json, if cfg!(windows) { "pipe:" } else { "unix:/" });
}

#[cfg(unix)]
#[test]
fn the_suite_runs_over_a_unix_socket_against_a_served_uloop_3() {
    let sockets = tempfile::tempdir().unwrap();
    let socket = sockets.path().join("v3.sock").to_string_lossy().into_owned();
    let endpoint = format!("unix:{socket}");
    let fake = crate::cli::Served::start(&["--editor", "uloop-3", "--endpoint", &endpoint]);
    assert!(std::path::Path::new(&socket).exists(), "fake-unity serve --editor uloop-3 made no socket at {socket}");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let run = Cmd::cargo_bin("unity-conformance")
        .unwrap()
        .args(["run", "--target", &endpoint, "--control", &fake.control, "--project"])
        .arg(fake.project.path())
        .args(["--baseline", BASELINE, "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert_eq!(run.status.code(), Some(0), "{}", not_passed(&stdout));
    assert!(stdout.contains(&format!("against {endpoint}: ")), "{stdout}");
    check_v3_run(&stdout, &json, &endpoint);
}

/// In front of a served v3 model whose listener saturates as uLoopMCP 3's
/// does (a backlog of 100; `slowAccept` from the 40th of the 200 held
/// connections, as its thread pool falls behind): holding 200 connections
/// fails, a backlog-full connect told by its kind, and the cases after it
/// are judged once the Editor drains: they pass, with no error. (Before the
/// recovery wait, each case after it failed to connect: 35 errors in a
/// whole run.)
#[cfg(unix)]
#[test]
fn a_saturated_v3_listener_fails_one_case_and_the_suite_recovers() {
    let sockets = tempfile::tempdir().unwrap();
    let endpoint = format!("unix:{}", sockets.path().join("v3.sock").display());
    let fake = crate::cli::Served::start(&["--editor", "uloop-3", "--endpoint", &endpoint]);
    let control = fake_unity::ControlClient::from_url(&fake.control).unwrap();
    // The run asks what the Editor offers on two connections first.
    let rule = serde_json::json!({"name": "saturated", "fault": {"kind": "slowAccept", "ms": 6000}, "on": "connect",
                                  "match": {"nth": 42}, "forMs": 14000});
    tokio::runtime::Runtime::new().unwrap().block_on(control.post("/faults", rule)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let run = Cmd::cargo_bin("unity-conformance")
        .unwrap()
        .args(["run", "--target", &endpoint, "--project"])
        .arg(fake.project.path())
        .args(["--filter", "1.held-connections", "--filter", "2.reply-header-exact", "--filter", "2.length-in-bytes"])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let statuses = statuses(&json);
    let (held, why) = &statuses["1.held-connections"];
    assert_eq!(held, "fail", "{stdout}");
    assert!(why.contains("its listen backlog is full"), "{why}");
    for after in ["2.reply-header-exact", "2.length-in-bytes"] {
        assert_eq!(statuses[after].0, "pass", "{after} after the listener drained:\n{stdout}");
    }
    assert!(stdout.contains(" 0 errors"), "{stdout}");
}
