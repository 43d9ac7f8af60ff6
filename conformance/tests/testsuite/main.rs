//! Integration tests of the conformance runner, compiled as one binary.

mod bench;
mod cli;
mod crash;
mod defects;
mod snapshots;
mod unity_package;

/// The bridge embedded in the `unity-conformance` binary, as the `mcp` cases start it.
pub fn embedded_bridge() -> unity_conformance::bridge::BridgeCommand {
    unity_conformance::bridge::BridgeCommand::embedded(env!("CARGO_BIN_EXE_unity-conformance"), None)
}
