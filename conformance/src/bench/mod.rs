//! `unity-conformance bench`: measured figures for the bridge and the fake,
//! against a fake Editor in this process on a copy of the fixture project,
//! with the bridge (ours, and any other MCP stdio bridge command beside it)
//! as a child process.
//!
//! - [`clients`] — the MCP stdio client and the bare editor-link client;
//! - [`report`] — statistics, the table and the `--json` document;
//! - [`verdict`] — which answers count: only those the Editor really gave.
//!
//! Every figure is a distribution over repeated measurements (reported with
//! its spread); nothing here judges a figure, the reader does.

pub mod clients;
pub mod report;
pub mod verdict;

use std::{
    path::Path,
    time::{Duration, Instant},
};

use editor_link::{discovery::EditorState, methods};
use fake_unity::{
    Config, FakeUnity, ReloadOptions,
    faults::{Fault, RuleSpec},
};
use serde_json::{Value, json};

pub use clients::BridgeUnderTest;
use clients::{DirectClient, McpChild};
pub use report::{Stats, json_report, table};
use verdict::success_rule;
pub use verdict::{Recovery, Tally, Verdict};

use crate::{bridge::BridgeCommand, target::Target};

/// What to measure, and how often.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Our bridge.
    pub ours: BridgeUnderTest,
    /// Other bridges measured beside it (`--bridge-cmd`).
    pub others: Vec<BridgeUnderTest>,
    /// Repetitions of the overhead, throughput, large-response and memory
    /// measurements (each in a fresh bridge process).
    pub rounds: usize,
    /// Paired round trips (direct and through the bridge) per round.
    pub samples: usize,
    /// Calls per throughput measurement.
    pub throughput_calls: usize,
    /// Calls in flight for the throughput measurements.
    pub concurrency: Vec<usize>,
    /// Result sizes relayed, MiB.
    pub sizes_mib: Vec<usize>,
    /// Bridge starts per startup measurement.
    pub startups: usize,
    /// Domain reloads measured.
    pub reloads: usize,
    /// Calls between the idle and the after-calls memory readings.
    pub calls: usize,
    /// The tool called, with its arguments; `None` picks the first of
    /// `ping` and `get-logs` that every bridge offers.
    pub tool: Option<(String, Value)>,
    /// The bridge the conformance suite is timed with; `None` skips it.
    pub suite_bridge: Option<BridgeCommand>,
    /// How long the Editor is away while the bridge's CPU time is read.
    pub outage: Duration,
    /// How long a bridge may take to give a real answer after a reload
    /// before the reload measurement fails for it.
    pub recovery_limit: Duration,
}

/// A measurement, or why it could not be made.
pub type Measured<T> = Result<T, String>;

/// Round-trip times of the same request straight over the editor link and
/// as an MCP `tools/call` through the bridge, µs.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Overhead {
    pub direct_us: Stats,
    pub bridge_us: Stats,
    /// Per pair: through the bridge minus direct.
    pub difference_us: Stats,
    /// The difference's median in each round (its spread across rounds).
    pub round_medians_us: Stats,
}

/// What a bridge did with a large result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResultMode {
    /// The whole result in the MCP answer (ours with `--result-budget` above it).
    Relayed,
    /// Saved to a file and summarised (our default above the output budget).
    SavedToFile,
    /// Another bridge's answer was smaller than the result.
    Summarised,
}

impl std::fmt::Display for ResultMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ResultMode::Relayed => "relayed",
            ResultMode::SavedToFile => "saved-to-file",
            ResultMode::Summarised => "summarised",
        })
    }
}

/// A large result relayed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Large {
    pub mib: usize,
    pub mode: ResultMode,
    pub time_ms: Measured<Stats>,
    pub peak_rss_kb: Measured<Stats>,
    /// Size of the MCP answer line, bytes.
    pub answer_bytes: Measured<Stats>,
}

/// Resident memory idle and after `calls` calls, KiB.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Memory {
    pub idle_kb: Stats,
    pub after_calls_kb: Stats,
    /// The bridge's CPU time (user and system) per call over those calls.
    pub cpu_us_per_call: Stats,
}

