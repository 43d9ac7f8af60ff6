//! Who is told what changed, in each revision's way:
//!
//! - the handshake-era client, once it said `notifications/initialized`,
//!   gets `notifications/tools/list_changed` when the list it last received
//!   is stale;
//! - a 2026-07-28 `subscriptions/listen` is acknowledged
//!   (`notifications/subscriptions/acknowledged`, with what of its filter
//!   is accepted: `toolsListChanged`, and the `taskIds` the bridge keeps),
//!   then gets `notifications/tools/list_changed` tagged with its id when
//!   the tools differ from those it last heard of, and `notifications/tasks`
//!   as each of its tasks ends ([`TaskStore`] keeps which). It is open until
//!   the client cancels it (then nothing is answered, as MCP asks), or the
//!   session ends (then it gets its final result).

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use super::{
    out::Out,
    session::{SERVER_INFO_KEY, server_info},
    tasks::{SUBSCRIPTION_ID_KEY, TaskStore},
};
use editor_link::lock;

/// The tools-changed notification.
const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";

/// The session's listeners for changes.
#[derive(Clone, Debug)]
pub(super) struct Subscriptions {
    state: Arc<Mutex<State>>,
    out: Out,
    tasks: TaskStore,
}

#[derive(Debug, Default)]
struct State {
    /// The handshake-era client said `notifications/initialized`.
    initialized: bool,
    /// The tool list the handshake-era client last received.
    served: Option<Vec<Value>>,
    /// The open 2026-07-28 subscriptions.
    open: Vec<Open>,
}

/// One open `subscriptions/listen`.
#[derive(Debug)]
struct Open {
    id: Value,
    /// It asked for `toolsListChanged`: the tools when it subscribed, or
    /// when it was last told of a change.
    tools: Option<Vec<Value>>,
}

impl Subscriptions {
    pub(super) fn new(out: Out, tasks: TaskStore) -> Subscriptions {
        Subscriptions { state: Arc::default(), out, tasks }
    }

    /// The handshake-era client may be told of changes from now on.
    pub(super) fn initialized(&self) {
        lock(&self.state).initialized = true;
    }

    /// A client received `tools` as the first page of `tools/list`.
    pub(super) fn served(&self, tools: &[Value]) {
        lock(&self.state).served = Some(tools.to_vec());
    }

    /// The Editor's tools changed: `current` is the list now. A client that
    /// has not listed the tools yet, or already has these, is not told.
    pub(super) fn tools_changed(&self, current: &[Value]) {
        let mut state = lock(&self.state);
        let stale = state.served.as_ref().is_some_and(|served| served != current);
        if stale && state.initialized {
            self.out.line(&json!({"jsonrpc": "2.0", "method": TOOLS_LIST_CHANGED}));
        }
        for open in &mut state.open {
            if let Some(seen) = open.tools.as_mut().filter(|seen| seen.as_slice() != current) {
                *seen = current.to_vec();
                let tagged = json!({SUBSCRIPTION_ID_KEY: open.id});
                self.out.line(&json!({"jsonrpc": "2.0", "method": TOOLS_LIST_CHANGED, "params": {"_meta": tagged}}));
            }
        }
    }

