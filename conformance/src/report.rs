//! Reports: the console (a line per case, failures repeated at the end, the
//! summary last), a JSON document, JUnit XML for CI systems, one
//! self-contained HTML page to look at (`report-page`: the cases as a tree
//! with filters, each case's wire log as an exchange, a scenario's time
//! line), and a Markdown summary (what a CI job's summary page shows).

use std::{fmt::Write as _, io};

use serde_json::json;

use crate::{
    case::Status,
    runner::{CaseResult, Summary},
};

/// The group heading to print before `result`, when it starts a new group
/// of the console tree (`previous` is the case printed before it).
pub fn group_heading(previous: Option<&CaseResult>, result: &CaseResult) -> Option<String> {
    let group = crate::cases::group_of(&result.id).1;
    match previous {
        Some(p) if crate::cases::group_of(&p.id).1 == group => None,
        _ => Some(format!("{group}\n")),
    }
}

/// One console line for a finished case (indented under its group).
pub fn case_line(result: &CaseResult) -> String {
    let mut line = format!(
        "  {:<5} {:<7} {} ({} ms)",
        result.status.to_string(),
        result.level.to_string(),
        result.id,
        result.duration_ms
    );
    if !result.detail.is_empty() {
        let _ = write!(line, "\n        {}", result.detail);
    }
    line
}

/// The end of the console report: failures again with their wire logs, then
/// the summary line.
pub fn console_tail(target: &str, results: &[CaseResult]) -> String {
    let mut out = String::new();
    let bad: Vec<&CaseResult> = results
        .iter()
        .filter(|r| matches!(r.status, Status::Fail | Status::Error | Status::Warn | Status::StaleBaseline))
        .collect();
    if !bad.is_empty() {
        out.push_str("\nNot passed:\n");
        for r in bad {
            let _ = writeln!(
                out,
                "  {} {} [{} {}]\n    requirement: {}\n    finding: {}",
                r.status, r.id, r.level, r.reference, r.requirement, r.detail
            );
            let wire = &r.wire[r.wire.len().saturating_sub(12)..];
            for line in wire {
                let _ = writeln!(out, "    | {line}");
            }
        }
    }
    let s = Summary::of(results);
    let mut line = format!(
        "\nunity-conformance against {target}: {} cases: {} passed, {} failed, {} warnings, {} skipped, {} errors",
        s.total, s.passed, s.failed, s.warnings, s.skipped, s.errors
    );
    if s.expected_failures + s.stale_baseline > 0 {
        let _ =
            write!(line, ", {} expected failures, {} stale baseline entries", s.expected_failures, s.stale_baseline);
    }
    let _ = writeln!(out, "{line}");
    out
}

/// The JSON report.
pub fn json_report(target: &str, results: &[CaseResult]) -> serde_json::Value {
    json!({
        "target": target,
        "generatedAt": humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
        "summary": Summary::of(results),
        "cases": results,
    })
}

/// What a report says about how it was made: the command line (any token
/// in it hidden) and the baseline the run was held to.
#[derive(Clone, Debug, Default)]
pub struct Provenance {
    pub command: Option<String>,
    pub baseline: Option<String>,
}

impl Provenance {
    /// This process's command line, a `--token`'s value hidden.
    pub fn of_this_run(baseline: Option<&std::path::Path>) -> Provenance {
        let mut words = Vec::new();
        let mut hide_next = false;
        for (n, arg) in std::env::args().enumerate() {
            // The program by its name: a release's file is named by its version and platform.
            let word = if n == 0 {
                "unity-conformance".to_owned()
            } else if hide_next {
                "***".to_owned()
            } else if arg.starts_with("--token=") {
                "--token=***".to_owned()
            } else {
                arg.clone()
            };
            hide_next = arg == "--token";
            words.push(if word.contains(' ') { format!("'{word}'") } else { word });
        }
        Provenance { command: Some(words.join(" ")), baseline: baseline.map(|p| p.display().to_string()) }
    }
}

/// The HTML report: one file, nothing fetched (`report-page`).
pub fn html_report(target: &str, results: &[CaseResult], provenance: &Provenance) -> String {
    let groups: Vec<serde_json::Value> =
        crate::cases::GROUPS.iter().map(|(prefix, heading)| json!({"prefix": prefix, "heading": heading})).collect();
    let title = format!("unity-conformance against {target}");
    let data = json!({
        "kind": "suite",
        "title": title,
        "command": provenance.command,
        "baseline": provenance.baseline,
        "groups": groups,
        "report": json_report(target, results),
    });
    report_page::render(&title, &data)
}

