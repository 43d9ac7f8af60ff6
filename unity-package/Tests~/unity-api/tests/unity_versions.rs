//! `unity-versions` as a user runs it: the package against every committed
//! Unity version (this fails when the package stops compiling on one), and a
//! new version generated from a reference checkout, its breaks found.
//!
//! Needs mono (`apt-get install mono-mcs libnewtonsoft-json-cil-dev
//! nunit-console libnunit-cil-dev libmono-cecil-cil-dev`) and git; without
//! them these tests say they are skipped (`.ci/run` installs them and sets
//! `UNITY_MCP_TESTS_REQUIRE_TOOLS`, so there they fail instead).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use unity_api::api::Api;
use unity_api::stubs;

const TOOLS: &[&str] = &["mono", "mcs", "git"];
const INSTALL: &str =
    "apt-get install mono-mcs libnewtonsoft-json-cil-dev nunit-console libnunit-cil-dev libmono-cecil-cil-dev git";

/// The versions the package claims, as issue #32 lists them: the newest
/// patch of each supported line, and the newest beta and alpha.
const VERSIONS: &[&str] = &[
    "2021.3.58f1",
    "2022.3.76f1",
    "6000.0.78f1",
    "6000.3.19f1",
    "6000.4.12f1",
    "6000.5.2f1",
    "6000.6.0b1",
    "6000.7.0a1",
];

fn have_tools() -> bool {
    use std::io::Write;
    let on_path = |program: &str| {
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
    };
    let missing: Vec<&str> = TOOLS.iter().copied().filter(|p| !on_path(p)).collect();
    if missing.is_empty() {
        return true;
    }
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let why = format!("{test}: needs {} ({INSTALL})", missing.join(", "));
    assert!(std::env::var_os("UNITY_MCP_TESTS_REQUIRE_TOOLS").is_none(), "{why}");
    let _ = writeln!(std::io::stderr(), "SKIPPED {why}");
    false
}

fn versions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("versions")
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_unity-api")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_committed_version_is_one_the_package_claims_and_records_its_sources() {
    let mut found: Vec<String> = std::fs::read_dir(versions_dir())
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str().and_then(|n| n.strip_suffix(".json")).map(str::to_owned))
        .collect();
    found.sort();
    let mut expected: Vec<String> = VERSIONS.iter().map(|v| (*v).to_owned()).collect();
    expected.sort();
    assert_eq!(found, expected);
    for version in VERSIONS {
        let api: Api =
            serde_json::from_str(&std::fs::read_to_string(versions_dir().join(format!("{version}.json"))).unwrap())
                .unwrap_or_else(|e| panic!("{version}: {e}"));
        assert_eq!(api.unity, *version);
        let reference = &api.sources[0];
        assert_eq!(
            (reference.repository.as_str(), reference.tag.as_str()),
            ("Unity-Technologies/UnityCsReference", *version)
        );
        assert_eq!(reference.commit.len(), 40, "{version}: the commit the tag named");
        let framework = api.sources.iter().find_map(|s| s.package.clone()).unwrap_or_default();
        assert!(framework.starts_with("com.unity.test-framework@"), "{version}: {framework}");
        // Facts only: every member is a declaration, never a body.
        for member in api.types.iter().flat_map(|t| &t.parts).flat_map(|p| &p.members) {
            let decl = &member.decl;
            assert!(!decl.contains("throw ") && !decl.contains("return ") && !decl.contains("=>"), "{version}: {decl}");
        }
        // Written as the generator writes it (a hand edit shows).
        let text = std::fs::read_to_string(versions_dir().join(format!("{version}.json"))).unwrap();
        assert_eq!(api.to_json().unwrap(), text, "{version}.json is not as unity-versions writes it");
    }
}

