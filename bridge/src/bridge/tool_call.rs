//! One call of an Editor tool (a `tools/call` enters at
//! [`Bridge::call_tool`]), in steps a reader can name, each a function
//! with one job:
//!
//! 1. [`Bridge::plan`] — the tool, and the deadline: the call's own
//!    `TimeoutSeconds`, else the tool's, else the default, plus the grace,
//!    counted from the client's call;
//! 2. [`check_arguments`] — the arguments against the tool's input schema:
//!    a call that does not fit is not sent;
//! 3. [`Bridge::across_reload`] — the dialect's strategy for a `compile` on
//!    an Editor that cannot resume: asked to wait for its domain reload, and
//!    answered from the result file it writes ([`compile_result`]);
//! 4. [`Bridge::send`] — the call through the [`Link`](crate::link::Link)
//!    (which follows the Editor through reloads, on a lane of its own where
//!    the Editor answers in order), with its progress ([`Forwarder`]) and
//!    what holds the Editor's main thread ([`main_thread::watch`]);
//! 5. [`Bridge::words`] — how it ended, as a tool result that says whether
//!    Unity may have run it.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use serde_json::{Map, Value};
use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use crate::{
    bridge::{Bridge, CallRefused, Progress, ProgressSink, SELECT_TOOL, STATUS_TOOL, WAIT_TOOL},
    compile_result::{self, ResultFile, Settled},
    link::{CallError, CallOptions, CutOff, NotSent},
    main_thread,
    raw_json::RawJson,
    results::{self, ToolResult},
    silent_editor,
    tools::{self, McpTool},
};
use editor_link::{jsonrpc::ErrorKind, lock};

/// The longest `TimeoutSeconds` a call may ask for: a day.
const MAX_TIMEOUT_SECONDS: f64 = 86_400.0;

/// The shortest `TimeoutSeconds` a call may ask for: a millisecond, the
/// Editor's floor too (protocol §6), so the bridge never sends one the
/// Editor would refuse.
const MIN_TIMEOUT_SECONDS: f64 = 0.001;

/// How long progress reports may take to go out after the answer is known.
const PROGRESS_FLUSH: Duration = Duration::from_millis(200);

/// What holds the Editor's main thread, as last said (by the Editor, or
/// seen by the bridge): written by [`main_thread::watch`], said in the
/// call's progress and in its answer at the deadline.
type Held = Arc<Mutex<Option<String>>>;

/// A call, planned: its tool and its deadline.
#[derive(Debug)]
struct Planned {
    tool: Arc<McpTool>,
    /// Its own time: `TimeoutSeconds`, the tool's, or the default.
    seconds: Duration,
    /// When it is answered at the latest: its own time and the grace,
    /// counted from the client's call.
    deadline: Instant,
}

/// How a call ended, before it is put in words.
#[derive(Debug)]
enum Ended {
    /// The link's outcome (a compile's may be its result file's).
    Link(Result<RawJson, CallError>),
    /// A compile whose Editor was not back from its domain reload by the
    /// deadline; the result it wrote, if it wrote one.
    NotBack { result: Option<Value>, seconds: f64 },
}

impl Bridge {
    /// Calls a tool. A tool result whatever happens in Unity; a refusal only
    /// for an unknown tool or a cancelled call. Answered by the call's
    /// deadline (its `TimeoutSeconds`, else the tool's default) plus
    /// [`BridgeOptions::timeout_grace`](crate::bridge::BridgeOptions), counted from now.
    pub async fn call_tool(
        self: &Arc<Self>,
        name: &str,
        arguments: Map<String, Value>,
        progress: Option<ProgressSink>,
        cancel: CancellationToken,
    ) -> Result<ToolResult, CallRefused> {
        let started = Instant::now();
        match name {
            STATUS_TOOL => return Ok(self.status_result().await),
            WAIT_TOOL => return self.wait_for_editor(&arguments, cancel).await,
            SELECT_TOOL if self.link.started_outside_project() => return Ok(self.select_editor(&arguments)),
            _ => {}
        }
        let planned = match self.plan(name, &arguments, started).await {
            Ok(planned) => planned,
            Err(answer) => return answer,
        };
        if let Err(why) = check_arguments(name, &planned.tool, &arguments) {
            return Ok(why);
        }
        let mut arguments = arguments;
        let across_reload = self.across_reload(name, &planned.tool, &mut arguments);
        let held = Held::default();
        let (forwarder, progress) = match progress {
            Some(sink) => {
                let (forwarder, sender) = Forwarder::start(sink, self.options.heartbeat, held.clone());
                (Some(forwarder), Some(sender))
            }
            None => (None, None),
        };
        let options = CallOptions { deadline: planned.deadline, cancel, progress, read_only: planned.tool.read_only };
        let outcome = self.send(name, arguments, options, &held).await.map_err(|e| e.counted_from(started));
        let ended = match across_reload {
            Some(file) => self.settle(&file, outcome, &planned).await,
            None => Ended::Link(outcome),
        };
        if let Some(forwarder) = forwarder {
            forwarder.finish().await;
        }
        self.words(name, ended, &held)
    }

