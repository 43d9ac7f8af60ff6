//! A rule installed for the length of a test: removed when its guard drops,
//! which then verifies the rule fired as often as expected, as wiremock's
//! mocks do (by default at least once: a test whose fault never fired is a
//! false green).

use std::sync::{Arc, Weak};

use editor_link::lock;

use super::rules::{FaultError, Faults, Rule, RuleSpec};

/// How many times a [`FaultGuard`]'s rule is expected to fire by the time
/// the guard is dropped: `n` exactly, or a range (`1..`, `0..=2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expected {
    min: u64,
    max: Option<u64>,
}

impl Expected {
    pub fn contains(&self, fired: u64) -> bool {
        fired >= self.min && self.max.is_none_or(|max| fired <= max)
    }
}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.max {
            Some(max) if max == self.min => write!(f, "exactly {max}"),
            Some(max) => write!(f, "{} to {max}", self.min),
            None => write!(f, "at least {}", self.min),
        }
    }
}

impl From<u64> for Expected {
    fn from(n: u64) -> Self {
        Expected { min: n, max: Some(n) }
    }
}

impl From<std::ops::RangeFrom<u64>> for Expected {
    fn from(r: std::ops::RangeFrom<u64>) -> Self {
        Expected { min: r.start, max: None }
    }
}

impl From<std::ops::RangeInclusive<u64>> for Expected {
    fn from(r: std::ops::RangeInclusive<u64>) -> Self {
        Expected { min: *r.start(), max: Some(*r.end()) }
    }
}

/// An installed rule that is removed when dropped (for in-process tests),
/// and that then verifies it fired as expected, as wiremock's mocks do: by
/// default at least once, since a test whose fault never fired is a false
/// green; [`FaultGuard::expect`] says otherwise. (Not while the test is
/// already panicking: its own failure is the one to see.)
#[derive(Debug)]
#[must_use = "the fault is removed as soon as the guard is dropped"]
pub struct FaultGuard {
    faults: Weak<Faults>,
    /// The rule itself, so its count is known even once the Editor is gone.
    rule: Arc<Rule>,
    expected: Expected,
}

impl FaultGuard {
    pub fn install(faults: &Arc<Faults>, spec: RuleSpec) -> Result<FaultGuard, FaultError> {
        let name = faults.add(vec![spec])?.remove(0);
        let rule = faults.read().iter().find(|r| r.name == name).cloned().ok_or(FaultError::Duplicate(name))?;
        Ok(FaultGuard { faults: Arc::downgrade(faults), rule, expected: Expected::from(1..) })
    }

    /// How many times the rule must have fired when the guard is dropped.
    pub fn expect(mut self, times: impl Into<Expected>) -> Self {
        self.expected = times.into();
        self
    }

    pub fn name(&self) -> &str {
        &self.rule.name
    }

    /// How many times the fault fired so far.
    pub fn fired(&self) -> u64 {
        lock(&self.rule.state).fired
    }
}

impl Drop for FaultGuard {
    fn drop(&mut self) {
        if let Some(faults) = self.faults.upgrade() {
            let _ = faults.remove(&self.rule.name);
        }
        let fired = self.fired();
        if !std::thread::panicking() && !self.expected.contains(fired) {
            panic!(
                "fault rule {:?} ({}) fired {fired} times, expected {}",
                self.rule.name,
                self.rule.spec.fault.name(),
                self.expected
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::faults::{Fault, FrameKind, Subject, Trigger};
    use editor_link::methods;

    fn request(method: &str) -> Subject<'_> {
        Subject { connection: Some(1), frame: Some(FrameKind::Request), is_error: false, method: Some(method) }
    }

    #[test]
    fn a_guard_removes_its_rule() {
        let faults = Arc::new(Faults::new(1, 1.0));
        let guard = FaultGuard::install(&faults, RuleSpec::new(Fault::Drop(crate::faults::Drop {})).named("g"))
            .unwrap()
            .expect(0);
        assert!(!faults.is_empty());
        drop(guard);
        assert!(faults.is_empty());
    }

    #[test]
    fn a_guard_verifies_its_firings_when_dropped() {
        let faults = Arc::new(Faults::new(1, 1.0));
        let drop_requests = || RuleSpec::new(Fault::Drop(crate::faults::Drop {})).named("g").on(Trigger::ToEditor);
        // Never fired: a false green, told when the guard goes.
        let guard = FaultGuard::install(&faults, drop_requests()).unwrap();
        let unfired = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(guard)));
        let message = *unfired.unwrap_err().downcast::<String>().unwrap();
        assert!(message.contains(r#""g" (drop) fired 0 times, expected at least 1"#), "{message}");
        // Fired as often as expected: fine, even after the Editor is gone.
        let guard = FaultGuard::install(&faults, drop_requests()).unwrap().expect(2);
        assert!(faults.frame(Trigger::ToEditor, request(methods::PING)).is_some());
        assert!(faults.frame(Trigger::ToEditor, request(methods::PING)).is_some());
        assert_eq!(guard.fired(), 2);
        drop(faults);
        drop(guard);
        assert!(Expected::from(0..=2).contains(0) && !Expected::from(0..=2).contains(3));
    }
}
