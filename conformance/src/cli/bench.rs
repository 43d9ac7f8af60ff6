//! `unity-conformance bench`: the measured figures.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::ExitCode,
    time::Duration,
};

use super::{runtime, this_program};
use crate::{
    bench::{self, BenchOptions, BridgeUnderTest},
    bridge::BridgeCommand,
    report,
};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Our bridge's binary (default: unity-mcp-bridge beside this program
    /// if it was built, else the same bridge embedded in this program).
    #[arg(long, value_name = "PATH")]
    pub bridge: Option<PathBuf>,
    /// Another MCP stdio bridge to measure beside ours (repeatable): a shell
    /// command line, started in the project's folder with UNITY_TCP_PORT set
    /// to the fake Editor's port. Reported with its ratios to ours.
    #[arg(long, value_name = "COMMAND")]
    pub bridge_cmd: Vec<String>,
    /// Repetitions of the overhead, throughput, large-result and memory
    /// measurements, each in a fresh bridge process.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Paired round trips (straight to the Editor and through the bridge) per round.
    #[arg(long, default_value_t = 2000)]
    pub samples: usize,
    /// Calls per throughput measurement.
    #[arg(long, default_value_t = 3000)]
    pub throughput_calls: usize,
    /// Calls in flight for the throughput measurements.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64")]
    pub concurrency: Vec<usize>,
    /// Result sizes relayed, in MiB.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    pub sizes: Vec<usize>,
    /// Bridge starts per startup measurement.
    #[arg(long, default_value_t = 20)]
    pub startups: usize,
    /// Domain reloads measured.
    #[arg(long, default_value_t = 20)]
    pub reloads: usize,
    /// Calls between the idle and the after-calls memory readings.
    #[arg(long, default_value_t = 10_000)]
    pub calls: usize,
    /// The tool to call (default: the first of ping and get-logs every bridge offers).
    #[arg(long, value_name = "NAME")]
    pub tool: Option<String>,
    /// Its arguments, as a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}", requires = "tool")]
    pub tool_args: String,
    /// Do not time the conformance suite (suite_wall_s is then null).
    #[arg(long)]
    pub no_suite: bool,
    /// Few repetitions (1 round, 3 starts, 3 reloads, 1000 calls, a 2 s
    /// outage, 10 s for a real answer after a reload): to see the command
    /// work, not for figures.
    #[arg(long)]
    pub quick: bool,
    /// Also write the figures as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// `unity-conformance bench`.
pub fn command(args: &Args) -> ExitCode {
    let program = match this_program() {
        Ok(program) => program,
        Err(code) => return code,
    };
    // Absolute, since the bridge is started in the project's folder. By
    // default the unity-mcp-bridge built beside this program (what users
    // run), else the same bridge embedded in this program, whose larger
    // binary adds about 2 MB to the memory figures.
    let bridge = match args.bridge.as_deref().map(std::fs::canonicalize).transpose() {
        Ok(bridge) => bridge.or_else(|| Some(program.with_file_name("unity-mcp-bridge")).filter(|p| p.is_file())),
        Err(e) => {
            eprintln!("unity-conformance: --bridge {}: {e}", args.bridge.as_deref().unwrap_or(Path::new("")).display());
            return ExitCode::from(2);
        }
    };
    let ours = match &bridge {
        Some(path) => BridgeUnderTest::ours(&path.display().to_string(), path.clone(), Vec::new()),
        None => BridgeUnderTest::ours(
            "unity-mcp-bridge (embedded in unity-conformance: build unity-mcp-bridge for its own memory figures)",
            program.clone(),
            vec!["bridge".into(), "--".into()],
        ),
    };
    let tool = match &args.tool {
        None => None,
        Some(name) => match serde_json::from_str::<serde_json::Value>(&args.tool_args) {
            Ok(arguments) if arguments.is_object() => Some((name.clone(), arguments)),
            _ => {
                eprintln!("unity-conformance: --tool-args must be a JSON object, not {:?}", args.tool_args);
                return ExitCode::from(2);
            }
        },
    };
    if args.concurrency.contains(&0) || args.sizes.contains(&0) {
        eprintln!("unity-conformance: --concurrency and --sizes take positive numbers");
        return ExitCode::from(2);
    }
    let quick = |full: usize, small: usize| if args.quick { full.min(small) } else { full }.max(1);
    let options = BenchOptions {
        ours,
        others: args.bridge_cmd.iter().map(|line| BridgeUnderTest::command(line)).collect(),
        rounds: quick(args.rounds, 1),
        samples: quick(args.samples, 300),
        throughput_calls: quick(args.throughput_calls, 300),
        concurrency: args.concurrency.clone(),
        sizes_mib: args.sizes.clone(),
        startups: quick(args.startups, 3),
        reloads: quick(args.reloads, 3),
        calls: quick(args.calls, 1000),
        tool,
        // Quick: the outage and the wait for a real answer after a reload
        // shortened too, as a bridge that never gives one waits it out.
        outage: Duration::from_secs(if args.quick { 2 } else { 10 }),
        recovery_limit: Duration::from_secs(if args.quick { 10 } else { 30 }),
        suite_bridge: (!args.no_suite).then(|| match &bridge {
            Some(path) => BridgeCommand { program: path.clone(), args: Vec::new() },
            None => BridgeCommand::embedded(program, None),
        }),
    };
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let figures = match runtime.block_on(bench::run(&options)) {
        Ok(figures) => figures,
        Err(e) => {
            eprintln!("unity-conformance bench: {e:#}");
            return ExitCode::from(2);
        }
    };
    let _ = write!(std::io::stdout().lock(), "{}", bench::table(&figures));
    let report = bench::json_report(&figures);
    let mut code = 0;
    if let Some(path) = &args.json {
        if let Err(e) = report::write_file(path, &serde_json::to_string_pretty(&report).unwrap_or_default()) {
            eprintln!("unity-conformance: cannot write {}: {e}", path.display());
            code = 2;
        }
    }
    // Our bridge must come through every measurement (others may fail some).
    let missing: Vec<&str> = bench::report::missing_keys(&report)
        .into_iter()
        .filter(|k| {
            let not_asked =
                (args.no_suite && *k == "suite_wall_s") || (!args.sizes.contains(&64) && k.ends_with("64mib"));
            !not_asked
        })
        .collect();
    let failed = figures.bridges.iter().filter(|b| b.ours).flat_map(bench::failures).collect::<Vec<_>>();
    for failure in &failed {
        eprintln!("unity-conformance bench: our bridge failed a measurement: {failure}");
    }
    if !missing.is_empty() {
        eprintln!("unity-conformance bench: no figure for {}", missing.join(", "));
    }
    if code == 0 && (!failed.is_empty() || !missing.is_empty()) {
        code = 1;
    }
    ExitCode::from(code)
}
