//! The `fake-unity` command line (the binary is a call to [`main`];
//! `unity-conformance` embeds the same, so its tests can run fake Editors
//! as processes of their own).

use std::{io::Write, path::PathBuf};

use crate::{Config, EditorStateFile, FakeUnity, Scenario};
use anyhow::Context;
use clap::{Parser, Subcommand};
use editor_link::framing::DEFAULT_REQUEST_LIMIT;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(name = "fake-unity", version, about = "A simulated Unity Editor speaking the editor link")]
struct Cli {
    /// Log filter for stderr (error, warn, info, debug, trace, or a tracing filter).
    #[arg(long, global = true, env = "FAKE_UNITY_LOG", default_value = "info")]
    log_level: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve the editor link for a Unity project until quit (POST /quit, Ctrl-C or SIGTERM).
    ///
    /// Prints one JSON line on stdout once listening:
    /// {"event":"listening","port":…,"endpoint":"tcp://127.0.0.1:…","control":"http://127.0.0.1:…","seed":…,"pid":…}
    /// (with `--editor uloop-3`: port 0, endpoint "unix:/tmp/uloop/UnityCliLoop-….sock")
    Serve(ServeArgs),
    /// Play the Editor side of a transcript to a live client; exit 0 when
    /// every recorded request was received and matched, 1 otherwise (with a
    /// report on stderr), 2 when the transcript cannot be read.
    ///
    /// Prints {"event":"listening","port":…} once listening and
    /// {"event":"finished",…} at the end.
    Replay(ReplayArgs),
    /// Record the editor link between a client and an Editor: a transparent
    /// proxy on 127.0.0.1 writing a transcript (until Ctrl-C or SIGTERM).
    ///
    /// Prints {"event":"listening","port":…} once listening.
    Record(RecordArgs),
    /// The wire faults of a scenario in front of any Editor (the mono host,
    /// a real Unity, a uLoopMCP Editor): a proxy that relays each client
    /// connection to the upstream Editor through the fault rules, with the
    /// same control API (until POST /quit, Ctrl-C or SIGTERM).
    ///
    /// Prints one JSON line on stdout once listening:
    /// {"event":"listening","port":…,"control":"http://127.0.0.1:…","seed":…,"pid":…,"upstream":…}
    Proxy(ProxyArgs),
    /// List the deliberate defects `serve --defect` can introduce.
    Defects,
}

