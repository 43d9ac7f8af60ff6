//! The catalogue, one file per group of the protocol reference.

mod behaviour;
mod framing;
mod jsonrpc;
mod lifecycle;
pub mod mcp;
mod properties;
mod robustness;
pub mod scenarios;
mod security;
pub mod snapshots;
mod tools;

use crate::case::Case;

/// Every case, in report order.
pub fn catalogue() -> Vec<Case> {
    let mut cases = Vec::new();
    cases.extend(framing::cases());
    cases.extend(properties::cases());
    cases.extend(jsonrpc::cases());
    cases.extend(tools::cases());
    cases.extend(behaviour::cases());
    cases.extend(security::cases());
    cases.extend(robustness::cases());
    cases.extend(lifecycle::cases());
    cases.extend(mcp::cases());
    cases.extend(scenarios::cases());
    cases.extend(snapshots::cases());
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
