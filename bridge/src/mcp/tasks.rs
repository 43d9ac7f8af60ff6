//! MCP's tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, of
//! 2026-07-28; `@modelcontextprotocol/ext-tasks` 0.2.2 is its requester):
//! a `tools/call` answered at once with a task, its result fetched later
//! with `tasks/get`, so a compile or a test run outlives the client's own
//! tool timeout.
//!
//! Only for a 2026-07-28 request that declares the extension in its own
//! `_meta` capabilities (the extension defines nothing for the handshake
//! revisions). The server decides which calls become tasks: `compile` and
//! `run-tests` always, any other call once it has run [`TASK_AFTER`]. A
//! task is the same call as a plain one (run once, the same honest answer
//! when the Editor reloads, crashes or hangs under it), kept here:
//!
//! - its status: `working`, then `completed` (a tool result, an error result
//!   too), `failed` (a JSON-RPC error: an unknown tool, a bridge fault) or
//!   `cancelled` (`tasks/cancel`);
//! - its progress as `statusMessage` (the extension has no progress
//!   notifications once the task is handed out);
//! - its result for [`KEEP`] after it ends (`ttlMs` says so: `null` while
//!   it runs, then its age at the end plus [`KEEP`]); at most [`MAX_TASKS`]
//!   (the oldest ended ones make way). Tasks live in the bridge's memory and
//!   end with its process.
//!
//! `tasks/get`, `tasks/update` (nothing to ask the client: accepted) and
//! `tasks/cancel` are served by the dispatcher; task ids are random (v4 UUIDs:
//! a task id is the only key to its result). Clients poll (every
//! [`POLL_INTERVAL_MS`]), or listen: a `subscriptions/listen` naming
//! `taskIds` gets `notifications/tasks` (the task as `tasks/get` gives it,
//! tagged with the subscription) when one of them ends
//! ([`subscriptions`](super::subscriptions) acknowledges the ids kept).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant, SystemTime},
};

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use editor_link::{discovery::iso_timestamp, lock};

use crate::results::ToolResult;

/// The extension's identifier, in capabilities.
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// Calls that are always tasks for a client that takes them: they take minutes.
pub(crate) const ALWAYS_TASKS: &[&str] = &["compile", "run-tests"];
/// Any other call still running after this becomes a task.
pub(crate) const TASK_AFTER: Duration = Duration::from_secs(2);
/// How long a task's result is kept after it ends.
pub(crate) const KEEP: Duration = Duration::from_secs(30 * 60);
/// How often clients are asked to poll.
pub(crate) const POLL_INTERVAL_MS: u64 = 1000;
/// Tasks kept at most; a call that would be one more runs as a plain call.
pub(crate) const MAX_TASKS: usize = 256;
/// Subscriptions to tasks kept at most.
pub(crate) const MAX_LISTENERS: usize = 1024;
/// The `_meta` key that ties a notification to its subscription.
pub(crate) const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// Whether a 2026-07-28 request's `_meta` declares the extension.
pub(crate) fn declared(meta: &Map<String, Value>) -> bool {
    meta.get(super::CLIENT_CAPABILITIES_KEY)
        .and_then(|c| c.get("extensions"))
        .and_then(|e| e.get(TASKS_EXTENSION))
        .is_some_and(Value::is_object)
}

/// How a task ended.
#[derive(Debug)]
pub(crate) enum Ended {
    /// The tool's result (an error result too).
    Completed(ToolResult),
    /// A JSON-RPC error: the call was not a tool result.
    Failed { code: i64, message: String },
    /// `tasks/cancel`, with what that means for the Editor.
    Cancelled,
}

#[derive(Debug)]
enum Status {
    Working,
    Ended { at: Instant, result: Box<Ended> },
}

#[derive(Debug)]
struct Task {
    created: SystemTime,
    created_at: Instant,
    updated: SystemTime,
    status: Status,
    message: Option<String>,
    cancel: CancellationToken,
}