#[derive(clap::Args, Debug)]
struct ProxyArgs {
    /// The Editor: HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    upstream: String,
    /// Port clients connect to; 0 for any free port.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Port of the HTTP control API; 0 for any free port.
    #[arg(long, default_value_t = 0)]
    control_port: u16,
    /// A scenario file of wire faults (see fixtures/scenarios/README.md).
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Seed for every random choice (default: the scenario's, else 1).
    #[arg(long)]
    seed: Option<u64>,
    /// Multiply every fault and timeline duration by F.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    time_scale: f64,
}

#[derive(clap::Args, Debug)]
struct ReplayArgs {
    /// The transcript (JSON Lines, from `fake-unity record` or `unity-mcp-bridge --record`).
    file: PathBuf,
    /// Preferred port; the next ten are tried if it is taken; 0 for any free port.
    #[arg(long, default_value_t = 8700)]
    port: u16,
    /// The project folder: the discovery file is written there, and
    /// ${PROJECT} becomes it (default: no discovery file, ${PROJECT} is the
    /// current folder).
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// How requests are paired with recorded ones.
    #[arg(long = "match", value_enum, default_value_t = crate::replay::MatchMode::Ordered)]
    mode: crate::replay::MatchMode,
    /// A JSON path never compared (repeatable): params.TimeoutSeconds,
    /// params.*.Id, params.Items[*]. `id` is never compared.
    #[arg(long, value_name = "PATH")]
    ignore: Vec<crate::replay::IgnorePath>,
    /// Play faster (2) or slower (0.5) than recorded.
    #[arg(long, default_value_t = 1.0)]
    speed: f64,
    /// Cap every single wait at this many milliseconds.
    #[arg(long, value_name = "MS")]
    max_gap: Option<u64>,
    /// What a request that is not in the transcript gets.
    #[arg(long, value_enum, default_value_t = crate::replay::OnUnexpected::Error)]
    on_unexpected: crate::replay::OnUnexpected,
    /// Seconds to wait for a client to come back while requests remain.
    #[arg(long, default_value_t = 10.0)]
    idle_timeout: f64,
    /// Recorded requests never received are not a failure.
    #[arg(long)]
    allow_unused: bool,
    /// Seed of the session ids this run makes up.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Treat a `ping` the recording does not have as a mismatch. By default
    /// it is answered as the Editor would (clients probe liveness when the
    /// machine is slow, not when the session says so); strict mode never
    /// answers one.
    #[arg(long)]
    no_answer_pings: bool,
    /// A method the client sends on its own schedule (repeatable), such as a
    /// tool-list refresh: a request beyond the recorded ones gets the
    /// connection's last recorded answer again, a recorded one never
    /// received is not a failure.
    #[arg(long, value_name = "METHOD")]
    background: Vec<String>,
    /// Also write the outcome (matches, unused records, mismatch reports) as JSON.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct RecordArgs {
    /// The Editor to record: HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    upstream: String,
    /// The transcript to write.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Port to listen on; point the client here (unity-mcp-bridge --port N).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The Editor's project folder, so its path is redacted to ${PROJECT}.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Record values as they are (no placeholders for paths, ports, ids, times).
    #[arg(long)]
    no_redact: bool,
}

#[derive(clap::Args, Debug)]
struct ServeArgs {
    /// The Unity project folder (the discovery file goes to DIR/Library/MCPInstance.json,
    /// or DIR/UserSettings/UnityMcpSettings.json for uLoopMCP).
    #[arg(long, value_name = "DIR")]
    project: PathBuf,
    /// The Editor to play: `package` (this project's Unity package, every
    /// extension), `uloop-2.1.1` (the uLoopMCP 2.1.1 Editor server: its
    /// tools, its errors, its framing, its discovery file) or `uloop-3`
    /// (uLoopMCP 3, "Unity CLI Loop", v3-beta at c50f54c: a Unix domain
    /// socket /tmp/uloop/UnityCliLoop-<hash>.sock, on Windows a named pipe).
    #[arg(long, value_name = "NAME", default_value = "package")]
    editor: crate::EditorKind,
    /// With `--editor uloop-3`: listen on this socket (a path, `unix:PATH`,
    /// or on Windows `pipe:NAME`) instead of the one the project names.
    #[arg(long, value_name = "PATH", value_parser = local_endpoint)]
    endpoint: Option<editor_link::endpoint::Endpoint>,
    /// The user's registry of open Editors to enter this Editor in, as the
    /// package does (default: `UNITY_MCP_EDITORS_DIR`, else the user's own
    /// folder; see docs/bridge.md). Only `--editor package` is entered.
    #[arg(long, value_name = "DIR", conflicts_with = "no_registry")]
    registry: Option<PathBuf>,
    /// Do not enter this Editor in the user's registry of open Editors.
    #[arg(long)]
    no_registry: bool,
    /// Preferred editor-link port; the next ten are tried if it is taken; 0 for any free port.
    #[arg(long, default_value_t = 8700)]
    port: u16,
    /// Port of the HTTP control API; 0 for any free port.
    #[arg(long, default_value_t = 0)]
    control_port: u16,
    /// Editor state file (default: the scenario's, else the embedded model of
    /// fixtures/unity-project).
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// The Unity version the Editor runs in (default: the state's), which
    /// get-version reports and answers depend on: from 6000.5 objects are
    /// named by 64-bit EntityIds, as the package names them there.
    #[arg(long, value_name = "VERSION", value_parser = unity_version)]
    unity_version: Option<String>,
    /// A scenario file (TOML or JSON): fault rules, timeline, start delay,
    /// state (see fixtures/scenarios/README.md).
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Multiply every fault and timeline duration by F (0.01 runs a
    /// 20-minute compile in 12 seconds).
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    time_scale: f64,
    /// Seed for every random choice (default: the scenario's, else random;
    /// always printed).
    #[arg(long)]
    seed: Option<u64>,
    /// Largest request frame accepted, in bytes.
    #[arg(long, default_value_t = DEFAULT_REQUEST_LIMIT)]
    max_request_bytes: usize,
    /// Break one protocol rule on purpose, to prove a conformance check fails
    /// (see `fake-unity defects`).
    #[arg(long, value_name = "NAME")]
    defect: Option<crate::Defect>,
    /// Behave like uLoopMCP: no resume journal, `x-resume` ignored.
    #[arg(long)]
    no_resume: bool,
    /// real, or virtual (fixed start, 1 ms per reading: identical runs).
    #[arg(long, default_value = "real")]
    clock: crate::Clock,
}

/// Runs the command line `args` (the program name first).
pub fn main<I, T>(args: I) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_new(&cli.log_level).context("invalid --log-level")?)
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    match cli.command {
        Command::Serve(args) => runtime.block_on(serve(args)),
        Command::Replay(args) => {
            let code = runtime.block_on(replay(args));
            drop(runtime);
            std::process::exit(code);
        }
        Command::Record(args) => runtime.block_on(record(args)),
        Command::Proxy(args) => runtime.block_on(proxy(args)),
        Command::Defects => {
            let mut stdout = std::io::stdout().lock();
            for defect in crate::Defect::all() {
                writeln!(stdout, "{:<28} {}", defect.to_string(), defect.description())?;
            }
            Ok(())
        }
    }
}

