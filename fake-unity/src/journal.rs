//! The resume journal (protocol §5, extension): recent requests by client and
//! id, surviving domain reloads, so a request resent with `"x-resume": true`
//! is answered from the journal instead of running twice.

use editor_link::jsonrpc::{Id, Response};
use indexmap::IndexMap;
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

#[derive(Debug, Default)]
pub struct Journal {
    entries: IndexMap<Key, Entry>,
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
        self.entries.shift_remove(&key);
        self.entries.insert(key, Entry { method: method.to_owned(), params, generation, done });
        while self.entries.len() > CAPACITY {
            self.entries.shift_remove_index(0);
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

#[cfg(test)]
mod tests {
    use super::*;
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
        assert!(matches!(journal.lookup(&key(1), "ping", &params, 1), Lookup::Mismatch { .. }));
        let response = Response::ok(Id::from(1u64), json!({"Success": true}));
        journal.complete(&key(1), &response);
        assert!(matches!(journal.lookup(&key(1), "compile", &params, 1), Lookup::Completed(r) if r == response));
    }

    #[test]
    fn capacity_is_bounded() {
        let mut journal = Journal::default();
        for i in 0..(CAPACITY as u64 + 10) {
            journal.start(key(i), "ping", json!({}), 0);
        }
        assert_eq!(journal.len(), CAPACITY);
        assert!(matches!(journal.lookup(&key(0), "ping", &json!({}), 0), Lookup::NotSeen));
    }
}
