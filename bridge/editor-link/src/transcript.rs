//! Transcripts: editor-link traffic as JSON Lines, written by the bridge's
//! `--record` and by `fake-unity record`, read by `fake-unity replay`.
//!
//! The first line is a [`Header`]: format and version, producer, start time,
//! what was recorded, and the redactions applied. Then one [`Record`] per
//! logical frame (never per socket read) — sequence, milliseconds since the
//! start, connection number, direction, and the message, or the raw bytes in
//! base64 when they were not JSON — and lifecycle events as records of their
//! own (`listen`, `connect`, `reload` and `quit` as the Editor announces
//! them, `close` and by whom), so a reload is data:
//!
//! ```text
//! {"format":"unity-editor-link-transcript","formatVersion":1,"producer":"unity-mcp-bridge",…,"redactions":[…]}
//! {"seq":1,"ms":0,"conn":1,"event":"connect","port":"${PORT_1}","framing":"header"}
//! {"seq":2,"ms":1,"conn":1,"dir":"to-editor","message":{"jsonrpc":"2.0","id":1,"method":"set-client-name",…}}
//! {"seq":3,"ms":2,"conn":1,"dir":"from-editor","message":{"jsonrpc":"2.0","id":1,"result":{…}}}
//! {"seq":8,"ms":949,"conn":1,"dir":"from-editor","message":{"jsonrpc":"2.0","method":"notifications/server/shutdown",…}}
//! {"seq":9,"ms":949,"conn":1,"event":"reload","reason":"DomainReload"}
//! {"seq":10,"ms":950,"conn":1,"event":"close","by":"editor","reason":"the Editor closed the connection"}
//! ```
//!
//! A [`Redactor`](crate::redaction::Redactor) turns what is specific to one machine and one run — the
//! project path, the home folder, the user name, session ids, ports, pids,
//! timestamps — into placeholders (`${PROJECT}`, `${SESSION_1}`, `${PORT_1}`,
//! `${TIME}` …) as records are written; a
//! [`Substitution`](crate::redaction::Substitution) fills them in
//! again at replay.

use std::{
    fs::File,
    io::{self, BufWriter, Write},
    path::{Path, PathBuf},
    sync::Mutex,
    time::{Instant, SystemTime},
};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::{
    discovery::iso_timestamp,
    redaction::{Redaction, Redactor, number_of},
};

/// The `format` of the header line.
pub const FORMAT: &str = "unity-editor-link-transcript";
/// The transcript format version.
pub const FORMAT_VERSION: u32 = 1;

/// Which way a frame went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Client to Editor.
    ToEditor,
    /// Editor to client.
    FromEditor,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ToEditor => "to-editor",
            Direction::FromEditor => "from-editor",
        }
    }

    fn parse(s: &str) -> Option<Direction> {
        match s {
            "to-editor" => Some(Direction::ToEditor),
            "from-editor" => Some(Direction::FromEditor),
            _ => None,
        }
    }
}

/// The first line of a transcript.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Header {
    pub format: String,
    pub format_version: u32,
    pub producer: String,
    pub producer_version: String,
    pub started_at: String,
    /// What was recorded: `editor-link`.
    pub recorded: String,
    pub redactions: Vec<Redaction>,
}

/// A frame's contents.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    Message(Value),
    /// Bytes that were not JSON.
    Raw(Vec<u8>),
}

/// What a record is.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    Frame {
        dir: Direction,
        payload: Payload,
    },
    /// A lifecycle event: `listen`, `connect`, `close`, … with details.
    Event {
        event: String,
        details: Map<String, Value>,
    },
}

/// One line after the header.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub seq: u64,
    pub ms: u64,
    pub conn: u64,
    pub entry: Entry,
    /// The line of the file it was read from (1 is the header); 0 when not read.
    pub line: usize,
}

impl Record {
    pub fn to_value(&self) -> Value {
        let mut v = json!({"seq": self.seq, "ms": self.ms, "conn": self.conn});
        match &self.entry {
            Entry::Frame { dir, payload } => {
                v["dir"] = dir.as_str().into();
                match payload {
                    Payload::Message(message) => v["message"] = message.clone(),
                    Payload::Raw(bytes) => v["raw"] = base64::engine::general_purpose::STANDARD.encode(bytes).into(),
                }
            }
            Entry::Event { event, details } => {
                v["event"] = event.as_str().into();
                for (k, d) in details {
                    v[k] = d.clone();
                }
            }
        }
        v
    }

