//! Integration tests of fake-unity over real TCP (and, for uLoopMCP 3, a
//! real Unix domain socket), compiled as one binary.

mod support;

mod bad_input;
mod cli;
mod control_client;
mod crash_and_hang;
mod faults;
mod fidelity;
mod fixture_model;
mod lifecycle;
mod protocol;
mod proxy;
mod replay;
mod token;
mod tools;
#[cfg(unix)]
mod uloop3;

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
