//! The catalogue, one file per group of the protocol reference.

pub(crate) mod behaviour;
mod discovery;
mod framing;
mod jsonrpc;
mod lifecycle;
pub mod mcp;
mod properties;
mod robustness;
mod security;
mod tools;
mod uloop3_catalogue;
mod uloop_catalogue;

use crate::case::Case;

/// The groups of the report, each case in the first whose prefix its id
/// starts with (so `mcp.scenario.` before `mcp.`).
pub const GROUPS: [(&str, &str); 10] = [
    ("1.", "§1 Roles and transport"),
    ("2.", "§2 Framing"),
    ("3.", "§3 Messages (JSON-RPC 2.0)"),
    ("4.", "§4 Notifications"),
    ("5.", "§5 Lifecycle"),
    ("6.", "§6 Tools"),
    ("7.", "§7 Discovery"),
    ("mcp.scenario.", "MCP through the bridge: fault scenarios"),
    ("mcp.snapshot.", "MCP through the bridge: output snapshots"),
    ("mcp.", "MCP through the bridge"),
];

/// The report group of a case id, in report order: the protocol's sections,
/// then MCP through the bridge, its fault scenarios and its snapshots.
pub fn group_of(id: &str) -> (usize, &'static str) {
    let rank = |prefix: &str| match prefix {
        "mcp.scenario." => 8,
        "mcp.snapshot." => 9,
        "mcp." => 7,
        _ => prefix[..1].parse::<usize>().map_or(10, |n| n - 1),
    };
    GROUPS.iter().find(|(prefix, _)| id.starts_with(prefix)).map_or((10, "other"), |(p, title)| (rank(p), *title))
}

/// Cases after which the Editor is meant to be gone (the quit).
pub fn ends_the_editor(id: &str) -> bool {
    lifecycle::last_cases().iter().any(|c| c.id == id)
}

/// Every case, in report order (grouped as [`group_of`] says; `5.quit` last,
/// as nothing can run after it).
pub fn catalogue() -> Vec<Case> {
    let mut cases = Vec::new();
    cases.extend(framing::cases());
    cases.extend(properties::cases());
    cases.extend(jsonrpc::cases());
    cases.extend(tools::cases());
    cases.extend(uloop_catalogue::cases());
    cases.extend(uloop3_catalogue::cases());
    cases.extend(behaviour::cases());
    cases.extend(security::cases());
    cases.extend(robustness::cases());
    cases.extend(lifecycle::cases());
    cases.extend(discovery::cases());
    cases.extend(mcp::cases());
    cases.sort_by_key(|c| group_of(&c.id).0);
    cases.extend(lifecycle::last_cases());
    cases
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_name_a_section() {
        let cases = super::catalogue();
        let ids: HashSet<_> = cases.iter().map(|c| c.id.clone()).collect();
        assert_eq!(ids.len(), cases.len());
        for case in &cases {
            let (section, slug) = case.id.split_once('.').unwrap();
            // A section of the protocol reference, or `mcp` (the MCP spec, through the bridge).
            assert!((section.parse::<u8>().is_ok() || section == "mcp") && !slug.is_empty(), "{}", case.id);
            assert!(case.reference.contains('§'), "{}", case.id);
        }
    }
}