    pub fn from_value(value: Value, line: usize) -> Result<Record, String> {
        let Value::Object(mut o) = value else { return Err("a record must be a JSON object".into()) };
        let mut number = |name: &str| -> Result<u64, String> {
            o.remove(name).and_then(|v| v.as_u64()).ok_or_else(|| format!("`{name}` must be a non-negative integer"))
        };
        let (seq, ms, conn) = (number("seq")?, number("ms")?, number("conn")?);
        let entry = if let Some(dir) = o.remove("dir") {
            let dir = dir
                .as_str()
                .and_then(Direction::parse)
                .ok_or_else(|| format!("`dir` must be \"to-editor\" or \"from-editor\", not {dir}"))?;
            let payload = match (o.remove("message"), o.remove("raw")) {
                (Some(message), None) => Payload::Message(message),
                (None, Some(Value::String(raw))) => Payload::Raw(
                    base64::engine::general_purpose::STANDARD
                        .decode(raw)
                        .map_err(|e| format!("`raw` is not base64: {e}"))?,
                ),
                _ => return Err("a frame has exactly one of `message` and `raw` (base64)".into()),
            };
            Entry::Frame { dir, payload }
        } else if let Some(event) = o.remove("event") {
            let event = event.as_str().ok_or("`event` must be a string")?.to_owned();
            Entry::Event { event, details: o }
        } else {
            return Err("a record is a frame (`dir`) or an event (`event`)".into());
        };
        Ok(Record { seq, ms, conn, entry, line })
    }

    /// The message of a frame in `dir`, if it is one.
    pub fn message(&self, dir: Direction) -> Option<&Value> {
        match &self.entry {
            Entry::Frame { dir: d, payload: Payload::Message(m) } if *d == dir => Some(m),
            _ => None,
        }
    }

    /// The event's name, if it is one.
    pub fn event(&self) -> Option<(&str, &Map<String, Value>)> {
        match &self.entry {
            Entry::Event { event, details } => Some((event, details)),
            _ => None,
        }
    }
}

/// Why a transcript cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    #[error("cannot read the transcript {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    #[error("{path}:{line}: {message}")]
    Invalid { path: PathBuf, line: usize, message: String },
}

/// A transcript read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Transcript {
    pub header: Header,
    pub records: Vec<Record>,
}

impl Transcript {
    pub fn read(path: &Path) -> Result<Transcript, TranscriptError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| TranscriptError::Io { path: path.to_owned(), source })?;
        Transcript::parse(&text).map_err(|(line, message)| TranscriptError::Invalid {
            path: path.to_owned(),
            line,
            message,
        })
    }

    /// Parses a transcript; errors name the line.
    pub fn parse(text: &str) -> Result<Transcript, (usize, String)> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l)).filter(|(_, l)| !l.trim().is_empty());
        let (n, first) = lines.next().ok_or((1, "the transcript is empty".to_owned()))?;
        let header: Value = serde_json::from_str(first).map_err(|e| (n, format!("the header is not JSON: {e}")))?;
        if header.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err((n, format!("not a transcript: the header's `format` is not {FORMAT:?}")));
        }
        let version = header.get("formatVersion").and_then(Value::as_u64);
        if version != Some(u64::from(FORMAT_VERSION)) {
            return Err((n, format!("format version {version:?} is not supported (this reads {FORMAT_VERSION})")));
        }
        let header: Header = serde_json::from_value(header).map_err(|e| (n, format!("invalid header: {e}")))?;
        let mut records = Vec::new();
        for (n, line) in lines {
            let value: Value = serde_json::from_str(line).map_err(|e| (n, format!("not JSON: {e}")))?;
            records.push(Record::from_value(value, n).map_err(|e| (n, e))?);
        }
        Ok(Transcript { header, records })
    }

    /// The tool calls the recorded session made: the requests sent to the
    /// Editor, once each (a resent request keeps its id), without a
    /// bridge's own (handshake, tool list, watchdog pings).
    pub fn tool_calls(&self) -> Vec<(String, Value)> {
        const OWN: &[&str] = &["set-client-name", "get-version", "get-tool-details", "ping"];
        let mut seen = Vec::new();
        let mut calls = Vec::new();
        for record in &self.records {
            let Some(message) = record.message(Direction::ToEditor) else { continue };
            let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id")) else { continue };
            if OWN.contains(&method) || seen.contains(id) {
                continue;
            }
            seen.push(id.clone());
            calls.push((method.to_owned(), message.get("params").cloned().unwrap_or_else(|| json!({}))));
        }
        calls
    }
}

/// Appends records to a transcript file, redacting them first.
#[derive(Debug)]
pub struct Recorder {
    started: Instant,
    inner: Mutex<RecorderState>,
}

#[derive(Debug)]
struct RecorderState {
    file: BufWriter<File>,
    seq: u64,
    redactor: Redactor,
    /// Connection numbers as the caller knows them, in order of appearance:
    /// the transcript numbers them 1, 2, … (0 stays 0: the whole Editor).
    conns: Vec<u64>,
}

