//! One request to the simulated Editor, from its checks to its response:
//! faults that fired on it, the resume journal, dispatch to the tool
//! catalogue, deadlines and progress.

use std::{
    path::Path,
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use editor_link::{
    dialect::MainThread,
    discovery::unity_path,
    jsonrpc::{ErrorKind, ErrorObject, Id, Request, Response},
    methods,
};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::effects::{AfterRun, AtRequest, work_for};
use crate::editor::model::{
    Failure,
    errors::{Identity, Thrown},
    lifecycle::InFlightAtShutdown,
    messages::{Expectations, ExtraFields, ParamNames, Resume, TimeoutParameter, Tokens, UnknownTool, WrongTypes},
};
use crate::{
    editor::{Client, ConsoleEntry, Editor, ReloadOptions, lock, state::LogEntry},
    faults::Fired,
    journal::{CarriedWait, Key, Lookup, Waiting},
    params::Args,
    tools::{self, Gate, Outcome, Progress, ToolCall},
};

/// The refusal of a request without the token, as the package words it.
pub(crate) const UNAUTHORIZED: &str = "This Editor needs the token from Library/MCPInstance.json in every request (x-token); a client that cannot send one can be let in with Window > Unity MCP > Allow clients without a token.";

/// What becomes of a request: its response (none when the domain went away
/// under it, as in Unity), and what follows once it is sent. (The response
/// boxed: most steps end early without one.)
#[derive(Debug, Default)]
pub(super) struct Answer {
    response: Option<Box<Response>>,
    after: Option<tools::After>,
}

impl Answer {
    /// No answer: the domain that had the request is gone.
    fn none() -> Answer {
        Answer::default()
    }

    fn error(id: Option<Id>, error: ErrorObject) -> Answer {
        Answer::response(Response::error(id, error))
    }

    fn response(response: Response) -> Answer {
        Answer { response: Some(Box::new(response)), after: None }
    }
}

/// A request the link admitted: its params as an object, the key its
/// journal entry has, and the domain it arrived in.
struct Admitted {
    request: Request,
    params: Map<String, Value>,
    key: Key,
    generation: u64,
    domain: CancellationToken,
}

/// The tool a request names, and its arguments bound to its parameters.
struct Bound {
    tool: &'static tools::ToolSpec,
    args: Args,
}

impl Editor {
    // ---- requests ----

    /// Handles one request and sends its response, if any (none when the
    /// domain reloaded under it, as in Unity). `fault` is a request-level
    /// fault that fired on it (stall, slow tool, reload, response size).
    pub(crate) async fn handle_request(self: &Arc<Self>, client: &Arc<Client>, request: Request, fault: Option<Fired>) {
        let method = request.method.clone();
        let Answer { response, after } = self.process(client, request, fault).await;
        if let Some(response) = response {
            client.reply(&method, *response);
        }
        // Only once the response is queued: a reload that follows it must
        // not overtake it.
        if let Some(after) = after {
            let editor = self.clone();
            tokio::spawn(async move { tools::after_reply(&editor, after).await });
        }
    }

    /// A request, step by step: it arrives (a hang waited out, the link's
    /// own question answered, a fault's first say), the link admits it (its
    /// fields, token, `x-uloop`, params), the journal may answer it
    /// (`x-resume`), its tool is found and its arguments bound, the tool
    /// runs by its deadline, and its outcome is answered and journaled.
    pub(super) async fn process(
        self: &Arc<Self>,
        client: &Arc<Client>,
        request: Request,
        fault: Option<Fired>,
    ) -> Answer {
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        self.stats.count_call(&request.method);
        let fault = fault.and_then(|fired| fired.effect()).map(AtRequest);
        let steps = async {
            self.arrive(&request, fault.as_ref()).await?;
            let admitted = self.admit(client, request)?;
            self.resume(client, &admitted).await?;
            let bound = self.bind(&admitted)?;
            let outcome = self.run(client, &admitted, bound, fault.as_ref()).await?;
            Ok(self.answer(&admitted, outcome, fault.as_ref()))
        };
        match steps.await {
            Ok(answer) | Err(answer) => answer,
        }
    }

    /// Step 1: the request arrives. A hung Editor runs nothing until the
    /// hang ends (then it does); a request of a domain that crashed or
    /// reloaded meanwhile died with it. `get-editor-state` is answered
    /// here, by the link, without the main thread (protocol §6). A fault
    /// that fired on the request acts before the checks, and may end it.
    async fn arrive(&self, request: &Request, fault: Option<&AtRequest>) -> Result<(), Answer> {
        let (generation, _) = self.domain();
        self.unhung().await;
        if self.generation() != generation {
            return Err(Answer::none());
        }
        if request.method == methods::GET_EDITOR_STATE && self.model.extensions.editor_state {
            let state = self.main_thread.state();
            return Err(Answer::response(Response { id: Some(request.id.clone()), outcome: Ok(self.with_ver(state)) }));
        }
        if let Some(fault) = fault {
            // An Editor that switches to its main thread for every request
            // (its dialect says) waits there before anything runs, not even
            // the checks.
            if self.model.dialect.main_thread == MainThread::EveryRequest {
                if let Some((busy, blocker)) = fault.stall() {
                    wait_for_the_main_thread(self, busy, blocker).await;
                }
            }
            if fault.ends_before_run(self) {
                return Err(Answer::none());
            }
        }
        Ok(())
    }

    /// Step 2: the link's checks, as this Editor makes them: fields it does
    /// not know, the token (after the checks that need no credentials,
    /// before anything that runs or tells), uLoopMCP's `x-uloop`, and the
    /// params as an object.
    fn admit(&self, client: &Client, request: Request) -> Result<Admitted, Answer> {
        let id = request.id.clone();
        let fail = |error| Answer::error(Some(id.clone()), error);
        let policy = self.model.messages;
        if policy.extra_fields == ExtraFields::Refused {
            if let Some(field) = request.extra.keys().find(|k| !k.starts_with("x-")) {
                return Err(fail(ErrorObject::new(ErrorKind::InvalidRequest, format!("unknown field {field}"))));
            }
        }
        if policy.tokens == Tokens::Required && self.token_enforced() && request.token() != self.token().as_deref() {
            return Err(fail(ErrorObject::new(ErrorKind::Unauthorized, UNAUTHORIZED)));
        }
        if policy.expectations == Expectations::Checked {
            match self.check_uloop(&request) {
                Ok(()) => {}
                Err(Refusal::Answer(error)) => return Err(fail(error)),
                // Thrown while the request was read: its id was never known.
                Err(Refusal::Unreadable(error)) => return Err(Answer::error(None, error)),
            }
        }
        if policy.param_names == ParamNames::Exact && request.params.as_ref().is_none_or(Value::is_null) {
            return Err(fail(ErrorObject::new(ErrorKind::InvalidParams, "params must be an object")));
        }
        let params = match request.params_object() {
            Ok(params) => params,
            // uLoopMCP reads params only when it binds them to the tool's schema.
            Err(_) if !self.model.errors.params_object_first() => Map::new(),
            Err(why) => return Err(fail(ErrorObject::new(ErrorKind::InvalidParams, why))),
        };
        let key = Key { client: client.name(), id };
        let (generation, domain) = self.domain();
        Ok(Admitted { request, params, key, generation, domain })
    }

    /// Step 3: a resumed request (`x-resume`) is answered from the journal
    /// when it has the call: its answer, once it has one (a call carried
    /// across a reload by its deadline, its progress told meanwhile);
    /// "interrupted" when the call died with its domain. Otherwise it runs
    /// as a new one.
    async fn resume(&self, client: &Arc<Client>, admitted: &Admitted) -> Result<(), Answer> {
        let Admitted { request, params, key, generation, domain } = admitted;
        let journaled = self.model.extensions.resume && self.model.messages.resume == Resume::FromJournal;
        if !request.is_resume() || !journaled {
            return Ok(());
        }
        let fail = |error| Answer::error(Some(request.id.clone()), error);
        let lookup = lock(&self.journal).lookup(key, &request.method, &Value::Object(params.clone()), *generation);
        if !matches!(lookup, Lookup::NotSeen | Lookup::Mismatch { .. }) {
            self.stats.resumed.fetch_add(1, Ordering::Relaxed);
        }
        Err(match lookup {
            Lookup::NotSeen => return Ok(()),
            Lookup::Completed(response) => Answer::response(response),
            Lookup::Running(Waiting { mut done, carried }) => {
                let progress = Progress::new(client.clone(), request.id.clone());
                let answered = async {
                    match done.wait_for(Option::is_some).await {
                        Ok(response) => Answer { response: response.clone().map(Box::new), after: None },
                        Err(_) => fail(interrupted(&request.method)),
                    }
                };
                tokio::select! {
                    _ = domain.cancelled() => Answer::none(),
                    answer = answered => answer,
                    timeout = carried_until_its_deadline(carried, &progress, &request.method) => fail(timeout),
                }
            }
            Lookup::Interrupted => fail(interrupted(&request.method)),
            Lookup::Mismatch { method } => fail(ErrorObject::new(
                ErrorKind::InvalidRequest,
                format!("x-resume: id {} was used for a different request ({method})", request.id),
            )),
        })
    }

    /// Step 4: the tool the request names, allowed by its settings and
    /// gates, its arguments bound as this Editor binds them (checked
    /// against the declared parameters, or read as Newtonsoft reads them).
    fn bind(&self, admitted: &Admitted) -> Result<Bound, Answer> {
        let Admitted { request, params, .. } = admitted;
        let fail = |error| Answer::error(Some(request.id.clone()), error);
        let policy = self.model.messages;
        let Some(tool) = tools::find(self, &request.method) else {
            if policy.unknown_tool == UnknownTool::InvalidParams {
                let error = ErrorObject::new(ErrorKind::InvalidParams, format!("Unknown tool: {}", request.method));
                return Err(fail(error.with_data("method", request.method.clone())));
            }
            return Err(fail(self.refuse(&Failure::UnknownTool { method: &request.method }, Thrown::Registry)));
        };
        self.check_allowed(tool).map_err(fail)?;
        if policy.timeout_parameter == TimeoutParameter::Refused
            && params.keys().any(|k| k.eq_ignore_ascii_case("TimeoutSeconds"))
        {
            return Err(fail(ErrorObject::new(ErrorKind::InvalidParams, "unknown parameter TimeoutSeconds")));
        }
        let exact_names = policy.param_names == ParamNames::Exact;
        if let Some(key) = params.keys().find(|k| exact_names && !tool.params.iter().any(|p| p.name == k.as_str())) {
            if tool.params.iter().any(|p| p.name.eq_ignore_ascii_case(key)) {
                return Err(fail(ErrorObject::new(ErrorKind::InvalidParams, format!("unknown parameter {key}"))));
            }
        }
        let bound = match &tool.schema {
            tools::ToolSchema::Declared => Args::parse(&tool.params, params),
            tools::ToolSchema::Uloop(binding) => {
                let text = tools::uloop::newtonsoft::RequestText::of(&request.id.to_value(), &request.method);
                tools::uloop::newtonsoft::bind(tool.name, binding, request.params.as_ref(), text)
                    .inspect_err(|error| self.log_failure(error, Thrown::ConvertToSchema))
            }
        };
        match bound {
            Ok(args) => Ok(Bound { tool, args }),
            Err(_) if policy.wrong_types == WrongTypes::Defaulted => {
                Ok(Bound { tool, args: Args::parse(&tool.params, &Map::new()).unwrap_or_default() })
            }
            Err(error) => Err(fail(error)),
        }
    }

    /// Step 5: the tool runs, journaled as running, in a task of its own
    /// (a panic becomes an error reply; a reload or the deadline aborts
    /// it), by its `TimeoutSeconds` where this Editor has deadlines.
    async fn run(
        self: &Arc<Self>,
        client: &Arc<Client>,
        admitted: &Admitted,
        bound: Bound,
        fault: Option<&AtRequest>,
    ) -> Result<Outcome, Answer> {
        let Admitted { request, params, key, generation, domain } = admitted;
        let Bound { tool, args } = bound;
        lock(&self.journal).start(key.clone(), &request.method, Value::Object(params.clone()), *generation);
        self.stats.count_run(tool.name);
        // Without the timeouts extension a tool runs as long as it takes.
        let deadline = match self.model.extensions.timeouts {
            true => editor_link::duration::saturating_seconds(args.float("TimeoutSeconds").max(0.001)),
            false => Duration::MAX,
        };
        let call = ToolCall {
            tool: tool.name,
            editor: self.clone(),
            client: client.clone(),
            args,
            progress: if self.has_defect(crate::Defect::ProgressGoesBack) {
                Progress::new(client.clone(), request.id.clone()).going_back()
            } else {
                Progress::new(client.clone(), request.id.clone())
            },
        };
        let slow = fault.and_then(AtRequest::slow_tool);
        // An Editor whose tools run on a worker: only the tool's body waits
        // for the main thread, under its deadline, and not a tool that asks
        // nothing of it.
        let stall = match self.model.dialect.main_thread {
            MainThread::ToolBodies { .. } if self.model.dialect.main_thread.holds(tool.name) => {
                fault.and_then(AtRequest::stall)
            }
            _ => None,
        };
        let editor = self.clone();
        let timeout = deadline;
        let mut task = tokio::spawn(async move {
            if let Some((busy, blocker)) = stall {
                wait_for_the_main_thread(&editor, busy, blocker).await;
            }
            if let Some((extra, progress)) = slow {
                work_for(&call, extra, progress).await;
            }
            tools::run(tool, call).await
        });
        let outcome = tokio::select! {
            _ = domain.cancelled() => {
                task.abort();
                return Err(match self.model.lifecycle.in_flight {
                    InFlightAtShutdown::AnsweredAfterNotice => Answer::error(Some(request.id.clone()), interrupted(tool.name)),
                    InFlightAtShutdown::Abandoned => Answer::none(),
                });
            }
            _ = tokio::time::sleep(deadline), if deadline != Duration::MAX => {
                task.abort();
                Outcome::Fail(ErrorObject::new(
                    ErrorKind::Timeout,
                    format!("Tool '{}' timed out after {} seconds", tool.name, format_seconds(deadline)),
                ))
            }
            joined = &mut task => match joined {
                Ok(outcome) => outcome,
                // Cancelled: the runtime is shutting down (the Editor stops).
                Err(err) if err.is_cancelled() => {
                    tracing::debug!(tool = tool.name, "tool cancelled: the Editor is stopping");
                    Outcome::Fail(ErrorObject::new(ErrorKind::InternalError, format!("Tool '{}' was cancelled: the Editor is stopping", tool.name)))
                }
                Err(err) => {
                    tracing::error!(tool = tool.name, %err, "tool panicked");
                    Outcome::Fail(ErrorObject::new(ErrorKind::InternalError, format!("Tool '{}' failed: {err}", tool.name)))
                }
            },
        };
        match outcome {
            Outcome::GoesOnAfterReload(rest) => {
                self.carry_across_reload(admitted, timeout, rest);
                Err(Answer::none())
            }
            outcome => Ok(outcome),
        }
    }

    /// Step 5, for a call that goes on after the domain reload it starts
    /// (a PlayMode test run): journaled as carried, so a resumed request
    /// waits for it by its deadline; the domain reloads; the Editor, not
    /// the domain, runs the rest and journals its answer. (The package
    /// before it took runs up in the new domain lost the answer: the
    /// `loses-play-mode-answer` defect.)
    fn carry_across_reload(self: &Arc<Self>, admitted: &Admitted, timeout: Duration, rest: tools::GoesOn) {
        let loses = self.has_defect(crate::Defect::LosesPlayModeAnswer);
        let steps = match loses {
            true => None,
            false => lock(&self.journal).carry(&admitted.key, timeout),
        };
        let (editor, key, id) = (self.clone(), admitted.key.clone(), admitted.request.id.clone());
        let instance = self.instance_id();
        let (reloaded, back) = tokio::sync::oneshot::channel();
        self.request_reload(ReloadOptions::default(), Some(reloaded));
        tokio::spawn(async move {
            // The Test Framework takes the run up once the new domain has
            // loaded; gone with the Editor when it crashed or quit instead.
            if back.await.is_err() {
                return;
            }
            let outcome = (rest.0)(Progress::Journal(steps)).await;
            if loses || editor.instance_id() != instance {
                return;
            }
            let response = match outcome {
                Outcome::Reply(result) | Outcome::ReplyThen(result, _) | Outcome::ReloadBeforeReply(result) => {
                    Response::ok(id, editor.with_ver(result))
                }
                Outcome::Fail(error) => Response::error(Some(id), error),
                Outcome::GoesOnAfterReload(_) => {
                    Response::error(Some(id), ErrorObject::new(ErrorKind::InternalError, "a call went on twice"))
                }
            };
            lock(&editor.journal).complete(&key, &response);
        });
    }

    /// Step 6: the outcome as the response (`Ver` added, a fault's padding),
    /// journaled as complete; a result the domain reloads before sending is
    /// journaled only. A fault that fired on the request may keep the
    /// answer, or add what follows it.
    fn answer(&self, admitted: &Admitted, outcome: Outcome, fault: Option<&AtRequest>) -> Answer {
        let id = &admitted.request.id;
        let ok = |result: Map<String, Value>| {
            let mut response = Response::ok(id.clone(), self.with_ver(result));
            if let Some(fault) = fault {
                fault.pad(&mut response);
            }
            response
        };
        let (response, mut after) = match outcome {
            Outcome::Reply(result) => (ok(result), None),
            Outcome::Fail(error) => {
                self.log_failure(&error, Thrown::Tool);
                (Response::error(Some(id.clone()), error), None)
            }
            Outcome::ReplyThen(result, after) => (ok(result), Some(after)),
            // Taken up in step 5.
            Outcome::GoesOnAfterReload(_) => return Answer::none(),
            Outcome::ReloadBeforeReply(result) => {
                // Journaled first, so a resumed request gets it; then the
                // domain reloads and this connection never sees the answer.
                lock(&self.journal).complete(&admitted.key, &ok(result));
                self.request_reload(ReloadOptions::default(), None);
                return Answer::none();
            }
        };
        lock(&self.journal).complete(&admitted.key, &response);
        match fault.map_or(AfterRun::Answer(None), |fault| fault.after_run(self)) {
            AfterRun::Unanswered => return Answer::none(),
            AfterRun::Answer(Some(then)) => after = Some(then),
            AfterRun::Answer(None) => {}
        }
        Answer { response: Some(Box::new(response)), after }
    }

    pub(super) fn with_ver(&self, mut result: Map<String, Value>) -> Value {
        if self.model.messages.ver {
            let version = self.model.version.map_or_else(|| self.package_version().to_owned(), str::to_owned);
            result.insert("Ver".into(), version.into());
        }
        Value::Object(result)
    }

    /// The error answered for `failure`, written to the console too when
    /// this Editor logs its failures.
    pub(super) fn refuse(&self, failure: &Failure<'_>, thrown: Thrown) -> ErrorObject {
        let error = self.model.errors.answer(failure);
        self.log_failure(&error, thrown);
        error
    }

    /// What uLoopMCP writes to its console for a failed request (`Debug.LogError`).
    pub(super) fn log_failure(&self, error: &ErrorObject, thrown: Thrown) {
        if let Some(message) = self.model.errors.console_entry(error, thrown) {
            self.log([ConsoleEntry {
                entry: LogEntry { log_type: crate::editor::state::LogType::Error, message, stack_trace: String::new() },
                from_compile: false,
            }]);
        }
    }

    /// uLoopMCP's `x-uloop` guard (protocol §3): the project, then the
    /// session; an Editor that wants both fields refuses one alone; uLoopMCP
    /// 3 reads only the project root and compares it byte for byte.
    pub(super) fn check_uloop(&self, request: &Request) -> Result<(), Refusal> {
        let identity = self.model.errors.identity();
        if identity == Identity::ProjectRootExact {
            return self.check_uloop3(request);
        }
        let Some(uloop) = request.uloop() else { return Ok(()) };
        let field = |name: &str| uloop.get(name).and_then(Value::as_str).filter(|v| !v.trim().is_empty());
        let (root, session) = (field("expectedProjectRoot"), field("expectedServerSessionId"));
        if identity == Identity::BothFields {
            for (name, value, offset) in
                // (the first offset was never recorded: 0x00000 stands in for it)
                [("expectedProjectRoot", root, "0x00000"), ("expectedServerSessionId", session, "0x0003c")]
            {
                if value.is_none() {
                    return Err(Refusal::Answer(
                        self.refuse(&Failure::ExpectationIncomplete { field: name }, Thrown::IdentityValidator(offset)),
                    ));
                }
            }
        }
        let actual_root = unity_path(&self.project);
        if let Some(expected) = root {
            if !editor_link::discovery::same_folder(Path::new(expected), &self.project) {
                let failure = Failure::ProjectMismatch { expected, actual: &actual_root };
                return Err(Refusal::Answer(self.refuse(&failure, Thrown::IdentityValidator("0x00085"))));
            }
        }
        if let Some(expected) = session {
            let actual = self.session_id();
            if expected != actual {
                let failure = Failure::SessionChanged { expected, actual: &actual };
                // Not logged by uLoopMCP, so its offset is never shown.
                return Err(Refusal::Answer(self.refuse(&failure, Thrown::IdentityValidator("0x00000"))));
            }
        }
        Ok(())
    }

    /// uLoopMCP 3 (c50f54c): `JsonRpcProcessor.ParseUloopMetadata` reads
    /// `x-uloop` (absent or `null`: no check at all); a non-object throws
    /// in `ParseRequest`, answered "Internal error" with id `null`;
    /// `ProjectRootIdentityValidator.Validate` wants a non-blank
    /// `expectedProjectRoot` (`JToken.ToString()`: a number counts as its
    /// text) equal, ordinally, to the Editor's canonical project root.
    fn check_uloop3(&self, request: &Request) -> Result<(), Refusal> {
        let token = match request.extra.get(editor_link::jsonrpc::ULOOP_MEMBER) {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Object(token)) => token,
            Some(Value::Array(_)) => {
                return Err(Refusal::Unreadable(crate::editor::model::errors::uloop_internal(
                    "Accessed JArray values with invalid key value: \"expectedProjectRoot\". Int32 array index expected.",
                )));
            }
            Some(_) => {
                return Err(Refusal::Unreadable(crate::editor::model::errors::uloop_internal(
                    "Cannot access child value on Newtonsoft.Json.Linq.JValue.",
                )));
            }
        };
        let expected = match token.get("expectedProjectRoot") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
        };
        if expected.trim().is_empty() {
            let failure = Failure::ExpectationIncomplete { field: "expectedProjectRoot" };
            return Err(Refusal::Answer(self.refuse(&failure, Thrown::IdentityValidator("0x00000"))));
        }
        let actual =
            editor_link::endpoint::canonical_project_root(&self.project).unwrap_or_else(|_| unity_path(&self.project));
        if expected != actual {
            let failure = Failure::ProjectMismatch { expected: &expected, actual: &actual };
            return Err(Refusal::Answer(self.refuse(&failure, Thrown::IdentityValidator("0x00000"))));
        }
        Ok(())
    }

    /// Disabled tools and the security checker (protocol §3, §6).
    pub(super) fn check_allowed(&self, tool: &tools::ToolSpec) -> Result<(), ErrorObject> {
        let settings = self.sim().settings.clone();
        if !tool.dev_only && settings.disabled_tools.iter().any(|t| t == tool.name) {
            return Err(self.refuse(&Failure::Disabled { tool: tool.name }, Thrown::Registry));
        }
        let reason = match tool.gate {
            Gate::None => None,
            Gate::Tests if !settings.enable_tests_execution => {
                Some("Test execution is disabled. Enable 'Enable Tests Execution' in the security settings.")
            }
            Gate::MenuItems if !settings.allow_menu_item_execution => {
                Some("Menu item execution is disabled. Enable 'Allow Menu Item Execution' in the security settings.")
            }
            Gate::DynamicCode
                if settings.dynamic_code_security_level == crate::editor::state::SecurityLevel::Disabled =>
            {
                Some("Dynamic code execution is disabled (security level Disabled).")
            }
            _ => None,
        };
        match reason {
            Some(reason) => Err(self.refuse(&Failure::Blocked { tool: tool.name, reason }, Thrown::Registry)),
            None => Ok(()),
        }
    }
}

