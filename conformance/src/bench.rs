//! `unity-conformance bench`: measured figures for the bridge, against a
//! fake Editor in this process and the real bridge binary as a child process
//! driven over stdio by a minimal JSON-lines MCP client (so the client's own
//! cost stays out of the figures).
//!
//! Measured so far: start to the `initialize` answer; reload recovery (the
//! Editor listening again to the first successful MCP call); resident memory
//! idle and after many calls. Every figure is reported with its spread.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::{Duration, Instant},
};

use fake_unity::{Config, FakeUnity, ReloadOptions};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines},
    process::{Child, ChildStdin, ChildStdout, Command},
};
use unity_mcp_bridge::discovery::EditorState;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// The bridge binary.
    pub bridge: PathBuf,
    pub startups: usize,
    pub reloads: usize,
    pub calls: usize,
}

/// Summary statistics of one measurement.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Stats {
    pub n: usize,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Stats {
    pub fn of(mut samples: Vec<f64>) -> Stats {
        samples.sort_by(|a, b| a.total_cmp(b));
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        Stats {
            n: samples.len(),
            min: samples[0],
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: samples[samples.len() - 1],
        }
    }
}

/// The figures of one run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Figures {
    pub startup_ms: Stats,
    pub reload_recovery_ms: Stats,
    pub rss_kb_idle: u64,
    pub rss_kb_after_calls: u64,
    pub calls: usize,
    pub calls_per_second: f64,
}

/// A project folder the fake can serve: the fixture project when it is
/// there, else an empty Unity-shaped folder.
fn project() -> anyhow::Result<tempfile::TempDir> {
    let dir = tempfile::tempdir()?;
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/unity-project");
    if fixture.is_dir() {
        fake_unity::copy_dir(&fixture, dir.path())?;
    } else {
        std::fs::create_dir_all(dir.path().join("Assets"))?;
        std::fs::create_dir_all(dir.path().join("ProjectSettings"))?;
    }
    Ok(dir)
}

/// The bridge as a child process, spoken to line by line.
struct McpChild {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl McpChild {
    fn spawn(bridge: &Path, project: &Path) -> anyhow::Result<McpChild> {
        let mut child = Command::new(bridge)
            .arg("--project")
            .arg(project)
            .args(["--log-level", "error"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| anyhow::anyhow!("cannot start {}: {e}", bridge.display()))?;
        let stdin = child.stdin.take().ok_or_else(|| anyhow::anyhow!("no stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?;
        Ok(McpChild { child, stdin, lines: BufReader::new(stdout).lines(), next_id: 1 })
    }

    async fn send(&mut self, method: &str, params: Value) -> anyhow::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        self.stdin.write_all(line.as_bytes()).await?;
        self.stdin.write_all(b"\n").await?;
        self.stdin.flush().await?;
        Ok(id)
    }

    async fn answer(&mut self, id: u64) -> anyhow::Result<Value> {
        loop {
            let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
                .await
                .map_err(|_| anyhow::anyhow!("no answer to request {id} within 60 s"))??
                .ok_or_else(|| anyhow::anyhow!("the bridge closed stdout"))?;
            let message: Value = serde_json::from_str(&line)?;
            if message["id"] == json!(id) {
                return Ok(message);
            }
        }
    }

    async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.send(method, params).await?;
        self.answer(id).await
    }

    async fn initialize(&mut self) -> anyhow::Result<Value> {
        let answer = self
            .request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}),
            )
            .await?;
        let line = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
        self.stdin.write_all(format!("{line}\n").as_bytes()).await?;
        Ok(answer)
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> anyhow::Result<Value> {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments})).await?;
        if answer["result"]["isError"] == true || answer.get("error").is_some() {
            anyhow::bail!("{tool} failed: {answer}");
        }
        Ok(answer)
    }

    /// Resident set size in KiB (Linux).
    fn rss_kb(&self) -> anyhow::Result<u64> {
        let pid = self.child.id().ok_or_else(|| anyhow::anyhow!("the bridge has exited"))?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map_err(|e| anyhow::anyhow!("cannot read the bridge's memory (Linux /proc needed): {e}"))?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .ok_or_else(|| anyhow::anyhow!("no VmRSS in /proc/{pid}/status"))
    }
}

async fn fake(project: &Path) -> anyhow::Result<FakeUnity> {
    let mut config = Config::new(project);
    config.seed = Some(11);
    config.state.editor.reload_downtime_ms = 200;
    config.state.editor.tools_ready_delay_ms = 20;
    Ok(FakeUnity::start(config).await?)
}

