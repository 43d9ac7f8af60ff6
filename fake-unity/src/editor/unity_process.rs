//! The Unity process the simulated package runs in, as it shows on disk to
//! a client that looks for it: Unity's `Library/EditorInstance.json`,
//! written as Unity opens the project (before anything listens: a start
//! delay is Unity starting) and deleted when it closes; and, for this
//! project's package, its entry in the user's registry of open Editors
//! (`editor_link::registry`), written beside the discovery file.
//!
//! A crash leaves `EditorInstance.json` naming the dead process until a new
//! Unity opens the project. A crash with a restart planned
//! (`restartAfterMs`) is a new Unity opening at once — its file written
//! as it starts — whose start-up takes that long.

use editor_link::{discovery::DiscoveryFile, registry, unity_instance::UnityInstance};

use super::{DEAD_PID, Editor, model::DiscoveryFileKind};

impl Editor {
    fn instance(&self, process_id: u32) -> UnityInstance {
        UnityInstance {
            process_id,
            version: Some(self.base.editor.unity_version.clone()),
            app_path: Some("fake-unity".into()),
            app_contents_path: Some("fake-unity".into()),
        }
    }

    /// Unity opens the project.
    pub fn unity_opened(&self) {
        if let Err(err) = editor_link::blocking(|| self.instance(std::process::id()).write(&self.project)) {
            tracing::warn!(%err, "cannot write Library/EditorInstance.json");
        }
    }

    /// Unity died and no new one has opened the project yet.
    pub(crate) fn unity_died(&self) {
        if let Err(err) = editor_link::blocking(|| self.instance(DEAD_PID).write(&self.project)) {
            tracing::warn!(%err, "cannot leave Library/EditorInstance.json of the dead Editor");
        }
        self.unregister();
    }

    /// Unity closes the project (a quit; the fake's end).
    pub fn unity_closed(&self) {
        editor_link::blocking(|| UnityInstance::remove(&self.project, std::process::id()));
        self.unregister();
    }

    /// The registry entry for `file`, as the package writes it.
    pub(super) fn register(&self, file: &DiscoveryFile) {
        let Some(dir) = &self.registry else { return };
        if self.model.discovery.file != DiscoveryFileKind::InstanceFile || file.pid != std::process::id() {
            return;
        }
        if let Err(err) = editor_link::blocking(|| registry::publish(dir, file)) {
            tracing::warn!(%err, "cannot write the registry entry of the open Editor");
        }
    }

    fn unregister(&self) {
        if let Some(dir) = &self.registry {
            let _ = registry::remove(dir, std::process::id());
        }
    }
}

/// What a crashed Editor of the package leaves in `project` when no Unity
/// has opened it since: its discovery file saying `ready` for a process
/// that is gone (and nothing else: a test's project no Unity has open).
pub fn leave_crashed_discovery(project: &std::path::Path) -> std::io::Result<()> {
    let left = DiscoveryFile {
        port: 1,
        pid: DEAD_PID,
        project_path: editor_link::discovery::unity_path(project),
        unity_version: None,
        package_version: None,
        protocol_version: None,
        server_session_id: None,
        state: Some(editor_link::discovery::EditorState::Ready),
        updated_at: None,
        token: None,
    };
    left.write_atomic(project)
}
