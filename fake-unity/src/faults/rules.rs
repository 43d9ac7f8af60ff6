//! Fault rules: what sets a fault off, what it matches, how often and how
//! long it fires, and its counters. Installed from a scenario file, the
//! control API or a [`FaultGuard`].
//!
//! A rule names a trigger (`on`), what it matches, the fault, and how long it
//! lasts. Frame triggers (`toEditor`, `fromEditor`) form one chain per
//! direction in which the first matching rule wins, as in toxiproxy;
//! lifecycle triggers (`connect`, `start`, `reload`, `quit`) fire every
//! matching rule. Each rule counts its firings (`GET /stats`, the exit
//! summary): a test whose fault never fired is a false green.
//!
//! All randomness (jitter, garbage, corruption) comes from one generator per
//! rule seeded from the Editor's seed and the rule's name, so the same seed
//! and scenario give the same bytes on the wire.

use std::{
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::Fault;
use editor_link::lock;

/// What sets a rule off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Trigger {
    /// A frame from the client, before the Editor handles it.
    ToEditor,
    /// A frame from the Editor, before it is written.
    FromEditor,
    /// A connection accepted.
    Connect,
    /// The Editor starting (before it listens).
    Start,
    /// A domain reload (while the Editor is away).
    Reload,
    /// The Editor quitting.
    Quit,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::ToEditor => "toEditor",
            Trigger::FromEditor => "fromEditor",
            Trigger::Connect => "connect",
            Trigger::Start => "start",
            Trigger::Reload => "reload",
            Trigger::Quit => "quit",
        }
    }

    fn is_frame(self) -> bool {
        matches!(self, Trigger::ToEditor | Trigger::FromEditor)
    }
}

/// What kind of frame a rule matches (an `error` matches error responses).
pub use editor_link::connection::FrameKind;

/// Where a domain reload interrupts a matched request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ReloadPoint {
    /// Before the tool runs: the call is not applied and gets no response.
    #[default]
    BeforeRun,
    /// After the tool ran, before the response: applied, journaled for
    /// `x-resume`, no response on this connection.
    AfterRun,
    /// After the response was sent.
    AfterReply,
}

/// What a rule matches; every field given must hold.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Match {
    /// Method glob (`*`, `?`): a request's or notification's method, or for
    /// a response the method of the request it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Kind of frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<FrameKind>,
    /// The Nth occurrence of what else this rule matches (1-based); the rule
    /// fires from then on, `times` times (default once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nth: Option<u64>,
    /// The Nth frame in this direction since the Editor started (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<u64>,
    /// The Nth connection accepted since the Editor started (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<u64>,
    /// Only once this many milliseconds have passed since the rule was installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_ms: Option<u64>,
}

/// A rule as written in a scenario file or posted to `/faults`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuleSpec {
    /// Unique name (default: the fault's kind and a number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The trigger (default: the fault's natural one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on: Option<Trigger>,
    #[serde(default, rename = "match")]
    pub matcher: Match,
    pub fault: Fault,
    /// How many times the rule fires at most.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u64>,
    /// How long the rule stays active, from when it becomes active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_ms: Option<u64>,
}

impl RuleSpec {
    pub fn new(fault: Fault) -> Self {
        RuleSpec { name: None, on: None, matcher: Match::default(), fault, times: None, for_ms: None }
    }

    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.to_owned());
        self
    }

    pub fn on(mut self, trigger: Trigger) -> Self {
        self.on = Some(trigger);
        self
    }

    pub fn method(mut self, glob: &str) -> Self {
        self.matcher.method = Some(glob.to_owned());
        self
    }

    pub fn frame(mut self, kind: FrameKind) -> Self {
        self.matcher.frame = Some(kind);
        self
    }

    pub fn nth(mut self, n: u64) -> Self {
        self.matcher.nth = Some(n);
        self
    }

    pub fn times(mut self, n: u64) -> Self {
        self.times = Some(n);
        self
    }
}

/// Why a rule was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FaultError {
    #[error("fault rule {name:?}: {reason}")]
    Invalid { name: String, reason: String },
    #[error("a fault rule named {0:?} already exists")]
    Duplicate(String),
    #[error("no fault rule named {0:?}")]
    NotFound(String),
}

/// An installed rule.
#[derive(Debug)]
pub(super) struct Rule {
    pub(super) name: String,
    on: Trigger,
    pub(super) spec: RuleSpec,
    method: Option<regex::Regex>,
    installed: Instant,
    pub(super) state: Mutex<RuleState>,
}

