//! `unity-conformance run`: the suite against one target.

use std::{io::Write, path::PathBuf, process::ExitCode};

use super::{runtime, this_program};
use crate::{
    bridge::BridgeCommand,
    bridge_defect::BridgeDefect,
    case::Extension,
    cases, launch,
    profile::{Offers, Profile, Scope},
    report, runner,
    target::{RemoteKind, Target},
};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// `fake` (embedded, playing this project's package), `fake:uloop-2.1.1`
    /// (embedded, playing the uLoopMCP 2.1.1 Editor server), `fake:uloop-3`
    /// (embedded, playing uLoopMCP 3 on a Unix socket or named pipe); `mono`: the Unity package's C# server, built and
    /// started headless under mono; `unity`: a Unity Editor started in batch
    /// mode (with --unity PATH); `tcp://HOST:PORT` for any running Editor, or
    /// `unix:PATH` (Windows: `pipe:NAME`) for a running uLoopMCP 3 Editor.
    #[arg(long, default_value = "fake")]
    pub target: Target,
    /// With `--target unity`: the Unity Editor executable.
    #[arg(long, value_name = "PATH")]
    pub unity: Option<PathBuf>,
    /// With `--target unity`: how long Unity may take to be ready (the first
    /// import of a project takes minutes).
    #[arg(long, value_name = "SECONDS", default_value_t = 900)]
    pub unity_timeout: u64,
    /// With `--target tcp://…`: the Editor's control API, so the cases that
    /// reload it can run (`fake-unity serve` prints it as `control`).
    #[arg(long, value_name = "URL")]
    pub control: Option<String>,
    /// With `--target tcp://…`: the Editor's project folder (its discovery
    /// file; the reload cases write a script into its Assets/ and compile,
    /// then remove it); with `unix:PATH` or `pipe:NAME`: uLoopMCP 3's
    /// project, whose canonical root each request names in `x-uloop`; with
    /// `--target unity`: the project Unity opens, a copy of it (default:
    /// fixtures/unity-project; Library/, Temp/, Logs/ and obj/ not copied).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// With `--target tcp://…`: the token every request must carry, for an
    /// Editor whose discovery file the suite cannot read (default: the one
    /// in the project's Library/MCPInstance.json).
    #[arg(long, value_name = "TOKEN", env = "UNITY_MCP_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// With `--target fake`: break one protocol rule on purpose
    /// (`fake-unity defects` lists them), to see the matching case fail.
    #[arg(long, value_name = "NAME")]
    pub defect: Option<fake_unity::Defect>,
    /// The bridge the `mcp` cases start in front of the Editor, as a command
    /// line (default: the bridge embedded in this program). It is started in
    /// the project's folder, or with UNITY_TCP_PORT when the project is not known.
    #[arg(long, value_name = "COMMAND")]
    pub bridge: Option<String>,
    /// Break one MCP rule in the embedded bridge on purpose
    /// (`unity-conformance bridge-defects` lists them), to see the matching case fail.
    #[arg(long, value_name = "NAME", conflicts_with = "bridge")]
    pub bridge_defect: Option<BridgeDefect>,
    /// How many cases run side by side (default: 8 against the embedded fake,
    /// where each case has an Editor of its own; 1 against any other, whose
    /// one Editor every case shares, so that is the only value it takes).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,
    /// Run only cases whose id matches (repeatable; glob, or an id prefix).
    #[arg(long)]
    pub filter: Vec<String>,
    /// Leave out cases whose id matches (repeatable).
    #[arg(long)]
    pub exclude: Vec<String>,
    /// Which cases to hold the Editor to: `auto` (the core protocol, and the
    /// extensions and catalogue the Editor says it offers), `core` (the
    /// protocol every uLoopMCP-2.x-compatible Editor must follow), `full`
    /// (every case). A case that does not apply is reported SKIP, with why.
    #[arg(long, value_enum, default_value_t = Profile::Auto)]
    pub profile: Profile,
    /// Also check this extension, whatever the Editor says (repeatable).
    #[arg(long, value_name = "NAME", value_parser = extension_names())]
    pub extension: Vec<Extension>,
    /// Cases expected to fail on this target, one id per line (`#` comments):
    /// their failures do not fail the run, and one that passes does (the
    /// baseline is stale).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write the cases that failed as a baseline file here.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Also write a JSON report here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write a JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write an HTML report here: one file, nothing fetched (open it
    /// in any browser): the counts, the cases as a tree with filters, each
    /// case's wire log as an exchange, a scenario's time line.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write a Markdown summary here (the verdict, the counts, each
    /// case not passed with its finding): a CI job's summary page, such as
    /// GitHub's `$GITHUB_STEP_SUMMARY`.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
}

