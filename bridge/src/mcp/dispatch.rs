//! The one front door: every message of the client is read once
//! ([`message::read`]), checked against where the session stands
//! ([`Lifecycle`]) and against the ids in flight, and served in one place
//! ([`Dispatcher::request`]): answered at once, or by a task of its own
//! (a list that waits for the Editor, a call), each answered exactly once
//! (never when the client cancels it, as MCP asks).

use std::{future::Future, panic::AssertUnwindSafe, sync::Arc};

use futures_util::FutureExt;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{
    CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, ServeOptions,
    calls::{Calls, ToolCall},
    message::{self, Incoming, Method, Notification, Refusal, Request, Unread},
    methods::{self, InitializeParams},
    out::Out,
    session::{InFlight, Lifecycle, NotedClient, Revision, SERVER_INFO_KEY, server_info},
    subscriptions::Subscriptions,
    tasks::{self, TaskStore},
};
use crate::bridge::Bridge;
use editor_link::jsonrpc::code;

/// The tasks extension's error for a request that does not declare it.
const MISSING_CLIENT_CAPABILITY: i64 = -32021;

/// What serves one session's messages.
#[derive(Debug)]
pub(super) struct Dispatcher {
    lifecycle: Lifecycle,
    bridge: Arc<Bridge>,
    options: ServeOptions,
    out: Out,
    in_flight: InFlight,
    client: NotedClient,
    calls: Calls,
    tasks: TaskStore,
    subscriptions: Subscriptions,
}

impl Dispatcher {
    pub(super) fn new(bridge: Arc<Bridge>, options: ServeOptions, out: Out) -> Dispatcher {
        let (in_flight, client, tasks) = (InFlight::default(), NotedClient::default(), TaskStore::default());
        let subscriptions = Subscriptions::new(out.clone(), tasks.clone());
        let calls = Calls::new(bridge.clone(), out.clone(), in_flight.clone(), client.clone(), tasks.clone());
        let listening = (subscriptions.clone(), Arc::downgrade(&bridge));
        bridge.on_tools_changed(move || {
            if let Some(bridge) = listening.1.upgrade() {
                listening.0.tools_changed(&bridge.current_tools());
            }
        });
        Dispatcher { lifecycle: Lifecycle::New, bridge, options, out, in_flight, client, calls, tasks, subscriptions }
    }

    /// One line of the input.
    pub(super) fn line(&mut self, line: &[u8]) {
        match message::read(line) {
            Ok(Incoming::Request(request)) => self.request(request),
            Ok(Incoming::Notification(notification)) => self.notification(&notification),
            Ok(Incoming::Response) => tracing::debug!("a response from the client ignored (the bridge asks nothing)"),
            Err(Unread::Refused(refusal)) => self.out.refuse(&refusal),
            Err(Unread::Dropped(why)) => tracing::debug!(why, "a line ignored"),
        }
    }

    /// The session ends: open subscriptions get their final result.
    pub(super) fn close(&self) {
        self.subscriptions.close();
    }

    /// A request: admitted by the lifecycle, its id taken, then served.
    fn request(&mut self, request: Request) {
        if let Err(refusal) = self.admit(&request) {
            return self.out.refuse(&refusal);
        }
        let revision = self.lifecycle.revision(request.versioned.as_ref());
        let Some(cancel) = self.in_flight.take(&request.id) else {
            let why = format!(
                "Invalid Request: a request with id {} is still in flight; this {} was not run (use a new id for every request)",
                request.id, request.method
            );
            return self.out.refuse(&Refusal::new(Some(&request.id), code::INVALID_REQUEST, why));
        };
        let id = request.id.clone();
        match self.serve(request, revision, cancel) {
            Served::Now(answer) => {
                self.in_flight.release(&id);
                self.out.answer(&id, answer);
            }
            Served::Later => {}
        }
    }

