//! The replay's engine: pairs live connections with recorded ones, matches
//! each request, and plays what the Editor did after it.

use super::*;

impl Engine {
    pub(super) fn scaled(&self, ms: u64) -> Duration {
        let wait = editor_link::duration::saturating_seconds(ms as f64 / 1000.0 / self.config.speed.max(1e-6));
        match self.config.max_gap {
            Some(cap) => wait.min(cap),
            None => wait,
        }
    }

    /// Bound on `port` for the current period: the substitution and the
    /// discovery file follow.
    pub(super) fn listening(&mut self, port: u16) {
        self.port = port;
        let placeholder =
            self.script.period_port(self.period).and_then(Value::as_str).and_then(|p| numbered(p, "PORT"));
        if let Some(n) = placeholder {
            if self.substitution.ports.len() < n {
                self.substitution.ports.resize(n, 0);
            }
            self.substitution.ports[n - 1] = u64::from(port);
            self.redactor.ports = self.substitution.ports.clone();
        }
        self.publish(EditorState::Ready);
    }

    /// Where to listen in `period`: the same port unless the recording's
    /// connections went elsewhere.
    /// Where the Editor listens in listening period `period`: another port
    /// when the recording's Editor moved, else the same.
    pub(super) fn next_port(&self, period: usize) -> NextPort {
        let before = self.script.period_port(period - 1);
        let now = self.script.period_port(period);
        match (before, now) {
            (Some(a), Some(b)) if a != b => NextPort::Move,
            _ => NextPort::Same,
        }
    }

    pub(super) fn publish(&self, state: EditorState) {
        let Some(project) = &self.config.project else { return };
        let file = DiscoveryFile {
            port: self.port,
            pid: std::process::id(),
            project_path: editor_link::discovery::unity_path(
                &std::fs::canonicalize(project).unwrap_or(project.clone()),
            ),
            unity_version: self.script.unity_version.clone(),
            package_version: self.script.package_version.clone(),
            protocol_version: Some(PROTOCOL_VERSION),
            server_session_id: self.substitution.sessions.get(self.period).cloned(),
            state: Some(state),
            updated_at: Some(iso_timestamp(std::time::SystemTime::now())),
            // A replay checks what clients send against the recording; it
            // publishes no token and so wants none.
            token: None,
        };
        if let Err(err) = file.write_atomic(project) {
            tracing::error!(%err, "cannot write the discovery file");
        }
    }

    /// Every recorded request received (every client frame, in strict mode).
    pub(super) fn complete(&self) -> bool {
        self.script.conns.iter().enumerate().all(|(c, conn)| {
            conn.expected
                .iter()
                .enumerate()
                .all(|(i, e)| self.used[c][i] || (self.config.mode != MatchMode::Strict && !e.is_request()))
        })
    }

    pub(super) fn is_background(&self, payload: &Payload) -> bool {
        let Payload::Message(m) = payload else { return false };
        let method = m.get("method").and_then(Value::as_str);
        m.get("id").is_some() && method.is_some_and(|method| self.config.background.iter().any(|b| b == method))
    }

    /// For a background request beyond the recorded ones: the latest
    /// recorded request of that method on the connection this one plays
    /// (or, before any, the earliest), whose answer it gets again.
    pub(super) fn background_answer(&self, live_no: u64, payload: &Payload) -> Option<(usize, Emission)> {
        if !self.is_background(payload) {
            return None;
        }
        let Payload::Message(received) = payload else { return None };
        let c = self.live.get(&live_no)?.plays?;
        let same = |e: &&Expected| e.message().is_some_and(|m| m.get("method") == received.get("method"));
        let expected = &self.script.conns[c].expected;
        let mut used = expected.iter().enumerate().rev().filter(|(i, _)| self.used[c][*i]).map(|(_, e)| e);
        let pick = used.find(same).or_else(|| expected.iter().find(same))?;
        Some((c, pick.response.clone()?))
    }

