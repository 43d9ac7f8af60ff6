//! The `unity-conformance` command line.

use std::{
    ffi::OsString,
    io::Write,
    path::{Path, PathBuf},
    process::ExitCode,
};

use clap::{Parser, Subcommand};
use unity_conformance::{
    bridge::BridgeCommand,
    bridge_defect::{self, BridgeDefect},
    case::Extension,
    cases, launch,
    profile::{Offers, Profile, Scope},
    report, runner,
    target::{self, RemoteKind, Target},
};

#[derive(Parser, Debug)]
#[command(name = "unity-conformance", version, about = "Conformance suite for Unity editor-link endpoints")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the suite (default target: a fake Editor embedded in this process).
    Run(Box<RunArgs>),
    /// Measure the bridge and the fake: overhead, throughput, large
    /// results, reload recovery, startup, memory; beside other bridges with
    /// --bridge-cmd. Build with --release for meaningful figures.
    Bench(Box<BenchArgs>),
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
    /// List the deliberate bridge defects (`run --bridge-defect NAME`).
    BridgeDefects,
    /// Show every check failing: each deliberate defect of the fake and of
    /// the bridge against the cases it claims to break (each must fail, or
    /// warn for a SHOULD, saying why), every case claimed by some defect.
    Prove {
        /// Only these defects (`fake-unity defects`, `bridge-defects`; a
        /// name both have is both unless written `fake:NAME` or `bridge:NAME`).
        #[arg(long, value_name = "NAME")]
        defect: Vec<String>,
        /// Also serve each fake defect by a process of its own and run the
        /// whole suite (but the `mcp` cases) against it over TCP: it must fail.
        #[arg(long)]
        over_tcp: bool,
    },
    /// Record the sessions of `fixtures/sessions/` again: each workflow run
    /// through the bridge in front of the embedded fake, the editor link
    /// recorded (after a deliberate change to the fake or the bridge).
    RecordSessions {
        /// Where to write NAME.jsonl (default: the repository's fixtures/sessions).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Only these workflows (default: every recorded one).
        #[arg(long, value_name = "NAME")]
        name: Vec<String>,
    },
    /// List the cases: id, level, reference and requirement.
    List {
        /// Only cases whose id matches (glob, or an id prefix such as `2.`).
        #[arg(long)]
        filter: Vec<String>,
    },
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// `fake` (embedded, playing this project's package), `fake:uloop-2.1.1`
    /// (embedded, playing the uLoopMCP 2.1.1 Editor server); `mono`: the Unity package's C# server, built and
    /// started headless under mono; `unity`: a Unity Editor started in batch
    /// mode (with --unity PATH); or `tcp://HOST:PORT` for any running Editor.
    #[arg(long, default_value = "fake")]
    target: Target,
    /// With `--target unity`: the Unity Editor executable.
    #[arg(long, value_name = "PATH")]
    unity: Option<PathBuf>,
    /// With `--target unity`: how long Unity may take to be ready (the first
    /// import of a project takes minutes).
    #[arg(long, value_name = "SECONDS", default_value_t = 900)]
    unity_timeout: u64,
    /// With `--target tcp://…`: the Editor's control API, so the cases that
    /// reload it can run (`fake-unity serve` prints it as `control`).
    #[arg(long, value_name = "URL")]
    control: Option<String>,
    /// With `--target tcp://…`: the Editor's project folder (its discovery file).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// With `--target tcp://…`: the token every request must carry, for an
    /// Editor whose discovery file the suite cannot read (default: the one
    /// in the project's Library/MCPInstance.json).
    #[arg(long, value_name = "TOKEN", env = "UNITY_MCP_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// With `--target fake`: break one protocol rule on purpose
    /// (`fake-unity defects` lists them), to see the matching case fail.
    #[arg(long, value_name = "NAME")]
    defect: Option<fake_unity::Defect>,
    /// The bridge the `mcp` cases start in front of the Editor, as a command
    /// line (default: the bridge embedded in this program). It is started in
    /// the project's folder, or with UNITY_TCP_PORT when the project is not known.
    #[arg(long, value_name = "COMMAND")]
    bridge: Option<String>,
    /// Break one MCP rule in the embedded bridge on purpose
    /// (`unity-conformance bridge-defects` lists them), to see the matching case fail.
    #[arg(long, value_name = "NAME", conflicts_with = "bridge")]
    bridge_defect: Option<BridgeDefect>,
    /// Run only cases whose id matches (repeatable; glob, or an id prefix).
    #[arg(long)]
    filter: Vec<String>,
    /// Leave out cases whose id matches (repeatable).
    #[arg(long)]
    exclude: Vec<String>,
    /// Which cases to hold the Editor to: `auto` (the core protocol, and the
    /// extensions and catalogue the Editor says it offers), `core` (the
    /// protocol every uLoopMCP-2.x-compatible Editor must follow), `full`
    /// (every case). A case that does not apply is reported SKIP, with why.
    #[arg(long, value_enum, default_value_t = Profile::Auto)]
    profile: Profile,
    /// Also check this extension, whatever the Editor says (repeatable):
    /// newline-framing, frame-too-large, error-codes, resume, capabilities,
    /// timeouts, tool-metadata, progress, image-data, discovery-file.
    #[arg(long, value_enum, value_name = "NAME")]
    extension: Vec<Extension>,
    /// Cases expected to fail on this target, one id per line (`#` comments):
    /// their failures do not fail the run, and one that passes does (the
    /// baseline is stale).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Write the cases that failed as a baseline file here.
    #[arg(long, value_name = "FILE")]
    write_baseline: Option<PathBuf>,
    /// Also write a JSON report here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Also write a JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct BenchArgs {
    /// Our bridge's binary (default: unity-mcp-bridge beside this program
    /// if it was built, else the same bridge embedded in this program).
    #[arg(long, value_name = "PATH")]
    bridge: Option<PathBuf>,
    /// Another MCP stdio bridge to measure beside ours (repeatable): a shell
    /// command line, started in the project's folder with UNITY_TCP_PORT set
    /// to the fake Editor's port. Reported with its ratios to ours.
    #[arg(long, value_name = "COMMAND")]
    bridge_cmd: Vec<String>,
    /// Repetitions of the overhead, throughput, large-result and memory
    /// measurements, each in a fresh bridge process.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// Paired round trips (straight to the Editor and through the bridge) per round.
    #[arg(long, default_value_t = 2000)]
    samples: usize,
    /// Calls per throughput measurement.
    #[arg(long, default_value_t = 3000)]
    throughput_calls: usize,
    /// Calls in flight for the throughput measurements.
    #[arg(long, value_delimiter = ',', default_value = "1,8,64")]
    concurrency: Vec<usize>,
    /// Result sizes relayed, in MiB.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    sizes: Vec<usize>,
    /// Bridge starts per startup measurement.
    #[arg(long, default_value_t = 20)]
    startups: usize,
    /// Domain reloads measured.
    #[arg(long, default_value_t = 20)]
    reloads: usize,
    /// Calls between the idle and the after-calls memory readings.
    #[arg(long, default_value_t = 10_000)]
    calls: usize,
    /// The tool to call (default: the first of ping and get-logs every bridge offers).
    #[arg(long, value_name = "NAME")]
    tool: Option<String>,
    /// Its arguments, as a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}", requires = "tool")]
    tool_args: String,
    /// Do not time the conformance suite (suite_wall_s is then null).
    #[arg(long)]
    no_suite: bool,
    /// Few repetitions (1 round, 3 starts, 3 reloads, 1000 calls): to see the
    /// command work, not for figures.
    #[arg(long)]
    quick: bool,
    /// Also write the figures as JSON here.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The embedded bridge sets up its own logging.
    if let Command::Bridge { defect, args } = cli.command {
        return embedded_bridge(defect, args);
    }
    // So does the embedded fake.
    if let Command::Fake { args } = cli.command {
        return match fake_unity::cli::main(std::iter::once(OsString::from("fake-unity")).chain(args)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("fake-unity: {e:#}");
                ExitCode::from(1)
            }
        };
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("UNITY_CONFORMANCE_LOG").unwrap_or_else(|_| {
            // The benchmark says what it is measuring as it goes.
            if matches!(cli.command, Command::Bench(_)) { "warn,unity_conformance::bench=info" } else { "warn" }.into()
        }))
        .init();
    match cli.command {
        Command::List { filter } => {
            let selected = runner::select(cases::catalogue(), &filter, &[]);
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
        Command::Run(args) => run(*args),
        Command::Bridge { .. } | Command::Fake { .. } => unreachable!("handled above"),
        Command::BridgeDefects => {
            let mut out = std::io::stdout().lock();
            for defect in BridgeDefect::all() {
                let help = clap::ValueEnum::to_possible_value(&defect)
                    .and_then(|v| v.get_help().map(ToString::to_string))
                    .unwrap_or_default();
                let _ = writeln!(out, "{defect:<28} {help}");
            }
            ExitCode::SUCCESS
        }
        Command::Bench(args) => bench(&args),
        Command::Prove { defect, over_tcp } => prove(&defect, over_tcp),
        Command::RecordSessions { out, name } => record_sessions(out, &name),
    }
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

/// `unity-conformance record-sessions`.
fn record_sessions(out: Option<PathBuf>, names: &[String]) -> ExitCode {
    use unity_conformance::sessions;
    let program = match this_program() {
        Ok(program) => program,
        Err(code) => return code,
    };
    let out = out.unwrap_or_else(sessions::sessions_dir);
    let unknown: Vec<&String> = names.iter().filter(|n| !sessions::RECORDED.contains(&n.as_str())).collect();
    if !unknown.is_empty() {
        eprintln!(
            "unity-conformance record-sessions: not a recorded workflow: {unknown:?} (they are {:?})",
            sessions::RECORDED
        );
        return ExitCode::from(2);
    }
    let workflows = cases::snapshots::workflows();
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let bridge = BridgeCommand::embedded(program, None);
    for name in sessions::RECORDED.iter().filter(|n| names.is_empty() || names.iter().any(|m| m == *n)) {
        let Some(workflow) = workflows.iter().find(|w| w.name == *name) else {
            eprintln!("unity-conformance record-sessions: {name} is not in fixtures/workflows.json");
            return ExitCode::from(2);
        };
        let recorded = runtime.block_on(async {
            let project = target::fixture_copy()?;
            let file = out.join(format!("{name}.jsonl"));
            sessions::record(workflow, &bridge, project.path(), &file, fake_unity::Scenario::default())
                .await
                .map_err(|e| format!("{e:?}"))?;
            Ok::<_, String>(file)
        });
        match recorded {
            Ok(file) => {
                let _ = writeln!(std::io::stdout(), "wrote {}", file.display());
            }
            Err(e) => {
                eprintln!("unity-conformance record-sessions: {name}: {e}");
                return ExitCode::from(1);
            }
        }
    }
    ExitCode::SUCCESS
}

/// `unity-conformance prove`.
fn prove(names: &[String], over_tcp: bool) -> ExitCode {
    use unity_conformance::prove::{self, Broken, Coverage};
    let program = match this_program() {
        Ok(program) => program,
        Err(code) => return code,
    };
    let all = Broken::all();
    let mut chosen: Vec<Broken> = Vec::new();
    for name in names {
        let (side, bare) = match name.split_once(':') {
            Some((side @ ("fake" | "bridge"), bare)) => (Some(side), bare),
            _ => (None, name.as_str()),
        };
        let matching: Vec<Broken> = all
            .iter()
            .copied()
            .filter(|d| d.name() == bare)
            .filter(|d| {
                side.is_none_or(|side| matches!((side, d), ("fake", Broken::Fake(_)) | ("bridge", Broken::Bridge(_))))
            })
            .collect();
        if matching.is_empty() {
            eprintln!(
                "unity-conformance prove: no defect is named {name} (fake-unity defects, unity-conformance bridge-defects)"
            );
            return ExitCode::from(2);
        }
        for defect in matching {
            if !chosen.contains(&defect) {
                chosen.push(defect);
            }
        }
    }
    let whole = chosen.is_empty();
    if whole {
        chosen = all;
    }
    let catalogue = cases::catalogue();
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let mut stdout = std::io::stdout().lock();
    let mut failed = 0;
    if whole {
        let coverage = Coverage::of(&catalogue);
        for id in &coverage.unclaimed {
            let _ = writeln!(stdout, "UNCLAIMED  {id}: no defect shows this case failing");
        }
        for defect in &coverage.idle {
            let _ = writeln!(stdout, "IDLE       {defect}: claims no case of the catalogue");
        }
        failed += coverage.unclaimed.len() + coverage.idle.len();
    }
    let mut shown = 0;
    let (fakes, bridges): (Vec<Broken>, Vec<Broken>) = chosen.iter().partition(|d| matches!(d, Broken::Fake(_)));
    runtime.block_on(async {
        // The fake's defects one at a time (many cases time a silence or a
        // slow peer); the bridge's four at a time (each waits out a silence).
        for (defects, at_once) in [(fakes.clone(), 1), (bridges, 4)] {
            prove::prove(&defects, &catalogue, &program, at_once, |proof| {
                let r = &proof.result;
                let verdict = if proof.holds { "SHOWN " } else { "MISSED" };
                let _ = writeln!(
                    stdout,
                    "{verdict}  {:<34} {:<38} {} {}",
                    proof.defect.to_string(),
                    r.id,
                    r.status,
                    report::first_words(&r.detail, 160)
                );
                if proof.holds {
                    shown += 1;
                } else {
                    failed += 1;
                    for line in r.wire.iter().take(40) {
                        let _ = writeln!(stdout, "          {line}");
                    }
                }
            })
            .await;
        }
        if over_tcp {
            use futures_util::StreamExt;
            // Three served fakes at a time: each run waits out some silences.
            let mut runs = futures_util::stream::iter(fakes.iter().filter_map(|d| match d {
                Broken::Fake(d) => Some(*d),
                Broken::Bridge(_) => None,
            }))
            .map(|d| {
                let (program, catalogue) = (&program, &catalogue);
                async move { (d, prove::suite_over_tcp(program, d, catalogue).await) }
            })
            .buffer_unordered(3);
            while let Some((defect, outcome)) = runs.next().await {
                let name = match prove::editor_over_tcp(defect, &catalogue) {
                    fake_unity::EditorKind::Package => Broken::Fake(defect).to_string(),
                    editor => format!("{} as {editor}", Broken::Fake(defect)),
                };
                match outcome {
                    Ok(not_passed) => match not_passed
                        .iter()
                        .find(|r| r.status == unity_conformance::case::Status::Fail)
                    {
                        Some(first) => {
                            shown += 1;
                            let _ = writeln!(
                                stdout,
                                "SHOWN   {name:<34} over TCP: {} cases did not pass, the first to fail {}",
                                not_passed.len(),
                                first.id
                            );
                        }
                        None => {
                            failed += 1;
                            let _ =
                                writeln!(stdout, "MISSED  {name:<34} over TCP: the whole suite ran without a failure");
                        }
                    },
                    Err(e) => {
                        failed += 1;
                        let _ = writeln!(stdout, "ERROR   {name:<34} over TCP: {e}");
                    }
                }
            }
        }
    });
    let _ = writeln!(stdout, "unity-conformance prove: {shown} failures shown, {failed} not shown");
    ExitCode::from(if failed == 0 { 0 } else { 1 })
}

/// `unity-conformance bridge [--defect NAME] -- ARGS`.
fn embedded_bridge(defect: Option<BridgeDefect>, args: Vec<OsString>) -> ExitCode {
    let Some(defect) = defect else {
        return unity_mcp_bridge::cli::main(std::iter::once(OsString::from("unity-mcp-bridge")).chain(args));
    };
    let program = match this_program() {
        Ok(program) => program,
        Err(code) => return code,
    };
    match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => ExitCode::from(runtime.block_on(bridge_defect::relay(defect, program, args)) as u8),
        Err(e) => {
            eprintln!("unity-conformance bridge: cannot start the runtime: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: RunArgs) -> ExitCode {
    let bridge = match &args.bridge {
        Some(line) => match BridgeCommand::parse(line) {
            Ok(bridge) => bridge,
            Err(e) => {
                eprintln!("unity-conformance: --bridge: {e}");
                return ExitCode::from(2);
            }
        },
        None => match this_program() {
            Ok(program) => BridgeCommand::embedded(program, args.bridge_defect),
            Err(code) => return code,
        },
    };
    let target = match (args.target, args.defect) {
        (Target::Fake { .. }, _) if args.control.is_some() || args.project.is_some() => {
            eprintln!("unity-conformance: --control and --project are for --target tcp://HOST:PORT");
            return ExitCode::from(2);
        }
        (Target::Fake { editor, .. }, defect) => Target::Fake { editor, defect },
        (_, Some(_)) => {
            eprintln!("unity-conformance: --defect needs --target fake");
            return ExitCode::from(2);
        }
        (Target::Tcp(remote), None)
            if remote.kind != RemoteKind::Tcp && (args.control.is_some() || args.project.is_some()) =>
        {
            eprintln!(
                "unity-conformance: --control and --project are for --target tcp://HOST:PORT (the suite starts the {} Editor itself)",
                if remote.kind == RemoteKind::Mono { "mono" } else { "unity" }
            );
            return ExitCode::from(2);
        }
        (Target::Tcp(mut remote), None) => {
            remote.control = args.control;
            remote.project = args.project;
            remote.token = args.token;
            Target::Tcp(remote)
        }
    };
    if args.unity.is_some() && !matches!(&target, Target::Tcp(r) if r.kind == RemoteKind::Unity) {
        eprintln!("unity-conformance: --unity is for --target unity");
        return ExitCode::from(2);
    }
    // The Editors the suite starts itself; stopped when `_launched` drops.
    let (target, _launched) = match target {
        Target::Tcp(remote) if remote.kind == RemoteKind::Mono => {
            eprintln!("unity-conformance: building the package under mono and starting its headless host");
            match launch::start_mono() {
                Ok(launched) => (Target::Tcp(launched.remote.clone()), Some(launched)),
                Err(e) => {
                    eprintln!("unity-conformance: --target mono: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        Target::Tcp(remote) if remote.kind == RemoteKind::Unity => {
            let Some(unity) = &args.unity else {
                eprintln!("unity-conformance: --target unity needs --unity PATH (the Unity Editor executable)");
                return ExitCode::from(2);
            };
            eprintln!("unity-conformance: starting {} in batch mode on the fixture project", unity.display());
            match launch::start_unity(unity, std::time::Duration::from_secs(args.unity_timeout)) {
                Ok(launched) => (Target::Tcp(launched.remote.clone()), Some(launched)),
                Err(e) => {
                    eprintln!("unity-conformance: --target unity: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        target => (target, None),
    };
    let baseline = match &args.baseline {
        None => runner::Baseline::default(),
        Some(path) => {
            let text = match std::fs::read_to_string(path) {
                Ok(text) => text,
                Err(e) => {
                    eprintln!("unity-conformance: cannot read the baseline {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            };
            match runner::Baseline::parse(&text, &cases::catalogue()) {
                Ok(baseline) => baseline,
                Err(e) => {
                    eprintln!("unity-conformance: the baseline {}: {e}", path.display());
                    return ExitCode::from(2);
                }
            }
        }
    };
    let selected = runner::select(cases::catalogue(), &args.filter, &args.exclude);
    if selected.is_empty() {
        eprintln!("unity-conformance: the selection is empty (filter {:?}, exclude {:?})", args.filter, args.exclude);
        return ExitCode::from(2);
    }
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let name = target.to_string();
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "unity-conformance: {} cases against {name}", selected.len());
    let scope = runtime.block_on(async {
        let mut scope =
            Scope { profile: args.profile, extensions: args.extension.iter().copied().collect(), offers: None };
        if scope.profile != Profile::Full {
            match Offers::find_out(&target, &bridge).await {
                Ok(offers) => {
                    let _ = writeln!(stdout, "unity-conformance: the Editor offers {}", offers.describe());
                    scope.offers = Some(offers);
                }
                Err(why) => {
                    let _ = writeln!(
                        stdout,
                        "unity-conformance: could not ask the Editor what it offers ({why}); every case runs"
                    );
                }
            }
        }
        scope
    });
    let results = runtime.block_on(async {
        let mut results = Vec::new();
        for case in &selected {
            let mut result = runner::run_case(&target, &bridge, &scope, case).await;
            runner::check_editor_up(&target, &bridge, &results, &mut result).await;
            baseline.apply(&mut result);
            if let Some(heading) = report::group_heading(results.last(), &result) {
                let _ = write!(stdout, "{heading}");
            }
            let _ = writeln!(stdout, "{}", report::case_line(&result));
            results.push(result);
        }
        results
    });
    let _ = write!(stdout, "{}", report::console_tail(&name, &results));
    let _ = stdout.flush();
    let mut code = runner::Summary::of(&results).exit_code();
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report::json_report(&name, &results)).unwrap_or_default();
        if let Err(e) = report::write_file(path, &text) {
            eprintln!("unity-conformance: cannot write {}: {e}", path.display());
            code = 2;
        }
    }
    if let Some(path) = &args.write_baseline {
        if let Err(e) = report::write_file(path, &runner::Baseline::of_failures(&results)) {
            eprintln!("unity-conformance: cannot write {}: {e}", path.display());
            code = 2;
        }
    }
    if let Some(path) = &args.junit {
        if let Err(e) = report::write_file(path, &report::junit_report(&name, &results)) {
            eprintln!("unity-conformance: cannot write {}: {e}", path.display());
            code = 2;
        }
    }
    ExitCode::from(code as u8)
}

fn bench(args: &BenchArgs) -> ExitCode {
    use unity_conformance::bench::{self, BenchOptions, BridgeUnderTest};
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