    /// Whether the session, where it stands, takes `request`; a request
    /// that names its revision begins a stateless session.
    fn admit(&mut self, request: &Request) -> Result<(), Refusal> {
        let (id, method) = (&request.id, &request.method);
        match (&request.versioned, method, &self.lifecycle) {
            // The probe chooses nothing: any other request served makes the
            // session a stateless one.
            (Some(_), Method::ServerDiscover, _) => Ok(()),
            (Some(_), _, Lifecycle::New) => {
                self.lifecycle = Lifecycle::Stateless;
                Ok(())
            }
            (Some(_), _, _) => Ok(()),
            (None, Method::ServerDiscover, _) => Err(Refusal::new(
                Some(id),
                code::INVALID_PARAMS,
                format!(
                    "Invalid params: server/discover needs params._meta with {PROTOCOL_VERSION_KEY} and {CLIENT_CAPABILITIES_KEY}"
                ),
            )),
            (None, Method::Initialize, _)
            | (None, Method::Ping, Lifecycle::New)
            | (None, _, Lifecycle::Handshake { .. }) => Ok(()),
            (None, _, Lifecycle::New) => Err(Refusal::new(
                Some(id),
                code::INVALID_REQUEST,
                format!("Invalid Request: {method} before initialize"),
            )),
            (None, _, Lifecycle::Stateless) => {
                let meta = request.params.as_ref().and_then(|p| p.get("_meta"));
                let mut missing = vec![PROTOCOL_VERSION_KEY];
                if !meta.and_then(|m| m.get(CLIENT_CAPABILITIES_KEY)).is_some_and(Value::is_object) {
                    missing.push(CLIENT_CAPABILITIES_KEY);
                }
                let why = format!("request _meta is missing or has malformed required fields: {}", missing.join(", "));
                Err(Refusal::new(Some(id), code::INVALID_PARAMS, why))
            }
        }
    }

    /// Serves `request` (its id taken, `cancel` reaching it).
    fn serve(&mut self, request: Request, revision: Revision, cancel: CancellationToken) -> Served {
        if methods::needs_2026(&request.method, revision) {
            return Served::Now(Err(Refusal::not_found(&request.id, &request.method)));
        }
        match request.method {
            Method::Initialize => Served::Now(self.initialize(&request)),
            Method::Ping => Served::Now(Ok(json!({}))),
            Method::ServerDiscover => Served::Now(Ok(methods::discover_result())),
            Method::ToolsList => {
                self.note_client(&request);
                let (bridge, subscriptions, page_size) =
                    (self.bridge.clone(), self.subscriptions.clone(), self.options.page_size);
                self.later(request, cancel, move |request| async move {
                    methods::list_tools(bridge, &request, revision, page_size, subscriptions).await
                })
            }
            Method::ToolsCall => match ToolCall::read(&request, revision) {
                Ok(call) => {
                    self.calls.start(call, cancel);
                    Served::Later
                }
                Err(refusal) => Served::Now(Err(refusal)),
            },
            Method::ResourcesList => Served::Now(methods::list_resources(&self.bridge, &request, revision)),
            Method::ResourceTemplatesList => Served::Now(methods::list_resource_templates(&request, revision)),
            Method::ResourcesRead => {
                let bridge = self.bridge.clone();
                self.later(request, cancel, move |request| async move {
                    methods::read_resource(bridge, &request, revision).await
                })
            }
            Method::SubscriptionsListen => self.listen(&request),
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => Served::Now(self.task(&request)),
            Method::Other(_) => Served::Now(Err(Refusal::not_found(&request.id, &request.method))),
        }
    }

    /// `initialize`: the revision agreed, Unity told the client's name; a
    /// session not yet begun is a handshake-era one from now.
    fn initialize(&mut self, request: &Request) -> Result<Value, Refusal> {
        let params: InitializeParams = methods::params(request)?;
        let revision = methods::negotiate(&params.protocol_version);
        let client = &params.client_info;
        tracing::info!(client = %client.name, version = %client.version, protocol = %revision, "MCP client");
        // Told to Unity on every connect; initialize itself never waits for Unity.
        self.bridge.link.set_client_name(&client.name);
        match &mut self.lifecycle {
            lifecycle @ Lifecycle::New => {
                *lifecycle = Lifecycle::Handshake { revision: revision.into(), initialized: false }
            }
            Lifecycle::Handshake { revision: agreed, .. } => *agreed = revision.into(),
            Lifecycle::Stateless => {}
        }
        Ok(methods::initialize_result(revision))
    }

