//! The resume journal (protocol §5, extension): recent requests by client and
//! id, surviving domain reloads, so a request resent with `"x-resume": true`
//! is answered from the journal instead of running twice.

use std::{
    collections::{HashMap, VecDeque},
    time::Duration,
};

use editor_link::jsonrpc::{Id, Response};
use serde_json::Value;
use tokio::{sync::watch, time::Instant};

/// How many requests the journal remembers.
pub const CAPACITY: usize = 1024;

/// A request is identified by the client's name (set with `set-client-name`)
/// and its id, so two clients that both count from 1 do not collide.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub client: String,
    pub id: Id,
}

#[derive(Debug)]
struct Entry {
    /// When it was started, in start order: tells the entry apart from an
    /// older start under the same key still waiting in `Journal::order`.
    started: u64,
    method: String,
    params: Value,
    /// The domain (reload generation) the request started in.
    generation: u64,
    done: watch::Sender<Option<Response>>,
    /// Set when the call goes on after its domain reloaded.
    carried: Option<Carried>,
}

/// A call that goes on after its domain reloaded (a PlayMode test run the
/// Test Framework takes up in the new domain): a resumed request waits for
/// its answer, told its progress, until the call's deadline.
#[derive(Debug)]
struct Carried {
    deadline: Instant,
    timeout: Duration,
    progress: watch::Sender<Option<Step>>,
}

/// One `notifications/progress` of a carried call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    pub progress: u64,
    pub total: Option<u64>,
    pub message: String,
}

/// A resumed request's wait for a call still running.
#[derive(Debug)]
pub struct Waiting {
    pub done: watch::Receiver<Option<Response>>,
    /// The call went on after its domain reloaded: its deadline and progress.
    pub carried: Option<CarriedWait>,
}

#[derive(Debug)]
pub struct CarriedWait {
    pub deadline: Instant,
    /// The call's `TimeoutSeconds`, for the words of its timeout.
    pub timeout: Duration,
    pub progress: watch::Receiver<Option<Step>>,
}

/// What the journal knows about a resent request.
#[derive(Debug)]
pub enum Lookup {
    /// Never seen: run it.
    NotSeen,
    /// Completed: answer with the journaled response.
    Completed(Response),
    /// Still running, in the current domain or carried across a reload:
    /// wait for it.
    Running(Waiting),
    /// Started before a reload and cut off by it.
    Interrupted,
    /// The id was used for a different request.
    Mismatch { method: String },
}

/// Entries by key, and the order they were started in for eviction. A key
/// started again keeps its stale place in `order` (skipped when evicting, and
/// swept out when stale places outnumber the entries), so every start is
/// O(1): an ordered map's removal from the front moves every later entry,
/// which at a thousand entries was the fake's largest cost under load.
#[derive(Debug, Default)]
pub struct Journal {
    entries: HashMap<Key, Entry>,
    order: VecDeque<(u64, Key)>,
    started: u64,
}

impl Journal {
    pub fn lookup(&self, key: &Key, method: &str, params: &Value, generation: u64) -> Lookup {
        let Some(entry) = self.entries.get(key) else {
            return Lookup::NotSeen;
        };
        if entry.method != method || &entry.params != params {
            return Lookup::Mismatch { method: entry.method.clone() };
        }
        if let Some(response) = entry.done.borrow().clone() {
            return Lookup::Completed(response);
        }
        let carried = entry.carried.as_ref().map(|c| CarriedWait {
            deadline: c.deadline,
            timeout: c.timeout,
            progress: c.progress.subscribe(),
        });
        if entry.generation == generation || carried.is_some() {
            Lookup::Running(Waiting { done: entry.done.subscribe(), carried })
        } else {
            Lookup::Interrupted
        }
    }

    /// Records that a started request goes on after its domain reloads,
    /// answering by `timeout` from now; where the call reports its progress
    /// (`None` when the journal no longer has it).
    pub fn carry(&mut self, key: &Key, timeout: Duration) -> Option<watch::Sender<Option<Step>>> {
        let entry = self.entries.get_mut(key)?;
        let (progress, _) = watch::channel(None);
        let deadline = Instant::now().checked_add(timeout).unwrap_or_else(far_future);
        entry.carried = Some(Carried { deadline, timeout, progress: progress.clone() });
        Some(progress)
    }

    /// Records that a request started.
    pub fn start(&mut self, key: Key, method: &str, params: Value, generation: u64) {
        let (done, _) = watch::channel(None);
        self.started += 1;
        let started = self.started;
        self.order.push_back((started, key.clone()));
        self.entries.insert(key, Entry { started, method: method.to_owned(), params, generation, done, carried: None });
        while self.entries.len() > CAPACITY {
            let Some((started, key)) = self.order.pop_front() else { break };
            if is_current(&self.entries, started, &key) {
                self.entries.remove(&key);
            }
        }
        if self.order.len() > 2 * CAPACITY {
            let entries = &self.entries;
            self.order.retain(|(started, key)| is_current(entries, *started, key));
        }
    }