/// How long a quit asked by a signal may take before the process exits.
const QUIT_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// `--endpoint`: `unix:PATH`, `pipe:NAME`, or a bare path (a pipe's name on Windows).
fn local_endpoint(text: &str) -> Result<editor_link::endpoint::Endpoint, String> {
    use editor_link::endpoint::Endpoint;
    if text.starts_with("unix:") || text.starts_with("pipe:") {
        return text.parse();
    }
    if text.is_empty() {
        return Err("an empty endpoint".into());
    }
    if cfg!(windows) { format!("pipe:{text}").parse() } else { Ok(Endpoint::Unix(PathBuf::from(text))) }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.time_scale.is_finite() && args.time_scale >= 0.0,
        "--time-scale must be a non-negative number"
    );
    let scenario = match &args.scenario {
        Some(path) => Scenario::load(path)?,
        None => Scenario::default(),
    };
    let mut state = match args.state.as_ref().or(scenario.state.as_ref()) {
        Some(path) => EditorStateFile::load(path)?,
        None => crate::default_state(),
    };
    if let Some(version) = &args.unity_version {
        state.editor.unity_version.clone_from(version);
    }
    let config = Config {
        project: args.project.clone(),
        state,
        port: args.port,
        control_port: args.control_port,
        seed: args.seed.or(scenario.seed),
        max_request_bytes: args.max_request_bytes,
        editor: args.editor,
        defect: args.defect,
        resume: !args.no_resume,
        clock: args.clock,
        scenario,
        time_scale: args.time_scale,
        endpoint: args.endpoint.clone(),
        registry: match (&args.registry, args.no_registry) {
            (_, true) => None,
            (Some(dir), false) => Some(dir.clone()),
            (None, false) => editor_link::registry::folder(),
        },
        events: crate::events::Events::default(),
    };
    // Signal handlers exist before the listening line is printed, so a
    // harness that signals as soon as it reads the line is never too early.
    let mut signals = shutdown_signal()?;
    let mut fake = FakeUnity::start(config).await?;
    if !fake.is_listening() {
        // Unity is not open yet (a start delay): the control API already is.
        print_line(&json!({"event": "starting", "control": fake.control_url(), "seed": fake.seed(),
                           "pid": std::process::id()}));
        if let Err(err) = fake.listening().await {
            let editor = fake.editor().clone();
            fake.wait().await;
            eprintln!("fake-unity: {err} (seed {})", editor.seed);
            return Err(err.into());
        }
    }
    print_line(&json!({
        "event": "listening",
        "port": fake.port(),
        "endpoint": fake.endpoint().to_string(),
        "control": fake.control_url(),
        "seed": fake.seed(),
        "pid": std::process::id(),
    }));
    tracing::info!(port = fake.port(), endpoint = %fake.endpoint(), control = %fake.control_url(), seed = fake.seed(), "fake Unity Editor listening");

    let editor = fake.editor().clone();
    let stopper = editor.clone();
    tokio::spawn(async move {
        signals.recv().await;
        tracing::info!("signal received: quitting");
        stopper.request_quit(None);
        // A signal ends the process whatever the Editor is doing (a client
        // that stopped reading, a hang): a second signal at once, else the
        // quit gets a few seconds.
        tokio::select! {
            _ = signals.recv() => eprintln!("fake-unity: second signal: exiting now"),
            _ = tokio::time::sleep(QUIT_LIMIT) => eprintln!("fake-unity: still quitting {QUIT_LIMIT:?} after the signal: exiting now"),
        }
        std::process::exit(0);
    });
    fake.wait().await;
    let mut summary = editor.stats.to_json();
    summary["faults"] = editor.faults.to_json();
    eprintln!("fake-unity: exit summary (seed {}): {summary}", editor.seed);
    Ok(())
}

