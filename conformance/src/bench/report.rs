//! The benchmark's statistics, the table on stdout and the `--json` document.

use serde_json::{Map, Value, json};

use super::{BridgeFigures, Figures, Measured, ResultMode};

/// Summary statistics of repeated measurements (percentiles by nearest rank).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Stats {
    pub n: usize,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Stats {
    /// The statistics of `samples` (at least one).
    pub fn of(mut samples: Vec<f64>) -> Stats {
        if samples.is_empty() {
            samples.push(f64::NAN);
        }
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

/// The machine the figures were measured on.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub memory_gib: f64,
    pub os: String,
    /// `release` or `debug`: a debug build's figures are not meaningful.
    pub build: &'static str,
}

impl Machine {
    pub fn this() -> Machine {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let cpu = read("/proc/cpuinfo")
            .lines()
            .find_map(|l| {
                l.strip_prefix("model name").and_then(|v| v.split_once(':')).map(|(_, v)| v.trim().to_owned())
            })
            .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
        let memory_kb: f64 = read("/proc/meminfo")
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0.0);
        let kernel = read("/proc/sys/kernel/osrelease");
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            memory_gib: (memory_kb / 1024.0 / 1024.0 * 10.0).round() / 10.0,
            os: format!("{} {}", std::env::consts::OS, kernel.trim()),
            build: if cfg!(debug_assertions) { "debug" } else { "release" },
        }
    }
}

impl std::fmt::Display for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}, {} cores, {} GiB, {}, {} build", self.cpu, self.cores, self.memory_gib, self.os, self.build)
    }
}

fn distribution(out: &mut String, name: &str, stats: &Measured<Stats>, unit: &str) {
    match stats {
        Ok(s) => out.push_str(&format!(
            "  {name:<40} {:>10.1} {:>10.1} {:>10.1} {:>10.1}  {unit} (n={})\n",
            s.p50, s.p90, s.p99, s.max, s.n
        )),
        Err(e) => out.push_str(&format!("  {name:<40} failed: {e}\n")),
    }
}

fn repeated(out: &mut String, name: &str, stats: &Measured<Stats>, unit: &str) {
    match stats {
        Ok(s) => out.push_str(&format!(
            "  {name:<40} {:>10.0} {unit:<8} [{:.0} – {:.0} over {} runs]\n",
            s.p50, s.min, s.max, s.n
        )),
        Err(e) => out.push_str(&format!("  {name:<40} failed: {e}\n")),
    }
}