    /// `subscriptions/listen` with `id`, asking for `requested` (its
    /// `notifications` filter), while the tools are `current`: acknowledged
    /// with what is accepted, then told of the tasks named that ended before
    /// it. `with_tasks`: the request declared the tasks extension (else
    /// its `taskIds` are not read).
    pub(super) fn listen(&self, id: &Value, requested: &Value, current: &[Value], with_tasks: bool) {
        let wants_tools = requested.get("toolsListChanged") == Some(&Value::Bool(true));
        let mut accepted = Map::new();
        if wants_tools {
            accepted.insert("toolsListChanged".into(), true.into());
        }
        let tasks = match requested.get("taskIds") {
            Some(named) if with_tasks => {
                let named: Vec<String> = named
                    .as_array()
                    .into_iter()
                    .flatten()
                    .take(super::tasks::MAX_TASKS)
                    .filter_map(|t| t.as_str().map(str::to_owned))
                    .collect();
                let kept = self.tasks.listen(id, &named);
                // Only those the bridge keeps: none, and none is said.
                if !kept.is_empty() {
                    accepted.insert("taskIds".into(), json!(kept));
                }
                kept
            }
            _ => Vec::new(),
        };
        lock(&self.state).open.push(Open { id: id.clone(), tools: wants_tools.then(|| current.to_vec()) });
        self.out.line(&json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {SUBSCRIPTION_ID_KEY: id}, "notifications": accepted}}));
        // A task that ended before the subscription: told at once.
        for task in tasks.iter().filter(|t| self.tasks.has_ended(t)) {
            if let Some(notification) = self.tasks.notification(task, id) {
                self.out.line(&notification);
            }
        }
    }

    /// The client cancelled the subscription with `id`: it ends, unanswered.
    /// False when there is none.
    pub(super) fn cancel(&self, id: &Value) -> bool {
        self.tasks.unlisten(id);
        let mut state = lock(&self.state);
        let before = state.open.len();
        state.open.retain(|open| open.id != *id);
        state.open.len() != before
    }

    /// The session ends: each open subscription gets its final result
    /// (2026-07-28's answer for a server that tears it down).
    pub(super) fn close(&self) {
        for open in std::mem::take(&mut lock(&self.state).open) {
            let meta = json!({SUBSCRIPTION_ID_KEY: open.id, SERVER_INFO_KEY: server_info()});
            self.out
                .line(&json!({"jsonrpc": "2.0", "id": open.id, "result": {"resultType": "complete", "_meta": meta}}));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::out::OutItem;

    fn said(rx: &mut tokio::sync::mpsc::UnboundedReceiver<OutItem>) -> Vec<Value> {
        let mut lines = Vec::new();
        while let Ok(OutItem::Line(line)) = rx.try_recv() {
            lines.push(serde_json::from_slice(&line).unwrap());
        }
        lines
    }

    #[test]
    fn each_listener_hears_of_a_change_once_and_in_its_revisions_way() {
        let (out, mut rx) = Out::new();
        let subscriptions = Subscriptions::new(out, TaskStore::default());
        let (before, after) = (vec![json!({"name": "a"})], vec![json!({"name": "a"}), json!({"name": "b"})]);
        subscriptions.tools_changed(&after);
        assert!(said(&mut rx).is_empty(), "nobody listened");
        subscriptions.served(&before);
        subscriptions.listen(
            &json!("s1"),
            &json!({"toolsListChanged": true, "promptsListChanged": true}),
            &before,
            false,
        );
        let ack = &said(&mut rx)[0];
        assert_eq!(
            ack["params"],
            json!({"_meta": {SUBSCRIPTION_ID_KEY: "s1"}, "notifications": {"toolsListChanged": true}})
        );
        subscriptions.tools_changed(&after);
        let told = said(&mut rx);
        assert_eq!(told.len(), 1, "the handshake-era client said nothing of initialized: {told:?}");
        assert_eq!(told[0]["params"]["_meta"][SUBSCRIPTION_ID_KEY], "s1");
        subscriptions.tools_changed(&after);
        assert!(said(&mut rx).is_empty(), "told once");
        subscriptions.initialized();
        subscriptions.tools_changed(&after);
        assert_eq!(said(&mut rx).len(), 1, "the handshake-era client's list is stale: it is told");
        subscriptions.served(&after);
        subscriptions.tools_changed(&before);
        assert_eq!(said(&mut rx).len(), 2, "both");
        assert!(subscriptions.cancel(&json!("s1")) && !subscriptions.cancel(&json!("s1")));
        subscriptions.listen(&json!(7), &json!({}), &before, false);
        said(&mut rx);
        subscriptions.close();
        let last = &said(&mut rx)[0];
        assert_eq!((last["id"].clone(), last["result"]["resultType"].clone()), (json!(7), json!("complete")));
    }
}
