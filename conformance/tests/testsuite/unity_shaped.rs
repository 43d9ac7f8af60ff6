//! `run --target unity` before a Unity licence is at hand: the launch path
//! against `unity-package/Tests~/unity-shaped-editor`, an executable with
//! Unity's command line, exit codes and log, and the package's headless
//! host under mono inside. Ready, a licence failure, a compile error in the
//! project, a crash at start: each reported as such, with the log lines
//! that show it. Needs mono, as the package's own tests do.

use std::{path::PathBuf, process::Command, sync::OnceLock};

use assert_cmd::cargo::CommandCargoExt;

const MONO: &[&str] = &["mono", "mcs", "python3"];
const INSTALL: &str = "apt-get install mono-mcs libnewtonsoft-json-cil-dev libmono-cecil-cil-dev python3";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The headless host, built once for these tests.
fn host() -> &'static PathBuf {
    static BUILT: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &BUILT
        .get_or_init(|| {
            let out = tempfile::tempdir().unwrap();
            let built = Command::new(root().join("unity-package/Tests~/build"))
                .env("UNITY_PACKAGE_OUT", out.path())
                .output()
                .unwrap();
            assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
            let host = out.path().join("unity-mcp-host.exe");
            (out, host)
        })
        .1
}

/// `run --target unity` with the Unity-shaped executable, `env` set for it
/// (the situation it plays), over `args`; (exit code, stdout, stderr).
fn run_unity(env: &[(&str, &str)], args: &[&str]) -> (Option<i32>, String, String) {
    let mut command = Command::cargo_bin("unity-conformance").unwrap();
    command
        .args(["run", "--target", "unity", "--unity"])
        .arg(root().join("unity-package/Tests~/unity-shaped-editor"))
        .args(["--unity-timeout", "120"])
        .args(args)
        .env("UNITY_SHAPED_HOST", host());
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Ready: the suite runs against it, the reload cases the way an agent
/// reloads a real Unity (no control API): a script written and compiled.
#[test]
fn a_unity_that_starts_is_judged_reloads_included() {
    if !crate::have(MONO, INSTALL) {
        return;
    }
    let (code, stdout, stderr) = run_unity(
        &[],
        &[
            "--filter",
            "2.header-framing",
            "--filter",
            "5.reload-shutdown-notification",
            "--filter",
            "5.reload-new-session",
            "--filter",
            "5.quit",
        ],
    );
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("PASS  MUST    5.reload-new-session"), "{stdout}");
    assert!(stdout.contains("PASS  MUST    5.reload-shutdown-notification"), "{stdout}");
    assert!(stdout.contains("3 passed, 0 failed"), "{stdout}");
    // Unity has no control API: the quit stays with those that have one.
    assert!(stdout.contains("a quit of the Editor, which only a control API gives"), "{stdout}");
}

#[test]
fn a_unity_without_a_licence_is_reported_as_such() {
    if !crate::have(MONO, INSTALL) {
        return;
    }
    let (code, stdout, stderr) = run_unity(&[("UNITY_SHAPED_LICENCE", "none")], &["--filter", "2.header-framing"]);
    assert_eq!(code, Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains("Unity exited (exit status: 1) before it was ready"), "{stderr}");
    assert!(stderr.contains("Unity's licence is not usable"), "{stderr}");
    assert!(stderr.contains("No valid Unity Editor license found. Please activate your license."), "{stderr}");
    assert!(!stderr.contains("does not compile") && !stderr.contains("crashed"), "{stderr}");
}

#[test]
fn a_project_that_does_not_compile_is_reported_as_such() {
    if !crate::have(MONO, INSTALL) {
        return;
    }
    let project = tempfile::tempdir().unwrap();
    fake_unity::copy_dir(&unity_conformance::target::fixture_project(), project.path()).unwrap();
    std::fs::write(project.path().join("Assets/Broken.cs"), "class Broken {}\n#error broken on purpose\n").unwrap();
    let project = project.path().to_string_lossy().into_owned();
    let (code, stdout, stderr) = run_unity(&[], &["--project", &project, "--filter", "2.header-framing"]);
    assert_eq!(code, Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains(&format!("on a copy of {project}")), "{stderr}");
    assert!(stderr.contains("Unity exited (exit status: 1) before it was ready"), "{stderr}");
    assert!(stderr.contains("the project or the package does not compile"), "{stderr}");
    assert!(stderr.contains("Assets/Broken.cs(2,1): error CS1029: #error: 'broken on purpose'"), "{stderr}");
    assert!(stderr.contains("Scripts have compiler errors."), "{stderr}");
    assert!(!stderr.contains("licence is not usable"), "{stderr}");
}

#[test]
fn a_unity_that_crashes_at_start_is_reported_as_such() {
    if !crate::have(MONO, INSTALL) {
        return;
    }
    let (code, stdout, stderr) = run_unity(&[("UNITY_SHAPED_CRASH", "start")], &["--filter", "2.header-framing"]);
    assert_eq!(code, Some(2), "{stdout}\n{stderr}");
    assert!(stderr.contains("Unity exited (signal: 11"), "{stderr}");
    assert!(stderr.contains("Unity crashed as it started"), "{stderr}");
    assert!(stderr.contains("Received signal SIGSEGV"), "{stderr}");
    assert!(!stderr.contains("licence is not usable"), "{stderr}");
}