    /// Records a request's response.
    pub fn complete(&mut self, key: &Key, response: &Response) {
        if let Some(entry) = self.entries.get(key) {
            entry.done.send_replace(Some(response.clone()));
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A deadline past any wait (a timeout of days overflows no instant).
fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(365 * 24 * 3600)
}

/// Whether `started` is `key`'s latest start, not a stale place in the order.
fn is_current(entries: &HashMap<Key, Entry>, started: u64, key: &Key) -> bool {
    entries.get(key).is_some_and(|entry| entry.started == started)
}

#[cfg(test)]
mod tests {
    use super::*;
    use editor_link::methods;
    use serde_json::json;

    fn key(id: u64) -> Key {
        Key { client: "c".into(), id: Id::from(id) }
    }

    #[test]
    fn lifecycle_of_an_entry() {
        let mut journal = Journal::default();
        let params = json!({});
        assert!(matches!(journal.lookup(&key(1), "compile", &params, 0), Lookup::NotSeen));
        journal.start(key(1), "compile", params.clone(), 0);
        assert!(matches!(journal.lookup(&key(1), "compile", &params, 0), Lookup::Running(_)));
        assert!(matches!(journal.lookup(&key(1), "compile", &params, 1), Lookup::Interrupted));
        assert!(matches!(journal.lookup(&key(1), methods::PING, &params, 1), Lookup::Mismatch { .. }));
        let response = Response::ok(Id::from(1u64), json!({"Success": true}));
        journal.complete(&key(1), &response);
        assert!(matches!(journal.lookup(&key(1), "compile", &params, 1), Lookup::Completed(r) if r == response));
    }

    #[tokio::test]
    async fn a_carried_call_is_waited_for_in_the_next_domain() {
        let mut journal = Journal::default();
        let params = json!({"TestMode": "PlayMode"});
        journal.start(key(2), "run-tests", params.clone(), 0);
        let progress = journal.carry(&key(2), Duration::from_secs(600)).unwrap();
        let Lookup::Running(Waiting { carried: Some(mut carried), .. }) =
            journal.lookup(&key(2), "run-tests", &params, 1)
        else {
            panic!("a carried call is running in the next domain")
        };
        assert_eq!(carried.timeout, Duration::from_secs(600));
        progress.send_replace(Some(Step { progress: 1, total: Some(2), message: "T.A".into() }));
        assert_eq!(carried.progress.borrow_and_update().as_ref().unwrap().message, "T.A");
        let response = Response::ok(Id::from(2u64), json!({"TestCount": 2}));
        journal.complete(&key(2), &response);
        assert!(matches!(journal.lookup(&key(2), "run-tests", &params, 1), Lookup::Completed(r) if r == response));
        assert!(journal.carry(&key(3), Duration::from_secs(1)).is_none(), "only a started call is carried");
    }

    #[test]
    fn capacity_is_bounded() {
        let mut journal = Journal::default();
        for i in 0..(CAPACITY as u64 + 10) {
            journal.start(key(i), methods::PING, json!({}), 0);
        }
        assert_eq!(journal.len(), CAPACITY);
        assert!(matches!(journal.lookup(&key(0), methods::PING, &json!({}), 0), Lookup::NotSeen));
    }

    #[test]
    fn a_request_started_again_is_evicted_by_its_latest_start() {
        let mut journal = Journal::default();
        journal.start(key(0), methods::PING, json!({}), 0);
        for i in 1..CAPACITY as u64 {
            journal.start(key(i), methods::PING, json!({}), 0);
        }
        journal.start(key(0), methods::PING, json!({}), 0);
        journal.start(key(CAPACITY as u64), methods::PING, json!({}), 0);
        assert_eq!(journal.len(), CAPACITY);
        assert!(matches!(journal.lookup(&key(0), methods::PING, &json!({}), 0), Lookup::Running(_)));
        assert!(matches!(journal.lookup(&key(1), methods::PING, &json!({}), 0), Lookup::NotSeen));
    }

    #[test]
    fn one_key_started_over_and_over_keeps_the_order_bounded() {
        let mut journal = Journal::default();
        for _ in 0..10 * CAPACITY {
            journal.start(key(7), methods::PING, json!({}), 0);
        }
        assert_eq!(journal.len(), 1);
        assert!(journal.order.len() <= 2 * CAPACITY);
    }
}
