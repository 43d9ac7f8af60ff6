//! Comparing a received frame with recorded ones: field-by-field
//! differences with their JSON paths, ignorable paths and wildcards, the
//! matching modes, and the mismatch report a person can act on.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Value, json};

/// How received requests are paired with recorded ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MatchMode {
    /// Every client frame in recorded order, notifications included.
    Strict,
    /// Requests of each method in recorded order per connection (methods
    /// may interleave, as a client's concurrent tasks do); client
    /// notifications anywhere.
    #[default]
    Ordered,
    /// By method and parameters, first in first out, per connection.
    Key,
    /// By method and parameters, on any connection, in any order.
    Any,
}

impl MatchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchMode::Strict => "strict",
            MatchMode::Ordered => "ordered",
            MatchMode::Key => "key",
            MatchMode::Any => "any",
        }
    }
}

/// A recorded string that matches any value.
pub const WILDCARD: &str = "${ANY}";

/// A JSON path to ignore: dot-separated keys, `[n]` for array items, and
/// `*` for any one key or item (`params.*.Id`, `params.Items[*]`). A leading
/// `$.` is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IgnorePath {
    text: String,
    segments: Vec<String>,
}

impl std::str::FromStr for IgnorePath {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let trimmed = s.strip_prefix("$.").unwrap_or(s);
        let segments: Vec<String> = split_path(trimmed);
        if segments.is_empty() || segments.iter().any(String::is_empty) {
            return Err(format!("{s:?} is not a JSON path (try params.TimeoutSeconds or params.Items[0].Id)"));
        }
        Ok(IgnorePath { text: s.to_owned(), segments })
    }
}

impl std::fmt::Display for IgnorePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn split_path(path: &str) -> Vec<String> {
    path.split('.')
        .flat_map(|part| {
            let mut out = Vec::new();
            let (head, rest) = part.split_once('[').map_or((part, ""), |(h, r)| (h, r));
            if !head.is_empty() || rest.is_empty() {
                out.push(head.to_owned());
            }
            for index in rest.split('[') {
                let index = index.trim_end_matches(']');
                if !index.is_empty() {
                    out.push(format!("[{index}]"));
                }
            }
            out
        })
        .collect()
}

impl IgnorePath {
    fn matches(&self, path: &[String]) -> bool {
        self.segments.len() == path.len()
            && self
                .segments
                .iter()
                .zip(path)
                .all(|(want, got)| want == got || want == "*" || (want == "[*]" && got.starts_with('[')))
    }
}

/// One field that differs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Difference {
    /// `params.MaxCount`, `params.Items[2]`, or `(root)`.
    pub path: String,
    /// Absent when the received message has a field the recording lacks.
    pub recorded: Option<Value>,
    /// Absent when the received message lacks a recorded field.
    pub received: Option<Value>,
}

impl Difference {
    pub fn describe(&self) -> String {
        match (&self.recorded, &self.received) {
            (Some(r), Some(g)) => format!("{}: recorded {}, received {}", self.path, short(r), short(g)),
            (Some(r), None) => format!("{}: recorded {}, missing in what was received", self.path, short(r)),
            (None, Some(g)) => format!("{}: not recorded, received {}", self.path, short(g)),
            (None, None) => self.path.clone(),
        }
    }
}

/// A value shortened for one line.
pub fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 120 {
        let cut: String = text.chars().take(117).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// The differences between a recorded and a received message, in the
/// recorded message's field order, skipping ignored paths and wildcards.
pub fn diff(recorded: &Value, received: &Value, ignore: &[IgnorePath]) -> Vec<Difference> {
    let mut out = Vec::new();
    walk(recorded, received, &mut Vec::new(), ignore, &mut out);
    out
}

fn walk(recorded: &Value, received: &Value, path: &mut Vec<String>, ignore: &[IgnorePath], out: &mut Vec<Difference>) {
    if ignore.iter().any(|p| p.matches(path)) || recorded.as_str() == Some(WILDCARD) {
        return;
    }
    let here = |path: &[String]| {
        if path.is_empty() {
            return "(root)".to_owned();
        }
        let mut text = String::new();
        for segment in path {
            if !segment.starts_with('[') && !text.is_empty() {
                text.push('.');
            }
            text.push_str(segment);
        }
        text
    };
    match (recorded, received) {
        (Value::Object(r), Value::Object(g)) => {
            for (key, rv) in r {
                path.push(key.clone());
                match g.get(key) {
                    Some(gv) => walk(rv, gv, path, ignore, out),
                    None if ignore.iter().any(|p| p.matches(path)) => {}
                    None => out.push(Difference { path: here(path), recorded: Some(rv.clone()), received: None }),
                }
                path.pop();
            }
            for (key, gv) in g {
                if !r.contains_key(key) {
                    path.push(key.clone());
                    if !ignore.iter().any(|p| p.matches(path)) {
                        out.push(Difference { path: here(path), recorded: None, received: Some(gv.clone()) });
                    }
                    path.pop();
                }
            }
        }
        (Value::Array(r), Value::Array(g)) => {
            for i in 0..r.len().max(g.len()) {
                path.push(format!("[{i}]"));
                match (r.get(i), g.get(i)) {
                    (Some(rv), Some(gv)) => walk(rv, gv, path, ignore, out),
                    (rv, gv) if !ignore.iter().any(|p| p.matches(path)) => {
                        out.push(Difference { path: here(path), recorded: rv.cloned(), received: gv.cloned() });
                    }
                    _ => {}
                }
                path.pop();
            }
        }
        (Value::Number(r), Value::Number(g)) if r.as_f64() == g.as_f64() => {}
        (r, g) if r == g => {}
        (r, g) => out.push(Difference { path: here(path), recorded: Some(r.clone()), received: Some(g.clone()) }),
    }
}

/// A recorded frame close to what was received.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    pub seq: u64,
    pub line: usize,
    pub connection: u64,
    pub summary: String,
    pub differences: Vec<Difference>,
}