/// `unity-conformance run`.
pub fn command(args: Args) -> ExitCode {
    if let Some(why) = crate::home::missing() {
        eprintln!("unity-conformance: {why}");
        return ExitCode::from(2);
    }
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
            eprintln!(
                "unity-conformance: --control and --project are for --target tcp://HOST:PORT, unix:PATH or pipe:NAME"
            );
            return ExitCode::from(2);
        }
        (Target::Fake { editor, .. }, defect) => Target::Fake { editor, defect },
        (_, Some(_)) => {
            eprintln!("unity-conformance: --defect needs --target fake");
            return ExitCode::from(2);
        }
        (Target::Tcp(remote), None)
            if remote.kind == RemoteKind::Mono && (args.control.is_some() || args.project.is_some()) =>
        {
            eprintln!(
                "unity-conformance: --control and --project are for --target tcp://HOST:PORT (the suite starts the mono Editor itself)"
            );
            return ExitCode::from(2);
        }
        (Target::Tcp(remote), None) if remote.kind == RemoteKind::Unity && args.control.is_some() => {
            eprintln!(
                "unity-conformance: --control is for --target tcp://HOST:PORT (a Unity Editor has no control API)"
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
            let project = remote.project.as_deref();
            eprintln!(
                "unity-conformance: starting {} in batch mode on a copy of {}",
                unity.display(),
                project.map_or("the fixture project".into(), |p| p.display().to_string())
            );
            match launch::start_unity(unity, std::time::Duration::from_secs(args.unity_timeout), project) {
                Ok(launched) => (Target::Tcp(launched.remote.clone()), Some(launched)),
                Err(e) => {
                    eprintln!("unity-conformance: --target unity: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        target => (target, None),
    };
    let jobs = match args.jobs {
        None if target.gives_each_case_its_own_editor() => runner::DEFAULT_JOBS,
        None | Some(1) => 1,
        Some(n) if target.gives_each_case_its_own_editor() => usize::from(n),
        Some(_) => {
            eprintln!("unity-conformance: --jobs is for the embedded fake: the cases share the one Editor of {target}");
            return ExitCode::from(2);
        }
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
            match Offers::find_out_patiently(&target, &bridge, runner::RECOVERY).await {
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
    let results =
        runtime.block_on(runner::run_all(&target, &bridge, &scope, &selected, jobs, &baseline, |previous, result| {
            if let Some(heading) = report::group_heading(previous, result) {
                let _ = write!(stdout, "{heading}");
            }
            let _ = writeln!(stdout, "{}", report::case_line(result));
        }));
    let _ = write!(stdout, "{}", report::console_tail(&name, &results));
    let _ = stdout.flush();
    let mut code = runner::Summary::of(&results).exit_code();
    // Each file asked for, made only then.
    let provenance = report::Provenance::of_this_run(args.baseline.as_deref());
    let files: [(&Option<PathBuf>, &dyn Fn() -> String); 5] = [
        (&args.json, &|| serde_json::to_string_pretty(&report::json_report(&name, &results)).unwrap_or_default()),
        (&args.write_baseline, &|| runner::Baseline::of_failures(&results)),
        (&args.junit, &|| report::junit_report(&name, &results)),
        (&args.html, &|| report::html_report(&name, &results, &provenance)),
        (&args.markdown, &|| report::markdown_summary(&name, &results, &provenance)),
    ];
    for (path, text) in files {
        let Some(path) = path else { continue };
        if let Err(e) = report::write_file(path, &text()) {
            eprintln!("unity-conformance: cannot write {}: {e}", path.display());
            code = 2;
        }
    }
    ExitCode::from(code as u8)
}

/// `--extension`'s values: the names `Capabilities` says.
fn extension_names() -> impl clap::builder::TypedValueParser<Value = Extension> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Extension::ALL.map(Extension::name))
        .try_map(|name| Extension::named(&name).ok_or(format!("{name}: no such extension")))
}