    pub(super) fn answers_ping(&self, payload: &Payload) -> bool {
        let Payload::Message(m) = payload else { return false };
        self.config.answer_pings
            && self.config.mode != MatchMode::Strict
            && m.get("method").and_then(Value::as_str) == Some(methods::PING)
            && m.get("id").is_some_and(|id| Id::from_value(id).ok().flatten().is_some())
    }

    pub(super) fn outcome(&self) -> Outcome {
        let strict = self.config.mode == MatchMode::Strict;
        let mut unused = Vec::new();
        let mut not_reached = Vec::new();
        let mut background_unused = Vec::new();
        for (c, conn) in self.script.conns.iter().enumerate() {
            for (i, e) in conn.expected.iter().enumerate() {
                if self.used[c][i] || !(strict || e.is_request()) {
                    continue;
                }
                let record = Unused { seq: e.seq, line: e.line, connection: e.conn, summary: e.describe() };
                // After the point where the client left, the recording could not be reached.
                match self.cut_at[c] {
                    Some(cut) if e.seq >= cut => not_reached.push(record),
                    _ if self.is_background(&e.payload) => background_unused.push(record),
                    _ => unused.push(record),
                }
            }
        }
        let ok = self.mismatches.is_empty() && (unused.is_empty() || self.config.allow_unused);
        Outcome {
            requests: self.script.request_count(),
            matched: self.matched,
            connections: self.next_live - 1,
            unused,
            not_reached,
            mismatches: self.mismatches.clone(),
            extra_connections: self.extra_connections,
            pings_answered: self.pings_answered,
            background_repeats: self.background_repeats,
            background_unused,
            ok,
        }
    }

    /// The live form of a recorded message: placeholders filled, recorded
    /// ids replaced by the client's.
    pub(super) fn live_message(&mut self, mut message: Value, reply_to: Option<&Value>) -> Value {
        self.substitution.now = iso_timestamp(std::time::SystemTime::now());
        self.substitution.fill(&mut message);
        if let Some(id) = reply_to {
            message["id"] = id.clone();
        }
        if let Some(request_id) = message.pointer_mut("/params/requestId") {
            if let Some(live) = self.ids.get(&request_id.to_string()) {
                *request_id = live.clone();
            }
        }
        message
    }

