//! Outside every project, takes the first open Editor of the user's
//! registry for its project, without a word, however many are open (the
//! guess that puts an agent's edits into the wrong project).

use std::path::Path;

use editor_link::{discovery::Locator, registry};

use super::Breaks;

#[derive(Debug, Default)]
pub(super) struct GuessesTheEditor;

impl Breaks for GuessesTheEditor {
    fn bridge_command(&self, command: &mut tokio::process::Command, args: &[std::ffi::OsString]) {
        let in_project = std::env::current_dir().ok().and_then(|cwd| Locator::find_project(&cwd)).is_some();
        if in_project || args.iter().any(|a| a == "--project") {
            return;
        }
        let first = registry::folder().map(|dir| registry::list(&dir)).and_then(|l| l.entries.into_iter().next());
        if let Some(entry) = first {
            command.arg("--project").arg(Path::new(&entry.project_path));
        }
    }
}