/// Process start to the `initialize` answer.
async fn startup(options: &BenchOptions, project: &Path) -> anyhow::Result<Stats> {
    let mut samples = Vec::new();
    for _ in 0..options.startups {
        let started = Instant::now();
        let mut bridge = McpChild::spawn(&options.bridge, project)?;
        bridge.initialize().await?;
        samples.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(Stats::of(samples))
}

/// The Editor listening again to the first successful MCP call, the call
/// having been made while the Editor was down.
async fn reload_recovery(options: &BenchOptions, fake: &FakeUnity, bridge: &mut McpChild) -> anyhow::Result<Stats> {
    let mut samples = Vec::new();
    for _ in 0..options.reloads {
        let editor = fake.editor().clone();
        let reload = tokio::spawn(async move {
            let (tx, rx) = tokio::sync::oneshot::channel();
            editor.request_reload(ReloadOptions::default(), Some(tx));
            rx.await
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while fake.editor().phase() != EditorState::Reloading {
            anyhow::ensure!(Instant::now() < deadline, "the fake did not start reloading");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        bridge.call("get-logs", json!({"MaxCount": 1})).await?;
        let answered = Instant::now();
        let report = reload.await??;
        let listening = report.listening_at.ok_or_else(|| anyhow::anyhow!("no listening time"))?;
        samples.push(answered.saturating_duration_since(listening).as_secs_f64() * 1000.0);
    }
    Ok(Stats::of(samples))
}

/// Runs every measurement.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Figures> {
    let project = project()?;
    let fake = fake(project.path()).await?;
    let startup_ms = startup(options, project.path()).await?;

    let mut bridge = McpChild::spawn(&options.bridge, project.path())?;
    bridge.initialize().await?;
    bridge.request("tools/list", json!({})).await?;
    bridge.call("get-logs", json!({"MaxCount": 1})).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_kb_idle = bridge.rss_kb()?;
    let started = Instant::now();
    for _ in 0..options.calls {
        bridge.call("get-logs", json!({"MaxCount": 1})).await?;
    }
    let calls_per_second = options.calls as f64 / started.elapsed().as_secs_f64();
    let rss_kb_after_calls = bridge.rss_kb()?;

    let reload_recovery_ms = reload_recovery(options, &fake, &mut bridge).await?;
    drop(bridge);
    fake.quit().await;
    Ok(Figures {
        startup_ms,
        reload_recovery_ms,
        rss_kb_idle,
        rss_kb_after_calls,
        calls: options.calls,
        calls_per_second,
    })
}

/// The human-readable table.
pub fn table(f: &Figures) -> String {
    let row = |name: &str, s: &Stats, unit: &str| {
        format!("{name:<34} {:>9.2} {:>9.2} {:>9.2} {:>9.2}  {unit} (n={})\n", s.p50, s.p90, s.p99, s.max, s.n)
    };
    let mut out = format!("{:<34} {:>9} {:>9} {:>9} {:>9}\n", "measurement", "p50", "p90", "p99", "max");
    out.push_str(&row("start to initialize answer", &f.startup_ms, "ms"));
    out.push_str(&row("reload: listening to first call", &f.reload_recovery_ms, "ms"));
    out.push_str(&format!("{:<34} {:>9} kB\n", "bridge RSS idle", f.rss_kb_idle));
    out.push_str(&format!("{:<34} {:>9} kB\n", format!("bridge RSS after {} calls", f.calls), f.rss_kb_after_calls));
    out.push_str(&format!(
        "{:<34} {:>9.0} calls/s (sequential)\n",
        "tools/call through the bridge", f.calls_per_second
    ));
    out
}

/// The `--json` document (keys as the benchmark issue names them).
pub fn json_report(f: &Figures) -> Value {
    json!({
        "startup_ms": {"initialize": f.startup_ms.p50, "spread": f.startup_ms},
        "reload_recovery_ms": {"p50": f.reload_recovery_ms.p50, "max": f.reload_recovery_ms.max, "spread": f.reload_recovery_ms},
        "rss_kb": {"idle": f.rss_kb_idle, "after_10k_calls": f.rss_kb_after_calls},
        "calls": f.calls,
        "sequential_calls_per_second": f.calls_per_second,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_pick_the_right_samples() {
        let s = Stats::of((1..=100).rev().map(f64::from).collect());
        assert_eq!((s.n, s.min, s.p50, s.p90, s.p99, s.max), (100, 1.0, 51.0, 90.0, 99.0, 100.0));
        let one = Stats::of(vec![7.0]);
        assert_eq!((one.p50, one.max), (7.0, 7.0));
    }
}
