//! Transcripts: editor-link traffic as JSON Lines (the bridge's `--record`).
//!
//! The first line is a header (format and version, producer, start time, what
//! was recorded); then one record per logical frame — sequence, milliseconds
//! since the start, connection number, direction, and the message (or the raw
//! bytes in base64 when they are not JSON) — and lifecycle events as records.
//! Version 1; the fault-injection work adds redaction and replay.

use std::{
    fs::File,
    io::{self, BufWriter, Write},
    path::Path,
    sync::Mutex,
    time::{Instant, SystemTime},
};

use serde_json::{Value, json};

use crate::discovery::iso_timestamp;

/// The `format` of the header line.
pub const FORMAT: &str = "unity-editor-link-transcript";
/// The transcript format version.
pub const FORMAT_VERSION: u32 = 1;

/// Which way a frame went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
}

/// Appends records to a transcript file.
#[derive(Debug)]
pub struct Recorder {
    started: Instant,
    inner: Mutex<(BufWriter<File>, u64)>,
}

impl Recorder {
    /// Creates `path` and writes the header line.
    pub fn create(path: &Path, producer: &str, producer_version: &str) -> io::Result<Recorder> {
        let mut file = BufWriter::new(File::create(path)?);
        let header = json!({
            "format": FORMAT,
            "formatVersion": FORMAT_VERSION,
            "producer": producer,
            "producerVersion": producer_version,
            "startedAt": iso_timestamp(SystemTime::now()),
            "recorded": "editor-link",
            "redactions": [],
        });
        writeln!(file, "{header}")?;
        file.flush()?;
        Ok(Recorder { started: Instant::now(), inner: Mutex::new((file, 0)) })
    }

    fn write(&self, mut record: Value) {
        let Ok(mut inner) = self.inner.lock() else { return };
        let (file, seq) = &mut *inner;
        *seq += 1;
        record["seq"] = (*seq).into();
        record["ms"] = (self.started.elapsed().as_millis() as u64).into();
        // A recording must never break the bridge: write errors are logged.
        if let Err(err) = writeln!(file, "{record}").and_then(|()| file.flush()) {
            tracing::warn!(%err, "cannot write the transcript");
        }
    }

    /// One frame body as it went over the wire.
    pub fn frame(&self, connection: u64, direction: Direction, body: &[u8]) {
        let mut record = json!({"conn": connection, "dir": direction.as_str()});
        match serde_json::from_slice::<Value>(body) {
            Ok(message) => record["message"] = message,
            Err(_) => {
                use base64::Engine as _;
                record["raw"] = base64::engine::general_purpose::STANDARD.encode(body).into();
            }
        }
        self.write(record);
    }

    /// A lifecycle event: `connect`, `close`, …, with details.
    pub fn event(&self, connection: u64, event: &str, details: Value) {
        let mut record = json!({"conn": connection, "event": event});
        if let Value::Object(details) = details {
            for (k, v) in details {
                record[k] = v;
            }
        }
        self.write(record);
    }
}
