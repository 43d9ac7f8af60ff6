//! The Unity package's C# (`unity-package/`): its core compiles under
//! Debian's mono with warnings as errors, and its NUnit tests pass — among
//! them the framing vectors the Rust decoder is tested with. Needs mono
//! (`apt-get install mono-mcs libnewtonsoft-json-cil-dev nunit-console
//! libnunit-cil-dev`); without it this test fails and says so.

use std::process::Command;

#[test]
fn the_package_compiles_under_mono_and_its_tests_pass() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../unity-package/Tests~/run");
    let out = tempfile::tempdir().unwrap();
    let run = Command::new(&script).env("UNITY_PACKAGE_OUT", out.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{}:\n{stdout}\n{stderr}", script.display());
    let summary = stdout.lines().find(|l| l.contains(" passed, ")).unwrap_or_default();
    assert!(summary.contains(" 0 failed"), "{stdout}");
    let passed: usize =
        summary.rsplit(": ").next().and_then(|s| s.split(' ').next()).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(passed >= 30, "{summary}");
}
