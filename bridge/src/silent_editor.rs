//! An Editor that is open but does not answer. When no Editor is reachable,
//! the bridge looks whether Unity has the project open anyway — its
//! `Library/EditorInstance.json` names a live process — and if so says what
//! is likely, instead of "no Editor": the package's scripts do not compile
//! (the errors, from the Editor's log), Safe Mode, the package not
//! installed, or the package still starting.
//!
//! The Editor's log is `UNITY_EDITOR_LOG` when set (an Editor started with
//! `-logFile`), else Unity's default for the platform. It is shared by every
//! Editor of the user and rewritten at each launch: only errors after the
//! last domain reload that began are taken as current.

use std::{
    fmt,
    io::{Read, Seek, SeekFrom},
    path::{Path, PathBuf},
};

/// The packages that answer the editor link: this project's and uLoopMCP's.
pub const LINK_PACKAGES: [&str; 2] = ["dev.unitymcp.bridge", "io.github.hatayama.uloopmcp"];
/// How much of the end of the Editor's log is read.
const LOG_TAIL: u64 = 512 * 1024;
/// Errors quoted at most, and the characters of each.
const QUOTED: usize = 3;
const QUOTED_CHARS: usize = 400;

/// Unity with this project open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenEditor {
    pub pid: u32,
    pub version: Option<String>,
}

/// Why its package does not answer, as far as the bridge can tell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Likely {
    /// The scripts do not compile, so no package code runs: the first errors.
    CompileErrors(Vec<String>),
    /// Unity opened in Safe Mode (after compile errors at startup).
    SafeMode,
    /// Neither package is in `Packages/manifest.json` or `Packages/`.
    PackageMissing,
    /// Nothing known against it: starting, importing, or failed to start.
    Starting,
}

/// An open Editor whose package does not answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Silent {
    pub editor: OpenEditor,
    pub likely: Likely,
}

impl fmt::Display for Silent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let version = self.editor.version.as_deref().map(|v| format!(", Unity {v}")).unwrap_or_default();
        write!(
            f,
            "Unity has this project open (process {}{version}) but no package answers on the editor link: ",
            self.editor.pid
        )?;
        match &self.likely {
            Likely::CompileErrors(errors) => write!(
                f,
                "the project's scripts do not compile, so the package cannot load. From the Editor's log: {}. Fix them (or call nothing until they are fixed in Unity); the bridge connects once they compile",
                errors.join(" | ")
            ),
            Likely::SafeMode => write!(
                f,
                "Unity is in Safe Mode (scripts with errors at startup): no package code runs until the errors are fixed and Unity leaves Safe Mode"
            ),
            Likely::PackageMissing => write!(
                f,
                "neither the Unity MCP package ({}) nor uLoopMCP ({}) is in Packages/manifest.json: install the package (see the README)",
                LINK_PACKAGES[0], LINK_PACKAGES[1]
            ),
            Likely::Starting => write!(
                f,
                "it may still be starting or importing (a first import can take minutes), or its server failed to start: see Unity's Console"
            ),
        }
    }
}

/// Unity's Editor log: `UNITY_EDITOR_LOG`, else the platform's default.
pub fn editor_log() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("UNITY_EDITOR_LOG").filter(|p| !p.is_empty()) {
        return Some(path.into());
    }
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    if cfg!(windows) {
        std::env::var_os("LOCALAPPDATA").map(|d| Path::new(&d).join("Unity/Editor/Editor.log"))
    } else if cfg!(target_os = "macos") {
        home().map(|h| h.join("Library/Logs/Unity/Editor.log"))
    } else {
        home().map(|h| h.join(".config/unity3d/Editor.log"))
    }
}

/// Unity with `project` open: its `Library/EditorInstance.json` names a
/// process that is alive.
pub fn open_editor(project: &Path) -> Option<OpenEditor> {
    let instance = editor_link::unity_instance::UnityInstance::open(project)?;
    Some(OpenEditor { pid: instance.process_id, version: instance.version })
}

/// Whether an open Editor of `project` is silent, and what is likely.
pub fn diagnose(project: &Path) -> Option<Silent> {
    let editor = open_editor(project)?;
    let log = editor_log().and_then(|path| tail(&path));
    Some(Silent { editor, likely: likely(project, log.as_deref()) })
}

/// What is likely, from the project and the end of the Editor's log.
pub fn likely(project: &Path, log: Option<&str>) -> Likely {
    if !has_link_package(project) {
        return Likely::PackageMissing;
    }
    let Some(log) = log else { return Likely::Starting };
    // Errors before the last domain reload that began were fixed since.
    let current = log.rfind("Begin MonoManager ReloadAssembly").map_or(log, |at| &log[at..]);
    let mut errors: Vec<String> = Vec::new();
    for line in current.lines().map(str::trim).filter(|l| is_compile_error(l)) {
        let line: String = line.chars().take(QUOTED_CHARS).collect();
        if !errors.contains(&line) && errors.len() < QUOTED {
            errors.push(line);
        }
    }
    match errors.is_empty() {
        false => Likely::CompileErrors(errors),
        true if current.contains("Safe Mode") => Likely::SafeMode,
        true => Likely::Starting,
    }
}

