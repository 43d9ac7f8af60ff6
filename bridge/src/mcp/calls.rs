//! `tools/call`: the checked request goes to the [`Bridge`] and its answer
//! to the [output](super::out) as the Editor's bytes
//! ([`ToolResult::Relayed`]), never parsed into a tree on the way, in the
//! shape MCP clients read (`resultType` only for 2026-07-28, the server
//! named in `_meta` for any `_meta`-versioned request). The call runs in its
//! own task and a panic in it becomes an error answer;
//! `notifications/cancelled` cancels it and then nothing is answered (as MCP
//! asks); progress is sent when the request has a `progressToken`.
//!
//! For a client that takes tasks (2026-07-28's extension) the same call is
//! wrapped ([`Calls::run_maybe_as_task`]): answered as a plain one when it
//! ends soon, else handed out as a task.

use std::{panic::AssertUnwindSafe, sync::Arc};

use futures_util::FutureExt;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::{
    message::{Refusal, Request},
    out::Out,
    session::{InFlight, NotedClient, Revision, SERVER_INFO_KEY, server_info},
    tasks::{self, Ended, TaskStore},
};
use crate::{
    bridge::{Bridge, CallRefused, Progress, ProgressSink},
    results::ToolResult,
};
use editor_link::jsonrpc::code;

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
    /// The call `request` makes in `revision`, or why its params are invalid.
    pub(super) fn read(request: &Request, revision: Revision) -> Result<ToolCall, Refusal> {
        let invalid = |why: &str| Refusal::invalid_params(&request.id, &request.method, why);
        let params = match &request.params {
            Some(Value::Object(params)) => params,
            Some(_) => return Err(invalid("params must be an object")),
            None => return Err(invalid("params is missing (it names the tool)")),
        };
        let name = match params.get("name") {
            Some(Value::String(name)) => name.clone(),
            _ => return Err(invalid("name must be a string")),
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(arguments)) => arguments.clone(),
            Some(_) => return Err(invalid("arguments must be an object")),
        };
        let meta = params.get("_meta").and_then(Value::as_object);
        let progress_token = meta.and_then(|m| m.get("progressToken")).filter(|t| t.is_string() || t.is_i64()).cloned();
        let versioned = request.versioned.as_ref();
        let client = versioned.and_then(|v| {
            let info = v.meta.get(super::CLIENT_INFO_KEY)?;
            let text = |key: &str| info.get(key).and_then(Value::as_str).map(str::to_owned);
            Some((text("name")?, text("version").unwrap_or_default(), v.version.clone()))
        });
        let takes_tasks = revision.result_type() && versioned.is_some_and(|v| tasks::declared(&v.meta));
        Ok(ToolCall { id: request.id.clone(), name, arguments, progress_token, revision, client, takes_tasks })
    }
}

/// Where calls run and answer.
#[derive(Clone, Debug)]
pub(super) struct Calls {
    bridge: Arc<Bridge>,
    out: Out,
    in_flight: InFlight,
    client: NotedClient,
    tasks: TaskStore,
}

/// How a call's run ended, before it is answered or kept in its task.
type Outcome = std::thread::Result<Result<ToolResult, CallRefused>>;

impl Calls {
    pub(super) fn new(
        bridge: Arc<Bridge>,
        out: Out,
        in_flight: InFlight,
        client: NotedClient,
        tasks: TaskStore,
    ) -> Calls {
        Calls { bridge, out, in_flight, client, tasks }
    }

    /// Runs `call` in its own task; its id is in flight (taken by the
    /// dispatcher; `cancel` is what `notifications/cancelled` cancels)
    /// until its answer is queued, or it is cancelled. A call that takes
    /// tasks may be answered with one instead ([`Calls::run_as_task`]).
    pub(super) fn start(&self, call: ToolCall, cancel: CancellationToken) {
        if let Some(client) = &call.client {
            self.client.note(client, &self.bridge);
        }
        let calls = self.clone();
        tokio::spawn(async move {
            let to_client = call.progress_token.clone().map(|token| progress_sink(calls.out.clone(), token));
            match call.takes_tasks {
                true => calls.run_as_task(call, to_client, cancel).await,
                false => {
                    let outcome = calls.run(&call, to_client, &cancel).await;
                    calls.answer(&call, &cancel, outcome);
                }
            }
        });
    }