#[derive(Debug)]
pub(super) struct RuleState {
    /// Occurrences of what the rule matches (for `nth`).
    seen: u64,
    pub(super) fired: u64,
    rng: ChaCha8Rng,
}

impl Rule {
    fn effective_times(&self) -> Option<u64> {
        self.spec.times.or(if self.spec.matcher.nth.is_some() || self.spec.matcher.message.is_some() {
            Some(1)
        } else {
            None
        })
    }
}

/// What a trigger is about.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    pub connection: Option<u64>,
    pub frame: Option<FrameKind>,
    /// Set for error responses.
    pub is_error: bool,
    pub method: Option<&'a str>,
}

impl<'a> Subject<'a> {
    pub fn lifecycle() -> Self {
        Subject { connection: None, frame: None, is_error: false, method: None }
    }

    /// What the `toEditor` rules see of a frame a client sent on `connection`.
    pub fn of_frame(
        connection: u64,
        parsed: &'a Result<editor_link::jsonrpc::Message, editor_link::jsonrpc::ParseFailure>,
    ) -> Self {
        use editor_link::jsonrpc::Message;
        let (frame, is_error, method) = match parsed {
            Ok(Message::Request(r)) => (FrameKind::Request, false, Some(r.method.as_str())),
            Ok(Message::Notification(n)) => (FrameKind::Notification, false, Some(n.method.as_str())),
            Ok(Message::Response(r)) => (FrameKind::Response, r.outcome.is_err(), None),
            Err(_) => (FrameKind::Invalid, false, None),
        };
        Subject { connection: Some(connection), frame: Some(frame), is_error, method }
    }
}

/// A rule that fired: its fault, and its random generator and time scale
/// for carrying it out.
#[derive(Clone, Debug)]
pub struct Fired {
    rule: Arc<Rule>,
    trigger: Trigger,
    time_scale: f64,
}

impl Fired {
    pub fn fault(&self) -> &Fault {
        &self.rule.spec.fault
    }

    /// What set it off.
    pub fn trigger(&self) -> Trigger {
        self.trigger
    }

    /// What it does to the simulated Editor, as its fault says.
    pub fn effect(&self) -> Option<super::Effect> {
        self.fault().behaviour().effect(self)
    }

    pub fn name(&self) -> &str {
        &self.rule.name
    }

    /// `ms` milliseconds, scaled by the time scale.
    pub fn duration(&self, ms: u64) -> Duration {
        editor_link::duration::saturating_seconds(ms as f64 / 1000.0 * self.time_scale)
    }

    /// Runs `f` with the rule's generator.
    pub fn with_rng<T>(&self, f: impl FnOnce(&mut ChaCha8Rng) -> T) -> T {
        f(&mut lock(&self.rule.state).rng)
    }

    /// A latency with its jitter drawn.
    pub fn jittered(&self, ms: u64, jitter_ms: u64) -> Duration {
        let ms = if jitter_ms == 0 {
            ms
        } else {
            let low = ms.saturating_sub(jitter_ms);
            self.with_rng(|rng| rng.random_range(low..=ms + jitter_ms))
        };
        self.duration(ms)
    }
}

/// The rules of one Editor.
#[derive(Debug)]
pub struct Faults {
    seed: u64,
    time_scale: f64,
    rules: RwLock<Vec<Arc<Rule>>>,
    /// Frames seen per direction (toEditor, fromEditor), for `match.message`.
    messages: [AtomicU64; 2],
    next_auto_name: AtomicU64,
    /// Bumped whenever the rule set changes (a stall ends with its rule).
    changes: tokio::sync::watch::Sender<u64>,
    /// Told each rule that fires.
    events: crate::events::Events,
}

impl Faults {
    pub fn new(seed: u64, time_scale: f64) -> Self {
        Faults {
            seed,
            time_scale: if time_scale.is_finite() && time_scale >= 0.0 { time_scale } else { 1.0 },
            rules: RwLock::new(Vec::new()),
            messages: [AtomicU64::new(0), AtomicU64::new(0)],
            next_auto_name: AtomicU64::new(1),
            changes: tokio::sync::watch::channel(0).0,
            events: crate::events::Events::default(),
        }
    }

    /// Tells `events` of every rule that fires.
    pub fn reporting_to(mut self, events: crate::events::Events) -> Self {
        self.events = events;
        self
    }

