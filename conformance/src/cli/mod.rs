//! The `unity-conformance` command line: each subcommand a
//! `command(args) -> ExitCode` in a module of its own.

mod bench;
mod differential;
mod embedded;
mod list;
mod prove;
mod record_sessions;
mod run;

use std::{ffi::OsString, path::PathBuf, process::ExitCode};

use clap::{Parser, Subcommand};

use crate::bridge_defect::BridgeDefect;

#[derive(Parser, Debug)]
#[command(name = "unity-conformance", version, about = "Conformance suite for Unity editor-link endpoints")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the suite (default target: a fake Editor embedded in this process).
    Run(Box<run::Args>),
    /// Measure the bridge and the fake: overhead, throughput, large
    /// results, reload recovery, startup, memory; beside other bridges with
    /// --bridge-cmd. Build with --release for meaningful figures.
    Bench(Box<bench::Args>),
    /// The bridge embedded in this program (`unity-mcp-bridge`'s own command
    /// line), which the `mcp` cases start; with --defect, broken on purpose.
    #[command(hide = true)]
    Bridge {
        #[arg(long, value_name = "NAME")]
        defect: Option<BridgeDefect>,
        /// unity-mcp-bridge's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// The fake Editor embedded in this program (`fake-unity`'s own command
    /// line), so tests can run fake Editors as processes: kill one, start
    /// another on the same project.
    #[command(hide = true)]
    Fake {
        /// fake-unity's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<OsString>,
    },
    /// Play every fault scenario the package's headless host can play
    /// against the embedded fake and against the host under mono, through
    /// the bridge, and compare what the client saw step by step.
    Differential(differential::Args),
    /// List the deliberate bridge defects (`run --bridge-defect NAME`).
    BridgeDefects,
    /// Show every check failing: each deliberate defect of the fake and of
    /// the bridge against the cases it claims to break (each must fail, or
    /// warn for a SHOULD, saying why), every case claimed by some defect.
    Prove(prove::Args),
    /// Record the sessions of `fixtures/sessions/` again: each workflow run
    /// through the bridge in front of the embedded fake, the editor link
    /// recorded (after a deliberate change to the fake or the bridge).
    RecordSessions(record_sessions::Args),
    /// List the cases: id, level, reference and requirement.
    List {
        /// Only cases whose id matches (glob, or an id prefix such as `2.`).
        #[arg(long)]
        filter: Vec<String>,
    },
}

/// Parses the command line and runs the subcommand.
pub fn main() -> ExitCode {
    match Cli::parse().command {
        // The embedded bridge and fake set up their own logging.
        Command::Bridge { defect, args } => embedded::bridge(defect, args),
        Command::Fake { args } => embedded::fake(args),
        Command::Run(args) => {
            log_to_stderr("warn");
            run::command(*args)
        }
        Command::Bench(args) => {
            // The benchmark says what it is measuring as it goes.
            log_to_stderr("warn,unity_conformance::bench=info");
            bench::command(&args)
        }
        Command::Prove(args) => {
            log_to_stderr("warn");
            prove::command(&args)
        }
        Command::RecordSessions(args) => {
            log_to_stderr("warn");
            record_sessions::command(args)
        }
        Command::Differential(args) => {
            log_to_stderr("warn");
            differential::command(&args)
        }
        Command::List { filter } => list::cases(&filter),
        Command::BridgeDefects => list::bridge_defects(),
    }
}

/// Logs to stderr at `default` (`UNITY_CONFORMANCE_LOG` overrides it).
fn log_to_stderr(default: &str) {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("UNITY_CONFORMANCE_LOG").unwrap_or_else(|_| default.into()),
        )
        .init();
}

/// This program, whose embedded bridge and fake the suite starts; or exit 2
/// saying why it cannot be found.
fn this_program() -> Result<PathBuf, ExitCode> {
    std::env::current_exe().map_err(|e| {
        eprintln!("unity-conformance: cannot tell where this program is (for the embedded bridge and fake): {e}");
        ExitCode::from(2)
    })
}

/// The runtime the commands run on; or exit 2 saying why it cannot start.
fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| {
        eprintln!("unity-conformance: cannot start the runtime: {e}");
        ExitCode::from(2)
    })
}
