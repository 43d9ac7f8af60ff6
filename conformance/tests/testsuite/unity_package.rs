//! The Unity package's C# (`unity-package/`): its core compiles under
//! Debian's mono with warnings as errors, and its NUnit tests pass — among
//! them the framing vectors the Rust decoder is tested with. Needs mono
//! (`apt-get install mono-mcs libnewtonsoft-json-cil-dev nunit-console
//! libnunit-cil-dev libmono-cecil-cil-dev`); without it these tests say they are skipped.

use std::process::Command;

use unity_conformance::{case::Needs, cases::catalogue};

const MONO: &[&str] = &["mono", "mcs", "nunit-console", "python3"];
const INSTALL: &str =
    "apt-get install mono-mcs libnewtonsoft-json-cil-dev nunit-console libnunit-cil-dev libmono-cecil-cil-dev python3";

#[test]
fn the_package_compiles_under_mono_and_its_tests_pass() {
    if !crate::have(MONO, INSTALL) {
        return;
    }
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../unity-package/Tests~/run");
    let out = tempfile::tempdir().unwrap();
    let run = Command::new(&script).env("UNITY_PACKAGE_OUT", out.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{}:\n{stdout}\n{stderr}", script.display());
    let summary = stdout.lines().find(|l| l.contains(" passed, ")).unwrap_or_default();
    assert!(summary.contains(" 0 failed"), "{stdout}");
    crate::report_to_ci("2-package-tests", &format!("the package's C# tests under mono: {summary}\n"));
    let passed: usize =
        summary.rsplit(": ").next().and_then(|s| s.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(passed >= 30, "{summary}");
}

/// `unity-conformance run --target mono`: the suite against our real C#
/// server code (the package's core, headless under mono, on a model of the
/// fixture project). Every case passes except those only the embedded fake
/// can run (its fault scenarios), which are skipped with that reason.
#[test]
fn the_suite_passes_against_the_package_headless_under_mono() {
    if !crate::have(MONO, INSTALL) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("mono.json");
    let run = Command::new(env!("CARGO_BIN_EXE_unity-conformance"))
        .args(["run", "--target", "mono", "--json"])
        .arg(&report)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "exit {}:\n{stdout}\n{stderr}", run.status);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert!(json["target"].as_str().unwrap_or_default().starts_with("mono"), "{}", json["target"]);
    let cases = json["cases"].as_array().unwrap();
    let mut passed = 0;
    for case in cases {
        let id = case["id"].as_str().unwrap();
        match case["status"].as_str().unwrap() {
            "pass" => passed += 1,
            "skip" => {
                // Only scenarios of Editor faults, which `fake-unity proxy`
                // cannot carry out in front of another Editor, and the cases
                // of uLoopMCP's catalogues (the package's is its own).
                let case_of = catalogue().into_iter().find(|c| c.id == id).unwrap();
                let detail = case["detail"].as_str().unwrap();
                if case_of.requires.catalogue.is_some_and(|c| *c != editor_link::dialect::PACKAGE) {
                    assert!(detail.contains("this Editor's catalogue is the package's"), "{id}: {detail}");
                    continue;
                }
                assert!(case_of.needs == Needs::Faults, "{id} skipped: {detail}");
                let only_simulated = ["wire faults only", "embedded fake", "simulated Editor", "control API cannot"];
                assert!(only_simulated.iter().any(|why| detail.contains(why)), "{id}: {detail}");
            }
            other => panic!("{id}: {other}: {}", case["detail"]),
        }
    }
    assert!(passed >= 200, "only {passed} of {} cases passed:\n{stdout}", cases.len());
    let last = stdout.lines().last().unwrap_or_default();
    crate::report_to_ci("3-suite-against-mono", &format!("{last}\n"));
}

/// `unity-conformance differential`: every fault scenario the headless
/// host can play looks the same to the client in front of the fake and in
/// front of the host; the fake broken on purpose (progress that goes back,
/// as it went before the two were compared) makes `long-compile` differ,
/// and the run fails showing both sides.
#[test]
fn the_fake_and_the_headless_host_agree_scenario_by_scenario() {
    if !crate::have(MONO, INSTALL) {
        return;
    }
    let run = Command::new(env!("CARGO_BIN_EXE_unity-conformance")).arg("differential").output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "exit {}:\n{stdout}\n{stderr}", run.status);
    for scenario in unity_conformance::cases::mcp::scenarios::SCENARIOS {
        assert!(
            stdout.lines().any(|l| l.split_whitespace().any(|w| w.trim_end_matches(':') == *scenario)),
            "{scenario} is not in the table:\n{stdout}"
        );
    }
    let same = stdout.lines().filter(|l| l.trim_start().starts_with("SAME ")).count();
    assert!(same >= 8, "only {same} scenarios compared the same:\n{stdout}");
    assert!(!stdout.contains("DIFFERENT"), "{stdout}");
    crate::report_to_ci("4-differential", &format!("{}\n", stdout.lines().last().unwrap_or_default()));

    let broken = Command::new(env!("CARGO_BIN_EXE_unity-conformance"))
        .args(["differential", "--defect", "progress-goes-back", "--filter", "long-compile"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&broken.stdout);
    assert_eq!(broken.status.code(), Some(1), "{said}\n{}", String::from_utf8_lossy(&broken.stderr));
    assert!(said.contains("DIFFERENT  long-compile"), "{said}");
    assert!(said.contains("fake 1. compile") && said.contains("host 1. compile"), "{said}");
}

/// A reload of the headless host is an AppDomain unload, as Unity's on
/// mono: after 40 of them, 40 domains were unloaded, the package left no
/// socket behind, came back on its port with its token, and the resume
/// journal (SessionState, outside the domains) still answers a call made
/// before them with its first answer rather than running it again.
#[test]
fn reloads_unload_the_domain_and_leave_nothing_behind() {
    if !crate::have(MONO, INSTALL) || !cfg!(target_os = "linux") {
        return;
    }
    let launched = unity_conformance::launch::start_mono().unwrap();
    let fds = format!("/proc/{}/fd", launched.pid());
    let sockets = || {
        std::fs::read_dir(&fds)
            .unwrap()
            .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
            .filter(|target| target.to_string_lossy().starts_with("socket:"))
            .count()
    };
    let project = launched.remote.project.clone().expect("the host's project");
    let discovery = || -> (u16, String) {
        let text = std::fs::read_to_string(project.join("Library/MCPInstance.json")).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        (json["port"].as_u64().unwrap() as u16, json["token"].as_str().unwrap().to_owned())
    };
    let control =
        fake_unity::ControlClient::from_url(launched.remote.control.as_deref().expect("the host's control API"))
            .unwrap();
    let (port, token) = discovery();
    // A call whose answer differs at each run: the journal's is the first.
    let snippet = serde_json::json!({"jsonrpc": "2.0", "id": "before-the-reloads", "method": "execute-dynamic-code",
        "params": {"Code": "return System.Guid.NewGuid().ToString();"}, "x-token": token});
    let first = link_call(port, &snippet);
    assert!(first["result"]["Success"].as_bool().unwrap_or(false), "{first}");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let before = sockets();
    let state = runtime.block_on(async {
        for _ in 0..40 {
            control.reload(50, false).await.unwrap();
        }
        control.get("/state").await.unwrap()
    });
    assert_eq!(state["domain"]["unloaded"], 40, "{state}");
    assert_eq!(state["domain"]["name"], "Unity scripts 41", "{state}");
    // The control API's last connection may still be closing on the host's
    // side as its answer is read here: a few seconds to settle, no more.
    let mut after = sockets();
    for _ in 0..50 {
        if after <= before {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        after = sockets();
    }
    assert!(after <= before, "40 reloads: {before} sockets open before, {after} after");
    assert_eq!(discovery(), (port, token.clone()), "the same port and token after 40 reloads");
    let mut resumed = snippet.clone();
    resumed["x-resume"] = true.into();
    assert_eq!(link_call(port, &resumed)["result"], first["result"], "the journal's answer, not a second run");
    let mut fresh = snippet;
    fresh["id"] = "after-the-reloads".into();
    assert_ne!(link_call(port, &fresh)["result"]["Result"], first["result"]["Result"], "a new id runs again");
}

/// One request over the editor link (header framing, the default, so that
/// a notification sent before the request's first byte — the tools'
/// `list_changed` soon after a reload — is in the same framing); its answer.
fn link_call(port: u16, request: &serde_json::Value) -> serde_json::Value {
    use std::io::{BufRead, Read, Write};
    let stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(60))).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let body = request.to_string();
    writer.write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).unwrap();
    let mut reader = std::io::BufReader::new(stream);
    loop {
        let mut length = None;
        loop {
            let mut line = String::new();
            assert!(reader.read_line(&mut line).unwrap() > 0, "the Editor closed the connection");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length:") {
                length = Some(value.trim().parse::<usize>().unwrap());
            }
        }
        let mut body = vec![0u8; length.expect("a Content-Length header")];
        reader.read_exact(&mut body).unwrap();
        let message: serde_json::Value = serde_json::from_slice(&body).unwrap();
        if message.get("id") == request.get("id") {
            return message;
        }
    }
}