    /// The call itself: the bridge calls the tool, its progress to `progress`;
    /// a panic is an outcome too.
    fn run(
        &self,
        call: &ToolCall,
        progress: Option<ProgressSink>,
        cancel: &CancellationToken,
    ) -> impl std::future::Future<Output = Outcome> + Send + 'static {
        let (bridge, name, arguments, cancel) =
            (self.bridge.clone(), call.name.clone(), call.arguments.clone(), cancel.clone());
        AssertUnwindSafe(async move { bridge.call_tool(&name, arguments, progress, cancel).await }).catch_unwind()
    }

    /// Answers a call that ran to its end (or does not, when cancelled).
    fn answer(&self, call: &ToolCall, cancel: &CancellationToken, outcome: Outcome) {
        let id = &call.id;
        self.in_flight.release(id);
        match outcome {
            // Cancelled by the client: MCP says not to answer.
            _ if cancel.is_cancelled() => tracing::debug!(%id, "tools/call cancelled"),
            Ok(Ok(result)) => {
                self.out.tool_answer(id.clone(), result, call.revision);
            }
            Ok(Err(CallRefused::Cancelled)) => tracing::debug!(%id, "tools/call cancelled"),
            outcome => self.out.refuse(&failure(id, outcome)),
        }
    }

    /// The plain call, wrapped for a client that takes tasks: `compile` and
    /// `run-tests` are tasks at once, any other call once it has run
    /// [`tasks::TASK_AFTER`]; one that ends sooner is answered as any other.
    /// Before the task is handed out the call is as any other (progress
    /// notifications, `notifications/cancelled`); after, its progress is the
    /// task's status message and `tasks/cancel` stops it.
    async fn run_as_task(self, call: ToolCall, to_client: Option<ProgressSink>, cancel: CancellationToken) {
        let task_id: Arc<std::sync::OnceLock<String>> = Arc::default();
        let progress: ProgressSink = {
            let (tasks, task_id) = (self.tasks.clone(), task_id.clone());
            Arc::new(move |p: Progress| match (task_id.get(), &to_client) {
                (Some(task), _) => {
                    tasks.progress(task, &p.message);
                    Box::pin(std::future::ready(()))
                }
                (None, Some(to_client)) => to_client(p),
                (None, None) => Box::pin(std::future::ready(())),
            })
        };
        let mut work = Box::pin(self.run(&call, Some(progress), &cancel));
        let wait = match tasks::ALWAYS_TASKS.contains(&call.name.as_str()) {
            true => std::time::Duration::ZERO,
            false => tasks::TASK_AFTER,
        };
        let early = tokio::select! {
            biased;
            outcome = &mut work, if !wait.is_zero() => Some(outcome),
            _ = tokio::time::sleep(wait) => None,
        };
        if let Some(outcome) = early {
            return self.answer(&call, &cancel, outcome);
        }
        if cancel.is_cancelled() {
            // notifications/cancelled came first: no answer, and no task.
            let _ = work.await;
            return self.in_flight.release(&call.id);
        }
        let name = &call.name;
        let Some(task) = self.tasks.create(cancel.clone(), Some(format!("{name} is running in the Unity Editor")))
        else {
            tracing::info!(%name, "{} tasks are kept: this call is answered when it ends", tasks::MAX_TASKS);
            let outcome = work.await;
            return self.answer(&call, &cancel, outcome);
        };
        let _ = task_id.set(task.clone());
        // The task is kept before it is handed out (a tasks/get for it works
        // from now on); the request is answered, so its id is free.
        self.in_flight.release(&call.id);
        if let Some(mut handle) = self.tasks.handle(&task) {
            handle.insert("resultType".into(), "task".into());
            handle.insert("_meta".into(), json!({SERVER_INFO_KEY: server_info()}));
            self.out.answer(&call.id, Ok(Value::Object(handle)));
        }
        tracing::info!(%name, %task, "tools/call answered with a task");
        let ended = match work.await {
            _ if cancel.is_cancelled() => Ended::Cancelled,
            Ok(Ok(result)) => Ended::Completed(result),
            Ok(Err(CallRefused::Cancelled)) => Ended::Cancelled,
            outcome => {
                let refusal = failure(&call.id, outcome);
                Ended::Failed { code: refusal.code, message: refusal.message.clone() }
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
fn failure(id: &Value, outcome: Outcome) -> Refusal {
    match outcome {
        Ok(Ok(_)) | Ok(Err(CallRefused::Cancelled)) => {
            Refusal::new(Some(id), code::INTERNAL_ERROR, "the call has no error")
        }
        Ok(Err(CallRefused::UnknownTool(name))) => {
            Refusal::new(Some(id), code::INVALID_PARAMS, format!("Unknown tool: {name}"))
        }
        Err(panic) => {
            let why = super::panic_text(&panic);
            tracing::error!(%why, "tools/call panicked");
            Refusal::new(Some(id), code::INTERNAL_ERROR, format!("the bridge failed while handling tools/call: {why}"))
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
