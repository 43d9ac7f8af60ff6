//! `tools/call`, served straight from the [`guard`](super::guard) beside
//! rmcp rather than through it.
//!
//! rmcp's model holds a result as a `serde_json::Value` in a
//! `CallToolResult`, which its service serialises again: a result was built
//! three times on its way out, and every call paid for rmcp's conversions
//! and task hops. Here the checked request goes to the [`Bridge`] and its
//! answer to the [output](super::out) as the Editor's bytes
//! ([`ToolResult::Relayed`]), in the shape rmcp 3.9 writes (its member
//! order, `resultType` only for 2026-07-28, the server named in `_meta` for
//! any `_meta`-versioned request). What rmcp did for the method is done here
//! too: the call runs in its own task and a panic in it becomes an error
//! answer; `notifications/cancelled` cancels it and then nothing is answered
//! (as MCP asks); progress is sent when the request has a `progressToken`.

use std::{panic::AssertUnwindSafe, sync::Arc};

use futures_util::FutureExt;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::{
    STATELESS_VERSION,
    out::Out,
    session::{InFlight, Negotiated, NotedClient, Revision, SERVER_INFO_KEY, defines_structured_content, server_info},
    tasks::{self, Ended, TaskStore},
};
use crate::{
    bridge::{Bridge, CallRefused, Progress, ProgressSink},
    results::ToolResult,
};

/// A checked `tools/call` request.
#[derive(Debug)]
pub(super) struct ToolCall {
    pub id: Value,
    pub name: String,
    pub arguments: Map<String, Value>,
    pub progress_token: Option<Value>,
    pub revision: Revision,
    /// A 2026-07-28 request's `clientInfo` (name, version) and revision.
    pub client: Option<(String, String, String)>,
    /// The request takes a task for an answer (a 2026-07-28 request that
    /// declares the tasks extension).
    pub takes_tasks: bool,
}

impl ToolCall {
    /// The call in a request the guard has checked (an object with this
    /// id), or why its params are invalid.
    pub(super) fn read(
        id: &Value,
        message: &mut Map<String, Value>,
        negotiated: &Negotiated,
    ) -> Result<ToolCall, String> {
        let params = match message.get_mut("params") {
            Some(Value::Object(params)) => params,
            Some(_) => return Err("params must be an object".into()),
            None => return Err("params is missing (it names the tool)".into()),
        };
        let name = match params.remove("name") {
            Some(Value::String(name)) => name,
            _ => return Err("name must be a string".into()),
        };
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(arguments)) => arguments,
            Some(_) => return Err("arguments must be an object".into()),
        };
        let meta = params.get("_meta").and_then(Value::as_object);
        let progress_token = meta.and_then(|m| m.get("progressToken")).filter(|t| t.is_string() || t.is_i64()).cloned();
        let version = meta.and_then(|m| m.get(super::PROTOCOL_VERSION_KEY)).and_then(Value::as_str);
        let revision = match version {
            None => negotiated.revision(),
            Some(v) => {
                Revision::Stateless { result_type: v >= STATELESS_VERSION, structured: defines_structured_content(v) }
            }
        };
        let client = meta.and_then(|m| m.get(super::CLIENT_INFO_KEY)).and_then(|info| {
            let text = |key: &str| info.get(key).and_then(Value::as_str).map(str::to_owned);
            Some((text("name")?, text("version").unwrap_or_default(), version.unwrap_or_default().to_owned()))
        });
        let takes_tasks = revision.result_type() && meta.is_some_and(tasks::declared);
        Ok(ToolCall { id: id.clone(), name, arguments, progress_token, revision, client, takes_tasks })
    }
}

/// Where calls run and answer.
#[derive(Clone, Debug)]
pub(super) struct Calls {
    bridge: Arc<Bridge>,
    out: Out,
    in_flight: InFlight,
    client: NotedClient,
    pub(super) negotiated: Negotiated,
    pub(super) tasks: TaskStore,
}

/// How a call's run ended, before it is answered or kept in its task.
type Outcome = std::thread::Result<Result<ToolResult, CallRefused>>;

impl Calls {
    pub(super) fn new(
        bridge: Arc<Bridge>,
        out: Out,
        in_flight: InFlight,
        client: NotedClient,
        negotiated: Negotiated,
    ) -> Calls {
        Calls { bridge, out, in_flight, client, negotiated, tasks: TaskStore::default() }
    }

    /// Runs `call` in its own task; its id is in flight (taken by the guard,
    /// cancellable there) until its answer is queued, or it is cancelled.
    /// A call that takes tasks may be answered with one instead ([`tasks`]).
    pub(super) fn start(&self, call: ToolCall) {
        let cancel = self.in_flight.cancellation(&call.id);
        if let Some(client) = &call.client {
            self.client.note(client, &self.bridge);
        }
        let calls = self.clone();
        tokio::spawn(async move {
            match call.takes_tasks {
                true => calls.run_maybe_as_task(call, cancel).await,
                false => {
                    let ToolCall { id, name, arguments, progress_token, revision, .. } = call;
                    let progress = progress_token.map(|token| progress_sink(calls.out.clone(), token));
                    let work = calls.bridge.call_tool(&name, arguments, progress, cancel.clone());
                    let outcome = AssertUnwindSafe(work).catch_unwind().await;
                    calls.answer(id, revision, &cancel, outcome);
                }
            }
        });
    }

