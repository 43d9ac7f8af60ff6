//! The resume journal (protocol §5, extension): recent requests by client and
//! id, surviving domain reloads, so a request resent with `"x-resume": true`
//! is answered from the journal instead of running twice.

use std::collections::{HashMap, VecDeque};

use editor_link::jsonrpc::{Id, Response};
use serde_json::Value;
use tokio::sync::watch;

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
}

/// What the journal knows about a resent request.
#[derive(Debug)]
pub enum Lookup {
    /// Never seen: run it.
    NotSeen,
    /// Completed: answer with the journaled response.
    Completed(Response),
    /// Still running in the current domain: wait for it.
    Running(watch::Receiver<Option<Response>>),
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
        if entry.generation == generation { Lookup::Running(entry.done.subscribe()) } else { Lookup::Interrupted }
    }

    /// Records that a request started.
    pub fn start(&mut self, key: Key, method: &str, params: Value, generation: u64) {
        let (done, _) = watch::channel(None);
        self.started += 1;
        let started = self.started;
        self.order.push_back((started, key.clone()));
        self.entries.insert(key, Entry { started, method: method.to_owned(), params, generation, done });
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