/// The human-readable table.
pub fn table(f: &Figures) -> String {
    let mut out = format!("machine: {}\n", f.machine);
    if f.machine.build == "debug" {
        out.push_str("(a debug build: build with --release for meaningful figures)\n");
    }
    out.push_str(&format!("tool called: {} {}\n", f.tool, f.tool_arguments));
    out.push_str(&format!("counted as success: {}\n", f.success_rule));
    for b in &f.bridges {
        out.push_str(&format!(
            "\n{} {}\n  {:<40} {:>10} {:>10} {:>10} {:>10}\n",
            if b.ours { "bridge:" } else { "compared:" },
            b.label,
            "",
            "p50",
            "p90",
            "p99",
            "max"
        ));
        let overhead = b.overhead.as_ref().map_err(Clone::clone);
        distribution(
            &mut out,
            "round trip straight over the editor link",
            &overhead.clone().map(|o| o.direct_us),
            "µs",
        );
        distribution(&mut out, "tools/call through the bridge", &overhead.clone().map(|o| o.bridge_us), "µs");
        distribution(&mut out, "overhead (the difference, per pair)", &overhead.clone().map(|o| o.difference_us), "µs");
        distribution(&mut out, "start to initialize answer", &b.startup_initialize_ms, "ms");
        distribution(&mut out, "start to first tools/list, no cache", &b.startup_tools_list_ms, "ms");
        if let Some(cached) = &b.startup_tools_list_cached_ms {
            distribution(&mut out, "start to first tools/list, cached", cached, "ms");
        }
        if let Some(absent) = &b.no_editor_answer_ms {
            distribution(&mut out, "a call, no Unity open: answered after", absent, "ms");
        }
        distribution(&mut out, "reload: listening to first real answer", &b.reload_recovery_ms, "ms");
        for large in &b.large {
            let name = format!("{} MiB result, {}", large.mib, large.mode);
            distribution(&mut out, &name, &large.time_ms, "ms");
        }
        out.push_str(&format!("  {:<40} {:>10} {:<8} [spread]\n", "", "median", ""));
        repeated(&mut out, "overhead median, per run", &overhead.map(|o| o.round_medians_us), "µs");
        for (in_flight, cps) in &b.throughput_cps {
            repeated(&mut out, &format!("throughput, {in_flight} in flight"), cps, "calls/s");
        }
        let memory = b.memory.as_ref().map_err(Clone::clone);
        repeated(&mut out, "RSS idle", &memory.clone().map(|m| m.idle_kb), "kB");
        repeated(&mut out, &format!("RSS after {} calls", f.calls), &memory.clone().map(|m| m.after_calls_kb), "kB");
        repeated(&mut out, "bridge CPU time per call", &memory.map(|m| m.cpu_us_per_call), "µs");
        for large in &b.large {
            repeated(&mut out, &format!("peak RSS, {} MiB {}", large.mib, large.mode), &large.peak_rss_kb, "kB");
        }
        let a = &b.answers;
        out.push_str(&format!(
            "  {:<40} {} real; not real: {} errors, {} not run by the Editor\n",
            "answers (overhead and throughput)", a.real, a.failed, a.not_run
        ));
        match &b.outage_cpu_ms {
            Ok(ms) => out.push_str(&format!(
                "  {:<40} {ms:>10.0} ms      (over {} s, a call waiting)\n",
                "bridge CPU while Unity is away", f.outage_s
            )),
            Err(e) => out.push_str(&format!("  {:<40} failed: {e}\n", "bridge CPU while Unity is away")),
        }
        match &b.reload_window {
            Ok(w) => out.push_str(&format!(
                "  {:<40} {} real; not real: {} errors, {} not run by the Editor, {} unanswered\n",
                "calls during the reloads", w.real, w.failed, w.not_run, w.unanswered
            )),
            Err(e) => out.push_str(&format!("  {:<40} {e}\n", "calls during the reloads")),
        }
    }
    out.push_str(&format!("\n{:<42} {:>10} {:<8}\n", "fake-unity", "median", ""));
    repeated(&mut out, "requests served per second", &f.fake_rps, "req/s");
    if let Some(suite) = &f.suite {
        out.push_str(&format!(
            "  {:<40} {:>10.1} s        ({} cases: {} passed, {} failed, {} not applicable)\n",
            "conformance suite wall time", suite.wall_s, suite.cases, suite.passed, suite.failed, suite.not_applicable
        ));
    }
    let ours = f.bridges.iter().find(|b| b.ours);
    for other in f.bridges.iter().filter(|b| !b.ours) {
        let Some(ours) = ours else { break };
        out.push_str(&format!("\n{} ÷ ours\n", other.label));
        for (key, ratio) in ratios(other, ours) {
            let ratio = ratio.map_or_else(|| "n/a".to_owned(), |r| format!("{r:.2}×"));
            out.push_str(&format!("  {key:<40} {ratio:>10}\n"));
        }
    }
    out
}

fn median<T>(m: &Measured<T>, pick: impl Fn(&T) -> f64) -> Value {
    m.as_ref().ok().map(|s| json!(pick(s))).unwrap_or(Value::Null)
}

