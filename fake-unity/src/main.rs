//! The `fake-unity` command line.

use std::{io::Write, path::PathBuf};

use anyhow::Context;
use clap::{Parser, Subcommand};
use fake_unity::{Config, EditorStateFile, FakeUnity, Scenario};
use serde_json::json;
use unity_mcp_bridge::framing::DEFAULT_REQUEST_LIMIT;

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
    /// {"event":"listening","port":…,"control":"http://127.0.0.1:…","seed":…,"pid":…}
    Serve(ServeArgs),
    /// List the deliberate defects `serve --defect` can introduce.
    Defects,
}

#[derive(clap::Args, Debug)]
struct ServeArgs {
    /// The Unity project folder (the discovery file goes to DIR/Library/MCPInstance.json).
    #[arg(long, value_name = "DIR")]
    project: PathBuf,
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
    defect: Option<fake_unity::Defect>,
    /// Behave like uLoopMCP: no resume journal, `x-resume` ignored.
    #[arg(long)]
    no_resume: bool,
    /// real, or virtual (fixed start, 1 ms per reading: identical runs).
    #[arg(long, default_value = "real")]
    clock: fake_unity::Clock,
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(tracing_subscriber::EnvFilter::try_new(&cli.log_level).context("invalid --log-level")?)
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    match cli.command {
        Command::Serve(args) => runtime.block_on(serve(args)),
        Command::Defects => {
            let mut stdout = std::io::stdout().lock();
            for defect in fake_unity::Defect::ALL {
                writeln!(stdout, "{defect}")?;
            }
            Ok(())
        }
    }
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
    let state = match args.state.as_ref().or(scenario.state.as_ref()) {
        Some(path) => EditorStateFile::load(path)?,
        None => fake_unity::default_state(),
    };
    let config = Config {
        project: args.project.clone(),
        state,
        port: args.port,
        control_port: args.control_port,
        seed: args.seed.or(scenario.seed),
        max_request_bytes: args.max_request_bytes,
        defect: args.defect,
        resume: !args.no_resume,
        clock: args.clock,
        scenario,
        time_scale: args.time_scale,
    };
    // Signal handlers exist before the listening line is printed, so a
    // harness that signals as soon as it reads the line is never too early.
    let signals = shutdown_signal()?;
    let mut fake = FakeUnity::start(config).await?;
    if fake.port() == 0 {
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
        "control": fake.control_url(),
        "seed": fake.seed(),
        "pid": std::process::id(),
    }));
    tracing::info!(port = fake.port(), control = %fake.control_url(), seed = fake.seed(), "fake Unity Editor listening");

    let editor = fake.editor().clone();
    let stopper = editor.clone();
    tokio::spawn(async move {
        signals.await;
        tracing::info!("signal received: quitting");
        stopper.request_quit(None);
    });
    fake.wait().await;
    let mut summary = editor.stats.to_json();
    summary["faults"] = editor.faults.to_json();
    eprintln!("fake-unity: exit summary (seed {}): {summary}", editor.seed);
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

/// A future that completes on Ctrl-C or SIGTERM; the handlers are registered
/// when this returns.
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        Ok(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
