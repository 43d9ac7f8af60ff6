//! The `unity-mcp-bridge` command line (the binary is a call to [`main`]).
//! Without a subcommand it is the MCP stdio server: stdout carries MCP
//! messages only; logs go to stderr or `--log-file`.

use std::{
    ffi::OsString,
    io::Write,
    path::{Path, PathBuf},
    process::ExitCode,
    sync::Arc,
    time::Instant,
};

use crate::{
    bridge::{Bridge, BridgeOptions, CallRefused},
    link::{FramingChoice, Link, LinkConfig, whereabouts::ProjectFrom},
    mcp::{self, ServeOptions},
    results::ResultPolicy,
    setup::{self, Client, Launch, Scope, Via},
    tools::ToolCache,
};
use anyhow::Context;
use clap::{Parser, Subcommand};
use editor_link::{discovery::Locator, framing::DEFAULT_RESPONSE_LIMIT, redaction::Redactor, transcript::Recorder};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

#[derive(Parser, Debug)]
#[command(
    name = "unity-mcp-bridge",
    version,
    about = "MCP stdio server for the Unity Editor",
    long_about = "MCP stdio server for the Unity Editor. Without a subcommand it serves MCP on stdin/stdout \
                  for a coding agent; put it in the agent's MCP configuration (see `setup`)."
)]
struct Cli {
    #[command(flatten)]
    common: Common,
    #[command(subcommand)]
    command: Option<Command>,
}

impl Cli {
    /// What was given: an empty project (`UNITY_MCP_PROJECT=""`, a bundle's
    /// optional setting left blank) is none.
    fn given(mut self) -> Cli {
        self.common.project = self.common.project.filter(|p| !p.as_os_str().is_empty());
        self
    }
}

