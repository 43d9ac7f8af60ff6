//! The simulated Editor's main thread as `get-editor-state` (protocol §6,
//! extension `editor-state`) reports it: requests a `mainThreadStall` holds
//! are waiting for it, and the stall's modal dialog or import is what holds
//! it. Read without the main thread, as the package's link does.

use std::{
    sync::{
        Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Instant,
};

use serde_json::{Map, Value, json};

use crate::faults::Blocker;
use editor_link::lock;

/// Who waits for the main thread, and why it does not run.
#[derive(Debug, Default)]
pub struct MainThread {
    waiting: Mutex<Vec<Waiting>>,
    next: AtomicU64,
}

#[derive(Debug)]
struct Waiting {
    n: u64,
    since: Instant,
    blocker: Option<Blocker>,
}

/// A request waiting for the main thread, until dropped.
#[derive(Debug)]
pub struct Held<'a> {
    main_thread: &'a MainThread,
    n: u64,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        lock(&self.main_thread.waiting).retain(|w| w.n != self.n);
    }
}

impl MainThread {
    /// A request now waits for the main thread, held by `blocker`.
    pub fn hold(&self, blocker: Option<Blocker>) -> Held<'_> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        lock(&self.waiting).push(Waiting { n, since: Instant::now(), blocker });
        Held { main_thread: self, n }
    }

    /// `get-editor-state`'s members (without `Ver`): the main thread last
    /// ran when the oldest request still waiting began to wait.
    pub fn state(&self) -> Map<String, Value> {
        let waiting = lock(&self.waiting);
        let oldest = waiting.iter().min_by_key(|w| w.since);
        let oldest_ms = oldest.map_or(0, |w| w.since.elapsed().as_millis() as u64);
        let blocker = oldest.and_then(|w| w.blocker.clone());
        let mut state = Map::new();
        state.insert("MainThreadLastRanMsAgo".into(), oldest_ms.into());
        state.insert("QueuedForMainThread".into(), waiting.len().into());
        state.insert("OldestQueuedMs".into(), oldest_ms.into());
        state.insert("Compiling".into(), false.into());
        state.insert("Importing".into(), matches!(blocker, Some(Blocker::Import)).into());
        state.insert("Reloading".into(), false.into());
        state.insert("PlayMode".into(), "edit".into());
        if let Some(Blocker::Dialog { title, buttons }) = blocker {
            let rewrites = title == SCRIPT_UPDATING_CONSENT;
            state.insert("Dialog".into(), json!({"Title": title, "Buttons": buttons, "RewritesScripts": rewrites}));
        }
        state
    }
}

/// Unity's dialog whose "Yes" lets the API updater rewrite scripts.
pub const SCRIPT_UPDATING_CONSENT: &str = "Script Updating Consent";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_waiting_request_says_how_long_the_main_thread_has_not_run() {
        let main_thread = MainThread::default();
        assert_eq!(main_thread.state()["QueuedForMainThread"], 0);
        assert!(main_thread.state().get("Dialog").is_none());
        let dialog = Blocker::Dialog { title: "Save Scene".into(), buttons: vec!["Save".into(), "Don't Save".into()] };
        let first = main_thread.hold(Some(dialog));
        std::thread::sleep(std::time::Duration::from_millis(20));
        let second = main_thread.hold(Some(Blocker::Import));
        let state = main_thread.state();
        assert_eq!(state["QueuedForMainThread"], 2);
        assert!(state["OldestQueuedMs"].as_u64().unwrap() >= 20);
        assert_eq!(
            state["Dialog"],
            json!({"Title": "Save Scene", "Buttons": ["Save", "Don't Save"], "RewritesScripts": false})
        );
        drop(first);
        let state = main_thread.state();
        assert_eq!((state["QueuedForMainThread"].as_u64(), &state["Importing"]), (Some(1), &json!(true)));
        assert!(state.get("Dialog").is_none());
        drop(second);
        assert_eq!(main_thread.state()["OldestQueuedMs"], 0);
    }
}