async fn replay(args: ReplayArgs) -> i32 {
    use crate::replay::{Replay, ReplayConfig};
    let transcript = match editor_link::transcript::Transcript::read(&args.file) {
        Ok(transcript) => transcript,
        Err(err) => {
            eprintln!("fake-unity replay: {err}");
            return 2;
        }
    };
    if !(args.speed.is_finite() && args.speed > 0.0) {
        eprintln!("fake-unity replay: --speed must be a positive number");
        return 2;
    }
    let mut config = ReplayConfig::new(args.file.clone(), transcript);
    config.project = args.project;
    config.port = args.port;
    config.mode = args.mode;
    config.ignore = args.ignore;
    config.speed = args.speed;
    config.max_gap = args.max_gap.map(std::time::Duration::from_millis);
    config.on_unexpected = args.on_unexpected;
    config.idle_timeout = editor_link::duration::saturating_seconds(args.idle_timeout);
    config.allow_unused = args.allow_unused;
    config.seed = args.seed;
    config.answer_pings = !args.no_answer_pings;
    config.background = args.background;
    let mut signals = match shutdown_signal() {
        Ok(signals) => signals,
        Err(err) => {
            eprintln!("fake-unity replay: {err}");
            return 2;
        }
    };
    let replay = match Replay::start(config).await {
        Ok(replay) => replay,
        Err(err) => {
            eprintln!("fake-unity replay: {err}");
            return 2;
        }
    };
    print_line(&json!({"event": "listening", "port": replay.port(), "requests": replay.requests(),
                       "pid": std::process::id()}));
    // Stopped early, what was not received is reported as unused.
    let stopper = replay.stopper();
    tokio::spawn(async move {
        signals.recv().await;
        stopper.cancel();
    });
    let outcome = replay.finished().await;
    for unused in &outcome.unused {
        eprintln!(
            "fake-unity replay: never received: {}:{} (seq {}, connection {}) {}",
            args.file.display(),
            unused.line,
            unused.seq,
            unused.connection,
            unused.summary
        );
    }
    for skipped in &outcome.not_reached {
        eprintln!(
            "fake-unity replay: not reached (the client left before the Editor's earlier message): {}:{} {}",
            args.file.display(),
            skipped.line,
            skipped.summary
        );
    }
    if let Some(path) = &args.report {
        let text = serde_json::to_string_pretty(&outcome).unwrap_or_default();
        if let Err(err) = std::fs::write(path, text) {
            eprintln!("fake-unity replay: cannot write the report {}: {err}", path.display());
        }
    }
    print_line(&json!({"event": "finished", "ok": outcome.ok, "requests": outcome.requests,
                       "matched": outcome.matched, "unused": outcome.unused.len(),
                       "mismatches": outcome.mismatches.len(), "connections": outcome.connections,
                       "notReached": outcome.not_reached.len(), "extraConnections": outcome.extra_connections,
                       "pingsAnswered": outcome.pings_answered, "backgroundRepeats": outcome.background_repeats,
                       "backgroundUnused": outcome.background_unused.len()}));
    if outcome.ok { 0 } else { 1 }
}

