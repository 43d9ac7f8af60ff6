//! uLoopMCP 2.1.1's console tools (`GetLogsUseCase`, `LogGetter`,
//! `LogFilteringService`, `ClearConsoleUseCase`).

use regex::Regex;
use serde_json::{Value, json};

use super::super::{
    Outcome, ToolCall,
    console::{Cleared, clear, text_matcher},
    result,
};
use crate::editor::{
    model::errors::uloop_internal,
    state::{LogEntry, LogType},
};

/// `NormalizeMcpLogType`: Error, Warning and All (any case) choose; any
/// other value, the empty string included, means Log.
fn selected(log_type: &str) -> Option<LogType> {
    match log_type.to_ascii_lowercase().as_str() {
        "all" => None,
        "error" => Some(LogType::Error),
        "warning" => Some(LogType::Warning),
        _ => Some(LogType::Log),
    }
}

/// A compiler diagnostic logged as a plain log counts as its kind.
fn compiler(entry: &LogEntry, kind: &str) -> bool {
    entry.log_type == LogType::Log
        && Regex::new(&format!(r":\s*{kind} CS\d+\b")).is_ok_and(|re| re.is_match(&entry.message))
}

fn assertion(entry: &LogEntry) -> bool {
    ["Debug:LogAssertion", "Debug.LogAssertion", "Debug:Assert", "Debug.Assert"]
        .iter()
        .any(|marker| entry.stack_trace.contains(marker))
}

/// The entry as the chosen type shows it (compiler diagnostics and
/// assertions re-typed), or `None` when it is not of that type.
fn as_selected(entry: &LogEntry, selected: Option<LogType>) -> Option<LogType> {
    match selected {
        None => Some(entry.log_type),
        Some(LogType::Error) if entry.log_type == LogType::Error || assertion(entry) || compiler(entry, "error") => {
            Some(LogType::Error)
        }
        Some(LogType::Warning) if entry.log_type == LogType::Warning || compiler(entry, "warning") => {
            Some(LogType::Warning)
        }
        Some(LogType::Log) if entry.log_type == LogType::Log => Some(LogType::Log),
        _ => None,
    }
}

pub fn get_logs(call: &ToolCall) -> Outcome {
    let args = &call.args;
    let log_type = args.get("LogType").as_str().unwrap_or("");
    let max_count = args.int("MaxCount");
    let search = args.str("SearchText");
    let use_regex = args.bool("UseRegex");
    let in_stack = args.bool("SearchInStackTrace");
    let include_stack = args.bool("IncludeStackTrace");
    let matcher = match text_matcher(search, use_regex) {
        Ok(matcher) => matcher,
        Err(err) => {
            // .NET's words for the two commonest mistakes; the rest in Rust's.
            let text = err.to_string();
            let why = if text.contains("unclosed group") {
                "Not enough )'s.".to_owned()
            } else if text.contains("unopened group") {
                "Too many )'s.".to_owned()
            } else {
                text
            };
            let why = format!("parsing \"{search}\" - {why}");
            return Outcome::Fail(uloop_internal(format!("Failed to retrieve logs: Failed to retrieve logs: {why}")));
        }
    };
    let selected = selected(log_type);
    let sim = call.editor.sim();
    let matching: Vec<(LogType, &LogEntry)> = sim
        .console
        .iter()
        .filter_map(|c| as_selected(&c.entry, selected).map(|t| (t, &c.entry)))
        .filter(|(_, e)| {
            search.is_empty()
                || matcher(&e.message)
                || (in_stack && !e.stack_trace.is_empty() && matcher(&e.stack_trace))
        })
        .collect();
    // The last MaxCount, newest first.
    let keep = usize::try_from(max_count).unwrap_or(0).min(matching.len());
    let logs: Vec<Value> = matching[matching.len() - keep..]
        .iter()
        .rev()
        .map(|(shown_as, e)| {
            let stack = if include_stack { Value::String(e.stack_trace.trim().to_owned()) } else { Value::Null };
            json!({"Type": shown_as.as_str(), "Message": e.message.trim(), "StackTrace": stack})
        })
        .collect();
    Outcome::Reply(result([
        ("TotalCount", matching.len().into()),
        ("DisplayedCount", logs.len().into()),
        ("LogType", args.get("LogType").clone()),
        ("MaxCount", max_count.into()),
        ("SearchText", args.get("SearchText").clone()),
        ("IncludeStackTrace", include_stack.into()),
        ("Logs", logs.into()),
    ]))
}

pub fn clear_console(call: &ToolCall) -> Outcome {
    let confirmation = call.args.bool("AddConfirmationMessage").then_some("=== Console cleared via MCP tool ===");
    let Cleared { total, errors, warnings, logs } = clear(&call.editor, confirmation);
    let message = if total == 0 {
        "Console was already empty".to_owned()
    } else {
        format!("Successfully cleared {total} console logs (Errors: {errors}, Warnings: {warnings}, Logs: {logs})")
    };
    Outcome::Reply(result([
        ("Success", true.into()),
        ("ClearedLogCount", total.into()),
        ("ClearedCounts", json!({"ErrorCount": errors, "WarningCount": warnings, "LogCount": logs})),
        ("Message", message.into()),
        ("ErrorMessage", "".into()),
    ]))
}