    /// Pairs a received frame with a recorded one: (recorded conn, index), or
    /// the mismatch.
    pub(super) fn pair(&self, live_no: u64, received: &Payload) -> Pairing {
        let live = &self.live[&live_no];
        let mode = self.config.mode;
        let mut ignore = self.config.ignore.clone();
        // Ids are the client's to choose; how it resends across a reload
        // (`x-resume`) matters only in strict mode.
        ignore.push("id".parse().expect("a valid path"));
        // A credential, different in every Editor process.
        ignore.push(editor_link::jsonrpc::TOKEN_MEMBER.parse().expect("a valid path"));
        if mode != MatchMode::Strict {
            ignore.push(editor_link::jsonrpc::RESUME_MEMBER.parse().expect("a valid path"));
        }
        let redacted = match received {
            Payload::Message(m) => {
                let mut m = m.clone();
                let mut redactor = self.redactor.clone();
                redactor.redact(&mut m);
                Some(m)
            }
            Payload::Raw(_) => None,
        };
        let is_request =
            redacted.as_ref().is_some_and(|m| m.get("method").is_some() && m.get("id").is_some_and(|id| !id.is_null()));
        let differences = |e: &Expected| -> Vec<Difference> {
            match (&e.payload, &redacted, received) {
                (Payload::Message(r), Some(g), _) => matching::diff(r, g, &ignore),
                (Payload::Raw(r), None, Payload::Raw(g)) if r == g => Vec::new(),
                (r, _, g) => vec![Difference {
                    path: "(root)".into(),
                    recorded: Some(payload_value(r)),
                    received: Some(payload_value(g)),
                }],
            }
        };
        let unused =
            |c: usize| self.script.conns[c].expected.iter().enumerate().filter(move |(i, _)| !self.used[c][*i]);
        // The frame that is due, and where a match may be looked for.
        let plays = live.plays;
        let received_method = redacted.as_ref().and_then(|m| m.get("method")).and_then(Value::as_str);
        let due: Option<(usize, usize)> = plays.and_then(|c| match mode {
            MatchMode::Strict => unused(c).next().map(|(i, _)| (c, i)),
            _ if !is_request => None,
            // Each method in order; methods interleave as the client's own
            // concurrency has them.
            _ => unused(c).find(|(_, e)| e.is_request() && e.method() == received_method).map(|(i, _)| (c, i)),
        });
        if !is_request && mode != MatchMode::Strict {
            // Client notifications may come anywhere: paired when recorded, else let be.
            let found = plays.and_then(|c| {
                unused(c).find(|(_, e)| !e.is_request() && differences(e).is_empty()).map(|(i, _)| (c, i))
            });
            return found.map_or(Pairing::Ignored, |(c, i)| Pairing::Matched(c, i));
        }
        let found = match mode {
            MatchMode::Strict | MatchMode::Ordered => {
                due.filter(|(c, i)| differences(&self.script.conns[*c].expected[*i]).is_empty())
            }
            MatchMode::Key => plays.and_then(|c| {
                unused(c).find(|(_, e)| e.is_request() && differences(e).is_empty()).map(|(i, _)| (c, i))
            }),
            MatchMode::Any => (0..self.script.conns.len()).find_map(|c| {
                unused(c).find(|(_, e)| e.is_request() && differences(e).is_empty()).map(|(i, _)| (c, i))
            }),
        };
        if let Some((c, i)) = found {
            return Pairing::Matched(c, i);
        }
        if live.going_away {
            return Pairing::Held;
        }
        // The report: what was due, the nearest candidates, why.
        let candidate = |c: usize, i: usize| {
            let e = &self.script.conns[c].expected[i];
            Candidate {
                seq: e.seq,
                line: e.line,
                connection: e.conn,
                summary: e.describe(),
                differences: differences(e),
            }
        };
        let mut candidates: Vec<Candidate> = (0..self.script.conns.len())
            .flat_map(|c| unused(c).filter(|(_, e)| e.is_request() == is_request).map(move |(i, _)| (c, i)))
            .map(|(c, i)| candidate(c, i))
            .collect();
        candidates.sort_by_key(|c| {
            let same_method = received_method.is_some() && c.summary.split(' ').next() == received_method;
            (!same_method, c.differences.len(), c.seq)
        });
        candidates.truncate(3);
        let expected = match mode {
            MatchMode::Strict | MatchMode::Ordered => due.map(|(c, i)| candidate(c, i)),
            MatchMode::Key | MatchMode::Any => candidates.first().cloned(),
        };
        let reason = match (&expected, plays) {
            (_, None) => format!(
                "connection {live_no} is not in the recording, which has {} connection(s)",
                self.script.conns.len()
            ),
            (expected, _) => matching::reason(mode, expected.as_ref(), received_method),
        };
        let first_difference = expected.as_ref().and_then(|e| e.differences.first()).map(|d| d.path.clone());
        let mut rerun = self.config.command_line(self.port);
        if let Some(path) = &first_difference {
            if path != "method" && path != "(root)" {
                rerun.push_str(&format!("   (to accept this difference, add --ignore {path})"));
            }
        }
        if matches!(mode, MatchMode::Strict | MatchMode::Ordered)
            && candidates.first().is_some_and(|c| c.differences.is_empty())
        {
            rerun.push_str("   (it is recorded later: --match key accepts another order)");
        }
        Pairing::Mismatch(Box::new(Mismatch {
            connection: live_no,
            recorded_connection: plays.map(|c| self.script.conns[c].conn),
            frame: live.frames,
            received: payload_value(received),
            expected,
            reason,
            first_difference,
            candidates,
            rerun,
            answered_with: match self.config.on_unexpected {
                OnUnexpected::Error => "an error response".into(),
                OnUnexpected::Close => "closing the connection".into(),
            },
        }))
    }
}

pub(super) fn payload_value(payload: &Payload) -> Value {
    match payload {
        Payload::Message(m) => m.clone(),
        Payload::Raw(bytes) => json!({"raw": String::from_utf8_lossy(bytes)}),
    }
}