/// One raw HTTP/1.1 request; the answer's status and body.
fn http(addr: &str, request: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, answer.split("\r\n\r\n").nth(1).unwrap_or("").to_owned())
}

/// The headless host's control API, like fake-unity's, answers loopback
/// callers only: a web page's text/plain POST (any Origin but a loopback
/// page) or a rebound name in Host is refused and changes nothing.
#[test]
fn the_hosts_control_api_refuses_callers_that_are_not_loopback_ones() {
    if !crate::have(MONO, INSTALL) {
        return;
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = tempfile::tempdir().unwrap();
    let built =
        Command::new(root.join("unity-package/Tests~/build")).env("UNITY_PACKAGE_OUT", out.path()).output().unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let project = unity_conformance::target::fixture_copy().unwrap();
    let mut host = Command::new("mono")
        .arg(out.path().join("unity-mcp-host.exe"))
        .arg("--project")
        .arg(project.path())
        .arg("--state")
        .arg(root.join("fixtures/editor-states/default.json"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(host.stdout.take().unwrap()), &mut line).unwrap();
    let ready: serde_json::Value = serde_json::from_str(&line).unwrap();
    let control = ready["control"].as_str().unwrap().trim_start_matches("http://").to_owned();
    let switch = r#"{"dynamicCodeSecurityLevel":"FullAccess"}"#;
    let post = |host: &str, origin: &str| {
        format!(
            "POST /settings HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{switch}",
            switch.len()
        )
    };
    let refused = [
        post(&control, "Origin: https://evil.example\r\n"),
        post(&control, "Origin: null\r\n"),
        post("rebound.example", "Origin: http://rebound.example\r\n"),
        // Two Host headers, a loopback one first: malformed (400).
        post(&control, &format!("Host: {control}\r\n")),
    ];
    let statuses: Vec<u16> = refused.iter().map(|r| http(&control, r).0).collect();
    let (state, settings) =
        http(&control, &format!("GET /state HTTP/1.1\r\nHost: {control}\r\nConnection: close\r\n\r\n"));
    let (allowed, _) = http(&control, &post(&control, ""));
    let _ = host.kill();
    let _ = host.wait();
    // HttpListener itself refuses a Host that matches none of its prefixes (400).
    assert!(statuses.iter().all(|s| *s == 403 || *s == 400), "{statuses:?}");
    assert_eq!(&statuses[..2], [403, 403]);
    assert_eq!(statuses[3], 400, "two Host headers");
    assert_eq!((state, allowed), (200, 200));
    assert!(settings.contains("dynamicCodeSecurityLevel") && !settings.contains("FullAccess"), "{settings}");
}