/// The tasks of one MCP session, and the subscriptions that listen to them.
#[derive(Clone, Debug, Default)]
pub(crate) struct TaskStore(Arc<Mutex<HashMap<String, Task>>>, Arc<Mutex<Vec<Listener>>>);

/// A `subscriptions/listen` that named tasks: its request id, and those of
/// its tasks this store knows.
#[derive(Clone, Debug)]
struct Listener {
    subscription: Value,
    tasks: Vec<String>,
}

impl TaskStore {
    /// A new task for a call running under `cancel`: its id, or `None` when
    /// [`MAX_TASKS`] are working or kept and none has ended.
    pub(crate) fn create(&self, cancel: CancellationToken, message: Option<String>) -> Option<String> {
        let mut tasks = lock(&self.0);
        sweep(&mut tasks);
        if tasks.len() >= MAX_TASKS {
            let oldest = tasks
                .iter()
                .filter_map(|(id, t)| match t.status {
                    Status::Ended { at, .. } => Some((at, id.clone())),
                    Status::Working => None,
                })
                .min()?;
            tasks.remove(&oldest.1);
        }
        let id = uuid::Uuid::new_v4().to_string();
        let now = SystemTime::now();
        let task =
            Task { created: now, created_at: Instant::now(), updated: now, status: Status::Working, message, cancel };
        tasks.insert(id.clone(), task);
        Some(id)
    }

    /// Its progress, as the task's status message.
    pub(crate) fn progress(&self, id: &str, message: &str) {
        if let Some(task) = lock(&self.0).get_mut(id) {
            if matches!(task.status, Status::Working) && task.message.as_deref() != Some(message) {
                task.message = Some(message.to_owned());
                task.updated = SystemTime::now();
            }
        }
    }

    /// The call ended (a terminal status never changes).
    pub(crate) fn end(&self, id: &str, ended: Ended) {
        if let Some(task) = lock(&self.0).get_mut(id) {
            if matches!(task.status, Status::Working) {
                if let Ended::Cancelled = ended {
                    task.message = Some(
                        "Cancelled by the client (tasks/cancel). The bridge stopped waiting for it and told the Editor; if the Editor had already begun it, what it did may stay done. Check before running it again.".into(),
                    );
                }
                task.status = Status::Ended { at: Instant::now(), result: Box::new(ended) };
                task.updated = SystemTime::now();
            }
        }
    }

    /// `CreateTaskResult`'s members (the task as it is now).
    pub(crate) fn handle(&self, id: &str) -> Option<Map<String, Value>> {
        lock(&self.0).get(id).map(|task| shape(id, task, false))
    }

    /// `tasks/get`: the task with its result or error once it has ended.
    pub(crate) fn get(&self, id: &str) -> Option<Map<String, Value>> {
        let mut tasks = lock(&self.0);
        sweep(&mut tasks);
        tasks.get(id).map(|task| shape(id, task, true))
    }

