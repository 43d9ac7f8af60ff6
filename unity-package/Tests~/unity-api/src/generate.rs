//! One version's API generated from its sources: parse everything, take as
//! full every Unity type the package's source names (and what they
//! inherit), then let the compiler settle the rest — a member mono cannot
//! declare is left out (and recorded), and a shell the package reaches
//! through (a member of a type it never names, like `Scene` from
//! `SceneManager.GetActiveScene()`) becomes full — until the stubs compile
//! and nothing the package uses is a shell.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, bail};

use crate::api::{self, Api, Detail, LeftOut};
use crate::defines::{EditorPlatform, UnityVersion, editor_defines};
use crate::index::Index;
use crate::mcs::{self, Compilation, Diagnostic, Severity, Toolchain};
use crate::source::{Origin, Source};
use crate::stubs::{self, LineOwner};
use crate::{Package, preprocess, reflection, syntax};

/// A test framework's sources: the package folder within a repository.
#[derive(Debug, Clone)]
pub struct TestFramework {
    pub source: Source,
    /// The package's folder in the repository ("" when it is the root).
    pub folder: String,
    /// Its version (from its package.json).
    pub version: String,
    /// The repository's name, as recorded.
    pub repository: String,
}

#[derive(Debug)]
pub struct Generated {
    pub api: Api,
    pub files: usize,
    pub parse_errors: usize,
    /// Full types with a declaration tree-sitter could not parse (a member
    /// of theirs may be missing from the data): file and count.
    pub unparsed_in_full: Vec<(String, String, usize)>,
    pub rounds: usize,
    pub seconds: f64,
}

const ROUNDS: usize = 30;

/// Generates `version`'s API.
pub fn generate(
    version: &UnityVersion,
    reference: &Source,
    reference_name: &str,
    test_framework: Option<&TestFramework>,
    package: &Package,
    toolchain: &Toolchain,
) -> anyhow::Result<Generated> {
    let started = Instant::now();
    let mut sources = vec![Origin {
        repository: reference_name.to_owned(),
        tag: reference.revision.clone().unwrap_or_default(),
        commit: reference.commit()?,
        package: None,
    }];
    let mut files = reference.files("")?;
    // Unity's build tools are not part of the Editor's assemblies.
    files.retain(|(path, _)| !path.starts_with("Tools/"));
    if let Some(tf) = test_framework {
        sources.push(Origin {
            repository: tf.repository.clone(),
            tag: tf.source.revision.clone().unwrap_or_default(),
            commit: tf.source.commit()?,
            package: Some(format!("com.unity.test-framework@{}", tf.version)),
        });
        let prefix = if tf.folder.is_empty() { String::new() } else { format!("{}/", tf.folder.trim_end_matches('/')) };
        // Its tests and samples are not the package's API.
        files.extend(tf.source.files(&tf.folder)?.into_iter().filter(|(path, _)| {
            let inner = path.strip_prefix(&prefix).unwrap_or(path);
            !inner.starts_with("Tests") && !inner.starts_with("Samples") && !inner.starts_with("Documentation")
        }));
    }
    if files.is_empty() {
        bail!(
            "no C# files in {} at {:?}: is that a UnityCsReference checkout?",
            reference.root.display(),
            reference.revision
        );
    }
    let defines: BTreeSet<String> = editor_defines(version, EditorPlatform::Windows).into_iter().collect();
    let work = tempfile::tempdir()?;
    let mut index = Index::default();
    index.add_external(crate::dotnet::types(work.path())?);
    let mut parse_errors = 0;
    let count = files.len();
    for (path, text) in files {
        let text = preprocess::preprocess(&text, &defines).with_context(|| format!("preprocessing {path}"))?;
        let decls = syntax::parse(&text).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
        parse_errors += decls.types.iter().map(|(_, t)| count_errors(t)).sum::<usize>();
        index.add_file(&path, decls.types);
    }

    let mut full = seed(&index, package)?;
    let mut left_out = LeftOut::default();
    let mut rounds = 0;
    let api = loop {
        rounds += 1;
        if rounds > ROUNDS {
            bail!("the stubs did not settle in {ROUNDS} rounds");
        }
        let types = api::build(&index, &full, &left_out);
        let api = Api {
            unity: version.to_string(),
            sources: sources.clone(),
            generator: generator_name(),
            types: types.into_values().collect(),
            reflection: reflection::find(&index),
        };
        let stubs = stubs::render(&api);
        let (built, diagnostics, stubs_dll) = stubs.compile(work.path())?;
        if !built {
            let errors: Vec<&Diagnostic> = diagnostics.iter().filter(|d| d.severity == Severity::Error).collect();
            if !leave_out(&errors, &stubs.lines, &api, &mut left_out) {
                bail!(
                    "the stubs for {version} do not compile, and no error names a member to leave out:\n{}",
                    describe(&errors)
                );
            }
            continue;
        }
        // The package against them: errors that name a shell make it full.
        let compiled = compile_package(package, toolchain, &stubs_dll, version, EditorPlatform::Windows, work.path())?;
        let shells: BTreeMap<String, String> = api
            .types
            .iter()
            .filter(|t| t.detail == Detail::Shell)
            .map(|t| (display_name(&t.name), t.name.clone()))
            .collect();
        let promoted: Vec<String> = compiled
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .flat_map(|d| quoted_names(&d.message))
            .filter_map(|name| shell_named(&name, &shells))
            .collect();
        if promoted.is_empty() {
            break api;
        }
        full.extend(promoted);
    };
    let unparsed_in_full = api
        .types
        .iter()
        .filter(|t| t.detail == Detail::Full)
        .flat_map(|t| {
            index
                .parts_of(&t.name)
                .filter(|p| p.decl.parse_errors > 0)
                .map(|p| (t.name.clone(), p.file.clone(), p.decl.parse_errors))
        })
        .collect();
    Ok(Generated {
        api,
        files: count,
        parse_errors,
        unparsed_in_full,
        rounds,
        seconds: started.elapsed().as_secs_f64(),
    })
}