    /// Changes whenever rules are added, replaced or removed.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    pub fn time_scale(&self) -> f64 {
        self.time_scale
    }

    /// `ms` scaled by the time scale.
    pub fn scaled(&self, ms: u64) -> Duration {
        editor_link::duration::saturating_seconds(ms as f64 / 1000.0 * self.time_scale)
    }

    pub(super) fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<Rule>>> {
        self.rules.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Vec<Arc<Rule>>> {
        self.rules.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Checks a spec and gives it its name and trigger.
    fn compile(&self, mut spec: RuleSpec) -> Result<Rule, FaultError> {
        let name = match &spec.name {
            Some(name) if name.trim().is_empty() => {
                return Err(FaultError::Invalid { name: name.clone(), reason: "the name is empty".into() });
            }
            Some(name) => name.clone(),
            None => format!("{}-{}", spec.fault.name(), self.next_auto_name.fetch_add(1, Ordering::Relaxed)),
        };
        let invalid = |reason: String| FaultError::Invalid { name: name.clone(), reason };
        let allowed = spec.fault.triggers();
        let on = spec.on.unwrap_or(allowed[0]);
        if !allowed.contains(&on) {
            let list: Vec<&str> = allowed.iter().map(|t| t.as_str()).collect();
            return Err(invalid(format!(
                "{} cannot be triggered on {} (it can on: {})",
                spec.fault.name(),
                on.as_str(),
                list.join(", ")
            )));
        }
        spec.fault.behaviour().validate().map_err(&invalid)?;
        let m = &spec.matcher;
        if !on.is_frame() {
            for (field, given) in
                [("method", m.method.is_some()), ("frame", m.frame.is_some()), ("message", m.message.is_some())]
            {
                if given {
                    return Err(invalid(format!("match.{field} applies to frames, not to {}", on.as_str())));
                }
            }
        }
        if matches!(on, Trigger::Start | Trigger::Reload | Trigger::Quit) && m.connection.is_some() {
            return Err(invalid(format!("match.connection does not apply to {}", on.as_str())));
        }
        if m.nth == Some(0) || m.message == Some(0) || m.connection == Some(0) {
            return Err(invalid("nth, message and connection count from 1".into()));
        }
        if spec.times == Some(0) {
            return Err(invalid("times must be at least 1".into()));
        }
        let method = m.method.as_deref().map(|glob| crate::tools::wildcard_regex(glob, false));
        spec.name = Some(name.clone());
        spec.on = Some(on);
        let rng = ChaCha8Rng::seed_from_u64(self.seed ^ fnv1a(name.as_bytes()));
        Ok(Rule {
            name,
            on,
            spec,
            method,
            installed: Instant::now(),
            state: Mutex::new(RuleState { seen: 0, fired: 0, rng }),
        })
    }

    /// Installs rules, all or none; returns their names.
    pub fn add(&self, specs: Vec<RuleSpec>) -> Result<Vec<String>, FaultError> {
        let mut rules = self.write();
        let mut added: Vec<Rule> = Vec::with_capacity(specs.len());
        for spec in specs {
            let rule = self.compile(spec)?;
            if rules.iter().any(|r| r.name == rule.name) || added.iter().any(|r| r.name == rule.name) {
                return Err(FaultError::Duplicate(rule.name));
            }
            added.push(rule);
        }
        let names = added.iter().map(|r| r.name.clone()).collect();
        rules.extend(added.into_iter().map(Arc::new));
        drop(rules);
        self.changed();
        Ok(names)
    }

    /// Makes the rule set exactly `specs` (the idempotent bulk load): rules
    /// that are already installed with the same name and spec keep their
    /// counters; the others are replaced or removed.
    pub fn replace(&self, specs: Vec<RuleSpec>) -> Result<Vec<String>, FaultError> {
        let mut rules = self.write();
        let mut next: Vec<Arc<Rule>> = Vec::with_capacity(specs.len());
        for spec in specs {
            let rule = self.compile(spec)?;
            if next.iter().any(|r| r.name == rule.name) {
                return Err(FaultError::Duplicate(rule.name));
            }
            match rules.iter().find(|r| r.name == rule.name && r.spec == rule.spec) {
                Some(existing) => next.push(existing.clone()),
                None => next.push(Arc::new(rule)),
            }
        }
        let names = next.iter().map(|r| r.name.clone()).collect();
        *rules = next;
        drop(rules);
        self.changed();
        Ok(names)
    }

    pub fn remove(&self, name: &str) -> Result<(), FaultError> {
        let mut rules = self.write();
        let before = rules.len();
        rules.retain(|r| r.name != name);
        let removed = rules.len() != before;
        drop(rules);
        if !removed {
            return Err(FaultError::NotFound(name.to_owned()));
        }
        self.changed();
        Ok(())
    }

    pub fn clear(&self) {
        self.write().clear();
        self.changed();
    }

    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// How many times the rule `name` fired, if installed.
    pub fn fired(&self, name: &str) -> Option<u64> {
        self.read().iter().find(|r| r.name == name).map(|r| lock(&r.state).fired)
    }

    /// A frame went by in `trigger`'s direction: the first rule it sets off.
    pub fn frame(&self, trigger: Trigger, subject: Subject<'_>) -> Option<Fired> {
        let counter = &self.messages[usize::from(trigger == Trigger::FromEditor)];
        let message = counter.fetch_add(1, Ordering::Relaxed) + 1;
        self.fire(trigger, subject, Some(message), true).into_iter().next()
    }

    /// A connection was accepted: the first rule it sets off.
    pub fn connect(&self, connection: u64) -> Option<Fired> {
        let subject = Subject { connection: Some(connection), ..Subject::lifecycle() };
        self.fire(Trigger::Connect, subject, None, true).into_iter().next()
    }

    /// A lifecycle moment (`start`, `reload`, `quit`): every rule it sets off.
    pub fn lifecycle(&self, trigger: Trigger) -> Vec<Fired> {
        self.fire(trigger, Subject::lifecycle(), None, false)
    }

    fn fire(&self, trigger: Trigger, subject: Subject<'_>, message: Option<u64>, first_only: bool) -> Vec<Fired> {
        let rules = self.read();
        let mut fired = Vec::new();
        for rule in rules.iter().filter(|r| r.on == trigger) {
            if !self.matches(rule, &subject, message) {
                continue;
            }
            let mut state = lock(&rule.state);
            state.seen += 1;
            if rule.spec.matcher.nth.is_some_and(|nth| state.seen < nth) {
                continue;
            }
            if rule.effective_times().is_some_and(|times| state.fired >= times) {
                continue;
            }
            state.fired += 1;
            drop(state);
            tracing::debug!(rule = %rule.name, fault = rule.spec.fault.name(), "fault fired");
            self.events.send(crate::events::Event::FaultFired {
                rule: rule.name.clone(),
                fault: rule.spec.fault.name(),
                trigger,
                method: subject.method.map(str::to_owned),
            });
            fired.push(Fired { rule: rule.clone(), trigger, time_scale: self.time_scale });
            if first_only {
                break;
            }
        }
        fired
    }

    fn matches(&self, rule: &Rule, subject: &Subject<'_>, message: Option<u64>) -> bool {
        let m = &rule.spec.matcher;
        let since = rule.installed.elapsed();
        let start = self.scaled(m.after_ms.unwrap_or(0));
        if since < start {
            return false;
        }
        if rule.spec.for_ms.is_some_and(|ms| since >= start + self.scaled(ms)) {
            return false;
        }
        if let Some(re) = &rule.method {
            if !subject.method.is_some_and(|method| re.is_match(method)) {
                return false;
            }
        }
        if let Some(kind) = m.frame {
            let ok = match (kind, subject.frame) {
                (FrameKind::Response, Some(FrameKind::Response)) => true,
                (FrameKind::Error, Some(FrameKind::Response)) => subject.is_error,
                (want, Some(got)) => want == got,
                (_, None) => false,
            };
            if !ok {
                return false;
            }
        }
        if m.connection.is_some() && m.connection != subject.connection {
            return false;
        }
        if m.message.is_some() && m.message != message {
            return false;
        }
        true
    }

    /// The rules and their counters, for `GET /faults`, `GET /stats` and the
    /// exit summary.
    pub fn to_json(&self) -> Value {
        let rules: Vec<Value> = self
            .read()
            .iter()
            .map(|rule| {
                let state = lock(&rule.state);
                let mut spec = serde_json::to_value(&rule.spec).unwrap_or(Value::Null);
                spec["fired"] = state.fired.into();
                spec["matched"] = state.seen.into();
                spec
            })
            .collect();
        json!(rules)
    }
}

/// The FNV-1a hash: mixes a rule's name into its seed (stable across Rust
/// versions, unlike `DefaultHasher`).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use editor_link::methods;

    fn request(method: &str) -> Subject<'_> {
        Subject { connection: Some(1), frame: Some(FrameKind::Request), is_error: false, method: Some(method) }
    }

    #[test]
    fn specs_parse_from_json_and_toml_and_reject_typos() {
        let spec: RuleSpec = serde_json::from_str(
            r#"{"name":"slow","on":"fromEditor","match":{"method":"get-*"},"fault":{"kind":"latency","ms":200,"jitterMs":50}}"#,
        )
        .unwrap();
        assert_eq!(spec.fault, Fault::Latency(crate::faults::Latency { ms: 200, jitter_ms: 50 }));
        let spec: RuleSpec = toml::from_str("fault = { kind = \"reset\" }\n").unwrap();
        assert_eq!(spec.fault, Fault::Reset(crate::faults::Reset {}));
        let typo = serde_json::from_str::<RuleSpec>(r#"{"fault":{"kind":"latency","ms":1,"jiter":2}}"#);
        assert!(typo.unwrap_err().to_string().contains("jiter"));
        let unknown = serde_json::from_str::<RuleSpec>(r#"{"fault":{"kind":"meteor"}}"#);
        assert!(unknown.unwrap_err().to_string().contains("meteor"));
    }

    #[test]
    fn triggers_are_checked_against_the_fault() {
        let faults = Faults::new(1, 1.0);
        let err = faults.add(vec![
            RuleSpec::new(Fault::Slicer(crate::faults::Slicer { bytes: 4, size_variation: 0, delay_ms: 0 }))
                .named("s")
                .on(Trigger::ToEditor),
        ]);
        assert!(matches!(err, Err(FaultError::Invalid { reason, .. }) if reason.contains("fromEditor")));
        let err = faults.add(vec![RuleSpec::new(Fault::StaleDiscovery(crate::faults::StaleDiscovery {})).method("x")]);
        assert!(matches!(err, Err(FaultError::Invalid { reason, .. }) if reason.contains("match.method")));
        assert!(faults.is_empty());
    }

    #[test]
    fn first_match_wins_and_nth_and_times_limit_firings() {
        let faults = Faults::new(1, 1.0);
        faults
            .add(vec![
                RuleSpec::new(Fault::Drop(crate::faults::Drop {}))
                    .named("third-ping")
                    .on(Trigger::ToEditor)
                    .method(methods::PING)
                    .nth(3),
                RuleSpec::new(Fault::Latency(crate::faults::Latency { ms: 1, jitter_ms: 0 }))
                    .named("any")
                    .on(Trigger::ToEditor)
                    .times(4),
            ])
            .unwrap();
        let names: Vec<Option<String>> = (0..6)
            .map(|_| faults.frame(Trigger::ToEditor, request(methods::PING)).map(|f| f.name().to_owned()))
            .collect();
        let names: Vec<Option<&str>> = names.iter().map(Option::as_deref).collect();
        assert_eq!(names, [Some("any"), Some("any"), Some("third-ping"), Some("any"), Some("any"), None]);
        assert_eq!(faults.fired("third-ping"), Some(1));
        assert_eq!(faults.fired("any"), Some(4));
        // The other direction is another chain.
        assert!(faults.frame(Trigger::FromEditor, request(methods::PING)).is_none());
    }

    #[test]
    fn message_numbers_count_every_frame_in_a_direction() {
        let faults = Faults::new(1, 1.0);
        let mut spec = RuleSpec::new(Fault::Drop(crate::faults::Drop {})).named("second");
        spec.matcher.message = Some(2);
        faults.add(vec![spec]).unwrap();
        assert!(faults.frame(Trigger::FromEditor, request("a")).is_none());
        assert!(faults.frame(Trigger::FromEditor, request("b")).is_some());
        assert!(faults.frame(Trigger::FromEditor, request("c")).is_none());
    }

    #[test]
    fn replace_is_idempotent_and_keeps_counters() {
        let faults = Faults::new(1, 1.0);
        let spec = RuleSpec::new(Fault::Drop(crate::faults::Drop {})).named("d").on(Trigger::ToEditor);
        faults.replace(vec![spec.clone()]).unwrap();
        faults.frame(Trigger::ToEditor, request("x")).unwrap();
        faults.replace(vec![spec.clone()]).unwrap();
        assert_eq!(faults.fired("d"), Some(1));
        faults.replace(vec![spec.times(5)]).unwrap();
        assert_eq!(faults.fired("d"), Some(0));
        faults.replace(vec![]).unwrap();
        assert!(faults.is_empty());
    }

    #[test]
    fn the_same_seed_gives_the_same_jitter() {
        let draw = |seed| {
            let faults = Faults::new(seed, 1.0);
            faults
                .add(vec![RuleSpec::new(Fault::Latency(crate::faults::Latency { ms: 100, jitter_ms: 90 })).named("j")])
                .unwrap();
            (0..8)
                .map(|_| {
                    let fired = faults.frame(Trigger::FromEditor, request("x")).unwrap();
                    fired.jittered(100, 90)
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
    }
}