/// The figures of one bridge.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BridgeFigures {
    pub label: String,
    pub ours: bool,
    pub overhead: Measured<Overhead>,
    /// Real calls per second, by calls in flight.
    pub throughput_cps: Vec<(usize, Measured<Stats>)>,
    pub large: Vec<Large>,
    pub reload_recovery_ms: Measured<Stats>,
    /// How the calls during the reloads were answered.
    pub reload_window: Measured<Tally>,
    /// The bridge's CPU time over an outage (`outage_s`) with a call waiting, ms.
    pub outage_cpu_ms: Measured<f64>,
    /// Answers of the overhead and throughput measurements, by verdict
    /// (only real ones are in their figures).
    pub answers: Tally,
    pub startup_initialize_ms: Measured<Stats>,
    /// A call in a project no Unity has open (its discovery file naming a
    /// dead process, as a crash leaves it): sent to its answer (ours only:
    /// it says so at once; a bridge without the look waits the call's
    /// deadline, which is not a figure).
    pub no_editor_answer_ms: Option<Measured<Stats>>,
    /// Start to the first `tools/list` answer, the Editor connected, without
    /// our on-disk tool cache.
    pub startup_tools_list_ms: Measured<Stats>,
    /// The same with the cache (ours only).
    pub startup_tools_list_cached_ms: Option<Measured<Stats>>,
    pub memory: Measured<Memory>,
}

/// The conformance suite against the embedded fake, timed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SuiteRun {
    pub wall_s: f64,
    pub cases: usize,
    pub passed: usize,
    pub failed: usize,
    /// Not applicable to the package's Editor (another catalogue's cases).
    pub not_applicable: usize,
}

/// Everything one run measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Figures {
    pub machine: report::Machine,
    /// The tool called and its arguments.
    pub tool: String,
    pub tool_arguments: Value,
    /// What counted as a successful call, in words.
    pub success_rule: String,
    pub calls: usize,
    pub bridges: Vec<BridgeFigures>,
    /// Requests per second the fake serves (pings, several connections).
    pub fake_rps: Measured<Stats>,
    pub suite: Option<SuiteRun>,
    /// The outage over which the bridges' CPU time was read, seconds.
    pub outage_s: f64,
}

/// What one measurement works against.
struct Bench<'a> {
    options: &'a BenchOptions,
    fake: FakeUnity,
    project: &'a Path,
    tool: String,
    arguments: Value,
    /// The next `bench-N` message a `ping` call carries.
    nonce: std::sync::atomic::AtomicU64,
}