/// `Assets/X.cs(12,5): error CS0103: …`
fn is_compile_error(line: &str) -> bool {
    line.find(": error CS").is_some_and(|at| line[at + 10..].starts_with(|c: char| c.is_ascii_digit()))
}

fn has_link_package(project: &Path) -> bool {
    let packages = project.join("Packages");
    let manifest = std::fs::read_to_string(packages.join("manifest.json")).unwrap_or_default();
    if LINK_PACKAGES.iter().any(|p| manifest.contains(&format!("\"{p}\""))) {
        return true;
    }
    // An embedded package: Packages/<folder>/package.json.
    std::fs::read_dir(&packages).into_iter().flatten().flatten().any(|entry| {
        let text = std::fs::read_to_string(entry.path().join("package.json")).unwrap_or_default();
        LINK_PACKAGES.iter().any(|p| text.contains(&format!("\"{p}\"")))
    })
}

/// The last [`LOG_TAIL`] bytes of a file, as text.
fn tail(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(length.saturating_sub(LOG_TAIL))).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(manifest: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("Packages")).unwrap();
        std::fs::create_dir_all(dir.path().join("Library")).unwrap();
        std::fs::write(dir.path().join("Packages/manifest.json"), manifest).unwrap();
        dir
    }

    const WITH_PACKAGE: &str = r#"{"dependencies": {"dev.unitymcp.bridge": "1.0.0"}}"#;

    #[test]
    fn an_open_editor_is_one_whose_process_is_alive() {
        let dir = project(WITH_PACKAGE);
        assert_eq!(open_editor(dir.path()), None, "no EditorInstance.json");
        let instance = format!(r#"{{"process_id": {}, "version": "6000.0.65f1"}}"#, std::process::id());
        std::fs::write(dir.path().join("Library/EditorInstance.json"), instance).unwrap();
        let open = open_editor(dir.path()).unwrap();
        assert_eq!((open.pid, open.version.as_deref()), (std::process::id(), Some("6000.0.65f1")));
        std::fs::write(dir.path().join("Library/EditorInstance.json"), r#"{"process_id": 4000000000}"#).unwrap();
        assert_eq!(open_editor(dir.path()), None, "a dead process");
    }

    #[test]
    fn current_compile_errors_are_quoted_and_fixed_ones_are_not() {
        let dir = project(WITH_PACKAGE);
        let log = "Assets/Old.cs(1,1): error CS1002: ; expected\n\
                   Begin MonoManager ReloadAssembly\n\
                   Assets/Scripts/Turret.cs(12,5): error CS0103: The name 'speed' does not exist in the current context\n\
                   Assets/Scripts/Turret.cs(12,5): error CS0103: The name 'speed' does not exist in the current context\n\
                   Assets/Scripts/Health.cs(3,1): error CS1519: Invalid token '}'\n\
                   warning CS0414: never used\n";
        let likely = likely(dir.path(), Some(log));
        assert_eq!(
            likely,
            Likely::CompileErrors(vec![
                "Assets/Scripts/Turret.cs(12,5): error CS0103: The name 'speed' does not exist in the current context"
                    .into(),
                "Assets/Scripts/Health.cs(3,1): error CS1519: Invalid token '}'".into(),
            ])
        );
        let huge = format!("Assets/A.cs(1,1): error CS0103: {}\n", "x".repeat(1_000_000));
        let Likely::CompileErrors(quoted) = super::likely(dir.path(), Some(&huge)) else { panic!("not quoted") };
        assert!(quoted[0].len() <= 400, "a line is quoted in part");
        let old_only = "Assets/Old.cs(1,1): error CS1002: ; expected\nBegin MonoManager ReloadAssembly\nall good\n";
        assert_eq!(super::likely(dir.path(), Some(old_only)), Likely::Starting);
        assert_eq!(super::likely(dir.path(), Some("Entering Safe Mode\n")), Likely::SafeMode);
        assert_eq!(super::likely(dir.path(), None), Likely::Starting);
    }

    #[test]
    fn a_project_without_either_package_is_named_so() {
        let dir = project(r#"{"dependencies": {"com.unity.test-framework": "1.4.5"}}"#);
        assert_eq!(likely(dir.path(), Some("error CS0103 anything")), Likely::PackageMissing);
        std::fs::create_dir_all(dir.path().join("Packages/uloop")).unwrap();
        std::fs::write(dir.path().join("Packages/uloop/package.json"), r#"{"name": "io.github.hatayama.uloopmcp"}"#)
            .unwrap();
        assert_eq!(likely(dir.path(), None), Likely::Starting, "an embedded package counts");
        let said = Silent { editor: OpenEditor { pid: 7, version: None }, likely: Likely::PackageMissing }.to_string();
        assert!(said.starts_with("Unity has this project open (process 7) but no package answers"), "{said}");
    }
}
