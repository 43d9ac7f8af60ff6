//! Redaction: one vocabulary of placeholders for what differs from run to
//! run and machine to machine, used by transcripts (reversibly: a
//! [`Substitution`] fills the placeholders in again at replay) and by MCP
//! snapshots (for good: [`blank_volatile`] as well).
//!
//! | placeholder | what |
//! |---|---|
//! | `${PROJECT}`, `${HOME}`, `${USER}` | the project folder, the home folder, the user name |
//! | `${SESSION_n}`, `${PORT_n}`, `${PID_n}` | session ids, ports, process ids, numbered as they appear |
//! | `${TIME}` | ISO 8601 timestamps, and times a key names (`CompletedAt`) |
//! | `${TOKEN}` | the Editor's token |
//! | `${ID}`, `${DURATION}`, `${VERSION}`, `${PATH}` | snapshots only: object ids, durations, versions, output files |

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One kind of value replaced by placeholders (a transcript's header lists
/// them).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Redaction {
    /// The placeholder, or its pattern (`${SESSION_n}`).
    pub placeholder: String,
    /// What it stands for.
    pub what: String,
}

/// Replaces run-specific values with placeholders, numbering session ids,
/// ports and pids in the order they first appear.
#[derive(Clone, Debug, Default)]
pub struct Redactor {
    enabled: bool,
    /// (text, placeholder), longest text first.
    paths: Vec<(String, &'static str)>,
    /// Further literal texts: (text, placeholder, what it is).
    literals: Vec<(String, &'static str, &'static str)>,
    user: Option<String>,
    pub sessions: Vec<String>,
    pub ports: Vec<u64>,
    pub pids: Vec<u64>,
}

impl Redactor {
    /// Records everything as it is.
    pub fn none() -> Redactor {
        Redactor::default()
    }

    /// Redacts the project path (as given, canonical, with `/`), the home
    /// folder and the user name from the environment, and every session id,
    /// port, pid and timestamp.
    pub fn for_project(project: Option<&Path>) -> Redactor {
        let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE")).map(PathBuf::from);
        let user = std::env::var("USER").or_else(|_| std::env::var("USERNAME")).ok();
        Redactor::with_values(project, home.as_deref(), user.as_deref())
    }

    pub fn with_values(project: Option<&Path>, home: Option<&Path>, user: Option<&str>) -> Redactor {
        let mut paths = Vec::new();
        let mut forms = |path: &Path, placeholder: &'static str| {
            let mut texts = vec![path.to_string_lossy().into_owned()];
            if let Ok(canonical) = std::fs::canonicalize(path) {
                texts.push(canonical.to_string_lossy().into_owned());
                // As Unity writes it (Windows: `C:/…`, without `\\?\`).
                texts.push(crate::discovery::unity_path(&canonical));
            }
            for text in texts.clone() {
                texts.push(text.replace('\\', "/"));
            }
            for text in texts {
                let text = text.trim_end_matches(['/', '\\']).to_owned();
                if text.len() > 1 && !paths.iter().any(|(t, _)| *t == text) {
                    paths.push((text, placeholder));
                }
            }
        };
        if let Some(project) = project {
            forms(project, "${PROJECT}");
        }
        if let Some(home) = home {
            forms(home, "${HOME}");
        }
        paths.sort_by_key(|(text, _)| std::cmp::Reverse(text.len()));
        // Short names would match inside unrelated words.
        let user = user.filter(|u| u.len() >= 3).map(str::to_owned);
        Redactor {
            enabled: true,
            paths,
            literals: Vec::new(),
            user,
            sessions: Vec::new(),
            ports: Vec::new(),
            pids: Vec::new(),
        }
    }

    /// Also replaces `text` wherever it appears (a run id, say).
    pub fn with_literal(mut self, text: &str, placeholder: &'static str, what: &'static str) -> Redactor {
        if !text.is_empty() {
            self.literals.push((text.to_owned(), placeholder, what));
        }
        self
    }

