//! End to end: the bridge binary as a child process, driven by rmcp's MCP
//! client over stdio, in front of fake-unity over TCP. What the bridge offers
//! is tried in both eras of MCP ([`Era`]): a handshake client's and a
//! 2026-07-28 one's.

use std::{
    path::Path,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use fake_unity::{Config, FakeUnity, ReloadOptions};
use rmcp::{
    ClientHandler, Peer, RoleClient, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, ClientConfig, ProgressNotificationParam, ProgressToken,
        ProtocolVersion, RequestMetaObject, ServerNotification, SubscriptionFilter,
    },
    service::{ClientLifecycleMode, ClientServiceExt, NotificationContext, RunningService},
    transport::{ConfigureCommandExt, TokioChildProcess},
};
use rstest::rstest;
use serde_json::{Map, Value, json};

use crate::service::fake;

pub const WAIT: Duration = Duration::from_secs(20);

/// Records what the bridge sends besides answers.
#[derive(Clone, Default)]
pub struct Events {
    pub list_changed: Arc<AtomicUsize>,
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
}

impl ClientHandler for Events {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().unwrap().push(params);
    }

    fn get_info(&self) -> ClientConfig {
        serde_json::from_value(json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "rmcp-e2e", "version": "1.0"}
        }))
        .unwrap()
    }
}

pub type Client = RunningService<RoleClient, Events>;

/// The Editor behind the bridge, as fake-unity plays it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// This project's Unity package: the protocol with every extension.
    Package,
    /// uLoopMCP 2.1.1's Editor server: its catalogue and wire, no resume journal.
    Uloop211,
}

impl Model {
    pub fn config(self, project: &Path) -> Config {
        let mut config = Config::new(project);
        if self == Model::Uloop211 {
            config.editor = fake_unity::EditorKind::Uloop211;
        }
        config
    }

    /// Tools the agent sees with this Editor connected (the bridge's two among them).
    fn tools_listed(self) -> usize {
        match self {
            Model::Package => 16,
            Model::Uloop211 => 17,
        }
    }
}

/// How the client opens its session with the bridge.
#[derive(Clone, Copy, Debug)]
pub enum Era {
    /// The handshake revisions: `initialize`, then list changes as they come.
    Handshake,
    /// MCP 2026-07-28: `server/discover`, the version and capabilities in
    /// every request's `_meta`, and list changes on a `subscriptions/listen`
    /// (rmcp's client in its discover mode, which never falls back).
    Stateless,
}

/// Starts the bridge binary for `project` and connects a handshake-era MCP client.
pub async fn bridge(project: &Path, extra: &[&str]) -> (Client, Events) {
    bridge_in(Era::Handshake, project, extra).await
}