#[derive(clap::Args, Debug, Clone)]
struct Common {
    /// The Unity project (default: the nearest folder at or above the working
    /// directory with Assets/ and ProjectSettings/; outside every project,
    /// the only open Editor). Empty: not given (an MCP bundle's optional
    /// setting left blank).
    #[arg(long, global = true, value_name = "DIR", env = "UNITY_MCP_PROJECT",
        value_parser = clap::builder::TypedValueParser::map(clap::builder::OsStringValueParser::new(), PathBuf::from))]
    project: Option<PathBuf>,
    /// Connect to this port instead of finding the Editor through the project.
    #[arg(long, global = true, env = "UNITY_TCP_PORT")]
    port: Option<u16>,
    /// Connect to this endpoint instead of finding the Editor: unix:PATH (a
    /// uLoopMCP 3 socket), pipe:NAME (a uLoopMCP 3 named pipe, Windows) or
    /// tcp://HOST:PORT. By default a uLoopMCP 3 Editor is found from the
    /// project (/tmp/uloop/UnityCliLoop-<hash>.sock, \\.\pipe\uloop-UnityCliLoop-<hash>).
    #[arg(long, global = true, env = "UNITY_MCP_ENDPOINT", value_name = "ENDPOINT")]
    endpoint: Option<editor_link::endpoint::Endpoint>,
    /// The Editor's token, for an Editor whose Library/MCPInstance.json this
    /// bridge cannot read (by default it is read from there).
    #[arg(long, global = true, env = "UNITY_MCP_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Framing to speak to the Editor: auto (header, newline for legacy Editors), header, newline.
    #[arg(long, global = true, default_value = "auto")]
    framing: FramingChoice,
    /// Also offer the Editor's internal tools (ping, get-version, debug-sleep …).
    #[arg(long, global = true, env = "UNITY_MCP_DEV", value_parser = clap::builder::FalseyValueParser::new())]
    dev: bool,
    /// Write the editor-link traffic to this file as JSON Lines.
    #[arg(long, global = true, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Log level or filter (error, warn, info, debug, trace).
    #[arg(long, global = true, env = "UNITY_MCP_BRIDGE_LOG", default_value = "info")]
    log_level: String,
    /// Write logs to this file instead of stderr.
    #[arg(long, global = true, value_name = "FILE")]
    log_file: Option<PathBuf>,
    /// Without a cached tool list, how long tools/list waits for Unity (seconds).
    #[arg(long, global = true, default_value_t = 10.0)]
    tools_wait: f64,
    /// A result larger than this (bytes of JSON) is saved to a file and summarised.
    #[arg(long, global = true, default_value_t = 80_000)]
    result_budget: usize,
    /// Largest response accepted from Unity (bytes).
    #[arg(long, global = true, default_value_t = DEFAULT_RESPONSE_LIMIT)]
    response_limit: usize,
    /// Deadline of a tool that names none (seconds).
    #[arg(long, global = true, default_value_t = 60.0)]
    default_timeout: f64,
    /// Tools per tools/list page.
    #[arg(long, global = true, default_value_t = 100)]
    page_size: usize,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the Editor's tools (as MCP tools).
    Tools {
        /// Print the MCP tool definitions as JSON.
        #[arg(long)]
        json: bool,
        /// How long to wait for Unity (seconds).
        #[arg(long, default_value_t = 10.0)]
        wait: f64,
    },
    /// Call one tool; its result goes to stdout as JSON. Exit 1 if it failed.
    /// When no Unity has the project open the call is answered at once;
    /// `--wait` waits for one to open first.
    Call {
        tool: String,
        /// Arguments as a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        /// Wait up to this long for a Unity Editor on purpose (one being
        /// opened), before the call.
        #[arg(long, value_name = "SECONDS")]
        wait: Option<f64>,
    },
    /// The connection's status as JSON. Exit 1 when Unity is not reachable.
    /// Without `--wait`, answers once it is connected, once a look finds no
    /// Editor to wait for, or after 3 s (a starting Editor).
    Status {
        /// Wait up to this long for a Unity Editor on purpose (one being opened).
        #[arg(long, value_name = "SECONDS")]
        wait: Option<f64>,
    },
    /// Add the bridge to an MCP client's configuration: claude-code, cursor,
    /// vscode, windsurf, codex or gemini.
    Setup {
        client: Client,
        /// project (shared with the repository) or user; each client has its default.
        #[arg(long)]
        scope: Option<Scope>,
        /// The server's name in the client's configuration.
        #[arg(long, default_value = "unity")]
        name: String,
        /// How the client starts the bridge: binary (this program, by its
        /// path), npx (the npm package) or uvx (the PyPI package), pinned to
        /// this version. Default: the way this program was started.
        #[arg(long)]
        via: Option<Via>,
    },
}

/// Runs the command line given by `args` (program name first) and exits the
/// process with its status.
pub fn main<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::parse_from(args).given();
    if let Err(e) = init_logging(&cli.common) {
        eprintln!("unity-mcp-bridge: {e:#}");
        return ExitCode::from(2);
    }
    // One thread: the bridge waits on pipes and a socket, and a call's trip
    // through it crosses several tasks; on one thread those hand-offs cost
    // no cross-thread wake-ups (`unity-conformance bench`: about 20% less
    // overhead per call and 1 MB less memory than two workers).
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("unity-mcp-bridge: cannot start: {e}");
            return ExitCode::from(2);
        }
    };
    let outcome = runtime.block_on(run(cli));
    let code = match outcome {
        Ok(code) => code,
        Err(e) => {
            eprintln!("unity-mcp-bridge: {e:#}");
            2
        }
    };
    // Exit now: a blocking stdin read must not hold the process open.
    let _ = std::io::stdout().flush();
    std::process::exit(code);
}

/// The MCP server as the binary runs it with the command line `args`
/// (program name first, no subcommand), on `input` and `output` instead of
/// stdin and stdout, until the input closes: so tests can serve MCP in
/// memory. Logging is left to the caller.
pub async fn serve_streams<I, T>(
    args: I,
    input: impl tokio::io::AsyncRead + Send + Unpin + 'static,
    output: impl tokio::io::AsyncWrite + Send + Unpin + 'static,
) -> anyhow::Result<mcp::Stop>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::try_parse_from(args)?.given();
    anyhow::ensure!(cli.command.is_none(), "serve_streams serves MCP: no subcommand");
    let project = project(&cli.common)?;
    let bridge = start(&cli.common, project.as_deref())?;
    let options = ServeOptions { page_size: cli.common.page_size, exit_with_parent: false };
    Ok(mcp::serve(input, output, bridge, options, std::future::pending()).await)
}

