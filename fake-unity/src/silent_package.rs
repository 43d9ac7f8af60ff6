//! Unity open on the project while its package does not answer: the
//! scenario's `silentPackage`. The Editor process is there — its
//! `Library/EditorInstance.json` names this process, as Unity's names
//! Unity's — but nothing listens on the editor link and no discovery file
//! is written, ever. Why, the project and the Editor's log say, as they
//! would for a real Editor:
//!
//! - `compileErrors`: `Logs/Editor.log` holds compile errors after the last
//!   domain reload (the package's scripts never load);
//! - `safeMode`: the log says Unity entered Safe Mode;
//! - `notInstalled`: the package is taken out of `Packages/manifest.json`;
//! - `starting`: nothing says why (a first import, a server that failed).
//!
//! The log is `Logs/Editor.log` in the project: the stand-in for Unity's
//! own (`~/.config/unity3d/Editor.log`, …); point the bridge's
//! `UNITY_EDITOR_LOG` at it.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// Why the package does not answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SilentPackage {
    CompileErrors,
    SafeMode,
    NotInstalled,
    Starting,
}

/// The compile error the fake's log holds.
pub const COMPILE_ERROR: &str =
    "Assets/Scripts/Turret.cs(12,5): error CS0103: The name 'speed' does not exist in the current context";

/// The Editor's log, relative to the project.
pub const EDITOR_LOG: &str = "Logs/Editor.log";

/// Makes the project look as Unity leaves it with a silent package.
pub fn open_silently(project: &Path, why: SilentPackage, unity_version: &str) -> std::io::Result<()> {
    let instance = serde_json::json!({
        "process_id": std::process::id(),
        "version": unity_version,
        "app_path": "fake-unity",
        "app_contents_path": "fake-unity",
    });
    std::fs::create_dir_all(project.join("Library"))?;
    std::fs::write(project.join("Library/EditorInstance.json"), format!("{instance:#}"))?;
    let mut log = format!("Unity Editor version:    {unity_version}\nBegin MonoManager ReloadAssembly\n");
    match why {
        SilentPackage::CompileErrors => {
            log.push_str(&format!("{COMPILE_ERROR}\nScripts have compiler errors.\n"));
        }
        SilentPackage::SafeMode => log.push_str("Entering Safe Mode: the project has script compilation errors.\n"),
        SilentPackage::NotInstalled => {
            let manifest = project.join("Packages/manifest.json");
            let text = std::fs::read_to_string(&manifest)?;
            let kept: Vec<&str> = text
                .lines()
                .filter(|l| !l.contains("\"dev.unitymcp.bridge\"") && !l.contains("\"io.github.hatayama.uloopmcp\""))
                .collect();
            // The line before may end with a comma JSON no longer allows.
            let kept = kept.join("\n").replace(",\n  }", "\n  }");
            std::fs::write(&manifest, kept)?;
        }
        SilentPackage::Starting => {}
    }
    std::fs::create_dir_all(project.join("Logs"))?;
    std::fs::write(project.join(EDITOR_LOG), log)
}