async fn proxy(args: ProxyArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.time_scale.is_finite() && args.time_scale >= 0.0,
        "--time-scale must be a non-negative number"
    );
    let scenario = match &args.scenario {
        Some(path) => Scenario::load(path)?,
        None => Scenario::default(),
    };
    let mut signals = shutdown_signal()?;
    let proxy = crate::proxy::Proxy::start(crate::proxy::ProxyConfig {
        upstream: args.upstream.clone(),
        port: args.port,
        control_port: args.control_port,
        scenario,
        seed: args.seed,
        time_scale: args.time_scale,
        events: crate::events::Events::default(),
    })
    .await?;
    print_line(&json!({
        "event": "listening",
        "port": proxy.port(),
        "control": proxy.control_url(),
        "seed": proxy.seed(),
        "pid": std::process::id(),
        "upstream": args.upstream,
    }));
    let faults = proxy.faults().clone();
    tokio::select! {
        _ = signals.recv() => {}
        _ = async { proxy.wait().await } => {}
    }
    eprintln!("fake-unity proxy: exit summary: {}", faults.to_json());
    Ok(())
}

async fn record(args: RecordArgs) -> anyhow::Result<()> {
    let mut signals = shutdown_signal()?;
    let proxy = crate::record::RecordProxy::start(crate::record::RecordConfig {
        upstream: args.upstream.clone(),
        port: args.port,
        out: args.out.clone(),
        project: args.project,
        no_redact: args.no_redact,
    })
    .await
    .with_context(|| format!("cannot start recording to {}", args.out.display()))?;
    print_line(&json!({"event": "listening", "port": proxy.port(), "upstream": args.upstream,
                       "out": args.out.to_string_lossy(), "pid": std::process::id()}));
    signals.recv().await;
    let connections = proxy.stop().await;
    eprintln!("fake-unity record: {connections} connection(s) recorded to {}", args.out.display());
    Ok(())
}

/// Prints one JSON line on stdout. A closed stdout is no reason to stop
/// serving: the failure is logged.
fn print_line(line: &serde_json::Value) {
    let mut stdout = std::io::stdout().lock();
    if let Err(err) = writeln!(stdout, "{line}").and_then(|()| stdout.flush()) {
        tracing::warn!(%err, "cannot write to stdout");
    }
}

/// Ctrl-C and SIGTERM, registered when this is made.
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
}

impl Signals {
    /// The next Ctrl-C or SIGTERM.
    async fn recv(&mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.interrupt.recv() => {}
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Ctrl-C and SIGTERM; the handlers are registered when this returns.
fn shutdown_signal() -> std::io::Result<Signals> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals { term: signal(SignalKind::terminate())?, interrupt: signal(SignalKind::interrupt())? })
    }
    #[cfg(not(unix))]
    {
        Ok(Signals {})
    }
}

/// A Unity version as Unity writes one: `6000.5.2f1`, `6000.7.0a1`.
fn unity_version(text: &str) -> Result<String, String> {
    let bad = || format!("{text:?} is not a Unity version (like 6000.5.2f1)");
    let mut parts = text.splitn(3, '.');
    let numbers = [parts.next(), parts.next()];
    if numbers.iter().any(|n| n.is_none_or(|n| n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()))) {
        return Err(bad());
    }
    let rest = parts.next().ok_or_else(bad)?;
    let at = rest.find(|c: char| c.is_ascii_alphabetic()).ok_or_else(bad)?;
    let (patch, build) = (&rest[..at], &rest[at + 1..]);
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !numeric(patch) || !numeric(build) {
        return Err(bad());
    }
    Ok(text.to_owned())
}