impl Bench<'_> {
    fn port(&self) -> u16 {
        self.fake.port()
    }

    /// How often the Editor has run the tool.
    fn runs(&self) -> u64 {
        self.fake.editor().stats.runs(&self.tool)
    }

    /// Whether answers are checked for the call's own echo (`ping`).
    fn echoes(&self) -> bool {
        self.tool == methods::PING
    }

    /// The next call's arguments, and the echo its answer must carry.
    fn next_call(&self) -> (Value, Option<u64>) {
        if !self.echoes() {
            return (self.arguments.clone(), None);
        }
        let n = self.nonce.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut arguments = self.arguments.clone();
        arguments["Message"] = json!(format!("{}{n}", clients::ECHO_PREFIX));
        (arguments, Some(n))
    }

    /// One call through the bridge, timed, with its verdict.
    async fn judged_call(&self, child: &mut McpChild) -> anyhow::Result<(Duration, Verdict)> {
        let (arguments, echo) = self.next_call();
        let runs = self.runs();
        let started = Instant::now();
        let answer = child.request("tools/call", &json!({"name": self.tool, "arguments": arguments})).await?;
        let took = started.elapsed();
        Ok((took, verdict::judge(&answer, echo, self.runs() - runs, 0)))
    }

    /// A started, initialized bridge with its tool list loaded.
    async fn ready(&self, bridge: &BridgeUnderTest, extra: &[&str]) -> anyhow::Result<McpChild> {
        let mut child = bridge.spawn(self.project, self.port(), extra)?;
        child.scan_echo = self.echoes();
        child.initialize().await?;
        let names = child.tool_names().await?;
        anyhow::ensure!(
            names.contains(&self.tool),
            "{} does not offer the tool {:?} (it offers {names:?})",
            bridge.label,
            self.tool
        );
        Ok(child)
    }

    async fn warm_up(&self, child: &mut McpChild, calls: usize) -> anyhow::Result<()> {
        for _ in 0..calls {
            child.call(&self.tool, &self.arguments).await?;
        }
        Ok(())
    }

    /// Paired round trips: the request straight to the Editor, then as a
    /// `tools/call` through the bridge (alternating which goes first).
    /// Only pairs whose bridge call was real count; the others are tallied.
    async fn overhead(&self, bridge: &BridgeUnderTest, tally: &mut Tally) -> anyhow::Result<Overhead> {
        let (mut direct_us, mut bridge_us, mut difference_us, mut round_medians_us) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..self.options.rounds {
            let mut child = self.ready(bridge, &[]).await?;
            let mut link = DirectClient::connect(self.port(), self.fake.editor().token()).await?;
            self.warm_up(&mut child, 50).await?;
            for _ in 0..50 {
                link.request(&self.tool, &self.arguments).await?;
            }
            let mut round = Vec::with_capacity(self.options.samples);
            for i in 0..self.options.samples {
                let (direct, (through, verdict)) = if i % 2 == 0 {
                    let direct = time(link.request(&self.tool, &self.arguments)).await?;
                    (direct, self.judged_call(&mut child).await?)
                } else {
                    let through = self.judged_call(&mut child).await?;
                    (time(link.request(&self.tool, &self.arguments)).await?, through)
                };
                tally.count(verdict);
                if verdict != Verdict::Real {
                    continue;
                }
                let (d, b) = (direct.as_secs_f64() * 1e6, through.as_secs_f64() * 1e6);
                direct_us.push(d);
                bridge_us.push(b);
                difference_us.push(b - d);
                round.push(b - d);
            }
            anyhow::ensure!(
                round.len() * 2 >= self.options.samples,
                "only {} of {} calls through the bridge were real answers ({} failed, {} not run by the Editor)",
                round.len(),
                self.options.samples,
                tally.failed,
                tally.not_run
            );
            round_medians_us.push(Stats::of(round).p50);
        }
        Ok(Overhead {
            direct_us: Stats::of(direct_us),
            bridge_us: Stats::of(bridge_us),
            difference_us: Stats::of(difference_us),
            round_medians_us: Stats::of(round_medians_us),
        })
    }

    /// Real calls per second with `in_flight` calls outstanding, one figure
    /// per round; the answers that were not real are tallied.
    async fn throughput(&self, bridge: &BridgeUnderTest, tally: &mut Tally) -> Vec<(usize, Measured<Stats>)> {
        let mut samples: Vec<(usize, Result<Vec<f64>, String>)> =
            self.options.concurrency.iter().map(|&c| (c, Ok(Vec::new()))).collect();
        for _ in 0..self.options.rounds {
            let mut child = match self.ready(bridge, &[]).await {
                Ok(child) => child,
                Err(e) => return samples.into_iter().map(|(c, _)| (c, Err(format!("{e:#}")))).collect(),
            };
            if let Err(e) = self.warm_up(&mut child, 100).await {
                samples.iter_mut().for_each(|(_, s)| *s = Err(format!("{e:#}")));
                break;
            }
            for (in_flight, outcome) in &mut samples {
                let Ok(figures) = outcome else { continue };
                let total = self.options.throughput_calls;
                let runs = self.runs();
                match child.pipelined(&self.tool, || self.next_call(), total, *in_flight).await {
                    Ok((took, answered)) => {
                        let round = verdict::judge_many(&answered, self.runs() - runs);
                        tally.add(round);
                        figures.push(round.real as f64 / took.as_secs_f64());
                    }
                    Err(e) => *outcome = Err(format!("{e:#}")),
                }
            }
        }
        samples.into_iter().map(|(c, s)| (c, s.map(Stats::of))).collect()
    }

    /// One large result per round, each in a fresh bridge (so its peak
    /// memory is this result's).
    async fn large(&self, bridge: &BridgeUnderTest, mib: usize, mode: ResultMode) -> Large {
        let bytes = mib << 20;
        let (mut times, mut peaks, mut sizes) = (Vec::new(), Vec::new(), Vec::new());
        let budget = (bytes * 4).to_string();
        let extra: Vec<&str> = if mode == ResultMode::Relayed { vec!["--result-budget", &budget] } else { vec![] };
        let outcome: anyhow::Result<()> = async {
            for _ in 0..self.options.rounds {
                let mut child = self.ready(bridge, &extra).await?;
                child.call(&self.tool, &self.arguments).await?;
                let rule = RuleSpec::new(Fault::ResponseSize(fake_unity::faults::ResponseSize { bytes }))
                    .method(&self.tool)
                    .times(1);
                // Checked below, as an error rather than the guard's panic.
                let fault = self.fake.add_fault(rule)?.expect(0..);
                let started = Instant::now();
                let id = child.send("tools/call", &json!({"name": self.tool, "arguments": self.arguments})).await?;
                let answer = child.answer_to(id, mode != ResultMode::Relayed).await?;
                let took = started.elapsed();
                anyhow::ensure!(fault.fired() == 1, "the fake did not pad the result");
                if let Some(error) = answer.error {
                    anyhow::bail!("a {mib} MiB result was not relayed: {error}");
                }
                if bridge.is_ours() {
                    check_large_answer(&answer, bytes, mode)?;
                }
                times.push(took.as_secs_f64() * 1000.0);
                peaks.push(child.peak_rss_kb()? as f64);
                sizes.push(answer.bytes as f64);
            }
            Ok(())
        }
        .await;
        let fail = |e: &anyhow::Error| Err(format!("{e:#}"));
        // Another bridge is run as it is configured: its answers tell
        // whether it relayed the result or summarised it (as ours does
        // above its output budget).
        let mode =
            if !bridge.is_ours() && sizes.iter().any(|&s| s < bytes as f64) { ResultMode::Summarised } else { mode };
        match outcome {
            Ok(()) => Large {
                mib,
                mode,
                time_ms: Ok(Stats::of(times)),
                peak_rss_kb: Ok(Stats::of(peaks)),
                answer_bytes: Ok(Stats::of(sizes)),
            },
            Err(e) => Large { mib, mode, time_ms: fail(&e), peak_rss_kb: fail(&e), answer_bytes: fail(&e) },
        }
    }

    /// Over each reload, with a call sent every 10 ms (up to 4 waiting)
    /// from the moment the Editor starts reloading: the Editor listening
    /// again to the first real answer, and how every call in that window
    /// was answered.
    async fn reload_recovery(&self, bridge: &BridgeUnderTest) -> anyhow::Result<Recovery> {
        const EVERY: Duration = Duration::from_millis(10);
        const WAITING: usize = 4;
        let mut child = self.ready(bridge, &[]).await?;
        self.warm_up(&mut child, 1).await?;
        let (mut samples, mut window) = (Vec::new(), Tally::default());
        for _ in 0..self.options.reloads {
            let (tx, mut done) = tokio::sync::oneshot::channel();
            self.fake.editor().request_reload(ReloadOptions::default(), Some(tx));
            let deadline = Instant::now() + Duration::from_secs(10);
            while self.fake.editor().phase() != EditorState::Reloading {
                anyhow::ensure!(Instant::now() < deadline, "the fake did not start reloading within 10 s");
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            let runs_before = self.runs();
            let limit = self.options.recovery_limit;
            let deadline = Instant::now() + limit;
            let (mut waiting, mut real) = (std::collections::HashMap::new(), 0u64);
            let (mut listening, mut next_send) = (None, Instant::now());
            let first_real = loop {
                anyhow::ensure!(Instant::now() < deadline, "no real answer within {limit:?} of a reload ({window:?})");
                if waiting.len() < WAITING && Instant::now() >= next_send {
                    let (arguments, echo) = self.next_call();
                    let id = child.send("tools/call", &json!({"name": self.tool, "arguments": arguments})).await?;
                    waiting.insert(id, echo);
                    next_send = Instant::now() + EVERY;
                }
                let Some(answer) = child.next_answer_within(Duration::from_millis(2), false).await? else { continue };
                let arrived = Instant::now();
                let Some(echo) = waiting.remove(&answer.id) else { continue };
                if listening.is_none() {
                    listening =
                        done.try_recv().ok().map(|report: fake_unity::editor::ReloadReport| report.listening_at);
                }
                let verdict = verdict::judge(&answer, echo, self.runs() - runs_before, real);
                window.count(verdict);
                if verdict == Verdict::Real {
                    real += 1;
                    // One the old domain answered before it went away does
                    // not count: only one answered once it is back.
                    if let Some(Some(listening)) = listening {
                        break arrived.saturating_duration_since(listening);
                    }
                }
            };
            samples.push(first_real.as_secs_f64() * 1000.0);
            // The calls still waiting were made in the window too.
            let drain_until = Instant::now() + Duration::from_secs(10);
            while !waiting.is_empty() && Instant::now() < drain_until {
                let Some(answer) = child.next_answer_within(Duration::from_millis(100), false).await? else { continue };
                let Some(echo) = waiting.remove(&answer.id) else { continue };
                let verdict = verdict::judge(&answer, echo, self.runs() - runs_before, real);
                window.count(verdict);
                real += u64::from(verdict == Verdict::Real);
            }
            window.unanswered += waiting.len() as u64;
        }
        Ok(Recovery { ms: Stats::of(samples), window })
    }

    /// The bridge's CPU time while the Editor is away (`outage`) and a call
    /// waits for it (does it spin while it waits?).
    async fn outage_cpu(&self, bridge: &BridgeUnderTest) -> anyhow::Result<f64> {
        let outage = self.options.outage;
        let mut child = self.ready(bridge, &[]).await?;
        self.warm_up(&mut child, 1).await?;
        let (tx, done) = tokio::sync::oneshot::channel();
        self.fake
            .editor()
            .request_reload(ReloadOptions { downtime: Some(outage), ..ReloadOptions::default() }, Some(tx));
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.fake.editor().phase() != EditorState::Reloading {
            anyhow::ensure!(Instant::now() < deadline, "the fake did not start reloading within 10 s");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let (arguments, _) = self.next_call();
        let id = child.send("tools/call", &json!({"name": self.tool, "arguments": arguments})).await?;
        let before = child.cpu_time()?;
        tokio::time::timeout(outage * 3, done).await.map_err(|_| anyhow::anyhow!("the fake did not come back"))??;
        let used = child.cpu_time()? - before;
        child.answer_to(id, false).await?;
        Ok(used.as_secs_f64() * 1000.0)
    }

    /// Process start to the `initialize` answer.
    async fn startup_initialize(&self, bridge: &BridgeUnderTest) -> anyhow::Result<Stats> {
        let mut samples = Vec::new();
        for _ in 0..self.options.startups {
            let started = Instant::now();
            let mut child = bridge.spawn(self.project, self.port(), &[])?;
            child.initialize().await?;
            samples.push(started.elapsed().as_secs_f64() * 1000.0);
        }
        Ok(Stats::of(samples))
    }

    /// A call in a project no Unity has open, from sent to answered.
    async fn no_editor_answer(&self, bridge: &BridgeUnderTest) -> anyhow::Result<Stats> {
        let project = tempfile::tempdir()?;
        for folder in ["Assets", "ProjectSettings"] {
            std::fs::create_dir_all(project.path().join(folder))?;
        }
        // A crashed Editor's leftovers: its discovery file naming a dead process.
        fake_unity::editor::leave_crashed_discovery(project.path())?;
        let mut samples = Vec::new();
        for _ in 0..self.options.startups {
            let mut child = bridge.spawn(project.path(), 0, &[])?;
            child.initialize().await?;
            let started = Instant::now();
            let answer =
                child.request("tools/call", &json!({"name": "get-logs", "arguments": {"TimeoutSeconds": 60}})).await?;
            samples.push(started.elapsed().as_secs_f64() * 1000.0);
            anyhow::ensure!(answer.error.is_some(), "a call with no Unity open was answered with a success");
        }
        Ok(Stats::of(samples))
    }

    /// Process start to the first `tools/list` answer with the Editor
    /// running, with or without our tool cache on disk.
    async fn startup_tools_list(&self, bridge: &BridgeUnderTest, cached: bool) -> anyhow::Result<Stats> {
        let cache = unity_mcp_bridge::tools::ToolCache::for_project(self.project).path().to_path_buf();
        let mut samples = Vec::new();
        for _ in 0..self.options.startups {
            if cached {
                anyhow::ensure!(cache.is_file(), "the bridge wrote no tool cache at {}", cache.display());
            } else if cache.exists() {
                std::fs::remove_file(&cache)?;
            }
            let started = Instant::now();
            let mut child = bridge.spawn(self.project, self.port(), &[])?;
            child.initialize().await?;
            let names = child.tool_names().await?;
            samples.push(started.elapsed().as_secs_f64() * 1000.0);
            anyhow::ensure!(names.contains(&self.tool), "the first tools/list lacks {}", self.tool);
            // The cache is written when the Editor's list arrives, which may
            // be just after the answer.
            if !cached && bridge.is_ours() {
                let deadline = Instant::now() + Duration::from_secs(5);
                while !cache.is_file() && Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }
        Ok(Stats::of(samples))
    }

    /// Resident memory after start and a first call, and after `calls` more.
    async fn memory(&self, bridge: &BridgeUnderTest) -> anyhow::Result<Memory> {
        let (mut idle, mut after, mut cpu) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..self.options.rounds {
            let mut child = self.ready(bridge, &[]).await?;
            self.warm_up(&mut child, 1).await?;
            tokio::time::sleep(Duration::from_secs(1)).await;
            idle.push(child.rss_kb()? as f64);
            let cpu_before = child.cpu_time()?;
            self.warm_up(&mut child, self.options.calls).await?;
            cpu.push((child.cpu_time()? - cpu_before).as_secs_f64() * 1e6 / self.options.calls.max(1) as f64);
            tokio::time::sleep(Duration::from_secs(1)).await;
            after.push(child.rss_kb()? as f64);
        }
        Ok(Memory { idle_kb: Stats::of(idle), after_calls_kb: Stats::of(after), cpu_us_per_call: Stats::of(cpu) })
    }

    async fn bridge(&self, bridge: &BridgeUnderTest) -> BridgeFigures {
        let measured = |r: anyhow::Result<Stats>| r.map_err(|e| format!("{e:#}"));
        tracing::info!(bridge = %bridge.label, "startup");
        let startup_initialize_ms = measured(self.startup_initialize(bridge).await);
        let startup_tools_list_ms = measured(self.startup_tools_list(bridge, false).await);
        let startup_tools_list_cached_ms =
            bridge.is_ours().then_some(measured(self.startup_tools_list(bridge, true).await));
        let no_editor_answer_ms = match bridge.is_ours() {
            true => Some(measured(self.no_editor_answer(bridge).await)),
            false => None,
        };
        let mut answers = Tally::default();
        tracing::info!(bridge = %bridge.label, "overhead");
        let overhead = self.overhead(bridge, &mut answers).await.map_err(|e| format!("{e:#}"));
        tracing::info!(bridge = %bridge.label, "throughput");
        let throughput_cps = self.throughput(bridge, &mut answers).await;
        tracing::info!(bridge = %bridge.label, "large results");
        let mut large = Vec::new();
        for &mib in &self.options.sizes_mib {
            large.push(self.large(bridge, mib, ResultMode::Relayed).await);
            if bridge.is_ours() {
                large.push(self.large(bridge, mib, ResultMode::SavedToFile).await);
            }
        }
        tracing::info!(bridge = %bridge.label, "memory");
        let memory = self.memory(bridge).await.map_err(|e| format!("{e:#}"));
        tracing::info!(bridge = %bridge.label, "reload recovery");
        let recovery = self.reload_recovery(bridge).await.map_err(|e| format!("{e:#}"));
        let reload_recovery_ms = recovery.as_ref().map(|r| r.ms).map_err(Clone::clone);
        let reload_window = recovery.map(|r| r.window);
        tracing::info!(bridge = %bridge.label, "CPU over an outage");
        let outage_cpu_ms = self.outage_cpu(bridge).await.map_err(|e| format!("{e:#}"));
        BridgeFigures {
            label: bridge.label.clone(),
            ours: bridge.is_ours(),
            overhead,
            throughput_cps,
            large,
            reload_recovery_ms,
            reload_window,
            outage_cpu_ms,
            answers,
            startup_initialize_ms,
            startup_tools_list_ms,
            startup_tools_list_cached_ms,
            no_editor_answer_ms,
            memory,
        }
    }

    /// Requests per second the fake answers: pings pipelined on several
    /// connections at once.
    async fn fake_rps(&self) -> anyhow::Result<Stats> {
        const CONNECTIONS: usize = 4;
        const IN_FLIGHT: usize = 16;
        let per_connection = (self.options.throughput_calls * 4).max(1000);
        let mut samples = Vec::new();
        for _ in 0..self.options.rounds {
            let mut links = Vec::new();
            for _ in 0..CONNECTIONS {
                links.push(DirectClient::connect(self.port(), self.fake.editor().token()).await?);
            }
            let started = Instant::now();
            let tasks: Vec<_> = links
                .into_iter()
                .map(|mut link| {
                    tokio::spawn(
                        async move { link.pipelined(methods::PING, &json!({}), per_connection, IN_FLIGHT).await },
                    )
                })
                .collect();
            for task in tasks {
                task.await??;
            }
            samples.push((CONNECTIONS * per_connection) as f64 / started.elapsed().as_secs_f64());
        }
        Ok(Stats::of(samples))
    }
}

/// The measurements of `b` that failed, with why.
pub fn failures(b: &BridgeFigures) -> Vec<String> {
    let mut out = Vec::new();
    let mut note = |name: &str, error: Option<&String>| {
        if let Some(error) = error {
            out.push(format!("{name}: {error}"));
        }
    };
    note("overhead", b.overhead.as_ref().err());
    for (in_flight, cps) in &b.throughput_cps {
        note(&format!("throughput with {in_flight} in flight"), cps.as_ref().err());
    }
    for large in &b.large {
        note(&format!("{} MiB result {}", large.mib, large.mode), large.time_ms.as_ref().err());
    }
    note("reload recovery", b.reload_recovery_ms.as_ref().err());
    note("CPU over an outage", b.outage_cpu_ms.as_ref().err());
    note("start to initialize", b.startup_initialize_ms.as_ref().err());
    note("start to tools/list", b.startup_tools_list_ms.as_ref().err());
    if let Some(cached) = &b.startup_tools_list_cached_ms {
        note("start to tools/list with the cache", cached.as_ref().err());
    }
    if let Some(absent) = &b.no_editor_answer_ms {
        note("a call with no Unity open", absent.as_ref().err());
    }
    note("memory", b.memory.as_ref().err());
    out
}

/// Checks that our bridge relayed (or saved) the whole result.
fn check_large_answer(answer: &clients::Answer, bytes: usize, mode: ResultMode) -> anyhow::Result<()> {
    if mode == ResultMode::Relayed {
        anyhow::ensure!(
            answer.bytes >= bytes,
            "the answer is {} bytes, less than the {bytes} bytes result",
            answer.bytes
        );
        return Ok(());
    }
    let structured = answer.value.as_ref().map(|v| &v["result"]["structuredContent"]);
    let saved = structured.and_then(|s| s["resultSavedToFile"].as_str()).unwrap_or_default();
    let size = structured.and_then(|s| s["resultSizeBytes"].as_u64()).unwrap_or(0);
    anyhow::ensure!(
        size as f64 >= bytes as f64 * 0.99 && Path::new(saved).metadata().is_ok_and(|m| m.len() >= size),
        "the result was not saved whole ({size} bytes reported, file {saved:?})"
    );
    let _ = std::fs::remove_file(saved);
    Ok(())
}

async fn time<T>(f: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<Duration> {
    let started = Instant::now();
    f.await?;
    Ok(started.elapsed())
}

/// The first of `ping` and `get-logs` every bridge offers (or the chosen tool).
async fn choose_tool(options: &BenchOptions, project: &Path, port: u16) -> anyhow::Result<(String, Value)> {
    if let Some(tool) = &options.tool {
        return Ok(tool.clone());
    }
    let mut candidates = vec![(methods::PING, json!({})), ("get-logs", json!({"MaxCount": 1}))];
    for bridge in std::iter::once(&options.ours).chain(&options.others) {
        let mut child = bridge.spawn(project, port, &[])?;
        child.initialize().await.map_err(|e| anyhow::anyhow!("{}: {e:#}", bridge.label))?;
        let names = child.tool_names().await.map_err(|e| anyhow::anyhow!("{}: {e:#}", bridge.label))?;
        candidates.retain(|(c, _)| names.iter().any(|n| n == c));
    }
    let (tool, arguments) = candidates.into_iter().next().ok_or_else(|| {
        anyhow::anyhow!("the bridges have neither ping nor get-logs in common; name a tool with --tool")
    })?;
    Ok((tool.to_owned(), arguments))
}

/// The whole conformance suite against the embedded fake, with `bridge`, as
/// `run` runs it: the cases that apply to what the Editor offers.
async fn suite(bridge: &BridgeCommand) -> SuiteRun {
    let target = Target::Fake { editor: fake_unity::EditorKind::Package, defect: None };
    let cases = crate::cases::catalogue();
    let started = Instant::now();
    let offers = crate::profile::Offers::find_out(&target, bridge).await.ok();
    let scope = crate::profile::Scope { offers, ..crate::profile::Scope::default() };
    let (jobs, baseline) = (crate::runner::DEFAULT_JOBS, crate::runner::Baseline::default());
    let results = crate::runner::run_all(&target, bridge, &scope, &cases, jobs, &baseline, |_, _| {}).await;
    let wall_s = started.elapsed().as_secs_f64();
    let summary = crate::runner::Summary::of(&results);
    SuiteRun {
        wall_s,
        cases: summary.total,
        passed: summary.passed,
        failed: summary.total - summary.passed - summary.skipped,
        not_applicable: summary.skipped,
    }
}

/// Runs every measurement.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Figures> {
    let project = crate::target::fixture_copy().map_err(anyhow::Error::msg)?;
    let mut config = Config::new(project.path());
    config.seed = Some(11);
    // uLoopMCP's own server, measured beside ours, is a legacy client that
    // cannot send the token: the Editor lets such clients in, as its user
    // would have to. Ours and the direct floor send it all the same.
    config.state.settings.allow_clients_without_token = true;
    let fake = FakeUnity::start(config).await?;
    let (tool, arguments) = choose_tool(options, project.path(), fake.port()).await?;
    let bench = Bench { options, fake, project: project.path(), tool, arguments, nonce: Default::default() };
    let mut bridges = Vec::new();
    for bridge in std::iter::once(&options.ours).chain(&options.others) {
        bridges.push(bench.bridge(bridge).await);
    }
    tracing::info!("the fake's request rate");
    let fake_rps = bench.fake_rps().await.map_err(|e| format!("{e:#}"));
    let Bench { fake, tool, arguments, .. } = bench;
    let success_rule = success_rule(&tool);
    fake.quit().await;
    let suite = match &options.suite_bridge {
        Some(bridge) => {
            tracing::info!("the conformance suite");
            Some(suite(bridge).await)
        }
        None => None,
    };
    Ok(Figures {
        machine: report::Machine::this(),
        tool,
        tool_arguments: arguments,
        success_rule,
        calls: options.calls,
        bridges,
        fake_rps,
        suite,
        outage_s: options.outage.as_secs_f64(),
    })
}