    /// The header's `redactions`.
    pub fn describe(&self) -> Vec<Redaction> {
        if !self.enabled {
            return Vec::new();
        }
        let mut list = Vec::new();
        let mut add = |placeholder: &str, what: &str| {
            list.push(Redaction { placeholder: placeholder.into(), what: what.into() });
        };
        if self.paths.iter().any(|(_, p)| *p == "${PROJECT}") {
            add("${PROJECT}", "the project folder");
        }
        if self.paths.iter().any(|(_, p)| *p == "${HOME}") {
            add("${HOME}", "the home folder");
        }
        if self.user.is_some() {
            add("${USER}", "the user name");
        }
        for (_, placeholder, what) in &self.literals {
            add(placeholder, what);
        }
        add("${SESSION_n}", "server session ids, numbered as they appear");
        add("${PORT_n}", "ports, numbered as they appear");
        add("${PID_n}", "process ids, numbered as they appear");
        add("${TIME}", "ISO 8601 timestamps");
        add("${TOKEN}", "the Editor's token (x-token)");
        list
    }

    pub fn redact(&mut self, value: &mut Value) {
        if self.enabled {
            self.walk(value, None);
        }
    }

    /// Bytes that are not JSON: the known texts (paths, literals, session
    /// ids) are replaced where they appear.
    pub fn redact_bytes(&self, bytes: &mut Vec<u8>) {
        if !self.enabled {
            return;
        }
        let sessions = self.sessions.iter().enumerate().map(|(n, s)| (s.clone(), placeholder("SESSION", n + 1)));
        let texts = self
            .paths
            .iter()
            .map(|(t, p)| (t.clone(), (*p).to_owned()))
            .chain(self.literals.iter().map(|(t, p, _)| (t.clone(), (*p).to_owned())))
            .chain(sessions);
        for (text, name) in texts {
            *bytes = replace_bytes(bytes, text.as_bytes(), name.as_bytes());
        }
    }

    fn walk(&mut self, value: &mut Value, key: Option<&str>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map.iter_mut() {
                    self.walk(v, Some(k.as_str()));
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.walk(item, key);
                }
            }
            Value::Number(n) => {
                let key = key.map(str::to_ascii_lowercase).unwrap_or_default();
                let Some(n) = n.as_u64() else { return };
                if (key.ends_with("port") || key.ends_with("ports")) && n <= u64::from(u16::MAX) {
                    *value = placeholder("PORT", number_of(&mut self.ports, n)).into();
                } else if key == "pid" || key == "processid" {
                    *value = placeholder("PID", number_of(&mut self.pids, n)).into();
                }
            }
            Value::String(s) => {
                if is_timestamp(s) {
                    *value = "${TIME}".into();
                    return;
                }
                if key.is_some_and(|k| k == crate::jsonrpc::TOKEN_MEMBER || k == "token") {
                    // A credential: never written down.
                    *value = "${TOKEN}".into();
                    return;
                }
                if key.is_some_and(|k| k.to_ascii_lowercase().contains("session")) && is_guid(s) {
                    number_of(&mut self.sessions, s.clone());
                }
                let mut text = s.clone();
                for (n, session) in self.sessions.iter().enumerate() {
                    if text.contains(session.as_str()) {
                        text = text.replace(session.as_str(), &placeholder("SESSION", n + 1));
                    }
                }
                for (path, name) in &self.paths {
                    if text.contains(path.as_str()) {
                        text = text.replace(path.as_str(), name);
                    }
                }
                for (literal, name, _) in &self.literals {
                    if text.contains(literal.as_str()) {
                        text = text.replace(literal.as_str(), name);
                    }
                }
                if self.user.as_deref() == Some(text.as_str()) {
                    text = "${USER}".into();
                }
                if text != *s {
                    *s = text;
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
    }
}

fn replace_bytes(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return haystack.to_vec();
    }
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

fn placeholder(kind: &str, n: usize) -> String {
    format!("${{{kind}_{n}}}")
}

/// The 1-based number of `item` in `seen`, adding it if new.
pub(crate) fn number_of<T: PartialEq>(seen: &mut Vec<T>, item: T) -> usize {
    match seen.iter().position(|s| *s == item) {
        Some(i) => i + 1,
        None => {
            seen.push(item);
            seen.len()
        }
    }
}

/// Replaces every timestamp string in `value` with `placeholder`: what
/// differs between a recorded run and its replay, made equal.
pub fn blank_timestamps(value: &mut Value, placeholder: &str) {
    match value {
        Value::String(s) if is_timestamp(s) => *s = placeholder.into(),
        Value::Object(m) => m.values_mut().for_each(|v| blank_timestamps(v, placeholder)),
        Value::Array(a) => a.iter_mut().for_each(|v| blank_timestamps(v, placeholder)),
        _ => {}
    }
}

/// `2026-01-01T00:00:00Z`, with optional fraction and offset.
pub fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |range: std::ops::Range<usize>| b.get(range).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if b.len() < 19
        || !(digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10))
        || !matches!(b[10], b'T' | b' ')
        || !(digits(11..13) && b[13] == b':' && digits(14..16) && b[16] == b':' && digits(17..19))
    {
        return false;
    }
    let mut rest = &s[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let n = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    match rest {
        "" | "Z" => true,
        offset => {
            let o = offset.as_bytes();
            matches!(o.first(), Some(b'+' | b'-'))
                && (o.len() == 6 && o[3] == b':' || o.len() == 5)
                && o[1..].iter().filter(|c| **c != b':').all(u8::is_ascii_digit)
        }
    }
}