    /// Step 1: the tool called `name` (waiting for the Editor's list within
    /// the call's own deadline, when it has one) and the call's deadline.
    /// `Err`: the answer, without sending (an unknown tool is refused).
    async fn plan(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        started: Instant,
    ) -> Result<Planned, Result<ToolResult, CallRefused>> {
        let options = &self.options;
        let own = timeout_seconds(arguments, "TimeoutSeconds").map_err(|message| Ok(ToolResult::error(message)))?;
        let lookup_limit = own.map_or(options.tools_wait, |t| t.min(options.tools_wait));
        let tool =
            self.find_tool(name, lookup_limit).await.ok_or_else(|| Err(CallRefused::UnknownTool(name.into())))?;
        let seconds = own
            .or_else(|| tool.timeout_seconds.map(editor_link::duration::saturating_seconds))
            .unwrap_or(options.default_timeout);
        let deadline = editor_link::duration::instant_after(started, seconds + options.timeout_grace);
        Ok(Planned { tool, seconds, deadline })
    }

    /// Step 3: a `compile` on an Editor that cannot resume (its dialect
    /// writes the result where the bridge can read it) is asked to wait for
    /// its domain reload; the file it will leave its result in.
    fn across_reload(&self, name: &str, tool: &McpTool, arguments: &mut Map<String, Value>) -> Option<ResultFile> {
        let info = self.link.editor_info().filter(|info| name == "compile" && !info.can_resume())?;
        let project = self.options.project.clone().or_else(|| {
            let assets = info.version.data_path.as_deref()?;
            std::path::Path::new(assets).parent().map(Into::into)
        });
        compile_result::prepare(info.dialect, &tool.definition["inputSchema"], project.as_deref(), arguments)
    }

    /// Step 4: the call itself, while [`main_thread::watch`] keeps `held`
    /// saying what holds the Editor's main thread.
    async fn send(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        options: CallOptions,
        held: &Held,
    ) -> Result<RawJson, CallError> {
        tokio::select! {
            outcome = self.link.call_raw(name, Value::Object(arguments), options) => outcome,
            never = main_thread::watch(&self.link, self.options.project.as_deref(), held.clone()) => match never {},
        }
    }

    /// Step 3, after the call: the client asked to wait for the domain
    /// reload, so it is answered once the Editor is back, with the result it
    /// wrote before reloading (the reload may have cut its answer off).
    async fn settle(&self, file: &ResultFile, outcome: Result<RawJson, CallError>, planned: &Planned) -> Ended {
        if !matches!(outcome, Ok(_) | Err(CallError::CutOff(CutOff::Reload))) {
            return Ended::Link(outcome);
        }
        let cancel = CancellationToken::new();
        let connected = |by| async move { self.link.wait_connected(by, &cancel).await.is_ok() };
        match file.settle(planned.deadline, connected).await {
            Settled::Ready(result) => {
                tracing::info!(path = %file.path.display(), "compile answered once the Editor was back");
                Ended::Link(Ok(RawJson::from_value(&result)))
            }
            // The compile did not finish (cut off by a reload it did not
            // cause): the call's own outcome says so.
            Settled::NoResult => Ended::Link(outcome),
            Settled::NotBack(result) => Ended::NotBack {
                result: result.or_else(|| outcome.as_ref().ok().map(RawJson::to_value)),
                seconds: (planned.seconds + self.options.timeout_grace).as_secs_f64(),
            },
        }
    }

