//! Integration tests of the conformance runner, compiled as one binary.

mod bench;
mod cli;
mod crash;
mod defects;
mod hostile_snippets;
mod sessions;
mod snapshots;
mod uloop3;
mod unity_package;
mod unity_shaped;

/// The bridge embedded in the `unity-conformance` binary, as the `mcp` cases start it.
pub fn embedded_bridge() -> unity_conformance::bridge::BridgeCommand {
    unity_conformance::bridge::BridgeCommand::embedded(env!("CARGO_BIN_EXE_unity-conformance"), None)
}

/// Whether every one of `programs` is installed. When one is missing the
/// test says it is skipped and why, on the console (not captured), and
/// passes, unless `UNITY_MCP_TESTS_REQUIRE_TOOLS` is set (as `.ci/run` sets
/// it, having installed them): then the test fails naming what is missing.
pub fn have(programs: &[&str], install: &str) -> bool {
    use std::io::Write;
    let on_path = |program: &str| {
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
    };
    let missing: Vec<&str> = programs.iter().copied().filter(|p| !on_path(p)).collect();
    if missing.is_empty() {
        return true;
    }
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    let why = format!("{test}: needs {} ({install})", missing.join(", "));
    assert!(std::env::var_os("UNITY_MCP_TESTS_REQUIRE_TOOLS").is_none(), "{why}");
    let _ = writeln!(std::io::stderr(), "SKIPPED {why}");
    false
}

/// What a test ran, for `.ci/run` to print after `cargo test` (which
/// captures it): written to `UNITY_MCP_CI_SUMMARIES/NAME` when that is set.
pub fn report_to_ci(name: &str, text: &str) {
    if let Some(dir) = std::env::var_os("UNITY_MCP_CI_SUMMARIES") {
        let written =
            std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(std::path::Path::new(&dir).join(name), text));
        written.unwrap_or_else(|e| panic!("UNITY_MCP_CI_SUMMARIES: {e}"));
    }
}