fn init_logging(common: &Common) -> anyhow::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_new(&common.log_level).context("invalid --log-level")?;
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match &common.log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open the log file {}", path.display()))?;
            builder.with_ansi(false).with_writer(std::sync::Mutex::new(file)).init();
        }
        None => {
            builder.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).with_writer(std::io::stderr).init()
        }
    }
    Ok(())
}

/// How long `status` waits for a starting Editor by default (seconds).
const STATUS_WAIT: f64 = 3.0;

/// The project: `--project`, else the nearest Unity project around here.
fn project(common: &Common) -> anyhow::Result<Option<PathBuf>> {
    match &common.project {
        Some(dir) => {
            let dir = dunce::canonicalize(dir)
                .with_context(|| format!("the project folder {} does not exist", dir.display()))?;
            Ok(Some(dir))
        }
        None => Ok(std::env::current_dir().ok().and_then(|cwd| Locator::find_project(&cwd))),
    }
}

fn start(common: &Common, project: Option<&Path>) -> anyhow::Result<Arc<Bridge>> {
    let project = project.map(Path::to_path_buf);
    let mut config = LinkConfig::new(Locator {
        explicit_port: common.port,
        project: project.clone(),
        explicit_token: common.token.clone(),
    });
    config.endpoint = common.endpoint.clone();
    if common.project.is_none() {
        config.project_from = ProjectFrom::WorkingDirectory;
    }
    config.framing = common.framing;
    config.response_limit = common.response_limit;
    let recorder = match &common.record {
        Some(path) => Some(
            Recorder::create(
                path,
                "unity-mcp-bridge",
                crate::VERSION,
                Redactor::for_project(project.as_deref()).with_literal(
                    &config.id_prefix,
                    "${RUN}",
                    "request id prefix of this bridge run",
                ),
            )
            .with_context(|| format!("cannot create the transcript {}", path.display()))?,
        ),
        None => None,
    };
    let link = Link::start(config, recorder);
    let options = BridgeOptions {
        include_internal: common.dev,
        tools_wait: editor_link::duration::saturating_seconds(common.tools_wait),
        results: ResultPolicy {
            budget_bytes: common.result_budget,
            project: project.clone(),
            ..ResultPolicy::default()
        },
        default_timeout: editor_link::duration::saturating_seconds(common.default_timeout.max(1.0)),
        project: project.clone(),
        ..BridgeOptions::default()
    };
    let cache = project.as_deref().map(ToolCache::for_project);
    Ok(Bridge::start(link, options, cache))
}