    /// Answers a call that ran to its end (or does not, when cancelled).
    fn answer(&self, id: Value, revision: Revision, cancel: &CancellationToken, outcome: Outcome) {
        self.in_flight.release(&id);
        match outcome {
            // Cancelled by the client: MCP says not to answer.
            _ if cancel.is_cancelled() => tracing::debug!(%id, "tools/call cancelled"),
            Ok(Ok(result)) => {
                self.out.tool_answer(id, result, revision);
            }
            Ok(Err(CallRefused::Cancelled)) => tracing::debug!(%id, "tools/call cancelled"),
            outcome => {
                let (code, message) = failure(outcome);
                self.out.error(Some(&id), code, &message, None);
            }
        }
    }

    /// A call of a client that takes tasks: `compile` and `run-tests` are
    /// tasks at once, any other call once it has run [`tasks::TASK_AFTER`].
    /// Before the task is handed out the call is as any other (progress
    /// notifications, `notifications/cancelled`); after, its progress is the
    /// task's status message and `tasks/cancel` stops it.
    async fn run_maybe_as_task(self, call: ToolCall, cancel: CancellationToken) {
        let ToolCall { id, name, arguments, progress_token, revision, .. } = call;
        let task_id: Arc<std::sync::OnceLock<String>> = Arc::default();
        let progress = {
            let (out, tasks, task_id) = (self.out.clone(), self.tasks.clone(), task_id.clone());
            let to_client = progress_token.map(|token| progress_sink(out, token));
            let sink: ProgressSink = Arc::new(move |p: Progress| match task_id.get() {
                Some(task) => {
                    tasks.progress(task, &p.message);
                    Box::pin(std::future::ready(()))
                }
                None => match &to_client {
                    Some(to_client) => to_client(p),
                    None => Box::pin(std::future::ready(())),
                },
            });
            sink
        };
        let bridge = self.bridge.clone();
        let (work_name, work_cancel) = (name.clone(), cancel.clone());
        let mut work = Box::pin(async move {
            AssertUnwindSafe(bridge.call_tool(&work_name, arguments, Some(progress), work_cancel)).catch_unwind().await
        });
        let wait = match tasks::ALWAYS_TASKS.contains(&name.as_str()) {
            true => std::time::Duration::ZERO,
            false => tasks::TASK_AFTER,
        };
        let early = tokio::select! {
            biased;
            outcome = &mut work, if !wait.is_zero() => Some(outcome),
            _ = tokio::time::sleep(wait) => None,
        };
        if let Some(outcome) = early {
            return self.answer(id, revision, &cancel, outcome);
        }
        if cancel.is_cancelled() {
            // notifications/cancelled came first: no answer, and no task.
            let _ = work.await;
            return self.in_flight.release(&id);
        }
        let message = format!("{name} is running in the Unity Editor");
        let Some(task) = self.tasks.create(cancel.clone(), Some(message)) else {
            tracing::info!(%name, "{} tasks are kept: this call is answered when it ends", tasks::MAX_TASKS);
            let outcome = work.await;
            return self.answer(id, revision, &cancel, outcome);
        };
        let _ = task_id.set(task.clone());
        // The task is kept before it is handed out (a tasks/get for it works
        // from now on); the request is answered, so its id is free.
        if let Some(mut handle) = self.tasks.handle(&task) {
            handle.insert("resultType".into(), "task".into());
            handle.insert("_meta".into(), json!({SERVER_INFO_KEY: server_info()}));
            self.out.line(&json!({"jsonrpc": "2.0", "id": id, "result": handle}));
        }
        self.in_flight.release(&id);
        tracing::info!(%name, %task, "tools/call answered with a task");
        let outcome = work.await;
        let ended = match outcome {
            _ if cancel.is_cancelled() => Ended::Cancelled,
            Ok(Ok(result)) => Ended::Completed(result),
            Ok(Err(CallRefused::Cancelled)) => Ended::Cancelled,
            outcome => {
                let (code, message) = failure(outcome);
                Ended::Failed { code, message }
            }
        };
        tracing::info!(%name, %task, ?ended, "task ended");
        self.tasks.end(&task, ended);
        for notification in self.tasks.notifications(&task) {
            self.out.line(&notification);
        }
    }
}

/// A call that is not a tool result, as a JSON-RPC error.
fn failure(outcome: Outcome) -> (i64, String) {
    match outcome {
        Ok(Ok(_)) | Ok(Err(CallRefused::Cancelled)) => (-32603, "the call has no error".into()),
        Ok(Err(CallRefused::UnknownTool(name))) => (-32602, format!("Unknown tool: {name}")),
        Err(panic) => {
            let why = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!(%why, "tools/call panicked");
            (-32603, format!("the bridge failed while handling tools/call: {why}"))
        }
    }
}

/// Sends a call's progress to the client.
fn progress_sink(out: Out, token: Value) -> ProgressSink {
    Arc::new(move |p: Progress| {
        let params = json!({"progressToken": token, "progress": p.progress, "message": p.message});
        out.line(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params}));
        Box::pin(std::future::ready(()))
    })
}