/// Starts the bridge binary for `project` and connects an MCP client of `era`.
pub async fn bridge_in(era: Era, project: &Path, extra: &[&str]) -> (Client, Events) {
    let events = Events::default();
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_unity-mcp-bridge")).configure(|c| {
        c.arg("--project").arg(project).args(extra);
        // BRIDGE_TEST_LOGS=DIR keeps every test bridge's debug log there.
        match std::env::var_os("BRIDGE_TEST_LOGS") {
            Some(dir) => {
                static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
                let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let file = Path::new(&dir).join(format!("bridge-{}-{n}.log", std::process::id()));
                c.args(["--log-level", "debug", "--log-file"]).arg(file);
            }
            None => {
                c.args(["--log-level", "warn"]);
            }
        }
        if !extra.contains(&"--tools-wait") {
            c.args(["--tools-wait", "5"]);
        }
    });
    let (transport, _) = TokioChildProcess::builder(command).stderr(std::process::Stdio::null()).spawn().unwrap();
    let client = match era {
        Era::Handshake => events.clone().serve(transport).await.unwrap(),
        Era::Stateless => {
            let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
            let client = events.clone().serve_with_lifecycle(transport, lifecycle).await.unwrap();
            assert_eq!(client.peer_info().unwrap().protocol_version, ProtocolVersion::V_2026_07_28);
            let mut tools_changed = SubscriptionFilter::new();
            tools_changed.tools_list_changed = Some(true);
            let mut subscription = client.listen(tools_changed.clone()).await.unwrap();
            assert_eq!(subscription.acknowledged(), &tools_changed, "the bridge acknowledges list changes");
            let list_changed = events.list_changed.clone();
            tokio::spawn(async move {
                while let Ok(Some(notification)) = subscription.next().await {
                    if matches!(notification, ServerNotification::ToolListChangedNotification(_)) {
                        list_changed.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
            client
        }
    };
    (client, events)
}

pub fn project() -> tempfile::TempDir {
    crate::service::project()
}

/// Calls a tool; the result as JSON.
pub async fn call(client: &Peer<RoleClient>, name: &str, arguments: Value) -> Value {
    call_within(client, name, arguments, WAIT).await
}

/// [`call`], waiting up to `wait`: for a call whose own deadline is longer
/// than [`WAIT`] (its answer is due by then, however loaded the machine).
pub async fn call_within(client: &Peer<RoleClient>, name: &str, arguments: Value, wait: Duration) -> Value {
    let Value::Object(arguments) = arguments else { panic!("arguments must be an object") };
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
    let response = tokio::time::timeout(wait, client.call_tool_once(params))
        .await
        .unwrap_or_else(|_| panic!("{name} not answered within {wait:?}"))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    match response {
        CallToolResponse::Complete(result) => serde_json::to_value(result).unwrap(),
        other => panic!("{name}: unexpected {other:?}"),
    }
}

pub fn text(result: &Value) -> String {
    result["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n")
}

pub async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out after {WAIT:?} waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[rstest]
#[tokio::test]
async fn tools_are_listed_with_valid_simple_schemas(#[values(Era::Handshake, Era::Stateless)] era: Era) {
    let project = project();
    let _fake = fake(project.path()).await;
    let (client, _) = bridge_in(era, project.path(), &[]).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "bridge-status",
            "wait-for-editor-ready",
            "clear-console",
            "compile",
            "control-play-mode",
            "execute-dynamic-code",
            "execute-menu-item",
            "find-game-objects",
            "focus-window",
            "get-hierarchy",
            "get-logs",
            "get-menu-items",
            "get-provider-details",
            "run-tests",
            "screenshot",
            "unity-search"
        ]
    );
    for tool in &tools {
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["type"], "object", "{}", tool.name);
        for (name, property) in schema["properties"].as_object().unwrap() {
            let ty = property["type"].as_str().unwrap_or_else(|| panic!("{}.{name} has no type", tool.name));
            assert!(["string", "number", "boolean", "array", "object"].contains(&ty));
            if let (Some(values), Some(default)) = (property.get("enum"), property.get("default")) {
                assert!(values.as_array().unwrap().contains(default), "{}.{name}", tool.name);
            }
            if ty == "array" {
                assert!(property["items"].is_object(), "{}.{name}", tool.name);
            }
        }
    }
    let get_logs = tools.iter().find(|t| t.name == "get-logs").unwrap();
    assert_eq!(get_logs.annotations.as_ref().unwrap().read_only_hint, Some(true));
    client.cancel().await.unwrap();

    // --dev also offers the internal tools; a small page size pages. (Without
    // the first bridge's cached list, which has no internal tools, the list
    // is the Editor's.)
    std::fs::remove_file(project.path().join("Library/UnityMcpBridge/tools.json")).unwrap();
    let (client, _) = bridge_in(era, project.path(), &["--dev", "--page-size", "4"]).await;
    let all = client.list_all_tools().await.unwrap();
    assert_eq!(all.len(), 21);
    assert!(all.iter().any(|t| t.name == "debug-sleep"));
    let first = client.list_tools(None).await.unwrap();
    assert_eq!((first.tools.len(), first.next_cursor.as_deref()), (4, Some("4")));
}