/// The keys for one bridge (`null` where a measurement failed).
fn bridge_keys(b: &BridgeFigures) -> Value {
    let throughput: Map<String, Value> =
        b.throughput_cps.iter().map(|(c, s)| (format!("c{c}"), median(s, |s| s.p50))).collect();
    let peak = |mib: usize, mode: ResultMode| {
        b.large
            .iter()
            .find(|l| l.mib == mib && l.mode == mode)
            .map(|l| median(&l.peak_rss_kb, |s| s.p50))
            .unwrap_or(Value::Null)
    };
    let mut rss = json!({
        "idle": median(&b.memory, |m| m.idle_kb.p50),
        "after_10k_calls": median(&b.memory, |m| m.after_calls_kb.p50),
        "peak_64mib": peak(64, ResultMode::Relayed),
    });
    if b.ours {
        rss["peak_64mib_saved_to_file"] = peak(64, ResultMode::SavedToFile);
    } else if rss["peak_64mib"].is_null() && !peak(64, ResultMode::Summarised).is_null() {
        rss["peak_64mib"] = peak(64, ResultMode::Summarised);
        rss["peak_64mib_summarised"] = true.into();
    }
    let mut startup = json!({
        "initialize": median(&b.startup_initialize_ms, |s| s.p50),
        "tools_list": median(&b.startup_tools_list_ms, |s| s.p50),
    });
    if let Some(cached) = &b.startup_tools_list_cached_ms {
        startup["tools_list_cached"] = median(cached, |s| s.p50);
    }
    if let Some(absent) = &b.no_editor_answer_ms {
        startup["no_editor_answer"] = median(absent, |s| s.p50);
    }
    json!({
        "overhead_us": {
            "p50": median(&b.overhead, |o| o.difference_us.p50),
            "p90": median(&b.overhead, |o| o.difference_us.p90),
            "p99": median(&b.overhead, |o| o.difference_us.p99),
        },
        "throughput_cps": throughput,
        "reload_recovery_ms": {
            "p50": median(&b.reload_recovery_ms, |s| s.p50),
            "max": median(&b.reload_recovery_ms, |s| s.max),
        },
        "startup_ms": startup,
        "rss_kb": rss,
    })
}

/// Each numeric figure of `theirs` divided by ours (`None` where either is
/// missing). A 64 MiB result another bridge summarised is set beside ours
/// saved to a file, not beside ours relayed.
fn ratios(theirs: &BridgeFigures, ours: &BridgeFigures) -> Vec<(String, Option<f64>)> {
    let (theirs, mine) = (flat(&bridge_keys(theirs)), flat(&bridge_keys(ours)));
    let summarised = theirs.contains_key("rss_kb.peak_64mib_summarised");
    theirs
        .iter()
        .filter(|(_, v)| !v.is_boolean())
        .map(|(key, value)| {
            let mine_key =
                if summarised && key == "rss_kb.peak_64mib" { "rss_kb.peak_64mib_saved_to_file" } else { key.as_str() };
            let ratio = match (value.as_f64(), mine.get(mine_key).and_then(Value::as_f64)) {
                (Some(a), Some(b)) if b != 0.0 => Some(a / b),
                _ => None,
            };
            (key.clone(), ratio)
        })
        .collect()
}

/// serde's `{"Ok": x}` as `x`, and `{"Err": e}` as `{"error": e}`.
fn plain_results(value: Value) -> Value {
    match value {
        Value::Object(map) if map.len() == 1 && (map.contains_key("Ok") || map.contains_key("Err")) => {
            let (key, inner) = map.into_iter().next().unwrap_or_default();
            if key == "Ok" { plain_results(inner) } else { json!({"error": inner}) }
        }
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, plain_results(v))).collect()),
        Value::Array(items) => Value::Array(items.into_iter().map(plain_results).collect()),
        other => other,
    }
}

/// `{"a": {"b": 1}}` as `{"a.b": 1}`, in order.
fn flat(value: &Value) -> Map<String, Value> {
    fn walk(prefix: &str, value: &Value, out: &mut Map<String, Value>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    walk(&key, v, out);
                }
            }
            other => {
                out.insert(prefix.to_owned(), other.clone());
            }
        }
    }
    let mut out = Map::new();
    walk("", value, &mut out);
    out
}

