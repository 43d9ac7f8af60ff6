//! Unity's API as data, one set per Unity version, generated from Unity's C#
//! reference source (`Unity-Technologies/UnityCsReference`, a tag per
//! release) and the Test Framework package's source; and the Unity package
//! compiled against each set with mono's `mcs`.
//!
//! - [`source`]: the C# files of a git tag or a folder.
//! - [`preprocess`]: C#'s `#if` sections, evaluated as for an Editor build.
//! - [`syntax`]: one file's declarations, read with tree-sitter's C# grammar.
//! - [`index`]: every type by name, and C#'s name lookup over them.
//! - [`api`]: a version's API as data (what is committed per version).
//! - [`reflection`]: the internal members the package reaches by reflection.
//! - [`stubs`]: that data as C# for mcs to compile against.
//! - [`mcs`]: mono's compiler and its diagnostics.
//! - [`dotnet`]: the .NET types mono's profile has.
//! - [`defines`]: Unity versions and the scripting defines Unity sets.
//! - [`generate`]: a version's API from its sources, settled by the compiler.
//! - [`matrix`]: the package compiled against every committed version.

pub mod api;
pub mod defines;
pub mod dotnet;
pub mod generate;
pub mod index;
pub mod matrix;
pub mod mcs;
pub mod preprocess;
pub mod reflection;
pub mod source;
pub mod stubs;
pub mod syntax;

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The Unity package: its folder and its compiled core.
#[derive(Debug, Clone)]
pub struct Package {
    pub root: PathBuf,
    /// `UnityMcp.Core.dll`, built by `Tests~/build` (it names no Unity type).
    pub core_dll: PathBuf,
}

impl Package {
    /// The package this crate sits in (`unity-package/Tests~/unity-api`).
    pub fn here() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// Where committed versions live.
    pub fn versions_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("versions")
    }

    /// Builds the package's core with `Tests~/build` into `out`.
    pub fn build(root: &Path, out: &Path) -> anyhow::Result<Package> {
        let script = root.join("Tests~/build");
        let built = std::process::Command::new(&script)
            .env("UNITY_PACKAGE_OUT", out)
            .output()
            .with_context(|| format!("running {}", script.display()))?;
        if !built.status.success() {
            anyhow::bail!(
                "{} failed:\n{}{}",
                script.display(),
                String::from_utf8_lossy(&built.stdout),
                String::from_utf8_lossy(&built.stderr)
            );
        }
        Ok(Package { root: root.to_owned(), core_dll: out.join("UnityMcp.Core.dll") })
    }

    fn cs_files(&self, dir: &str) -> anyhow::Result<Vec<PathBuf>> {
        let dir = self.root.join(dir);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .with_context(|| format!("reading {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "cs"))
            .collect();
        files.sort();
        Ok(files)
    }

    /// The Editor layer (`Editor/Unity`): the code that calls Unity.
    pub fn editor_sources(&self) -> anyhow::Result<Vec<PathBuf>> {
        self.cs_files("Editor/Unity")
    }

    /// The EditMode tests Unity's Test Runner runs (`Tests/Editor`).
    pub fn test_sources(&self) -> anyhow::Result<Vec<PathBuf>> {
        self.cs_files("Tests/Editor")
    }

    /// The code of each Unity snippet of the hostile-snippet corpus
    /// (`fixtures/hostile-snippets.json` beside the package), if there is one.
    pub fn corpus(&self) -> Option<Vec<String>> {
        let text = std::fs::read_to_string(self.root.join("../fixtures/hostile-snippets.json")).ok()?;
        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
        Some(
            json["snippets"]
                .as_array()?
                .iter()
                .filter(|s| s["unity"] == true)
                .filter_map(|s| s["code"].as_str().map(str::to_owned))
                .collect(),
        )
    }

    /// Every file that names Unity's types.
    pub fn unity_sources(&self) -> anyhow::Result<Vec<PathBuf>> {
        let mut files = self.editor_sources()?;
        files.extend(self.test_sources()?);
        Ok(files)
    }
}