#[rstest]
#[tokio::test]
async fn every_tool_is_called_through_the_bridge(#[values(Era::Handshake, Era::Stateless)] era: Era) {
    let project = project();
    let _fake = fake(project.path()).await;
    let (client, _) = bridge_in(era, project.path(), &[]).await;
    let cases: Vec<(&str, Value, &str, Value)> = vec![
        ("get-logs", json!({"LogType": "Error"}), "TotalCount", json!(2)),
        ("find-game-objects", json!({"NamePattern": "Player"}), "totalFound", json!(1)),
        (
            "get-hierarchy",
            json!({"MaxDepth": 0}),
            "context",
            json!({"sceneType": "editor", "sceneName": "SampleScene", "nodeCount": 7, "maxDepth": 0}),
        ),
        ("unity-search", json!({"SearchQuery": "t:Material"}), "TotalCount", json!(1)),
        ("get-provider-details", json!({"ProviderId": "asset"}), "TotalCount", json!(1)),
        ("get-menu-items", json!({"FilterText": "Tools/"}), "FilteredCount", json!(3)),
        ("execute-menu-item", json!({"MenuItemPath": "Tools/Fixture/Log Hello"}), "Success", json!(true)),
        ("execute-dynamic-code", json!({"Code": "return 40 + 2;"}), "Result", json!("42")),
        ("focus-window", json!({}), "Success", json!(true)),
        ("control-play-mode", json!({"Action": "Play"}), "IsPlaying", json!(true)),
        ("control-play-mode", json!({"Action": "Stop"}), "IsPlaying", json!(false)),
        ("compile", json!({}), "ErrorCount", json!(0)),
        ("run-tests", json!({"TestMode": "PlayMode"}), "PassedCount", json!(2)),
        ("clear-console", json!({}), "Success", json!(true)),
        ("bridge-status", json!({}), "connected", json!(true)),
        ("wait-for-editor-ready", json!({"timeout_seconds": 5}), "ready", json!(true)),
    ];
    // Each answer fits the outputSchema its tool declares (the package's,
    // generated from its response types), checked with a JSON Schema validator.
    let tools = client.list_all_tools().await.unwrap();
    let fits = |tool: &str, structured: &Value| {
        let Some(schema) = tools.iter().find(|t| t.name == tool).and_then(|t| t.output_schema.clone()) else {
            return;
        };
        let validator = jsonschema::validator_for(&Value::Object((*schema).clone())).unwrap();
        let errors: Vec<String> =
            validator.iter_errors(structured).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{tool}: {errors:?} in {structured}");
    };
    let declared = tools.iter().filter(|t| t.output_schema.is_some()).count();
    assert!(declared >= 14, "the package's tools declare outputSchemas: {declared}");
    for (tool, arguments, field, expected) in cases {
        let result = call(&client, tool, arguments.clone()).await;
        assert_eq!(result["structuredContent"][field], expected, "{tool} {arguments}: {result}");
        fits(tool, &result["structuredContent"]);
        assert!(result.get("isError").is_none_or(|e| e == false), "{tool}: {result}");
        let text: Value = serde_json::from_str(&text(&result)).unwrap_or(Value::Null);
        assert_eq!(text, result["structuredContent"], "{tool}: the text block holds the same JSON");
    }
    let shot = call(&client, "screenshot", json!({"ResolutionScale": 0.25, "IncludeImageData": true})).await;
    let image = &shot["content"][1];
    assert_eq!((image["type"].clone(), image["mimeType"].clone()), (json!("image"), json!("image/png")));
    assert!(image["data"].as_str().unwrap().starts_with("iVBORw0KGgo"));
    assert!(
        shot["structuredContent"]["Screenshots"][0]["ImageDataBase64"]
            .as_str()
            .unwrap()
            .starts_with("(sent as image content")
    );
    // run-tests with a failing test: the result is an error the model sees.
    let failing = call(&client, "run-tests", json!({})).await;
    assert_eq!(failing["isError"], true);
    assert_eq!(failing["structuredContent"]["FailedCount"], 1);
    fits("run-tests", &failing["structuredContent"]);
    fits("screenshot", &shot["structuredContent"]);
}