    /// `tasks/cancel`: asks the call to stop (cooperatively: the status says
    /// how it ended). False for an unknown task.
    pub(crate) fn cancel(&self, id: &str) -> bool {
        let mut tasks = lock(&self.0);
        sweep(&mut tasks);
        match tasks.get(id) {
            Some(task) => {
                task.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// A subscription (its request id) listens to `tasks`; those accepted
    /// (kept here; no more than [`MAX_TASKS`] are looked at). One that
    /// accepts none is not kept; at most [`MAX_LISTENERS`] are (the oldest
    /// make way).
    pub(crate) fn listen(&self, subscription: &Value, tasks: &[String]) -> Vec<String> {
        let accepted: Vec<String> = {
            let kept = lock(&self.0);
            tasks.iter().take(MAX_TASKS).filter(|t| kept.contains_key(t.as_str())).cloned().collect()
        };
        if !accepted.is_empty() {
            let mut listeners = lock(&self.1);
            if listeners.len() >= MAX_LISTENERS {
                listeners.remove(0);
            }
            listeners.push(Listener { subscription: subscription.clone(), tasks: accepted.clone() });
        }
        accepted
    }

    /// The task ids a subscription was accepted for, if it named any.
    #[cfg(test)]
    pub(crate) fn listened(&self, subscription: &Value) -> Option<Vec<String>> {
        lock(&self.1).iter().find(|l| l.subscription == *subscription).map(|l| l.tasks.clone())
    }

    /// The subscription ended (cancelled by the client).
    pub(crate) fn unlisten(&self, subscription: &Value) {
        lock(&self.1).retain(|l| l.subscription != *subscription);
    }

    /// `notifications/tasks` for task `id` as it is now, one per
    /// subscription listening to it.
    pub(crate) fn notifications(&self, id: &str) -> Vec<Value> {
        let listening: Vec<Value> =
            lock(&self.1).iter().filter(|l| l.tasks.iter().any(|t| t == id)).map(|l| l.subscription.clone()).collect();
        listening.iter().filter_map(|subscription| self.notification(id, subscription)).collect()
    }

    /// `notifications/tasks` for task `id` as it is now, on `subscription`.
    pub(crate) fn notification(&self, id: &str, subscription: &Value) -> Option<Value> {
        let mut params = self.get(id)?;
        params.insert("_meta".into(), json!({SUBSCRIPTION_ID_KEY: subscription}));
        Some(json!({"jsonrpc": "2.0", "method": "notifications/tasks", "params": params}))
    }

    /// Whether task `id` has ended.
    pub(crate) fn has_ended(&self, id: &str) -> bool {
        lock(&self.0).get(id).is_some_and(|t| matches!(t.status, Status::Ended { .. }))
    }

    /// Whether a task with `id` is kept (`tasks/update`).
    pub(crate) fn knows(&self, id: &str) -> bool {
        let mut tasks = lock(&self.0);
        sweep(&mut tasks);
        tasks.contains_key(id)
    }
}

/// Forgets what ended more than [`KEEP`] ago.
fn sweep(tasks: &mut HashMap<String, Task>) {
    tasks.retain(|_, task| match task.status {
        Status::Working => true,
        Status::Ended { at, .. } => at.elapsed() < KEEP,
    });
}

fn shape(id: &str, task: &Task, detailed: bool) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("taskId".into(), id.into());
    let (status, ttl) = match &task.status {
        Status::Working => ("working", Value::Null),
        Status::Ended { at, result } => {
            let ttl = (at.duration_since(task.created_at) + KEEP).as_millis() as u64;
            let status = match **result {
                Ended::Completed(_) => "completed",
                Ended::Failed { .. } => "failed",
                Ended::Cancelled => "cancelled",
            };
            (status, ttl.into())
        }
    };
    out.insert("status".into(), status.into());
    if let Some(message) = &task.message {
        out.insert("statusMessage".into(), message.clone().into());
    }
    out.insert("createdAt".into(), iso_timestamp(task.created).into());
    out.insert("lastUpdatedAt".into(), iso_timestamp(task.updated).into());
    out.insert("ttlMs".into(), ttl);
    out.insert("pollIntervalMs".into(), POLL_INTERVAL_MS.into());
    if let (true, Status::Ended { result, .. }) = (detailed, &task.status) {
        match &**result {
            Ended::Completed(result) => {
                let mut result = result.to_value();
                if let Value::Object(result) = &mut result {
                    // ext-tasks reads the inlined result as a 2026-07-28 result.
                    result.insert("resultType".into(), "complete".into());
                }
                out.insert("result".into(), result);
            }
            Ended::Failed { code, message } => {
                out.insert("error".into(), json!({"code": code, "message": message}));
            }
            Ended::Cancelled => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_works_then_ends_once_and_says_how() {
        let store = TaskStore::default();
        let cancel = CancellationToken::new();
        let id = store.create(cancel.clone(), Some("Compiling".into())).unwrap();
        assert_eq!(id.len(), 36, "a v4 UUID: {id}");
        let working = store.get(&id).unwrap();
        assert_eq!((working["status"].as_str(), &working["ttlMs"]), (Some("working"), &Value::Null));
        assert_eq!(working["statusMessage"], "Compiling");
        assert!(working.get("result").is_none());
        store.progress(&id, "Compiling 3 of 9");
        assert_eq!(store.get(&id).unwrap()["statusMessage"], "Compiling 3 of 9");
        store.end(&id, Ended::Completed(ToolResult::error("it broke")));
        // A terminal status never changes.
        store.end(&id, Ended::Cancelled);
        store.progress(&id, "later");
        let done = store.get(&id).unwrap();
        assert_eq!(done["status"], "completed", "an error result is a completed task");
        assert_eq!(done["result"]["isError"], true);
        assert_eq!(done["result"]["resultType"], "complete");
        assert!(done["ttlMs"].as_u64().unwrap() >= KEEP.as_millis() as u64);
        assert_eq!(done["statusMessage"], "Compiling 3 of 9");
        assert!(store.handle(&id).unwrap().get("result").is_none(), "a handle carries no result");
    }

    #[test]
    fn cancel_reaches_the_call_and_unknown_ids_are_unknown() {
        let store = TaskStore::default();
        let cancel = CancellationToken::new();
        let id = store.create(cancel.clone(), None).unwrap();
        assert!(!store.cancel("no-such-task") && !store.knows("no-such-task") && store.get("no-such-task").is_none());
        assert!(store.cancel(&id));
        assert!(cancel.is_cancelled());
        store.end(&id, Ended::Cancelled);
        let cancelled = store.get(&id).unwrap();
        assert_eq!(cancelled["status"], "cancelled");
        assert!(cancelled["statusMessage"].as_str().unwrap().contains("may stay done"));
        store.end(&id, Ended::Failed { code: -32603, message: "x".into() });
        assert_eq!(store.get(&id).unwrap()["status"], "cancelled");
        let failed = store.create(CancellationToken::new(), None).unwrap();
        store.end(&failed, Ended::Failed { code: -32602, message: "Unknown tool: x".into() });
        assert_eq!(store.get(&failed).unwrap()["error"], json!({"code": -32602, "message": "Unknown tool: x"}));
    }

    #[test]
    fn subscriptions_keep_only_known_tasks_and_are_bounded() {
        let store = TaskStore::default();
        let id = store.create(CancellationToken::new(), None).unwrap();
        assert_eq!(store.listen(&json!("none"), &["unknown".into()]), Vec::<String>::new());
        assert_eq!(store.listened(&json!("none")), None, "a subscription to nothing known is not kept");
        for n in 0..MAX_LISTENERS + 10 {
            assert_eq!(store.listen(&json!(n), &[id.clone(), "unknown".into()]), vec![id.clone()]);
        }
        assert_eq!(lock(&store.1).len(), MAX_LISTENERS);
        assert_eq!(store.listened(&json!(0)), None, "the oldest made way");
        store.end(&id, Ended::Cancelled);
        assert_eq!(store.notifications(&id).len(), MAX_LISTENERS);
        store.unlisten(&json!(MAX_LISTENERS + 9));
        assert_eq!(store.notifications(&id).len(), MAX_LISTENERS - 1);
    }

    #[test]
    fn the_store_is_bounded_and_working_tasks_are_never_dropped() {
        let store = TaskStore::default();
        let ids: Vec<_> = (0..MAX_TASKS).map(|_| store.create(CancellationToken::new(), None).unwrap()).collect();
        assert_eq!(store.create(CancellationToken::new(), None), None, "all working: no room, a plain call");
        store.end(&ids[7], Ended::Cancelled);
        store.end(&ids[3], Ended::Cancelled);
        let newer = store.create(CancellationToken::new(), None).unwrap();
        assert!(!store.knows(&ids[7]), "the oldest ended made way");
        assert!(store.knows(&ids[3]) && store.knows(&newer));
        assert!(ids.iter().enumerate().filter(|(i, _)| *i != 7).all(|(_, id)| store.knows(id)));
    }
}
