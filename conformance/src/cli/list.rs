//! `unity-conformance list` and `bridge-defects`: what there is.

use std::{io::Write, process::ExitCode};

use crate::{bridge_defect::BridgeDefect, cases, runner};

/// `unity-conformance list [--filter GLOB]`: id, level, profile,
/// reference and requirement of each case.
pub fn cases(filter: &[String]) -> ExitCode {
    let selected = runner::select(cases::catalogue(), filter, &[]);
    let mut out = std::io::stdout().lock();
    for case in &selected {
        let _ = writeln!(
            out,
            "{:<34} {:<7} {:<22} {:<34} {}",
            case.id,
            case.level.to_string(),
            case.requires.profile(),
            case.reference,
            case.requirement
        );
    }
    if selected.is_empty() {
        eprintln!("unity-conformance: no case matches {filter:?}");
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}

/// `unity-conformance bridge-defects`.
pub fn bridge_defects() -> ExitCode {
    let mut out = std::io::stdout().lock();
    for defect in BridgeDefect::all() {
        let help = clap::ValueEnum::to_possible_value(&defect)
            .and_then(|v| v.get_help().map(ToString::to_string))
            .unwrap_or_default();
        let _ = writeln!(out, "{defect:<28} {help}");
    }
    ExitCode::SUCCESS
}
