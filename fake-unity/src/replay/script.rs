//! What a transcript asks of the Editor side: for each recorded connection,
//! the frames the client sent (what replay expects), and what the Editor did
//! after each of them (answers, notifications, closes, reloads) with its
//! delay.
//!
//! Anchoring: a response belongs to the request with its id on the same
//! connection; anything else the Editor sent (notifications, a close)
//! belongs to the last frame the client had sent before it on that
//! connection, or to the connection's start.

use editor_link::{
    redaction::numbered,
    transcript::{Direction, Entry, Payload, Transcript},
};
use serde_json::{Map, Value};

/// Something the Editor does, `delay_ms` after its anchor.
#[derive(Clone, Debug, PartialEq)]
pub struct Emission {
    pub delay_ms: u64,
    pub seq: u64,
    pub action: Action,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Send this frame body (a message, or raw bytes).
    Send(Payload),
    /// Close the connection; `away` when the Editor went away with it.
    Close { away: Option<Away> },
}

/// Why the Editor went away (from its shutdown notification), and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Away {
    pub quit: bool,
    /// Until the next recorded connection (none: it never came back).
    pub downtime_ms: Option<u64>,
}

/// A frame the client sent, as recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Expected {
    pub seq: u64,
    /// When it was sent, ms since the recording started.
    pub ms: u64,
    pub line: usize,
    pub conn: u64,
    pub payload: Payload,
    /// Its answer, if the Editor sent one.
    pub response: Option<Emission>,
    /// What the Editor did next.
    pub then: Vec<Emission>,
}

impl Expected {
    pub fn message(&self) -> Option<&Value> {
        match &self.payload {
            Payload::Message(m) => Some(m),
            Payload::Raw(_) => None,
        }
    }

    /// A request has a method and an id.
    pub fn is_request(&self) -> bool {
        self.message().is_some_and(|m| m.get("method").is_some() && m.get("id").is_some_and(|id| !id.is_null()))
    }

    pub fn method(&self) -> Option<&str> {
        self.message().and_then(|m| m.get("method")).and_then(Value::as_str)
    }

    pub fn describe(&self) -> String {
        match (self.method(), self.message()) {
            (Some(method), Some(m)) => {
                let params = m.get("params").map(Value::to_string).unwrap_or_default();
                format!("{method} {params}")
            }
            (None, Some(m)) => m.to_string(),
            (None, None) | (Some(_), None) => "(raw bytes, not JSON)".into(),
        }
    }
}

/// One recorded connection.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnScript {
    pub conn: u64,
    /// The port it connected to, as recorded (a placeholder when redacted).
    pub port: Option<Value>,
    /// Which listening period it belongs to (0, then one more per reload).
    pub period: usize,
    pub start: Vec<Emission>,
    pub expected: Vec<Expected>,
}

/// The whole Editor side of a transcript.
#[derive(Clone, Debug, PartialEq)]
pub struct Script {
    pub conns: Vec<ConnScript>,
    /// What `get-version` said, for the discovery file.
    pub unity_version: Option<String>,
    pub package_version: Option<String>,
    /// Session placeholders in the order they appear.
    pub session_count: usize,
    pub port_count: usize,
    pub pid_count: usize,
}