#[rstest]
#[tokio::test]
async fn errors_are_results_a_model_can_act_on(#[values(Era::Handshake, Era::Stateless)] era: Era) {
    let project = project();
    let fake = fake(project.path()).await;
    let (client, _) = bridge_in(era, project.path(), &[]).await;
    let unknown = client.call_tool(CallToolRequestParams::new("make-coffee")).await.unwrap_err();
    let unknown = format!("{unknown:?}");
    assert!(unknown.contains("-32602") && unknown.contains("Unknown tool: make-coffee"), "{unknown}");

    let invalid = call(&client, "get-logs", json!({"MaxCount": "ten"})).await;
    assert_eq!(invalid["isError"], true);
    assert!(text(&invalid).contains("Parameter 'MaxCount' must be a number"), "{invalid}");

    fake.control()
        .post("/settings", json!({"enableTestsExecution": false, "disabledTools": ["focus-window"]}))
        .await
        .unwrap();
    let blocked = call(&client, "run-tests", json!({})).await;
    assert_eq!(blocked["isError"], true);
    assert!(text(&blocked).contains("Enable Tests Execution") && text(&blocked).contains("person"), "{blocked}");
    // A disabled tool leaves the list (the Editor announces it).
    let deadline = Instant::now() + WAIT;
    while client.list_all_tools().await.unwrap().iter().any(|t| t.name == "focus-window") {
        assert!(Instant::now() < deadline, "focus-window still listed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let gone = client.call_tool(CallToolRequestParams::new("focus-window")).await.unwrap_err();
    assert!(format!("{gone:?}").contains("Unknown tool: focus-window"), "{gone:?}");

    let wait = call(&client, "wait-for-editor-ready", json!({"timeout_seconds": 500})).await;
    assert!(text(&wait).contains("from 5 to 120"), "{wait}");
}

#[rstest]
#[tokio::test]
async fn a_compile_that_reloads_returns_its_real_result(
    #[values(Era::Handshake, Era::Stateless)] era: Era,
    #[values(Model::Package, Model::Uloop211)] model: Model,
) {
    let project = project();
    let fake = FakeUnity::start(model.config(project.path())).await.unwrap();
    let (client, _) = bridge_in(era, project.path(), &[]).await;
    call(&client, "get-logs", json!({"MaxCount": 1})).await;
    let script = project.path().join("Assets/Scripts/ScoreKeeper.cs");
    std::fs::write(&script, std::fs::read_to_string(&script).unwrap().replace("A known bug", "A known, kept bug"))
        .unwrap();
    let result = call(&client, "compile", json!({})).await;
    let stats = fake.control().get("/stats").await.unwrap();
    match model {
        // The answer lost to the reload comes from the package's resume journal.
        Model::Package => {
            assert_eq!(result["structuredContent"]["Success"], true, "{result}");
            assert_eq!((stats["reloads"].clone(), stats["resumed"].clone()), (json!(1), json!(1)));
        }
        // 2.1.1 has no journal: its answer races the reload that follows a
        // successful compile (the model loses the race), so the bridge asks
        // for WaitForDomainReload and, as uLoopMCP's own server does,
        // answers once the Editor is back, with the result file written
        // before the reload. It never compiles again.
        Model::Uloop211 => {
            assert_eq!(result["structuredContent"]["Success"], true, "{result}");
            assert_eq!(
                fake.editor().phase(),
                editor_link::discovery::EditorState::Ready,
                "answered before the reload was over"
            );
            assert_eq!(stats["reloads"], 1, "{stats}");
            let root = result["structuredContent"]["ProjectRoot"].as_str().unwrap_or_default().to_owned();
            assert!(editor_link::discovery::same_folder(std::path::Path::new(&root), project.path()), "{result}");
            assert_eq!(stats["calls"]["compile"], 1, "{stats}");
            // The bridge comes back once the Editor has reloaded.
            let logs = call(&client, "get-logs", json!({"MaxCount": 1})).await;
            assert_eq!(logs["structuredContent"]["Ver"], "2.1.1", "{logs}");
            let stats = fake.control().get("/stats").await.unwrap();
            assert_eq!((stats["reloads"].clone(), stats["calls"]["compile"].clone()), (json!(1), json!(1)));
        }
    }
    let status = call(&client, "bridge-status", json!({})).await;
    assert_eq!(status["structuredContent"]["reloads"], 1);
}

#[rstest]
#[tokio::test]
async fn a_mutating_call_cut_off_by_a_reload_is_never_a_fake_success(
    #[values(Era::Handshake, Era::Stateless)] era: Era,
    #[values(Model::Package, Model::Uloop211)] model: Model,
) {
    // uLoopMCP 2.1.1 has no resume journal.
    let journals: &[bool] = if model == Model::Package { &[true, false] } else { &[false] };
    for &resume in journals {
        let project = project();
        let mut config = model.config(project.path());
        config.seed = Some(6);
        config.resume = resume;
        config.state.compile.duration_ms = 3000;
        config.state.editor.reload_downtime_ms = 100;
        let fake = FakeUnity::start(config).await.unwrap();
        let (client, _) = bridge_in(era, project.path(), &[]).await;
        call(&client, "get-logs", json!({"MaxCount": 1})).await;
        let compile = tokio::spawn({
            let client = client.clone();
            async move { call(&client, "compile", json!({})).await }
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        fake.reload(ReloadOptions::default()).await.unwrap();
        let result = compile.await.unwrap();
        assert_eq!(result["isError"], true, "resume={resume}: {result}");
        let said = text(&result);
        if resume {
            assert!(said.contains("Unity says it did not complete"), "{said}");
        } else {
            assert!(said.contains("may or may not have run"), "{said}");
        }
        let stats = fake.control().get("/stats").await.unwrap();
        assert_eq!(stats["calls"]["compile"], if resume { 2 } else { 1 }, "never run twice");
        client.cancel().await.unwrap();
    }
}

#[rstest]
#[tokio::test]
async fn a_read_only_call_cut_off_by_a_reload_is_sent_again(#[values(Era::Handshake, Era::Stateless)] era: Era) {
    let project = project();
    let mut config = Config::new(project.path());
    config.seed = Some(7);
    config.resume = false;
    config.state.editor.reload_downtime_ms = 100;
    let fake = FakeUnity::start(config).await.unwrap();
    let (client, _) = bridge_in(era, project.path(), &["--dev"]).await;
    let sleep = tokio::spawn({
        let client = client.clone();
        async move { call(&client, "debug-sleep", json!({"SleepSeconds": 1, "TimeoutSeconds": 20})).await }
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    fake.reload(ReloadOptions { move_port: true, ..ReloadOptions::default() }).await.unwrap();
    let result = sleep.await.unwrap();
    assert_eq!(result["structuredContent"]["WasCancelled"], false, "{result}");
    let stats = fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["calls"]["debug-sleep"], 2);
}

#[rstest]
#[tokio::test]
async fn an_editor_absent_at_start_is_waited_for_and_announced(
    #[values(Era::Handshake, Era::Stateless)] era: Era,
    #[values(Model::Package, Model::Uloop211)] model: Model,
) {
    let project = project();
    let (client, events) = bridge_in(era, project.path(), &["--tools-wait", "0.3"]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 2, "only the bridge's own tools while Unity is absent");
    let status = call(&client, "bridge-status", json!({})).await;
    assert_eq!(status["structuredContent"]["connected"], false);
    let tried = status["structuredContent"]["tried"].to_string();
    assert!(tried.contains("MCPInstance.json: not there"), "{tried}");
    // Said at once, whatever the call's deadline: nothing has the project open.
    let absent = call(&client, "get-logs", json!({"TimeoutSeconds": 60})).await;
    assert!(
        text(&absent).contains("Unity is not running with the project") && text(&absent).contains("did not run"),
        "{absent}"
    );

    let _fake = FakeUnity::start(model.config(project.path())).await.unwrap();
    let ready = call(&client, "wait-for-editor-ready", json!({"timeout_seconds": 10})).await;
    assert_eq!(ready["structuredContent"]["ready"], true);
    eventually("tools/list_changed", || events.list_changed.load(Ordering::SeqCst) >= 1).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), model.tools_listed());
    let logs = call(&client, "get-logs", json!({})).await;
    // The fixture's 7 lines and what its package logged as the scripts loaded.
    assert_eq!(logs["structuredContent"]["TotalCount"], 8);
}

#[rstest]
#[tokio::test]
async fn an_editor_that_quits_leaves_the_bridge_serving(#[values(Model::Package, Model::Uloop211)] model: Model) {
    let project = project();
    let fake = FakeUnity::start(model.config(project.path())).await.unwrap();
    let (client, _) = bridge(project.path(), &[]).await;
    call(&client, "get-logs", json!({})).await;
    fake.quit().await;
    let gone = call(&client, "get-logs", json!({"TimeoutSeconds": 60})).await;
    assert_eq!(gone["isError"], true);
    assert!(
        text(&gone).contains("Unity is not running with the project") && text(&gone).contains("did not run"),
        "{gone}"
    );
    let status = call(&client, "bridge-status", json!({})).await;
    assert_eq!(status["structuredContent"]["state"], "absent");
    assert!(status["structuredContent"]["tried"].to_string().contains("quit"), "{status}");
    // Unity comes back: so does the bridge.
    let _again = FakeUnity::start(model.config(project.path())).await.unwrap();
    let ready = call(&client, "wait-for-editor-ready", json!({"timeout_seconds": 10})).await;
    assert_eq!(ready["structuredContent"]["ready"], true);
}

#[rstest]
#[tokio::test]
async fn a_20_mib_response_is_relayed_within_the_output_budget(#[values(Era::Handshake, Era::Stateless)] era: Era) {
    let project = project();
    let mut config = Config::new(project.path());
    config.seed = Some(8);
    // 2,100 console lines of 10 KiB: get-logs answers with over 20 MiB.
    config.state.console = (0..2100)
        .map(|n| fake_unity::editor::state::LogEntry {
            log_type: fake_unity::editor::state::LogType::Log,
            message: format!("{n:05} {}", "x".repeat(10 * 1024)),
            stack_trace: String::new(),
        })
        .collect();
    config.state.load_logs.clear();
    let _fake = FakeUnity::start(config).await.unwrap();
    let (client, _) = bridge_in(era, project.path(), &[]).await;
    // 20 MiB built, framed, read and written to a file: on a loaded machine
    // that can take longer than WAIT; the bridge owes its answer by the
    // call's own deadline (60 s and its grace).
    let result =
        call_within(&client, "get-logs", json!({"MaxCount": 100000, "TimeoutSeconds": 60}), Duration::from_secs(90))
            .await;
    let structured = &result["structuredContent"];
    assert_eq!(structured["DisplayedCount"], 2100);
    let file = structured["resultSavedToFile"].as_str().unwrap();
    assert!(std::fs::metadata(file).unwrap().len() > 20 * 1024 * 1024);
    assert!(text(&result).len() < 80_000, "the summary fits the output budget");
    // The summary still fits get-logs' outputSchema (which requires only
    // what a summary keeps).
    let tools = client.list_all_tools().await.unwrap();
    let schema = tools.iter().find(|t| t.name == "get-logs").and_then(|t| t.output_schema.clone()).unwrap();
    let validator = jsonschema::validator_for(&Value::Object((*schema).clone())).unwrap();
    let errors: Vec<String> = validator.iter_errors(structured).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?} in {structured}");
    let after = call(&client, "get-logs", json!({"MaxCount": 1})).await;
    assert_eq!(after["structuredContent"]["DisplayedCount"], 1);
}

#[rstest]
#[tokio::test]
async fn progress_is_forwarded_and_increases(#[values(Era::Handshake, Era::Stateless)] era: Era) {
    let project = project();
    let _fake = fake(project.path()).await;
    let (client, events) = bridge_in(era, project.path(), &[]).await;
    let mut params = CallToolRequestParams::new("run-tests").with_arguments(Map::new());
    params.meta =
        Some(RequestMetaObject::with_progress_token(ProgressToken(rmcp::model::NumberOrString::String("p-1".into()))));
    let result = client.call_tool(params).await.unwrap();
    assert_eq!(serde_json::to_value(&result).unwrap()["structuredContent"]["TestCount"], 9);
    eventually("progress notifications", || events.progress.lock().unwrap().len() >= 9).await;
    let progress = events.progress.lock().unwrap();
    assert!(progress.windows(2).all(|w| w[1].progress > w[0].progress));
    assert_eq!(
        progress[0].message.as_deref(),
        Some("1/9: FixtureProject.Tests.HealthTests.Constructor_RejectsNonPositiveMax")
    );
}

#[tokio::test]
async fn a_fresh_bridge_answers_tools_list_from_its_cache_at_once() {
    let project = project();
    let fake = fake(project.path()).await;
    let (client, _) = bridge(project.path(), &[]).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 16);
    // The Editor saw the MCP client's name.
    let state = fake.control().get("/state").await.unwrap();
    assert!(state["connections"].as_array().unwrap().iter().any(|c| c["name"] == "rmcp-e2e"), "{state}");
    client.cancel().await.unwrap();
    fake.quit().await;
    // Unity gone, no waiting allowed: the cached list is the answer.
    let (client, _) = bridge(project.path(), &["--tools-wait", "0"]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 16);
    assert!(tools.iter().any(|t| t.name == "run-tests"));
}

#[tokio::test]
async fn the_editor_link_traffic_can_be_recorded() {
    let project = project();
    let _fake = fake(project.path()).await;
    let transcript = project.path().join("session.jsonl");
    let (client, _) = bridge(project.path(), &["--record", transcript.to_str().unwrap()]).await;
    call(&client, "get-logs", json!({"MaxCount": 1})).await;
    client.cancel().await.unwrap();
    let lines: Vec<Value> =
        std::fs::read_to_string(&transcript).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["format"], "unity-editor-link-transcript");
    assert_eq!(lines[0]["formatVersion"], 1);
    assert_eq!(lines[0]["producer"], "unity-mcp-bridge");
    assert!(lines.iter().any(|r| r["event"] == "connect"));
    let sent =
        lines.iter().find(|r| r["dir"] == "to-editor" && r["message"]["method"] == "get-logs").expect("the request");
    let id = &sent["message"]["id"];
    assert!(lines.iter().any(|r| r["dir"] == "from-editor"
        && r["message"]["id"] == *id
        && r["message"]["result"]["DisplayedCount"] == 1));
    let seqs: Vec<u64> = lines[1..].iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "records are numbered in order");
    assert!(lines[1..].iter().all(|r| r["ms"].is_u64() && r["conn"].is_u64()));
}

