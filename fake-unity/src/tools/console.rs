//! The console: `get-logs` and `clear-console`.

use serde_json::{Value, json};

use super::{Outcome, ToolCall, invalid_param, result};
use crate::editor::{
    ConsoleEntry,
    state::{LogEntry, LogType},
};

pub const LOG_TYPES: &[(&str, i64)] = &[("Error", 0), ("Warning", 1), ("Log", 2), ("All", 3)];

/// Whether a log text matches `SearchText`.
pub(crate) type TextMatcher = Box<dyn Fn(&str) -> bool>;

/// get-logs' `SearchText` filter (both Editors): everything when empty, else
/// a regular expression, or a substring in any case.
pub(crate) fn text_matcher(search: &str, use_regex: bool) -> Result<TextMatcher, regex::Error> {
    if search.is_empty() {
        return Ok(Box::new(|_| true));
    }
    if use_regex {
        let re = regex::Regex::new(search)?;
        return Ok(Box::new(move |s| re.is_match(s)));
    }
    let needle = search.to_lowercase();
    Ok(Box::new(move |s| s.to_lowercase().contains(&needle)))
}

pub fn get_logs(call: &ToolCall) -> Outcome {
    let args = &call.args;
    let log_type = args.str("LogType");
    let ignores_filter = call.editor.has_defect(crate::Defect::IgnoresLogFilter);
    let max_count = args.int("MaxCount").max(0) as usize;
    let search = args.str("SearchText");
    let use_regex = args.bool("UseRegex");
    let in_stack = args.bool("SearchInStackTrace");
    let include_stack = args.bool("IncludeStackTrace");

    let matcher = match text_matcher(search, use_regex) {
        Ok(matcher) => matcher,
        Err(err) => {
            return invalid_param(
                "SearchText",
                format!("Parameter 'SearchText' is not a valid regular expression: {err}"),
            );
        }
    };

    let sim = call.editor.sim();
    let matching: Vec<&LogEntry> = sim
        .console
        .iter()
        .map(|c| &c.entry)
        .filter(|e| log_type == "All" || ignores_filter || e.log_type.as_str() == log_type)
        .filter(|e| matcher(&e.message) || (in_stack && matcher(&e.stack_trace)))
        .collect();
    // The most recent entries, oldest first, as the console shows them.
    let shown = &matching[matching.len().saturating_sub(max_count)..];
    let logs: Vec<Value> = shown
        .iter()
        .map(|e| {
            let mut entry = json!({"Type": e.log_type.as_str(), "Message": e.message});
            if include_stack {
                entry["StackTrace"] = e.stack_trace.clone().into();
            }
            entry
        })
        .collect();
    Outcome::Reply(result([
        ("TotalCount", matching.len().into()),
        ("DisplayedCount", logs.len().into()),
        ("LogType", log_type.into()),
        ("MaxCount", max_count.into()),
        ("SearchText", search.into()),
        ("IncludeStackTrace", include_stack.into()),
        ("Logs", logs.into()),
    ]))
}

/// What a clear removed: (all, errors, warnings, logs).
pub(crate) struct Cleared {
    pub total: usize,
    pub errors: usize,
    pub warnings: usize,
    pub logs: usize,
}

/// Clears the console, then logs `confirmation` when asked, as
/// `Debug.Log` would (the clear-console tool of either Editor).
pub(crate) fn clear(editor: &crate::editor::Editor, confirmation: Option<&str>) -> Cleared {
    let cleared = std::mem::take(&mut editor.sim().console);
    let count = |t: LogType| cleared.iter().filter(|e| e.entry.log_type == t).count();
    if let Some(message) = confirmation {
        editor.log([ConsoleEntry {
            entry: LogEntry {
                log_type: LogType::Log,
                message: message.into(),
                stack_trace: "UnityEngine.Debug:Log (object)".into(),
            },
            from_compile: false,
        }]);
    }
    Cleared {
        total: cleared.len(),
        errors: count(LogType::Error),
        warnings: count(LogType::Warning),
        logs: count(LogType::Log),
    }
}

pub fn clear_console(call: &ToolCall) -> Outcome {
    let confirmation = call.args.bool("AddConfirmationMessage").then_some("=== Console cleared via MCP ===");
    let Cleared { total, errors, warnings, logs } = clear(&call.editor, confirmation);
    Outcome::Reply(result([
        ("Success", true.into()),
        ("ClearedLogCount", total.into()),
        ("ClearedCounts", json!({"ErrorCount": errors, "WarningCount": warnings, "LogCount": logs})),
        ("Message", format!("Console cleared successfully ({total} logs removed)").into()),
        ("ErrorMessage", "".into()),
    ]))
}