    /// Step 5: how the call ended, as its answer. Unity's result as it
    /// wrote it; otherwise the error's own words, and what the bridge can
    /// add: why an open Editor does not answer, what held its main thread
    /// at the deadline. A tool the Editor no longer has makes the bridge
    /// fetch its tools again (without holding this answer).
    fn words(self: &Arc<Self>, name: &str, ended: Ended, held: &Held) -> Result<ToolResult, CallRefused> {
        let error = match ended {
            Ended::NotBack { result, seconds } => {
                return Ok(ToolResult::error(compile_result::not_back(result.as_ref(), seconds)));
            }
            Ended::Link(Ok(result)) => return Ok(results::from_editor_result(name, result, &self.options.results)),
            Ended::Link(Err(CallError::Cancelled)) => return Err(CallRefused::Cancelled),
            Ended::Link(Err(error)) => error,
        };
        if let CallError::Editor(e) = &error {
            if e.kind() == ErrorKind::Timeout {
                if let Some(held) = lock(held).take() {
                    return Ok(results::timed_out_while_held(name, e, &held));
                }
            }
        }
        let answer = results::from_call_error(name, &error);
        let added = match &error {
            CallError::NotSent { why: NotSent::NoEditor { .. }, .. } => {
                self.link.project().as_deref().and_then(silent_editor::diagnose).map(|silent| format!("{silent}."))
            }
            CallError::NoAnswer { .. } => lock(held).take().map(|held| format!("When the deadline passed, {held}.")),
            CallError::Editor(e) if e.kind() == ErrorKind::MethodNotFound => {
                let bridge = self.clone();
                tokio::spawn(async move { bridge.refresh().await });
                None
            }
            _ => None,
        };
        Ok(match added {
            Some(added) => ToolResult::error(format!("{} {added}", answer.text())),
            None => answer,
        })
    }
}

/// Step 2: `arguments` against the tool's input schema; the answer when
/// they do not fit (the call is not sent).
fn check_arguments(name: &str, tool: &McpTool, arguments: &Map<String, Value>) -> Result<(), ToolResult> {
    tools::check_arguments(&tool.definition["inputSchema"], arguments).map_err(|why| {
        ToolResult::error(format!(
            "The arguments of {name} do not fit its input schema: {why}. The bridge did not send the call to Unity, so it did not run. Check them against the tool's input schema."
        ))
    })
}

/// The call's own deadline, `TimeoutSeconds` (protocol §6), when it names
/// one; a message naming the parameter when it is not a number of seconds
/// from a millisecond to a day.
fn timeout_seconds(arguments: &Map<String, Value>, name: &str) -> Result<Option<Duration>, String> {
    let Some(value) = arguments.get(name).filter(|v| !v.is_null()) else { return Ok(None) };
    match value.as_f64() {
        Some(s) if (MIN_TIMEOUT_SECONDS..=MAX_TIMEOUT_SECONDS).contains(&s) => Ok(Some(Duration::from_secs_f64(s))),
        _ => Err(format!(
            "{name} must be a number of seconds from {MIN_TIMEOUT_SECONDS} to {MAX_TIMEOUT_SECONDS} (a day), not {value}. The call was not sent to Unity, so it did not run."
        )),
    }
}

/// A call's progress on its way to the client: Unity's reports as they
/// come, and a heartbeat while it says nothing (naming what holds its main
/// thread, when known); each report's number is higher than the last.
#[derive(Debug)]
struct Forwarder {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Forwarder {
    /// Forwards to `sink` what is sent on the sender returned, beating every `every`.
    fn start(sink: ProgressSink, every: Duration, held: Held) -> (Forwarder, mpsc::UnboundedSender<Value>) {
        let (sender, unity) = mpsc::unbounded_channel();
        let stop = CancellationToken::new();
        let task = tokio::spawn(forward_progress(unity, sink, Heartbeat { every, held }, stop.clone()));
        (Forwarder { stop, task }, sender)
    }