/// The README's first step of validating a Unity version: the package
/// compiled against every committed version, with the matrix printed. A
/// version where it does not compile fails this test.
#[test]
fn the_package_compiles_against_every_committed_unity_version() {
    if !have_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("matrix.json");
    let html = dir.path().join("matrix.html");
    let (code, stdout, stderr) = run(&["--json", json.to_str().unwrap(), "--html", html.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("not Unity's compiler"), "{stdout}");
    let matrix: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // The page holds the same matrix (.ci/html-report opens one in a browser).
    let page = report_page::data_of(&std::fs::read_to_string(&html).unwrap()).expect("the page holds its data");
    assert_eq!(page["kind"], "versions");
    assert_eq!(page["versions"], Value::Array(matrix.clone()));
    let versions: Vec<&str> = matrix.iter().map(|v| v["version"].as_str().unwrap()).collect();
    assert_eq!(versions, VERSIONS);
    for row in &matrix {
        assert_eq!(row["errors"], 0, "{row}");
        assert!(row["obsolete_warnings"].is_u64() && row["reflection_missing"].is_array(), "{row}");
        assert_eq!(row["reflection_targets"], unity_api::reflection::TARGETS.len(), "{row}");
    }
    // `.ci/run` prints the matrix after `cargo test`, which captures it.
    if let Some(dir) = std::env::var_os("UNITY_MCP_CI_SUMMARIES") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(Path::new(&dir).join("1-unity-versions"), &stdout).unwrap();
    }
}

/// A reference checkout made from a committed version's API (as C# source)
/// with one change a new Unity could make: a member the package calls
/// becomes an error to use, and an internal member it reflects on is gone.
/// `validate` generates the version from it and names both, with file and
/// line, in its table and its JSON, and exits 1.
#[test]
fn validate_generates_a_version_from_a_reference_checkout_and_names_what_breaks() {
    if !have_tools() {
        return;
    }
    let api: Api =
        serde_json::from_str(&std::fs::read_to_string(versions_dir().join("6000.5.2f1.json")).unwrap()).unwrap();
    let mut source = stubs::render(&api).text;
    // Unity 6000.9 (say) makes EditorApplication.isPlaying an error to use.
    let playing = "public static bool isPlaying {";
    assert!(source.contains(playing), "the 6000.5 API declares EditorApplication.isPlaying");
    source = source.replacen(playing, &format!("[global::System.Obsolete(\"gone\", true)] {playing}"), 1);
    // The internal console members the package reads by reflection, but
    // for one (LogEntry.callstackTextStartUTF16, which the package can do
    // without) and one it cannot (LogEntries.GetEntryInternal).
    let internals = "namespace UnityEditor {\n\
        internal sealed class LogEntries {\n\
          public static extern int StartGettingEntries();\n\
          public static extern void EndGettingEntries();\n\
          public static extern void Clear();\n\
          public static extern int consoleFlags { get; set; }\n\
          internal static string GetFilteringText() { return null; }\n\
          internal static void SetFilteringText(string filteringText) { }\n\
        }\n\
        internal sealed class LogEntry { public string message; public int mode; }\n\
        public sealed partial class EditorApplication {\n\
          internal static extern void SignalTick();\n\
          internal static event CallbackFunction tick;\n\
        }\n\
      }\n";
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    std::fs::create_dir_all(root.join("Editor/Mono")).unwrap();
    std::fs::write(root.join("Editor/Mono/Api.cs"), source).unwrap();
    std::fs::write(root.join("Editor/Mono/LogEntries.bindings.cs"), internals).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "Unity 6000.9.0a1 C# reference source code"]);
    git(&["tag", "6000.9.0a1"]);
    let json = repo.path().join("matrix.json");
    let (code, stdout, stderr) = run(&[
        "validate",
        "--reference",
        root.to_str().unwrap(),
        "--tag",
        "6000.9.0a1",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "validate exits 1 when the package does not compile:\n{stdout}\n{stderr}");
    assert!(stdout.contains("CS0619") && stdout.contains("isPlaying"), "{stdout}");
    assert!(stdout.contains("Editor/Unity/"), "the error names the package's file:\n{stdout}");
    let matrix: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let row = &matrix[0];
    assert_eq!(row["version"], "6000.9.0a1");
    assert!(row["errors"].as_u64().unwrap() >= 1, "{row}");
    let error = row["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "CS0619").unwrap();
    assert!(
        error["file"].as_str().unwrap().starts_with("Editor/Unity/") && error["line"].as_u64().unwrap() > 0,
        "{error}"
    );
    assert_eq!(error["platforms"].as_array().unwrap().len(), 3, "{error}");
    let missing: Vec<&str> =
        row["reflection_missing"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert_eq!(
        missing,
        ["UnityEditor.LogEntries.GetEntryInternal", "UnityEditor.LogEntry.callstackTextStartUTF16"],
        "{row}"
    );
    assert!(stdout.contains("callstackTextStartUTF16 is missing; the package's fallback:"), "{stdout}");
    // Nothing was committed.
    assert!(!versions_dir().join("6000.9.0a1.json").exists());
}