/// An Editor that answers every request but `get-logs`, which it swallows.
async fn editor_ignoring_get_logs() -> u16 {
    use tokio::io::{AsyncWriteExt, BufReader};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else { return };
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut reader = BufReader::new(read);
                while let Some(body) = crate::link::read_frame(&mut reader).await {
                    let request: Value = serde_json::from_slice(&body).unwrap();
                    let result = match request["method"].as_str() {
                        Some("get-logs") => continue,
                        Some("get-tool-details") => {
                            json!({"Tools": [{"name": "get-logs", "description": "Logs", "parameterSchema": {"Properties": {}, "Required": []}, "displayDevelopmentOnly": false}]})
                        }
                        _ => json!({"Message": "ok", "ProtocolVersion": 1, "Capabilities": []}),
                    };
                    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": result}).to_string();
                    if write
                        .write_all(format!("Content-Length: {}\r\n\r\n{answer}", answer.len()).as_bytes())
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    port
}

#[rstest]
#[tokio::test]
async fn a_call_unity_never_answers_ends_at_its_deadline_and_the_bridge_stays_healthy(
    #[values(Era::Handshake, Era::Stateless)] era: Era,
) {
    let project = project();
    let port = editor_ignoring_get_logs().await.to_string();
    let (client, _) = bridge_in(era, project.path(), &["--port", &port]).await;
    let started = Instant::now();
    let result = call(&client, "get-logs", json!({"TimeoutSeconds": 1})).await;
    assert_eq!(result["isError"], true);
    assert!(text(&result).contains("No answer from Unity within"), "{result}");
    assert!(started.elapsed() < WAIT, "the deadline (1 s + the bridge's grace) ended the wait");
    let status = call(&client, "bridge-status", json!({})).await;
    assert_eq!(
        (status["structuredContent"]["connected"].clone(), status["structuredContent"]["callsInFlight"].clone()),
        (json!(true), json!(0))
    );
}