impl Script {
    pub fn from_transcript(transcript: &Transcript) -> Script {
        let mut conns: Vec<ConnScript> = Vec::new();
        // (conn index, anchor): None is the start, Some(i) the i-th expected frame.
        let mut anchors: Vec<(u64, Option<usize>, u64)> = Vec::new();
        let mut last_shutdown: Vec<(u64, Option<bool>)> = Vec::new();
        let mut periods = 0usize;
        let mut script = Script {
            conns: Vec::new(),
            unity_version: None,
            package_version: None,
            session_count: 0,
            port_count: 0,
            pid_count: 0,
        };
        for record in &transcript.records {
            count_placeholders(&record.to_value(), &mut script);
            if record.conn == 0 {
                // Editor-wide events (`listen`) belong to no connection.
                continue;
            }
            let index = match conns.iter().position(|c| c.conn == record.conn) {
                Some(i) => i,
                None => {
                    conns.push(ConnScript {
                        conn: record.conn,
                        port: None,
                        period: periods,
                        start: Vec::new(),
                        expected: Vec::new(),
                    });
                    anchors.push((record.conn, None, record.ms));
                    last_shutdown.push((record.conn, None));
                    conns.len() - 1
                }
            };
            let conn = &mut conns[index];
            let (_, anchor, anchor_ms) = anchors[index];
            let delay_ms = record.ms.saturating_sub(anchor_ms);
            match &record.entry {
                Entry::Event { event, details } => match event.as_str() {
                    "connect" => {
                        conn.port = details.get("port").cloned();
                        anchors[index].2 = record.ms;
                    }
                    "close" if by_editor(details) => {
                        let away = last_shutdown[index].1.map(|quit| Away { quit, downtime_ms: None });
                        // Several connections close with one reload; the first opens the next period.
                        if away.is_some() && conn.period == periods {
                            periods += 1;
                        }
                        let emission = Emission { delay_ms, seq: record.seq, action: Action::Close { away } };
                        push(conn, anchor, emission);
                    }
                    _ => {}
                },
                Entry::Frame { dir: Direction::ToEditor, payload } => {
                    conn.expected.push(Expected {
                        seq: record.seq,
                        ms: record.ms,
                        line: record.line,
                        conn: record.conn,
                        payload: payload.clone(),
                        response: None,
                        then: Vec::new(),
                    });
                    anchors[index] = (record.conn, Some(conn.expected.len() - 1), record.ms);
                }
                Entry::Frame { dir: Direction::FromEditor, payload } => {
                    if let Some(quit) = shutdown_reason(payload) {
                        last_shutdown[index].1 = Some(quit);
                    }
                    if let Some((i, request_ms)) = answered_request(conn, payload) {
                        let delay_ms = record.ms.saturating_sub(request_ms);
                        conn.expected[i].response =
                            Some(Emission { delay_ms, seq: record.seq, action: Action::Send(payload.clone()) });
                    } else {
                        let emission = Emission { delay_ms, seq: record.seq, action: Action::Send(payload.clone()) };
                        push(conn, anchor, emission);
                    }
                    if let Payload::Message(m) = payload {
                        let result = &m["result"];
                        if let Some(v) = result.get("UnityVersion").and_then(Value::as_str) {
                            script.unity_version.get_or_insert_with(|| v.to_owned());
                        }
                        if let Some(v) = result.get("PackageVersion").and_then(Value::as_str) {
                            script.package_version.get_or_insert_with(|| v.to_owned());
                        }
                    }
                }
            }
        }
        // How long each absence lasted: until the next connection began.
        let connects: Vec<(usize, u64)> = transcript
            .records
            .iter()
            .filter_map(|r| match r.event() {
                Some(("connect", _)) => conns.iter().find(|c| c.conn == r.conn).map(|c| (c.period, r.ms)),
                _ => None,
            })
            .collect();
        for conn in &mut conns {
            let period = conn.period;
            let next = connects.iter().find(|(p, _)| *p == period + 1).map(|(_, ms)| *ms);
            let ms_of = |seq: u64| transcript.records.iter().find(|r| r.seq == seq).map_or(0, |r| r.ms);
            let all = conn.start.iter_mut().chain(conn.expected.iter_mut().flat_map(|e| e.then.iter_mut()));
            for emission in all {
                if let Action::Close { away: Some(away) } = &mut emission.action {
                    let closed_at = ms_of(emission.seq);
                    away.downtime_ms = next.map(|next| next.saturating_sub(closed_at));
                }
            }
        }
        script.conns = conns;
        script
    }

    /// Every request the client is expected to send.
    pub fn request_count(&self) -> usize {
        self.conns.iter().flat_map(|c| &c.expected).filter(|e| e.is_request()).count()
    }

    /// The port placeholder (or number) of a period's first connection.
    pub fn period_port(&self, period: usize) -> Option<&Value> {
        self.conns.iter().find(|c| c.period == period).and_then(|c| c.port.as_ref())
    }
}

fn push(conn: &mut ConnScript, anchor: Option<usize>, emission: Emission) {
    match anchor {
        None => conn.start.push(emission),
        Some(i) => conn.expected[i].then.push(emission),
    }
}

fn by_editor(details: &Map<String, Value>) -> bool {
    details.get("by").and_then(Value::as_str) == Some("editor")
}

/// `Some(quit)` for a `notifications/server/shutdown`.
fn shutdown_reason(payload: &Payload) -> Option<bool> {
    let Payload::Message(m) = payload else { return None };
    if m.get("method").and_then(Value::as_str) != Some(editor_link::jsonrpc::notifications::SERVER_SHUTDOWN) {
        return None;
    }
    Some(m.pointer("/params/reason").and_then(Value::as_str) == Some("EditorQuit"))
}

/// The latest unanswered request with this response's id, and its time.
fn answered_request(conn: &ConnScript, payload: &Payload) -> Option<(usize, u64)> {
    let Payload::Message(m) = payload else { return None };
    if m.get("method").is_some() || !(m.get("result").is_some() || m.get("error").is_some()) {
        return None;
    }
    let id = m.get("id").filter(|id| !id.is_null())?;
    let i = conn
        .expected
        .iter()
        .rposition(|e| e.response.is_none() && e.is_request() && e.message().and_then(|r| r.get("id")) == Some(id))?;
    Some((i, conn.expected[i].ms))
}

fn count_placeholders(value: &Value, script: &mut Script) {
    match value {
        Value::Object(map) => map.values().for_each(|v| count_placeholders(v, script)),
        Value::Array(items) => items.iter().for_each(|v| count_placeholders(v, script)),
        Value::String(s) if s.contains("${") => {
            for (kind, count) in [
                ("SESSION", &mut script.session_count),
                ("PORT", &mut script.port_count),
                ("PID", &mut script.pid_count),
            ] {
                let mut rest = s.as_str();
                while let Some(at) = rest.find("${") {
                    let end = rest[at..].find('}').map_or(rest.len(), |e| at + e + 1);
                    if let Some(n) = numbered(&rest[at..end], kind) {
                        *count = (*count).max(n);
                    }
                    rest = &rest[end..];
                }
            }
        }
        _ => {}
    }
}
