//! Where the suite's data lives: the fixture project, its scenarios,
//! recorded sessions and hostile snippets, and the Unity package it builds
//! under mono. A build from source finds them beside its crate; a released
//! binary, built elsewhere, is told where they are with
//! `UNITY_CONFORMANCE_HOME` (a checkout of this repository at the binary's
//! version: the GitHub Action sets it to its own).

use std::path::PathBuf;

/// The variable naming the repository's checkout.
pub const HOME_VARIABLE: &str = "UNITY_CONFORMANCE_HOME";

/// The repository's root (where `fixtures/` and `unity-package/` are).
pub fn repository() -> PathBuf {
    match std::env::var_os(HOME_VARIABLE) {
        Some(home) if !home.is_empty() => PathBuf::from(home),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."),
    }
}

/// Why the suite cannot find its data, if it cannot.
pub fn missing() -> Option<String> {
    let home = repository();
    if home.join("fixtures/unity-project").is_dir() {
        return None;
    }
    Some(match std::env::var_os(HOME_VARIABLE) {
        Some(_) => format!(
            "{HOME_VARIABLE} is {}, which holds no fixtures/unity-project: it must name a checkout of the \
             unity-mcp-bridge repository at this version ({})",
            home.display(),
            env!("CARGO_PKG_VERSION")
        ),
        None => format!(
            "this build's repository ({}) is not here: set {HOME_VARIABLE} to a checkout of the unity-mcp-bridge \
             repository at this version ({})",
            home.display(),
            env!("CARGO_PKG_VERSION")
        ),
    })
}