/// A GUID, with or without dashes.
pub fn is_guid(s: &str) -> bool {
    let hex: String = s.chars().filter(|c| *c != '-').collect();
    hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit()) && (s.len() == 32 || s.len() == 36)
}

/// Fills placeholders in again (replay).
#[derive(Clone, Debug, Default)]
pub struct Substitution {
    pub project: Option<String>,
    pub home: Option<String>,
    pub user: Option<String>,
    /// `${SESSION_n}` is `sessions[n - 1]`.
    pub sessions: Vec<String>,
    /// `${PORT_n}` is `ports[n - 1]`.
    pub ports: Vec<u64>,
    /// `${PID_n}` is `pids[n - 1]`.
    pub pids: Vec<u64>,
    /// What `${TIME}` becomes.
    pub now: String,
}

impl Substitution {
    pub fn fill(&self, value: &mut Value) {
        match value {
            Value::Object(map) => map.values_mut().for_each(|v| self.fill(v)),
            Value::Array(items) => items.iter_mut().for_each(|v| self.fill(v)),
            Value::String(s) if s.contains("${") => {
                if let Some(n) = numbered(s, "PORT").and_then(|n| self.ports.get(n - 1)) {
                    *value = (*n).into();
                } else if let Some(n) = numbered(s, "PID").and_then(|n| self.pids.get(n - 1)) {
                    *value = (*n).into();
                } else {
                    *s = self.fill_text(s);
                }
            }
            _ => {}
        }
    }

    fn fill_text(&self, text: &str) -> String {
        let mut out = text.replace("${TIME}", &self.now);
        for (name, with) in [("${PROJECT}", &self.project), ("${HOME}", &self.home), ("${USER}", &self.user)] {
            if let Some(with) = with {
                out = out.replace(name, with);
            }
        }
        for (n, session) in self.sessions.iter().enumerate() {
            out = out.replace(&placeholder("SESSION", n + 1), session);
        }
        out
    }
}

/// `n` when `s` is exactly `${KIND_n}`.
pub fn numbered(s: &str, kind: &str) -> Option<usize> {
    s.strip_prefix("${")?.strip_suffix('}')?.strip_prefix(kind)?.strip_prefix('_')?.parse().ok().filter(|n| *n > 0)
}

/// Keys whose values differ from run to run (and Editor to Editor) in ways
/// no placeholder can restore, with the placeholder each becomes. (Session
/// ids, ports, pids and the project are the [`Redactor`]'s, numbered.)
const VOLATILE_KEYS: &[(&str, &str)] = &[
    ("id", "${ID}"),
    ("entityId", "${ID}"),
    ("instanceId", "${ID}"),
    ("InstanceId", "${ID}"),
    ("InstanceID", "${ID}"),
    ("ImagePath", "${PATH}"),
    ("XmlPath", "${PATH}"),
    ("ResultsFilePath", "${PATH}"),
    ("hierarchyFilePath", "${PATH}"),
    ("DataPath", "${PATH}"),
    ("timestamp", "${TIME}"),
    // The package version: a snapshot holds for every release.
    ("Ver", "${VERSION}"),
];