/// Everything a person needs to act on a mismatch.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Mismatch {
    /// Live connection number (1-based) and the recorded one it plays.
    pub connection: u64,
    pub recorded_connection: Option<u64>,
    /// The Nth frame received on that live connection.
    pub frame: u64,
    pub received: Value,
    /// The recorded frame that was due, if any.
    pub expected: Option<Candidate>,
    pub reason: String,
    pub first_difference: Option<String>,
    pub candidates: Vec<Candidate>,
    pub rerun: String,
    /// What the client was told: an error response or a close.
    pub answered_with: String,
}

impl Mismatch {
    /// The report for stderr.
    pub fn report(&self, transcript: &str) -> String {
        let mut out = String::new();
        let recorded =
            self.recorded_connection.map_or_else(|| "none".to_owned(), |c| format!("recorded connection {c}"));
        let _ = writeln!(
            out,
            "fake-unity replay: MISMATCH on connection {} ({recorded}), frame {} received",
            self.connection, self.frame
        );
        let _ = writeln!(out, "  received:  {}", short_long(&self.received));
        match &self.expected {
            Some(e) => {
                let _ = writeln!(out, "  expected:  {transcript}:{} (seq {}) {}", e.line, e.seq, e.summary);
            }
            None => {
                let _ = writeln!(out, "  expected:  nothing more on this connection");
            }
        }
        let _ = writeln!(out, "  reason:    {}", self.reason);
        if let Some(path) = &self.first_difference {
            let _ = writeln!(out, "  first difference at: {path}");
        }
        if !self.candidates.is_empty() {
            let _ = writeln!(out, "  nearest recorded candidates:");
            for (n, c) in self.candidates.iter().enumerate() {
                let count = c.differences.len();
                let _ = writeln!(
                    out,
                    "    {}. {transcript}:{} (seq {}, connection {}) {} — {count} difference{}",
                    n + 1,
                    c.line,
                    c.seq,
                    c.connection,
                    c.summary,
                    if count == 1 { "" } else { "s" }
                );
                for d in c.differences.iter().take(8) {
                    let _ = writeln!(out, "         {}", d.describe());
                }
                if count > 8 {
                    let _ = writeln!(out, "         … and {} more", count - 8);
                }
            }
        }
        let _ = writeln!(out, "  answered with: {}", self.answered_with);
        let _ = writeln!(out, "  re-run:    {}", self.rerun);
        out
    }

    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| json!({}))
    }
}

fn short_long(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 400 {
        let cut: String = text.chars().take(397).collect();
        format!("{cut}... ({} bytes)", text.len())
    } else {
        text
    }
}

/// The reason in words, from the expected frame's differences.
pub fn reason(mode: MatchMode, expected: Option<&Candidate>, received_method: Option<&str>) -> String {
    let Some(expected) = expected else {
        return match (mode, received_method) {
            (MatchMode::Ordered, Some(method)) => {
                format!("the recording has no further {method} request from the client on this connection")
            }
            _ => "the recording has no further request from the client on this connection".into(),
        };
    };
    let due = match mode {
        MatchMode::Strict => "the next recorded frame",
        MatchMode::Ordered => "the next recorded request of that method",
        MatchMode::Key | MatchMode::Any => "the closest recorded request",
    };
    let method_differs = expected.differences.iter().any(|d| d.path == "method");
    match (method_differs, received_method) {
        (true, Some(method)) => format!("{due} is {}, but {method} was received", expected.summary),
        (true, None) => format!("{due} is {}, but the frame received is not a request", expected.summary),
        (false, _) => {
            let fields: Vec<&str> = expected.differences.iter().map(|d| d.path.as_str()).take(3).collect();
            format!(
                "{due} has the same method, but {} differ{}",
                fields.join(", "),
                if fields.len() == 1 { "s" } else { "" }
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(ignore: &[&str]) -> Vec<IgnorePath> {
        ignore.iter().map(|p| p.parse().unwrap()).collect()
    }

    #[test]
    fn differences_name_their_paths_in_order() {
        let recorded =
            json!({"method": "get-logs", "params": {"MaxCount": 1, "Types": ["Error", "Log"], "Gone": true}});
        let received = json!({"method": "get-logs", "params": {"MaxCount": 5, "Types": ["Error"], "New": 1}});
        let found: Vec<String> = diff(&recorded, &received, &[]).iter().map(Difference::describe).collect();
        assert_eq!(
            found,
            [
                "params.MaxCount: recorded 1, received 5",
                "params.Types[1]: recorded \"Log\", missing in what was received",
                "params.Gone: recorded true, missing in what was received",
                "params.New: not recorded, received 1",
            ]
        );
    }

    #[test]
    fn ignored_paths_and_wildcards_hide_differences() {
        let recorded = json!({"id": 1, "params": {"A": {"Id": 1}, "B": {"Id": 2}, "When": "${ANY}", "N": 1.0}});
        let received = json!({"id": 9, "params": {"A": {"Id": 7}, "B": {"Id": 8}, "When": "now", "N": 1}});
        assert!(diff(&recorded, &received, &paths(&["id", "$.params.*.Id"])).is_empty());
        assert_eq!(diff(&recorded, &received, &paths(&["id"])).len(), 2);
        assert!(diff(&json!({"a": [1, 2]}), &json!({"a": [3, 4]}), &paths(&["a[*]"])).is_empty());
        assert!("params..x".parse::<IgnorePath>().is_err());
    }
}