/// The `--json` document: the keys for our bridge at the top level,
/// every distribution under `details`, and each other bridge under
/// `compared` with its ratios to ours.
pub fn json_report(f: &Figures) -> Value {
    let ours = f.bridges.iter().find(|b| b.ours);
    let mut out = ours.map(bridge_keys).unwrap_or_else(|| json!({}));
    out["fake_rps"] = median(&f.fake_rps, |s| s.p50);
    out["suite_wall_s"] = f.suite.as_ref().map(|s| json!(s.wall_s)).unwrap_or(Value::Null);
    out["calls"] = json!(f.calls);
    out["tool"] = json!(f.tool);
    out["machine"] = json!(f.machine);
    out["details"] = plain_results(json!({"bridges": f.bridges, "fake_rps": f.fake_rps, "suite": f.suite}));
    let compared: Vec<Value> = f
        .bridges
        .iter()
        .filter(|b| !b.ours)
        .map(|b| {
            let ratios: Map<String, Value> = match ours {
                Some(ours) => ratios(b, ours).into_iter().map(|(k, r)| (k, json!(r))).collect(),
                None => Map::new(),
            };
            let mut entry = json!({"bridge": b.label});
            if let (Value::Object(entry), Value::Object(keys)) = (&mut entry, bridge_keys(b)) {
                entry.extend(keys);
            }
            entry["ratios_to_ours"] = Value::Object(ratios);
            entry
        })
        .collect();
    out["compared"] = json!(compared);
    out
}

/// The keys `--json` must hold as numbers (the benchmark issue's list).
pub const REQUIRED_KEYS: &[&str] = &[
    "overhead_us.p50",
    "overhead_us.p99",
    "throughput_cps.c1",
    "throughput_cps.c8",
    "throughput_cps.c64",
    "reload_recovery_ms.p50",
    "reload_recovery_ms.max",
    "startup_ms.initialize",
    "rss_kb.idle",
    "rss_kb.after_10k_calls",
    "rss_kb.peak_64mib",
    "fake_rps",
    "suite_wall_s",
];

/// The required keys that are missing or not numbers in `report`.
pub fn missing_keys(report: &Value) -> Vec<&'static str> {
    let flat = flat(report);
    REQUIRED_KEYS.iter().copied().filter(|k| !flat.get(*k).is_some_and(Value::is_number)).collect()
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

    #[test]
    fn flattened_keys_follow_the_nesting() {
        let keys = flat(&json!({"a": {"b": 1, "c": {"d": 2}}, "e": 3}));
        let names: Vec<&str> = keys.keys().map(String::as_str).collect();
        assert_eq!(names, ["a.b", "a.c.d", "e"]);
        assert_eq!(keys.get("a.c.d"), Some(&json!(2)));
    }

    #[test]
    fn results_are_written_plainly() {
        let value = plain_results(json!({"a": {"Ok": {"n": 1}}, "b": [{"Err": "broke"}], "c": {"Ok": 1, "x": 2}}));
        assert_eq!(value, json!({"a": {"n": 1}, "b": [{"error": "broke"}], "c": {"Ok": 1, "x": 2}}));
    }

    #[test]
    fn missing_and_non_numeric_keys_are_named() {
        let mut report = json!({});
        for key in REQUIRED_KEYS {
            let mut at = &mut report;
            for part in key.split('.') {
                at = &mut at[part];
            }
            *at = json!(1.5);
        }
        assert!(missing_keys(&report).is_empty());
        report["rss_kb"]["peak_64mib"] = Value::Null;
        report.as_object_mut().unwrap().remove("fake_rps");
        assert_eq!(missing_keys(&report), ["rss_kb.peak_64mib", "fake_rps"]);
    }
}
