//! Looks for the Editor only in the project it is started in: outside every
//! project it finds none, though Editors are open (the bridge before the
//! registry of open Editors).

use super::Breaks;

#[derive(Debug, Default)]
pub(super) struct IgnoresOpenEditors;

impl Breaks for IgnoresOpenEditors {
    fn bridge_command(&self, command: &mut tokio::process::Command, _: &[std::ffi::OsString]) {
        // A registry that is not there, and no socket folder or port to ask.
        let nowhere = std::env::temp_dir().join(format!("unity-conformance-no-editors-{}", std::process::id()));
        command
            .env("UNITY_MCP_EDITORS_DIR", &nowhere)
            .env("UNITY_MCP_ULOOP3_SOCKETS", &nowhere)
            .env("UNITY_MCP_SCAN_PORTS", "");
    }
}