    /// Every report goes out before the answer does, within a moment.
    async fn finish(self) {
        self.stop.cancel();
        let _ = tokio::time::timeout(PROGRESS_FLUSH, self.task).await;
    }
}

/// The heartbeat of a call's progress: how often, and what holds the
/// Editor's main thread (said instead of "waiting", when known).
#[derive(Debug)]
struct Heartbeat {
    every: Duration,
    held: Held,
}

/// Forwards Unity's progress for one call, with a heartbeat while it says
/// nothing. When stopped, it still sends what Unity reported before.
async fn forward_progress(
    mut unity: mpsc::UnboundedReceiver<Value>,
    sink: ProgressSink,
    heartbeat: Heartbeat,
    stop: CancellationToken,
) {
    let started = Instant::now();
    let mut count = 0.0;
    loop {
        let message = tokio::select! {
            biased;
            update = unity.recv() => match update {
                None => return,
                Some(p) => unity_message(&p),
            },
            _ = stop.cancelled() => {
                while let Ok(p) = unity.try_recv() {
                    count += 1.0;
                    sink(Progress { progress: count, message: unity_message(&p) }).await;
                }
                return;
            }
            _ = tokio::time::sleep(heartbeat.every) => match lock(&heartbeat.held).as_ref() {
                Some(held) => format!("waiting for Unity ({} s): {held}", started.elapsed().as_secs()),
                None => format!("waiting for Unity ({} s)", started.elapsed().as_secs()),
            },
        };
        count += 1.0;
        sink(Progress { progress: count, message }).await;
    }
}

/// Unity's `notifications/progress` params as one line: `3/9: message`.
fn unity_message(p: &Value) -> String {
    let step = match (p["progress"].as_f64(), p["total"].as_f64()) {
        (Some(done), Some(total)) => format!("{done}/{total}"),
        (Some(done), None) => format!("{done}"),
        _ => String::new(),
    };
    match p["message"].as_str() {
        Some(m) if !step.is_empty() => format!("{step}: {m}"),
        Some(m) => m.to_owned(),
        None => step,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn progress_is_forwarded_with_heartbeats_and_always_increases() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink_seen = seen.clone();
        let sink: ProgressSink = Arc::new(move |p| {
            sink_seen.lock().unwrap().push(p);
            Box::pin(async {})
        });
        let (forwarder, unity) = Forwarder::start(sink, Duration::from_millis(30), Held::default());
        unity.send(json!({"requestId": "x", "progress": 1, "total": 3, "message": "Compiling"})).unwrap();
        tokio::time::sleep(Duration::from_millis(80)).await;
        unity.send(json!({"requestId": "x", "progress": 2, "total": 3})).unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
        forwarder.finish().await;
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0], Progress { progress: 1.0, message: "1/3: Compiling".into() });
        assert!(seen.iter().any(|p| p.message.starts_with("waiting for Unity")), "{seen:?}");
        assert_eq!(seen.last().unwrap().message, "2/3");
        assert!(seen.windows(2).all(|w| w[1].progress > w[0].progress));
    }

    /// The bridge's floor and ceiling for TimeoutSeconds are the Editor's
    /// (protocol §6): it never forwards one the Editor would refuse.
    #[test]
    fn timeout_seconds_has_the_editors_floor_and_ceiling() {
        let given =
            |v: Value| timeout_seconds(&json!({"TimeoutSeconds": v}).as_object().unwrap().clone(), "TimeoutSeconds");
        for refused in [json!(0), json!(0.0005), json!(-1), json!(86_400.5), json!("3")] {
            let error = given(refused.clone()).unwrap_err();
            assert!(error.contains("from 0.001 to 86400") && error.contains("did not run"), "{refused}: {error}");
        }
        assert_eq!(given(json!(0.001)).unwrap(), Some(Duration::from_millis(1)));
        assert_eq!(given(json!(86_400)).unwrap(), Some(Duration::from_secs(86_400)));
        assert_eq!(given(Value::Null).unwrap(), None);
    }
}