impl Recorder {
    /// Creates `path` and writes the header line.
    pub fn create(path: &Path, producer: &str, producer_version: &str, redactor: Redactor) -> io::Result<Recorder> {
        let mut file = BufWriter::new(File::create(path)?);
        let header = Header {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            producer: producer.into(),
            producer_version: producer_version.into(),
            started_at: iso_timestamp(SystemTime::now()),
            recorded: "editor-link".into(),
            redactions: redactor.describe(),
        };
        writeln!(file, "{}", serde_json::to_string(&header).map_err(io::Error::other)?)?;
        file.flush()?;
        let state = RecorderState { file, seq: 0, redactor, conns: Vec::new() };
        Ok(Recorder { started: Instant::now(), inner: Mutex::new(state) })
    }

    fn write(&self, conn: u64, entry: Entry) {
        let Ok(mut state) = self.inner.lock() else { return };
        let state = &mut *state;
        state.seq += 1;
        let conn = if conn == 0 { 0 } else { number_of(&mut state.conns, conn) as u64 };
        let mut record = Record { seq: state.seq, ms: self.started.elapsed().as_millis() as u64, conn, entry, line: 0 };
        match &mut record.entry {
            Entry::Frame { payload: Payload::Message(message), .. } => state.redactor.redact(message),
            Entry::Event { details, .. } => {
                let mut value = Value::Object(std::mem::take(details));
                state.redactor.redact(&mut value);
                if let Value::Object(redacted) = value {
                    *details = redacted;
                }
            }
            Entry::Frame { payload: Payload::Raw(bytes), .. } => state.redactor.redact_bytes(bytes),
        }
        // A recording must never break what it records: errors are logged.
        if let Err(err) = writeln!(state.file, "{}", record.to_value()).and_then(|()| state.file.flush()) {
            tracing::warn!(%err, "cannot write the transcript");
        }
    }

    /// One frame body as it went over the wire. The Editor announcing a
    /// reload or its quit is also recorded as a `reload` or `quit` event.
    pub fn frame(&self, conn: u64, dir: Direction, body: &[u8]) {
        let payload = match serde_json::from_slice::<Value>(body) {
            Ok(message) => Payload::Message(message),
            Err(_) => Payload::Raw(body.to_vec()),
        };
        let announced = match (&payload, dir) {
            (Payload::Message(m), Direction::FromEditor)
                if m.get("method").and_then(Value::as_str) == Some(crate::jsonrpc::notifications::SERVER_SHUTDOWN) =>
            {
                let reason = m.pointer("/params/reason").and_then(Value::as_str).unwrap_or("").to_owned();
                Some((if reason == "EditorQuit" { "quit" } else { "reload" }, reason))
            }
            _ => None,
        };
        self.write(conn, Entry::Frame { dir, payload });
        if let Some((event, reason)) = announced {
            self.event(conn, event, json!({"reason": reason}));
        }
    }

    /// A lifecycle event (`listen`, `connect`, `close`, …) with details.
    pub fn event(&self, conn: u64, event: &str, details: Value) {
        let details = match details {
            Value::Object(details) => details,
            _ => Map::new(),
        };
        self.write(conn, Entry::Event { event: event.into(), details });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_through_json() {
        let records = [
            Record {
                seq: 1,
                ms: 0,
                conn: 1,
                entry: Entry::Event {
                    event: "connect".into(),
                    details: json!({"port": 5}).as_object().unwrap().clone(),
                },
                line: 2,
            },
            Record {
                seq: 2,
                ms: 3,
                conn: 1,
                entry: Entry::Frame { dir: Direction::ToEditor, payload: Payload::Message(json!({"id": 1})) },
                line: 3,
            },
            Record {
                seq: 3,
                ms: 4,
                conn: 1,
                entry: Entry::Frame { dir: Direction::FromEditor, payload: Payload::Raw(b"\x00{oops".to_vec()) },
                line: 4,
            },
        ];
        for record in records {
            assert_eq!(Record::from_value(record.to_value(), record.line).unwrap(), record);
        }
        let err = Record::from_value(json!({"seq": 1, "ms": 1, "conn": 1, "dir": "sideways", "message": {}}), 7);
        assert!(err.unwrap_err().contains("sideways"));
    }

    #[test]
    fn a_transcript_names_the_line_of_a_problem() {
        let header = r#"{"format":"unity-editor-link-transcript","formatVersion":1,"producer":"t","producerVersion":"0","startedAt":"x","recorded":"editor-link","redactions":[]}"#;
        let text = format!("{header}\n{{\"seq\":1,\"ms\":0,\"conn\":1,\"event\":\"connect\"}}\n{{\"seq\":2}}\n");
        assert_eq!(Transcript::parse(&text).unwrap_err().0, 3);
        let future = header.replace("\"formatVersion\":1", "\"formatVersion\":9");
        assert!(Transcript::parse(&future).unwrap_err().1.contains("not supported"));
        assert_eq!(Transcript::parse(header).unwrap().records.len(), 0);
    }
}