pub fn generator_name() -> String {
    format!("unity-api {} (tree-sitter-c-sharp 0.23)", env!("CARGO_PKG_VERSION"))
}

fn count_errors(decl: &syntax::TypeDecl) -> usize {
    decl.parse_errors + decl.nested.iter().map(count_errors).sum::<usize>()
}

/// The Unity types the package's source names (in a namespace it imports),
/// and the static classes whose extension methods it calls by name.
fn seed(index: &Index, package: &Package) -> anyhow::Result<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    let mut imported: BTreeSet<String> = BTreeSet::new();
    for file in package.unity_sources()? {
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        let (identifiers, usings) =
            syntax::identifiers(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        names.extend(identifiers);
        imported.extend(usings);
    }
    // The hostile-snippet corpus's Unity calls are compiled against this
    // data too (conformance's hostile_snippets test): their types are seeds.
    if let Some(corpus) = package.corpus() {
        for code in corpus {
            let (identifiers, _) =
                syntax::identifiers(&code).map_err(|e| anyhow::anyhow!("the snippet corpus: {e}"))?;
            names.extend(identifiers);
        }
    }
    // A namespace written out in full (`UnityEngine.Debug`) is imported too.
    for namespace in &index.namespaces {
        if namespace.split('.').all(|part| names.contains(part)) {
            imported.insert(namespace.clone());
        }
    }
    let mut seed = BTreeSet::new();
    for part in &index.parts {
        if !imported.contains(&part.namespace) || !index.is_visible(&part.key) {
            continue;
        }
        let simple = part.decl.name.as_str();
        let extension = part.decl.modifiers.iter().any(|m| m == "static")
            && part.decl.members.iter().any(|m| {
                names.contains(&m.name) && m.params.first().is_some_and(|p| p.modifiers.iter().any(|x| x == "this"))
            });
        // `[InitializeOnLoad]` names InitializeOnLoadAttribute.
        let attribute = simple.strip_suffix("Attribute").is_some_and(|s| names.contains(s));
        if part.container.is_none() && (names.contains(simple) || attribute || extension) {
            seed.insert(part.key.clone());
        }
    }
    Ok(seed)
}

/// `UnityEditor.TypeCache+MethodCollection` as C# and mcs write it.
fn display_name(key: &str) -> String {
    key.split('+').map(|level| level.split('`').next().unwrap_or(level)).collect::<Vec<_>>().join(".")
}

/// The names mcs quotes in a message: `` `UnityEngine.Object' ``.
fn quoted_names(message: &str) -> Vec<String> {
    message
        .split('`')
        .skip(1)
        .filter_map(|s| s.split('\'').next())
        .map(|s| {
            // Drop generic arguments and a member's parameters.
            let s = s.split(['<', '(']).next().unwrap_or(s);
            s.trim().to_owned()
        })
        .collect()
}