    /// `subscriptions/listen` (2026-07-28): acknowledged now, and open (its
    /// id in flight) until the client cancels it. Task ids need the tasks
    /// extension declared.
    fn listen(&self, request: &Request) -> Served {
        let requested = request.params.as_ref().and_then(|p| p.get("notifications")).cloned().unwrap_or_default();
        let declared = request.versioned.as_ref().is_some_and(|v| tasks::declared(&v.meta));
        if requested.get("taskIds").is_some() && !declared {
            return Served::Now(Err(missing_tasks_capability(&request.id)));
        }
        self.subscriptions.listen(&request.id, &requested, &self.bridge.current_tools(), declared);
        Served::Later
    }

    /// `tasks/get`, `tasks/update`, `tasks/cancel` (2026-07-28), from the
    /// session's tasks: -32021 for a request that does not declare the
    /// extension, -32602 for a task that is not (or no longer) kept.
    fn task(&self, request: &Request) -> Result<Value, Refusal> {
        if !request.versioned.as_ref().is_some_and(|v| tasks::declared(&v.meta)) {
            return Err(missing_tasks_capability(&request.id));
        }
        let Some(task) = request.params.as_ref().and_then(|p| p.get("taskId")).and_then(Value::as_str) else {
            return Err(Refusal::new(
                Some(&request.id),
                code::INVALID_PARAMS,
                "Invalid params: taskId must be a string",
            ));
        };
        let found = match request.method {
            Method::TasksGet => self.tasks.get(task).map(Value::Object),
            Method::TasksCancel => self.tasks.cancel(task).then(|| json!({})),
            // The bridge asks clients nothing: answers to nothing are accepted.
            _ => self.tasks.knows(task).then(|| json!({})),
        };
        let Some(mut result) = found else {
            let why = format!(
                "Failed to retrieve task: Task not found ({task}: not kept by this bridge; results are kept 30 minutes after a task ends, and tasks end with the bridge process)"
            );
            return Err(Refusal::new(Some(&request.id), code::INVALID_PARAMS, why));
        };
        result["resultType"] = "complete".into();
        result["_meta"] = json!({SERVER_INFO_KEY: server_info()});
        Ok(result)
    }

    /// A 2026-07-28 request names its client in `_meta`: Unity is told.
    fn note_client(&self, request: &Request) {
        let Some(versioned) = &request.versioned else { return };
        let Some(info) = versioned.meta.get(super::CLIENT_INFO_KEY) else { return };
        let text = |key: &str| info.get(key).and_then(Value::as_str).map(str::to_owned);
        if let Some(name) = text("name") {
            self.client.note(&(name, text("version").unwrap_or_default(), versioned.version.clone()), &self.bridge);
        }
    }

    /// Serves `request` in a task of its own: answered with what `work`
    /// comes to (a panic an error), or not at all when the client cancels it.
    fn later<F>(&self, request: Request, cancel: CancellationToken, work: impl FnOnce(Request) -> F) -> Served
    where
        F: Future<Output = Result<Value, Refusal>> + Send + 'static,
    {
        let (id, method) = (request.id.clone(), request.method.clone());
        let (out, in_flight) = (self.out.clone(), self.in_flight.clone());
        let work = AssertUnwindSafe(work(request)).catch_unwind();
        tokio::spawn(async move {
            let answered = tokio::select! {
                answered = work => answered,
                () = cancel.cancelled() => {
                    in_flight.release(&id);
                    return tracing::debug!(%id, %method, "cancelled by the client: not answered");
                }
            };
            in_flight.release(&id);
            match answered {
                Ok(answer) => out.answer(&id, answer),
                Err(panic) => {
                    let why = super::panic_text(&panic);
                    tracing::error!(%why, %method, "the bridge failed while handling a request");
                    out.refuse(&Refusal::new(
                        Some(&id),
                        code::INTERNAL_ERROR,
                        format!("the bridge failed while handling {method}: {why}"),
                    ));
                }
            }
        });
        Served::Later
    }

