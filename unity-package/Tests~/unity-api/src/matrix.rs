//! The package compiled against each version's API: errors, obsolete
//! warnings and reflection targets, per version, as a table and as JSON.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::Package;
use crate::api::Api;
use crate::defines::{EditorPlatform, UnityVersion};
use crate::generate::compile_package;
use crate::mcs::{Diagnostic, Severity, Toolchain};
use crate::reflection::{TARGETS, present};
use crate::stubs;

/// One version's row of the matrix.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VersionResult {
    pub version: String,
    /// The compiler that ran (mono's mcs, not Unity's).
    pub compiler: String,
    pub test_framework: String,
    pub sources: Vec<crate::source::Origin>,
    pub errors: usize,
    pub obsolete_warnings: usize,
    pub reflection_missing: Vec<String>,
    pub reflection_present: usize,
    pub reflection_targets: usize,
    /// Every error and obsolete warning, with the platforms it appeared on.
    pub diagnostics: Vec<Finding>,
    pub reflection: Vec<ReflectionResult>,
    /// Members the stubs leave out (mono cannot declare them).
    pub left_out: usize,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    pub severity: Severity,
    pub code: String,
    /// Relative to the package's folder.
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub platforms: Vec<&'static str>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ReflectionResult {
    pub target: String,
    pub present: bool,
    /// What the package does without it (where it is missing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<&'static str>,
}

/// The committed versions, oldest first.
pub fn committed(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files: Vec<(UnityVersion, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let Some(stem) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".json")) else {
            continue;
        };
        if let Ok(version) = stem.parse::<UnityVersion>() {
            files.push((version, path));
        }
    }
    files.sort();
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

pub fn load(path: &Path) -> anyhow::Result<Api> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a Unity API file", path.display()))
}

