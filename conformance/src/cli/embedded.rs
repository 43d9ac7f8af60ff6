//! The bridge and the fake embedded in this program, which the suite
//! starts as processes of their own: `unity-conformance bridge [--defect
//! NAME] -- ARGS` and `unity-conformance fake ARGS`.

use std::{ffi::OsString, process::ExitCode};

use super::this_program;
use crate::bridge_defect::BridgeDefect;

/// `unity-conformance bridge [--defect NAME] -- ARGS`.
pub fn bridge(defect: Option<BridgeDefect>, args: Vec<OsString>) -> ExitCode {
    let Some(defect) = defect else {
        return unity_mcp_bridge::cli::main(std::iter::once(OsString::from("unity-mcp-bridge")).chain(args));
    };
    let program = match this_program() {
        Ok(program) => program,
        Err(code) => return code,
    };
    match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => ExitCode::from(runtime.block_on(crate::bridge_defect::relay(defect, program, args)) as u8),
        Err(e) => {
            eprintln!("unity-conformance bridge: cannot start the runtime: {e}");
            ExitCode::from(2)
        }
    }
}

/// `unity-conformance fake ARGS`: `fake-unity`'s own command line.
pub fn fake(args: Vec<OsString>) -> ExitCode {
    match fake_unity::cli::main(std::iter::once(OsString::from("fake-unity")).chain(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fake-unity: {e:#}");
            ExitCode::from(1)
        }
    }
}