/// Why `x-uloop` refused a request.
pub(super) enum Refusal {
    /// Answered with the request's id.
    Answer(ErrorObject),
    /// Thrown while the request was read (uLoopMCP 3): answered with id `null`.
    Unreadable(ErrorObject),
}

pub(super) fn interrupted(method: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorKind::Interrupted,
        format!("'{method}' was interrupted by a domain reload before it completed"),
    )
    .with_data("reason", "DomainReload")
}

pub(super) fn format_seconds(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs.fract() == 0.0 { format!("{secs:.0}") } else { format!("{secs}") }
}

/// Waits `busy` for a main thread that `blocker` holds (when known): what
/// `get-editor-state` says meanwhile.
async fn wait_for_the_main_thread(editor: &Editor, busy: Duration, blocker: Option<crate::faults::Blocker>) {
    let _waiting = editor.main_thread.hold(blocker);
    tokio::time::sleep(busy).await;
}

/// For a resumed request that waits on a call carried across a reload:
/// tells it the call's progress until the call's deadline, then the
/// timeout it ends with. Never ends for a call that was not carried (it
/// has its domain's deadline).
async fn carried_until_its_deadline(carried: Option<CarriedWait>, progress: &Progress, method: &str) -> ErrorObject {
    let Some(CarriedWait { deadline, timeout, progress: mut steps }) = carried else {
        return std::future::pending().await;
    };
    let expired = tokio::time::sleep_until(deadline);
    tokio::pin!(expired);
    loop {
        if let Some(step) = steps.borrow_and_update().clone() {
            progress.report(step.progress, step.total, &step.message);
        }
        tokio::select! {
            _ = &mut expired => break,
            changed = steps.changed() => if changed.is_err() {
                // The call's progress is done; its answer or deadline follows.
                expired.as_mut().await;
                break;
            },
        }
    }
    ErrorObject::new(ErrorKind::Timeout, format!("Tool '{method}' timed out after {} seconds", format_seconds(timeout)))
}
