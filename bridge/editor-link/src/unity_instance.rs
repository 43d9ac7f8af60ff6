//! Unity's own `Library/EditorInstance.json`: Unity writes it as it opens a
//! project, before a script compiles or a package loads, and deletes it when
//! it closes; a crash leaves it behind, naming a dead process. Whether a
//! Unity has the project open at all — starting, importing, reloading, or
//! with a package that does not answer — is read here, whatever answers on
//! the editor link (ours, uLoopMCP, none).
//!
//! ```json
//! {"process_id": 4242, "version": "6000.0.40f1", "app_path": "…", "app_contents_path": "…"}
//! ```

use std::{io, path::Path};

use serde::{Deserialize, Serialize};

use crate::discovery::process_alive;

/// Where Unity writes it, relative to the project.
pub const INSTANCE_FILE: &str = "Library/EditorInstance.json";

/// A larger file is not Unity's.
const INSTANCE_FILE_LIMIT: u64 = 64 * 1024;

/// What the file says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnityInstance {
    pub process_id: u32,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub app_path: Option<String>,
    #[serde(default)]
    pub app_contents_path: Option<String>,
}

impl UnityInstance {
    /// The file of `project`, whatever its process.
    pub fn read(project: &Path) -> Option<UnityInstance> {
        Self::look(project).ok().flatten()
    }

    /// The file of `project`: `Ok(None)` when it is not there, `Err` when
    /// it is there and cannot be read as Unity's (too large, or caught
    /// while being written: Unity writes it in place).
    pub fn look(project: &Path) -> Result<Option<UnityInstance>, String> {
        let path = project.join(INSTANCE_FILE);
        let size = match std::fs::metadata(&path) {
            Ok(meta) => meta.len(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e.to_string()),
        };
        if size > INSTANCE_FILE_LIMIT {
            return Err(format!("larger than {INSTANCE_FILE_LIMIT} bytes"));
        }
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| e.to_string()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The Unity that has `project` open now: the file names a live process.
    pub fn open(project: &Path) -> Option<UnityInstance> {
        Self::read(project).filter(|i| process_alive(project, i.process_id))
    }

    /// Writes it (a simulated Editor opening `project`), atomically.
    pub fn write(&self, project: &Path) -> io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        crate::discovery::write_atomic(&project.join(INSTANCE_FILE), (text + "\n").as_bytes())
    }

    /// Deletes it, as Unity does when it closes the project, if it is the
    /// file of process `pid` (a newer Unity's is left alone).
    pub fn remove(project: &Path, pid: u32) {
        if Self::read(project).is_some_and(|i| i.process_id == pid) {
            let _ = std::fs::remove_file(project.join(INSTANCE_FILE));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unity_s_file_names_the_process_that_has_the_project_open() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(UnityInstance::open(dir.path()), None);
        let me = UnityInstance {
            process_id: std::process::id(),
            version: Some("6000.0.40f1".into()),
            app_path: None,
            app_contents_path: None,
        };
        me.write(dir.path()).unwrap();
        assert_eq!(UnityInstance::open(dir.path()), Some(me.clone()));
        UnityInstance::remove(dir.path(), 1);
        assert!(UnityInstance::read(dir.path()).is_some(), "another process's file is left alone");
        UnityInstance::remove(dir.path(), std::process::id());
        assert_eq!(UnityInstance::read(dir.path()), None);
        std::fs::write(dir.path().join(INSTANCE_FILE), r#"{"process_id": 0, "version": "x"}"#).unwrap();
        assert!(UnityInstance::read(dir.path()).is_some() && UnityInstance::open(dir.path()).is_none());
    }
}