/// Compiles the package against one version's API.
pub fn check(api: &Api, package: &Package, toolchain: &Toolchain) -> anyhow::Result<VersionResult> {
    let version: UnityVersion = api.unity.parse().map_err(anyhow::Error::msg)?;
    let work = tempfile::tempdir()?;
    let (built, stub_diagnostics, stubs_dll) = stubs::render(api).compile(work.path())?;
    anyhow::ensure!(
        built,
        "the stubs of {} do not compile (regenerate them with unity-versions add): {:?}",
        api.unity,
        stub_diagnostics.iter().filter(|d| d.severity == Severity::Error).take(5).collect::<Vec<_>>()
    );
    // One finding per place and message, with every platform it appeared on.
    type Place = (String, usize, usize, String, String);
    let mut findings: BTreeMap<Place, (Severity, Vec<&'static str>)> = BTreeMap::new();
    for platform in EditorPlatform::ALL {
        let diagnostics = compile_package(package, toolchain, &stubs_dll, &version, platform, work.path())?;
        for d in diagnostics.into_iter().filter(|d| d.severity == Severity::Error || d.is_obsolete_warning()) {
            let Diagnostic { severity, code, file, line, column, message } = d;
            let file = relative(&file, &package.root);
            let entry = findings.entry((file, line, column, code, message)).or_insert((severity, Vec::new()));
            entry.1.push(platform.name());
        }
    }
    let diagnostics: Vec<Finding> = findings
        .into_iter()
        .map(|((file, line, column, code, message), (severity, platforms))| Finding {
            severity,
            code,
            file,
            line,
            column,
            message,
            platforms,
        })
        .collect();
    let reflection: Vec<ReflectionResult> = TARGETS
        .iter()
        .map(|target| {
            let found =
                api.reflection.iter().find(|r| r.target == target.id()).map(|r| r.found.as_slice()).unwrap_or(&[]);
            let present = present(target, found);
            ReflectionResult { target: target.id(), present, fallback: (!present).then_some(target.fallback) }
        })
        .collect();
    let test_framework = api
        .sources
        .iter()
        .find_map(|s| s.package.as_deref()?.strip_prefix("com.unity.test-framework@").map(str::to_owned))
        .unwrap_or_else(|| "-".into());
    Ok(VersionResult {
        version: api.unity.clone(),
        compiler: format!("{} (mono), not Unity's compiler", toolchain.version),
        test_framework,
        sources: api.sources.clone(),
        errors: diagnostics.iter().filter(|d| d.severity == Severity::Error).count(),
        obsolete_warnings: diagnostics.iter().filter(|d| d.severity == Severity::Warning).count(),
        reflection_missing: reflection.iter().filter(|r| !r.present).map(|r| r.target.clone()).collect(),
        reflection_present: reflection.iter().filter(|r| r.present).count(),
        reflection_targets: reflection.len(),
        diagnostics,
        reflection,
        left_out: api
            .types
            .iter()
            .flat_map(|t| &t.parts)
            .flat_map(|p| &p.members)
            .filter(|m| m.left_out.is_some())
            .count(),
    })
}

fn relative(file: &str, root: &Path) -> String {
    let path = Path::new(file);
    let root = root.canonicalize().unwrap_or_else(|_| root.to_owned());
    let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
    path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().replace('\\', "/")
}

/// The matrix as one HTML page (`report-page`, as the suite's report).
pub fn html(results: &[VersionResult], compiler: &str) -> String {
    let title = format!("The package against Unity's API: {} versions", results.len());
    let data = serde_json::json!({
        "kind": "versions",
        "title": title,
        "compiler": format!("{compiler} (mono), not Unity's compiler"),
        "versions": results,
    });
    report_page::render(&title, &data)
}

/// The matrix as text.
pub fn table(results: &[VersionResult], compiler: &str) -> String {
    let mut out = format!(
        "The package against Unity's API, per version (generated from Unity's reference source; compiled with {compiler} (mono), \
         not Unity's compiler; the Editor layer for Windows, macOS and Linux, and the EditMode tests):\n"
    );
    out.push_str(&format!(
        "{:<14} {:<16} {:>6} {:>18} {:>20}\n",
        "Unity", "Test Framework", "errors", "obsolete warnings", "reflection present"
    ));
    for r in results {
        out.push_str(&format!(
            "{:<14} {:<16} {:>6} {:>18} {:>17}/{:<2}\n",
            r.version, r.test_framework, r.errors, r.obsolete_warnings, r.reflection_present, r.reflection_targets
        ));
    }
    for r in results {
        for d in &r.diagnostics {
            let severity = if d.severity == Severity::Error { "error" } else { "obsolete" };
            out.push_str(&format!(
                "  {} {severity}: {}:{}:{}: {} {} ({})\n",
                r.version,
                d.file,
                d.line,
                d.column,
                d.code,
                d.message,
                d.platforms.join(", ")
            ));
        }
        for m in r.reflection.iter().filter(|m| !m.present) {
            out.push_str(&format!(
                "  {} reflection: {} is missing; the package's fallback: {}\n",
                r.version,
                m.target,
                m.fallback.unwrap_or_default()
            ));
        }
    }
    let errors: usize = results.iter().map(|r| r.errors).sum();
    let unknown_name = results
        .iter()
        .flat_map(|r| &r.diagnostics)
        .any(|d| matches!(d.code.as_str(), "CS0117" | "CS0246" | "CS1061" | "CS0234"));
    if unknown_name {
        out.push_str(
            "  (a Unity name the data lacks: if that Unity version has it, the committed API predates the package's use of it; \
             regenerate the version with `unity-versions add` as unity-api/versions/README.md says)\n",
        );
    }
    let warnings: usize = results.iter().map(|r| r.obsolete_warnings).sum();
    let missing: usize = results.iter().map(|r| r.reflection_missing.len()).sum();
    out.push_str(&format!(
        "unity-versions: {} versions, {errors} errors, {warnings} obsolete warnings, {missing} reflection targets missing\n",
        results.len()
    ));
    out
}