/// The shell a quoted name is, or is a member of.
fn shell_named(name: &str, shells: &BTreeMap<String, String>) -> Option<String> {
    let mut candidate = name;
    loop {
        if let Some(key) = shells.get(candidate) {
            return Some(key.clone());
        }
        candidate = &candidate[..candidate.rfind('.')?];
    }
}

/// Compiles the package's Editor layer against a version's stubs; what mcs said.
pub fn compile_package(
    package: &Package,
    toolchain: &Toolchain,
    stubs: &Path,
    version: &UnityVersion,
    platform: EditorPlatform,
    out: &Path,
) -> anyhow::Result<Vec<Diagnostic>> {
    let editor = out.join(format!("UnityMcp.Editor.{}.dll", platform.name()));
    let (built, mut diagnostics) = mcs::compile(&Compilation {
        output: Some(&editor),
        sources: package.editor_sources()?,
        references: vec![package.core_dll.clone(), stubs.to_owned(), toolchain.newtonsoft.clone()],
        defines: editor_defines(version, platform),
        strict: true,
        unsafe_code: false,
        langversion: "7",
    })?;
    // The EditMode tests (Unity's Test Runner runs them), on one platform.
    if built && platform == EditorPlatform::Windows {
        let mut defines = editor_defines(version, platform);
        defines.push("UNITY_INCLUDE_TESTS".into());
        let (_, tests) = mcs::compile(&Compilation {
            output: Some(&out.join("UnityMcp.Editor.Tests.dll")),
            sources: package.test_sources()?,
            references: vec![
                package.core_dll.clone(),
                editor,
                stubs.to_owned(),
                toolchain.newtonsoft.clone(),
                toolchain.nunit.clone(),
            ],
            defines,
            strict: true,
            unsafe_code: false,
            langversion: "7",
        })?;
        diagnostics.extend(tests);
    }
    Ok(diagnostics)
}

/// Marks what each stub error names as left out; false when an error
/// names nothing that can be.
fn leave_out(errors: &[&Diagnostic], lines: &[LineOwner], api: &Api, left_out: &mut LeftOut) -> bool {
    let mut progress = false;
    for error in errors {
        let reason = format!("mcs {}: {}", error.code, error.message);
        match error.line.checked_sub(1).and_then(|l| lines.get(l)) {
            Some(LineOwner::Member { ty, decl }) => {
                progress |= left_out.members.insert((ty.clone(), decl.clone()), reason).is_none();
            }
            Some(LineOwner::Header { ty }) => {
                // A base from outside Unity that mono does not have (NUnit 3's).
                for part in api.types.iter().filter(|t| &t.name == ty).flat_map(|t| &t.parts) {
                    for base in part.bases.iter().filter(|b| !b.starts_with("global::")) {
                        progress |= left_out.bases.insert((ty.clone(), base.clone()), reason.clone()).is_none();
                    }
                }
            }
            _ => {}
        }
    }
    progress
}

fn describe(errors: &[&Diagnostic]) -> String {
    errors
        .iter()
        .take(20)
        .map(|e| format!("  {}:{}: {} {}", e.file, e.line, e.code, e.message))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_mcs_messages_find_their_shells() {
        let message = "Type `UnityEngine.SceneManagement.Scene' does not contain a definition for `name' and no extension method `name' of type `UnityEngine.SceneManagement.Scene' could be found";
        let names = quoted_names(message);
        assert_eq!(names[0], "UnityEngine.SceneManagement.Scene");
        let shells: BTreeMap<String, String> =
            [("UnityEngine.SceneManagement.Scene".to_owned(), "UnityEngine.SceneManagement.Scene".to_owned())].into();
        assert_eq!(shell_named(&names[0], &shells).as_deref(), Some("UnityEngine.SceneManagement.Scene"));
        assert_eq!(
            shell_named("UnityEngine.SceneManagement.Scene.name", &shells).as_deref(),
            Some("UnityEngine.SceneManagement.Scene")
        );
        assert_eq!(shell_named("UnityEngine.Object", &shells), None);
        assert_eq!(display_name("UnityEditor.TypeCache+MethodCollection"), "UnityEditor.TypeCache.MethodCollection");
        assert_eq!(display_name("System.Collections.Generic.List`1"), "System.Collections.Generic.List");
    }
}