/// Key suffixes of times and durations (`CompletedAt`, `SearchDurationMs`,
/// `uptimeSeconds`, `Duration`), with their placeholders.
const VOLATILE_SUFFIXES: &[(&str, &str)] =
    &[("At", "${TIME}"), ("Ms", "${DURATION}"), ("Seconds", "${DURATION}"), ("Duration", "${DURATION}")];

/// The placeholder for `key`'s value when it is volatile.
fn volatile(key: &str) -> Option<&'static str> {
    VOLATILE_KEYS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, p)| *p)
        .or_else(|| VOLATILE_SUFFIXES.iter().find(|(s, _)| key.ends_with(s) && key.len() > s.len()).map(|(_, p)| *p))
}

/// Replaces, for good, the values that differ from run to run and that no
/// placeholder can restore: ids, durations, times a key names, versions,
/// output files (a snapshot's redaction, before [`Redactor::redact`]).
/// Objects, arrays, nulls and empty strings stay as they are.
pub fn blank_volatile(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match volatile(key) {
                    Some(placeholder) if !v.is_null() && v.as_str() != Some("") && !v.is_object() && !v.is_array() => {
                        *v = placeholder.into()
                    }
                    _ => blank_volatile(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(blank_volatile),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn redaction_replaces_run_specific_values_and_substitution_restores_them() {
        let mut redactor =
            Redactor::with_values(Some(Path::new("/work/proj")), Some(Path::new("/home/ann")), Some("ann"));
        let original = json!({
            "DataPath": "/work/proj/Assets",
            "log": "saved /home/ann/notes.txt",
            "serverSessionId": "0123456789abcdef0123456789abcdef",
            "note": "session 0123456789abcdef0123456789abcdef again",
            "port": 8700,
            "ports": [8700, 8701],
            "pid": 4242,
            "updatedAt": "2026-01-01T10:00:00.123Z",
            "owner": "ann",
            "count": 8700,
        });
        let mut value = original.clone();
        redactor.redact(&mut value);
        assert_eq!(
            value,
            json!({
                "DataPath": "${PROJECT}/Assets",
                "log": "saved ${HOME}/notes.txt",
                "serverSessionId": "${SESSION_1}",
                "note": "session ${SESSION_1} again",
                "port": "${PORT_1}",
                "ports": ["${PORT_1}", "${PORT_2}"],
                "pid": "${PID_1}",
                "updatedAt": "${TIME}",
                "owner": "${USER}",
                "count": 8700,
            })
        );
        let substitution = Substitution {
            project: Some("/work/proj".into()),
            home: Some("/home/ann".into()),
            user: Some("ann".into()),
            sessions: vec!["0123456789abcdef0123456789abcdef".into()],
            ports: vec![8700, 8701],
            pids: vec![4242],
            now: "2026-01-01T10:00:00.123Z".into(),
        };
        substitution.fill(&mut value);
        assert_eq!(value, original);
    }

    #[test]
    fn timestamps_and_guids_are_recognised_strictly() {
        for yes in ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00.5+02:00", "2026-01-01 00:00:00"] {
            assert!(is_timestamp(yes), "{yes}");
        }
        for no in ["2026-01-01", "2026-01-01T00:00:00.Z", "today", "2026-01-01T00:00:00 and more"] {
            assert!(!is_timestamp(no), "{no}");
        }
        assert!(is_guid("01234567-89ab-cdef-0123-456789abcdef"));
        assert!(!is_guid("not-a-guid"));
        assert_eq!(numbered("${PORT_2}", "PORT"), Some(2));
        assert_eq!(numbered("${PORT_0}", "PORT"), None);
    }

    #[test]
    fn volatile_values_are_blanked_in_the_vocabulary() {
        let mut v = json!({"id": 21002, "name": "Main Camera", "CompletedAt": "x", "SearchDurationMs": 3,
                           "Ver": "1.2.3", "empty": "", "children": [{"id": 3, "entityId": null}]});
        blank_volatile(&mut v);
        assert_eq!(
            v,
            json!({"id": "${ID}", "name": "Main Camera", "CompletedAt": "${TIME}", "SearchDurationMs": "${DURATION}",
                   "Ver": "${VERSION}", "empty": "", "children": [{"id": "${ID}", "entityId": null}]})
        );
    }
}
