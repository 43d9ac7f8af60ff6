//! `unity-conformance differential`: the fake and the package's headless
//! host, scenario by scenario ([`crate::differential`]).

use std::{io::Write, process::ExitCode};

use super::{runtime, this_program};
use crate::{
    bridge::BridgeCommand,
    cases::mcp::scenarios::SCENARIOS,
    differential::{self, Row},
    launch,
    target::Target,
};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only scenarios whose name contains this (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub filter: Vec<String>,
    /// The fake side broken on purpose (`fake-unity defects`), to show the
    /// run failing.
    #[arg(long, value_name = "NAME")]
    pub defect: Option<fake_unity::Defect>,
}

/// Exit 0 when every scenario the host plays looks the same to the client
/// in front of both Editors, 1 when one differs, 2 when the run cannot start.
pub fn command(args: &Args) -> ExitCode {
    let program = match this_program() {
        Ok(program) => program,
        Err(code) => return code,
    };
    let names: Vec<&'static str> = SCENARIOS
        .iter()
        .copied()
        .filter(|name| args.filter.is_empty() || args.filter.iter().any(|f| name.contains(f.as_str())))
        .collect();
    if names.is_empty() {
        eprintln!("unity-conformance differential: no scenario matches {:?}", args.filter);
        return ExitCode::from(2);
    }
    eprintln!("unity-conformance differential: building the package under mono and starting its headless host");
    let launched = match launch::start_mono() {
        Ok(launched) => launched,
        Err(e) => {
            eprintln!("unity-conformance differential: {e}");
            return ExitCode::from(2);
        }
    };
    let host = Target::Tcp(launched.remote.clone());
    let bridge = BridgeCommand::embedded(program, None);
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let rows: Vec<Row> = runtime.block_on(differential::run(&bridge, &host, args.defect, &names));
    drop(launched);
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(
        stdout,
        "The fault scenarios through the bridge, in front of the fake (the package's catalogue) and the package's headless host under mono:"
    );
    let _ = write!(stdout, "{}", differential::table(&rows));
    if rows.iter().any(Row::is_difference) { ExitCode::from(1) } else { ExitCode::SUCCESS }
}