    /// A notification: `initialized` lets list changes go to a handshake-era
    /// client; `cancelled` reaches the request it names. Before a session
    /// began, notifications are ignored.
    fn notification(&mut self, notification: &Notification) {
        match (&mut self.lifecycle, notification.method.as_str()) {
            (Lifecycle::New, _) => {
                tracing::debug!(method = notification.method, "a notification before initialize ignored")
            }
            (Lifecycle::Handshake { initialized, .. }, "notifications/initialized") => {
                *initialized = true;
                self.subscriptions.initialized();
            }
            _ => {
                let Some(request) = notification.cancelled_request() else { return };
                if self.subscriptions.cancel(request) {
                    self.in_flight.release(request);
                } else if !self.in_flight.cancel(request) {
                    tracing::debug!(%request, "cancelled: no such request in flight");
                }
            }
        }
    }
}

/// How a request is served.
#[derive(Debug)]
enum Served {
    /// Answered now: its id is free again.
    Now(Result<Value, Refusal>),
    /// A task of its own answers it (or a subscription stays open): its id
    /// stays taken until then.
    Later,
}

/// The extension's answer to a task request (or a task subscription) from a
/// request that does not declare it: -32021, naming what is required.
fn missing_tasks_capability(id: &Value) -> Refusal {
    let required = json!({"requiredCapabilities": {"extensions": {tasks::TASKS_EXTENSION: {}}}});
    Refusal::new(Some(id), MISSING_CLIENT_CAPABILITY, "Missing required client capability").with_data(required)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::{PROTOCOL_VERSION_KEY, SUPPORTED_VERSIONS, out::OutItem};

    /// A dispatcher whose bridge has no Editor to find.
    fn dispatcher(out: &Out) -> (Dispatcher, tempfile::TempDir) {
        use crate::{
            bridge::{Bridge, BridgeOptions},
            link::{Link, LinkConfig},
        };
        let project = tempfile::tempdir().unwrap();
        let locator =
            editor_link::discovery::Locator { project: Some(project.path().to_owned()), ..Default::default() };
        let bridge = Bridge::start(Link::start(LinkConfig::new(locator), None), BridgeOptions::default(), None);
        (Dispatcher::new(bridge, ServeOptions::default(), out.clone()), project)
    }

    /// What the dispatcher answers to `lines`, in order (the answers of
    /// tasks of their own left out).
    fn answers(lines: &[&str]) -> Vec<Value> {
        let (out, mut rx) = Out::new();
        let (mut dispatcher, _project) = dispatcher(&out);
        for line in lines {
            dispatcher.line(line.as_bytes());
        }
        drop((out, dispatcher));
        let mut answered = Vec::new();
        while let Ok(OutItem::Line(l)) = rx.try_recv() {
            answered.push(serde_json::from_slice(&l).unwrap());
        }
        answered
    }

    fn codes(answered: &[Value]) -> Vec<(Value, Value)> {
        answered.iter().map(|a| (a["id"].clone(), a["error"]["code"].clone())).collect()
    }

    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    #[tokio::test]
    async fn before_initialize_only_ping_and_initialize_are_served() {
        let answered = answers(&[
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"protocolVersion":"2026-07-28"}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
            INITIALIZE,
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"prompts/list"}"#,
        ]);
        assert_eq!(
            codes(&answered),
            [
                (json!(1), json!(code::INVALID_PARAMS)),
                (json!(2), json!(code::INVALID_REQUEST)),
                (json!(3), Value::Null),
                (json!(0), Value::Null),
                (json!(6), json!(code::INVALID_PARAMS)),
                (json!(7), json!(code::METHOD_NOT_FOUND)),
            ]
        );
        assert_eq!(answered[1]["error"]["message"], "Invalid Request: tools/list before initialize");
        assert_eq!(answered[3]["result"]["protocolVersion"], "2025-06-18");
        assert_eq!(answered[4]["error"]["message"], "Invalid params for tools/call: name must be a string");
    }

    fn stateless(id: u32, method: &str, meta: &Value) -> String {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": meta}}).to_string()
    }

    #[tokio::test]
    async fn a_2026_07_28_request_begins_a_stateless_session_in_which_every_request_names_its_revision() {
        let meta = json!({PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}});
        let lines = [
            // Before any request is served, a notification is ignored.
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}).to_string(),
            stateless(1, "server/discover", &meta),
            stateless(2, "tools/list", &json!({PROTOCOL_VERSION_KEY: "2099-01-01", CLIENT_CAPABILITIES_KEY: {}})),
            stateless(3, "resources/list", &meta),
            r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#.to_owned(),
            stateless(5, "tasks/get", &meta),
            INITIALIZE.to_owned(),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        let answered = answers(&lines);
        assert_eq!(
            codes(&answered),
            [
                (json!(1), Value::Null),
                (json!(2), json!(-32022)),
                (json!(3), Value::Null),
                (json!(4), json!(code::INVALID_PARAMS)),
                (json!(5), json!(MISSING_CLIENT_CAPABILITY)),
                (json!(0), Value::Null),
            ]
        );
        assert_eq!(answered[0]["result"]["supportedVersions"], json!(SUPPORTED_VERSIONS));
        assert_eq!(
            (answered[2]["result"]["resultType"].clone(), answered[2]["result"]["ttlMs"].clone()),
            (json!("complete"), json!(0))
        );
        assert!(answered[3]["error"]["message"].as_str().unwrap().contains(PROTOCOL_VERSION_KEY), "{}", answered[3]);
    }

    #[tokio::test]
    async fn an_id_in_flight_is_refused_and_a_cancelled_call_is_never_answered() {
        let (out, mut rx) = Out::new();
        let (mut dispatcher, _project) = dispatcher(&out);
        dispatcher.line(INITIALIZE.as_bytes());
        // A call that waits (no Editor): its id is in flight.
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-logs","arguments":{"TimeoutSeconds":30},"_meta":{"progressToken":"p"}}}"#;
        dispatcher.line(call.as_bytes());
        dispatcher.line(call.as_bytes());
        dispatcher.line(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping","arguments":[]}}"#);
        dispatcher.line(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#);
        for _ in 0..200 {
            if dispatcher.in_flight.take(&json!(1)).is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(dispatcher.in_flight.take(&json!(1)).is_none(), "the id was released, then taken again above");
        drop((out, dispatcher));
        let mut answered = Vec::new();
        while let Ok(item) = rx.try_recv() {
            match item {
                OutItem::Line(line) => answered.push(serde_json::from_slice::<Value>(&line).unwrap()),
                other => panic!("a cancelled call was answered: {other:?}"),
            }
        }
        let refusals: Vec<(Value, &str)> =
            answered[1..].iter().map(|a| (a["id"].clone(), a["error"]["message"].as_str().unwrap_or(""))).collect();
        assert_eq!(
            refusals,
            [
                (
                    json!(1),
                    "Invalid Request: a request with id 1 is still in flight; this tools/call was not run (use a new id for every request)"
                ),
                (json!(2), "Invalid params for tools/call: arguments must be an object"),
            ]
        );
    }

    #[tokio::test]
    async fn a_request_served_in_a_task_of_its_own_that_panics_is_answered_with_an_error() {
        let (out, mut rx) = Out::new();
        let (dispatcher, _project) = dispatcher(&out);
        let request = Request { id: json!(9), method: Method::ToolsList, params: None, versioned: None };
        let cancel = dispatcher.in_flight.take(&request.id).unwrap();
        let served = dispatcher.later(request, cancel, |_| async {
            if std::hint::black_box(true) {
                panic!("boom");
            }
            Ok(json!({}))
        });
        assert!(matches!(served, Served::Later));
        let line = loop {
            match rx.recv().await {
                Some(OutItem::Line(line)) => break serde_json::from_slice::<Value>(&line).unwrap(),
                _ => continue,
            }
        };
        assert_eq!(line["error"]["message"], "the bridge failed while handling tools/list: boom");
        assert!(dispatcher.in_flight.take(&json!(9)).is_some(), "its id is free again");
    }
}
