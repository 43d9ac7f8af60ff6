//! The hostile-snippet corpus (`fixtures/hostile-snippets.json`) against the
//! package's C# server, headless under mono, at Restricted and at
//! FullAccess (a host each, side by side): every snippet does what its
//! level must do with it — refused, bounded, or run — and the Editor's main
//! thread answers after each. Snippets that call Unity are compiled against
//! Unity 6000.5.2f1's API (unity-versions' data, rendered as stubs) and not
//! run. Needs mono (`apt-get install mono-mcs libnewtonsoft-json-cil-dev
//! nunit-console libnunit-cil-dev libmono-cecil-cil-dev`).
//!
//! `UNITY_MCP_SNIPPETS_PACKAGE=DIR` runs the corpus against another
//! checkout's package (to compare before and after a change): the counts
//! are printed and nothing is asserted.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use unity_conformance::{
    bridge::BridgeCommand,
    launch::{Launched, start_mono_with},
    snippets::{Corpus, Observed, Outcome, Run, counts, level_name, run_one, set_level},
    target::Target,
    wire_log::WireLog,
};

const MONO: &[&str] = &["mono", "mcs", "python3"];
const INSTALL: &str =
    "apt-get install mono-mcs libnewtonsoft-json-cil-dev nunit-console libnunit-cil-dev libmono-cecil-cil-dev python3";

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Unity 6000.5.2f1's API as an assembly snippets compile against.
fn unity_stubs(dir: &Path) -> PathBuf {
    let api =
        unity_api::matrix::load(&repository().join("unity-package/Tests~/unity-api/versions/6000.5.2f1.json")).unwrap();
    let (built, diagnostics, dll) = unity_api::stubs::render(&api).compile(dir).unwrap();
    assert!(built, "the 6000.5.2f1 stubs do not compile: {diagnostics:?}");
    dll
}

fn start(package: &Path, out: &Path, stubs: &Path) -> Launched {
    let extra: Vec<OsString> = vec!["--snippet-reference".into(), stubs.as_os_str().to_owned()];
    start_mono_with(package, out, &extra).unwrap()
}

/// Every snippet with an expectation at this level, in corpus order; the
/// host restarted when one crashed it.
async fn run_level(full_access: bool, corpus: Corpus, package: PathBuf, out: PathBuf, stubs: PathBuf) -> Vec<Run> {
    let bridge = BridgeCommand::embedded(env!("CARGO_BIN_EXE_unity-conformance"), None);
    let mut host = start(&package, &out, &stubs);
    let mut session = Target::Tcp(host.remote.clone()).open(WireLog::default(), &bridge).await.unwrap();
    set_level(&session, full_access).await.unwrap();
    let mut runs = Vec::new();
    for snippet in &corpus.snippets {
        let expected = if full_access { snippet.full_access } else { snippet.restricted };
        let Some(expected) = expected else { continue };
        let run = run_one(&session, snippet, expected).await;
        let crashed = matches!(run.observed, Observed::Crashed(_) | Observed::Froze(_));
        runs.push(run);
        if crashed {
            drop(session);
            drop(host);
            host = start(&package, &out, &stubs);
            session = Target::Tcp(host.remote.clone()).open(WireLog::default(), &bridge).await.unwrap();
            set_level(&session, full_access).await.unwrap();
        }
    }
    drop(host);
    runs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_hostile_snippet_is_refused_bounded_or_run_as_its_level_says() {
    if !crate::have(MONO, INSTALL) {
        return;
    }
    let corpus = Corpus::load().unwrap();
    let other = std::env::var_os("UNITY_MCP_SNIPPETS_PACKAGE").map(PathBuf::from);
    let package = other.clone().unwrap_or_else(|| repository().join("unity-package"));
    let work = tempfile::tempdir().unwrap();
    let stubs = unity_stubs(work.path());
    let (restricted, full) = tokio::join!(
        tokio::spawn(run_level(false, corpus.clone(), package.clone(), work.path().join("restricted"), stubs.clone())),
        tokio::spawn(run_level(true, corpus.clone(), package.clone(), work.path().join("full"), stubs.clone())),
    );
    let (restricted, full) = (restricted.unwrap(), full.unwrap());
    let mut wrong = Vec::new();
    let mut summary = String::new();
    for (full_access, runs) in [(false, &restricted), (true, &full)] {
        let line = format!("hostile snippets at {}: {}", level_name(full_access), counts(runs));
        eprintln!("{line}");
        summary += &line;
        summary.push('\n');
        for run in runs.iter().filter(|r| r.observed != Observed::As(r.expected)) {
            let answer: String = run.answer.chars().take(400).collect();
            wrong.push(format!(
                "{} at {}: expected {:?}, got {:?} ({:.1} s): {answer}",
                run.name,
                level_name(full_access),
                run.expected,
                run.observed,
                run.seconds
            ));
        }
    }
    if other.is_some() {
        eprintln!("{}", wrong.join("\n"));
        return;
    }
    assert!(corpus.snippets.len() >= 60, "the corpus has {} snippets", corpus.snippets.len());
    for kind in [Outcome::Refused, Outcome::Bounded, Outcome::Runs] {
        assert!(restricted.iter().any(|r| r.expected == kind), "no snippet expects {kind:?} at Restricted");
    }
    crate::report_to_ci("4-hostile-snippets", &summary);
    assert!(
        wrong.is_empty(),
        "{} of {} snippet runs did not do what their level says:\n{}",
        wrong.len(),
        restricted.len() + full.len(),
        wrong.join("\n")
    );
}