async fn run(cli: Cli) -> anyhow::Result<i32> {
    let common = cli.common;
    let project = project(&common)?;
    match cli.command {
        None => {
            let bridge = start(&common, project.as_deref())?;
            tracing::info!(version = crate::VERSION, "unity-mcp-bridge serving MCP on stdio");
            let stop =
                mcp::serve_stdio(bridge, ServeOptions { page_size: common.page_size, ..ServeOptions::default() }).await;
            tracing::info!(?stop, "stopped");
            Ok(0)
        }
        Some(Command::Tools { json, wait }) => {
            let bridge = start(&common, project.as_deref())?;
            let deadline =
                editor_link::duration::instant_after(Instant::now(), editor_link::duration::saturating_seconds(wait));
            bridge
                .link
                .wait_connected(deadline, &CancellationToken::new())
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            bridge.refresh().await;
            let tools = bridge.list_tools().await;
            let mut out = std::io::stdout().lock();
            if json {
                writeln!(out, "{}", serde_json::to_string_pretty(&tools)?)?;
            } else {
                for tool in &tools {
                    let description = tool["description"].as_str().unwrap_or("");
                    let first = description.split(". ").next().unwrap_or(description);
                    writeln!(out, "{:<24} {first}", tool["name"].as_str().unwrap_or(""))?;
                }
            }
            Ok(0)
        }
        Some(Command::Call { tool, arguments, wait }) => {
            let arguments: Map<String, Value> = match serde_json::from_str(&arguments) {
                Ok(Value::Object(map)) => map,
                Ok(other) => anyhow::bail!("the arguments must be a JSON object, not {other}"),
                Err(e) => anyhow::bail!("the arguments are not valid JSON: {e}"),
            };
            let bridge = start(&common, project.as_deref())?;
            if let Some(wait) = wait {
                let seconds = editor_link::duration::saturating_seconds(wait);
                let deadline = editor_link::duration::instant_after(Instant::now(), seconds);
                // Whether it came or not, the call says (at once) what there is.
                let _ = bridge.link.wait_connected(deadline, &CancellationToken::new()).await;
            }
            match bridge.call_tool(&tool, arguments, None, CancellationToken::new()).await {
                Ok(result) => {
                    let mut out = std::io::stdout().lock();
                    let shown = result.structured().unwrap_or_else(|| Value::String(result.text()));
                    writeln!(out, "{}", serde_json::to_string_pretty(&shown)?)?;
                    if result.is_error() {
                        eprintln!("unity-mcp-bridge: {tool} failed: {}", result.text());
                        return Ok(1);
                    }
                    Ok(0)
                }
                Err(CallRefused::UnknownTool(name)) => {
                    anyhow::bail!("Unity has no tool {name:?} (see `unity-mcp-bridge tools`)")
                }
                Err(CallRefused::Cancelled) => Ok(1),
            }
        }
        Some(Command::Status { wait }) => {
            let bridge = start(&common, project.as_deref())?;
            let seconds = editor_link::duration::saturating_seconds(wait.unwrap_or(STATUS_WAIT));
            let deadline = editor_link::duration::instant_after(Instant::now(), seconds);
            let never = CancellationToken::new();
            let connected = match wait {
                Some(_) => bridge.link.wait_connected(deadline, &never).await.is_ok(),
                None => tokio::select! {
                    connected = bridge.link.wait_connected(deadline, &never) => connected.is_ok(),
                    Some(_) = bridge.link.absence_by(deadline) => false,
                },
            };
            writeln!(std::io::stdout().lock(), "{}", serde_json::to_string_pretty(&bridge.status())?)?;
            Ok(if connected { 0 } else { 1 })
        }
        Some(Command::Setup { client, scope, name, via }) => {
            let project =
                project.context("setup needs the Unity project: run it inside the project or pass --project DIR")?;
            let home = home_dir().context("cannot tell the home folder (HOME is not set)")?;
            // Not canonicalized: a symlink a package manager keeps stable
            // (Homebrew's, /usr/local/bin's) must survive upgrades.
            let exe = std::env::current_exe().context("cannot tell where this program is")?;
            let launcher = std::env::var("UNITY_MCP_BRIDGE_LAUNCHER").ok();
            let run_by_uv = std::env::var_os("UV").is_some();
            let via = via.unwrap_or_else(|| Via::of_this_process(launcher.as_deref(), run_by_uv, &exe));
            let launch = Launch {
                via,
                binary: exe.to_string_lossy().into_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                windows_env: cfg!(windows).then(|| {
                    Launch::WINDOWS_ENV
                        .iter()
                        .filter_map(|k| std::env::var(k).ok().map(|v| ((*k).to_owned(), v)))
                        .collect()
                }),
            };
            let entry = launch.entry(client, &name, &project);
            let scope = scope.unwrap_or(client.default_scope());
            let outcome = setup::setup(client, scope, &project, &home, &entry)?;
            writeln!(std::io::stdout().lock(), "{client}: the {} server ({via}) {outcome}", entry.name)?;
            Ok(0)
        }
    }
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .map(PathBuf::from)
        .filter(|p| Path::new(p).is_absolute())
}
