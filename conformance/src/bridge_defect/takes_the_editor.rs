//! Takes the Editor for itself from the start: a second bridge for the
//! same project refuses to run while the first lives, initialized or not.

use std::sync::Mutex;

use editor_link::lock;

use super::{Breaks, Relay};

/// A lock file per Editor (working folder and port), held while this
/// bridge lives; a lock whose holder died is taken over.
#[derive(Debug)]
struct EditorLock(std::path::PathBuf);

impl EditorLock {
    fn take() -> Result<EditorLock, String> {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        std::env::current_dir().ok().hash(&mut hasher);
        std::env::var("UNITY_TCP_PORT").ok().hash(&mut hasher);
        let path = std::env::temp_dir().join(format!("unity-conformance-editor-{:016x}.lock", hasher.finish()));
        if let Ok(holder) = std::fs::read_to_string(&path) {
            let alive =
                holder.trim().parse::<u32>().is_ok_and(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists());
            if alive {
                return Err(format!("another bridge (pid {}) holds this Editor", holder.trim()));
            }
        }
        std::fs::write(&path, std::process::id().to_string()).map_err(|e| format!("cannot take the Editor: {e}"))?;
        Ok(EditorLock(path))
    }
}

impl Drop for EditorLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[derive(Debug, Default)]
pub(super) struct TakesTheEditor {
    /// Held from the start to the relay's end.
    held: Mutex<Option<EditorLock>>,
}

impl Breaks for TakesTheEditor {
    fn start(&self, _: &Relay) -> Result<(), String> {
        *lock(&self.held) = Some(EditorLock::take()?);
        Ok(())
    }
}