/// The Markdown summary: the verdict and counts, then each case that did
/// not pass with its finding and the end of its wire log (the first
/// [`MARKDOWN_DETAILED`]; the rest by id), small enough for a CI job's
/// summary page (GitHub takes 1 MiB a step).
pub fn markdown_summary(target: &str, results: &[CaseResult], provenance: &Provenance) -> String {
    let s = Summary::of(results);
    let verdict = match s.exit_code() {
        0 => "passed",
        1 if s.failed == 0 => "failed: the baseline is out of date",
        1 => "failed",
        _ => "could not test everything",
    };
    let mut out = format!("### unity-conformance against {}: {verdict}\n\n", md_text(target));
    out.push_str("| cases | passed | failed | warnings | skipped | errors | expected failures | stale baseline |\n");
    out.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {} | {} |",
        s.total, s.passed, s.failed, s.warnings, s.skipped, s.errors, s.expected_failures, s.stale_baseline
    );
    if let Some(baseline) = &provenance.baseline {
        let _ = writeln!(
            out,
            "\nHeld to the baseline `{}`: its cases may fail; one that passes is stale.",
            md_code(baseline)
        );
    }
    let bad: Vec<&CaseResult> = results
        .iter()
        .filter(|r| matches!(r.status, Status::Fail | Status::Error | Status::StaleBaseline | Status::Warn))
        .collect();
    if !bad.is_empty() {
        let _ = writeln!(out, "\n#### Not passed ({})\n", bad.len());
    }
    for (n, r) in bad.iter().enumerate() {
        if n >= MARKDOWN_DETAILED {
            let _ = writeln!(out, "- {} `{}`: {}", r.status, md_code(&r.id), md_text(&first_words(&r.detail, 200)));
            continue;
        }
        let _ = writeln!(
            out,
            "<details><summary><b>{}</b> <code>{}</code> ({}): {}</summary>\n",
            r.status,
            report_page::html_escape(&r.id),
            r.level,
            report_page::html_escape(&first_words(&r.detail, 200))
        );
        let _ = writeln!(out, "- requirement: {}", md_text(&r.requirement));
        let _ = writeln!(out, "- reference: {}", md_text(r.reference));
        let _ = writeln!(out, "- finding: {}\n", md_text(&cut(&r.detail, 2000)));
        let wire = &r.wire[r.wire.len().saturating_sub(12)..];
        if !wire.is_empty() {
            let body = wire.iter().map(|line| first_words(line, 240)).collect::<Vec<_>>().join("\n");
            let fence = if body.contains("```") { "~~~~" } else { "```" };
            let _ = writeln!(out, "The wire log's last lines:\n\n{fence}text\n{body}\n{fence}\n");
        }
        out.push_str("</details>\n\n");
    }
    if let Some(command) = &provenance.command {
        let _ = writeln!(out, "\n<sub>{}</sub>", report_page::html_escape(command));
    }
    out
}

/// At most `limit` characters of `text` (with how long it was): a summary
/// page has a size limit, and a finding may quote a whole answer.
fn cut(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((end, _)) => format!("{}… ({} bytes in all)", &text[..end], text.len()),
        None => text.to_owned(),
    }
}

/// Cases of the Markdown summary shown with their wire logs.
pub const MARKDOWN_DETAILED: usize = 40;

/// Text for a Markdown line or table cell: no markup of its own.
fn md_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '<' | '>' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Text inside a Markdown code span.
fn md_code(text: &str) -> String {
    text.replace('`', "'").replace(['\n', '\r'], " ")
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// JUnit XML: one testcase per case; WARN and INFO pass with their finding
/// in system-out, SKIP and XFAIL are skipped, FAIL and STALE failures,
/// ERROR an error.
pub fn junit_report(target: &str, results: &[CaseResult]) -> String {
    let s = Summary::of(results);
    // A stale baseline entry is a failure; an expected failure is skipped.
    let (failures, skipped) = (s.failed + s.stale_baseline, s.skipped + s.expected_failures);
    let seconds: f64 = results.iter().map(|r| r.duration_ms as f64 / 1000.0).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        r#"<testsuites name="unity-conformance" tests="{}" failures="{}" errors="{}" skipped="{}" time="{seconds:.3}">"#,
        s.total, failures, s.errors, skipped
    );
    let _ = writeln!(
        xml,
        r#"  <testsuite name="unity-conformance against {}" tests="{}" failures="{}" errors="{}" skipped="{}" time="{seconds:.3}">"#,
        xml_escape(target),
        s.total,
        failures,
        s.errors,
        skipped
    );
    for r in results {
        // `editor-link.section-2`, or `mcp.snapshot` for the cases through the bridge.
        let mut parts = r.id.split('.');
        let classname = match (parts.next().unwrap_or(""), parts.next()) {
            ("mcp", Some(group)) if r.id.matches('.').count() > 1 => format!("mcp.{group}"),
            ("mcp", _) => "mcp".to_owned(),
            (section, _) => format!("editor-link.section-{section}"),
        };
        let _ = write!(
            xml,
            r#"    <testcase classname="{}" name="{}" time="{:.3}">"#,
            xml_escape(&classname),
            xml_escape(&r.id),
            r.duration_ms as f64 / 1000.0
        );
        let detail = xml_escape(&r.detail);
        let wire = xml_escape(&r.wire.join("\n"));
        match r.status {
            Status::Pass => {}
            Status::Fail | Status::StaleBaseline => {
                let _ = write!(
                    xml,
                    r#"<failure message="{detail}" type="{}">{}&#10;{wire}</failure>"#,
                    r.level,
                    xml_escape(&r.requirement)
                );
            }
            Status::Error => {
                let _ = write!(xml, r#"<error message="{detail}">{wire}</error>"#);
            }
            Status::Skip | Status::ExpectedFailure => {
                let _ = write!(xml, r#"<skipped message="{detail}"/>"#);
            }
            Status::Warn | Status::Info => {
                let _ = write!(xml, "<system-out>{} ({}): {detail}</system-out>", r.status, r.level);
            }
        }
        xml.push_str("</testcase>\n");
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// Writes a report file, creating its folder.
pub fn write_file(path: &std::path::Path, contents: &str) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, contents)
}

/// The first line of `text`, cut to at most `limit` characters (with `…`).
pub fn first_words(text: &str, limit: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    match line.char_indices().nth(limit) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_owned(),
    }
}
