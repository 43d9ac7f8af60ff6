//! The bridge's promises when the Editor crashes, hangs or never accepts:
//! every request gets exactly one answer, on time, saying truthfully whether
//! the Editor may have run it; a mutating call never runs twice. The bridge
//! is a real process on stdio, the Editor fake-unity over real TCP, and what
//! the Editor did is read from its run counter.
//!
//! The deadlines are checked against bounds far above the margin they
//! promise (TimeoutSeconds + 1.5 s): only a bridge that waits for something
//! else (its tool list, a grace of seconds, the Editor) misses them.

use std::time::{Duration, Instant};

use fake_unity::{CrashOptions, FakeUnity, Fault, RuleSpec, Trigger, faults::ReloadPoint};
use serde_json::{Value, json};

use mcp_client::McpClient;

use crate::{
    client::{self, Expect},
    e2e::{self, WAIT},
    service::{fake, project},
};

/// Far above the promised margin of 1.5 s, far below what a bridge that
/// waits for anything else takes.
const LATE: Duration = Duration::from_secs(4);

fn runs(fake: &FakeUnity, tool: &str) -> u64 {
    fake.editor().stats.runs(tool)
}

fn text(answer: &Value) -> String {
    answer["result"]["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect()
}

/// The answer is a tool error saying the call may have run, never that it
/// did not.
fn says_it_may_have_run(answer: &Value) {
    let text = text(answer);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(text.contains("may have run") || text.contains("may or may not have"), "{text}");
    assert!(!text.contains("could not run") && !text.contains("did not run"), "{text}");
}

/// The answer is a tool error saying the call did not run.
fn says_it_did_not_run(answer: &Value) {
    let text = text(answer);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(text.contains("did not run"), "{text}");
    assert!(!text.contains("may have run") && !text.contains("may or may not"), "{text}");
}

async fn tools_call(raw: &mut McpClient, id: &Value, tool: &str, arguments: &Value) {
    raw.line(
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
            .to_string(),
    )
    .await;
}

/// Calls and times the answer.
async fn timed_call(raw: &mut McpClient, id: &str, tool: &str, arguments: &Value) -> (Value, Duration) {
    let started = Instant::now();
    tools_call(raw, &json!(id), tool, arguments).await;
    let answer = raw.answer(&json!(id)).await;
    (answer, started.elapsed())
}

async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out after {WAIT:?} waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutating_call_cut_off_by_a_crash_is_never_sent_to_the_new_editor() {
    let project = project();
    let fake = fake(project.path()).await;
    let _crash = fake
        .add_fault(
            RuleSpec::new(Fault::Crash(fake_unity::faults::Crash {
                restart_after_ms: Some(200),
                move_port: false,
                at: ReloadPoint::AfterRun,
            }))
            .method("execute-menu-item")
            .times(1),
        )
        .unwrap();
    let mut raw = client::in_memory(project.path(), &[]);
    raw.handshake().await;
    let (answer, _) =
        timed_call(&mut raw, "menu", "execute-menu-item", &json!({"MenuItemPath": "Tools/Fixture/Log Hello"})).await;
    says_it_may_have_run(&answer);
    assert!(text(&answer).contains("restarted"), "names what happened: {}", text(&answer));
    assert_eq!(fake.editor().stats.restarts.load(std::sync::atomic::Ordering::Relaxed), 1);
    assert_eq!(runs(&fake, "execute-menu-item"), 1, "run once, by the Editor that crashed; never again");
    // The bridge serves the new Editor.
    let (answer, _) = timed_call(&mut raw, "logs", "get-logs", &json!({})).await;
    assert_eq!(answer["result"]["isError"], Value::Null, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_call_cut_off_by_a_crash_is_sent_again_and_answered() {
    let project = project();
    let fake = fake(project.path()).await;
    let _crash = fake
        .add_fault(
            RuleSpec::new(Fault::Crash(fake_unity::faults::Crash {
                restart_after_ms: Some(200),
                move_port: true,
                at: ReloadPoint::BeforeRun,
            }))
            .method("get-hierarchy")
            .times(1),
        )
        .unwrap();
    let mut raw = client::in_memory(project.path(), &[]);
    raw.handshake().await;
    let (answer, _) = timed_call(&mut raw, "tree", "get-hierarchy", &json!({})).await;
    assert_eq!(answer["result"]["isError"], Value::Null, "{answer}");
    assert_eq!(runs(&fake, "get-hierarchy"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_to_a_hung_editor_is_answered_at_its_deadline_saying_it_may_have_run() {
    let project = project();
    let fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &[]);
    raw.handshake().await;
    let (answer, _) = timed_call(&mut raw, "warm", "get-logs", &json!({})).await;
    assert_eq!(answer["result"]["isError"], Value::Null, "{answer}");
    fake.hang(None);
    let (answer, took) = timed_call(&mut raw, "clear", "clear-console", &json!({"TimeoutSeconds": 2})).await;
    says_it_may_have_run(&answer);
    assert!(took < Duration::from_secs(2) + LATE, "answered after {took:?}");
    assert_eq!(runs(&fake, "clear-console"), 0);
    fake.end_hang();
    // Once awake the Editor runs what it had read: once.
    eventually("the call to run after the hang", || runs(&fake, "clear-console") == 1).await;
    let (answer, _) = timed_call(&mut raw, "after", "get-logs", &json!({})).await;
    assert_eq!(answer["result"]["isError"], Value::Null, "{answer}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(runs(&fake, "clear-console"), 1, "never run a second time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_no_editor_accepts_is_answered_at_its_deadline_saying_it_did_not_run() {
    let project = project();
    let mut config = fake_unity::Config::new(project.path());
    config.scenario.faults = vec![
        RuleSpec::new(Fault::DeadListener(fake_unity::faults::DeadListener { ms: None }))
            .named("dead")
            .on(Trigger::Start),
    ];
    let fake = FakeUnity::start(config).await.unwrap();
    // A long wait for the tool list: a call must not spend its deadline on it.
    let mut raw = client::in_memory(project.path(), &["--tools-wait", "30"]);
    raw.handshake().await;
    let (answer, took) = timed_call(&mut raw, "clear", "clear-console", &json!({"TimeoutSeconds": 2})).await;
    says_it_did_not_run(&answer);
    assert!(took < Duration::from_secs(2) + LATE, "answered after {took:?}");
    let (answer, took) = timed_call(&mut raw, "wait", "wait-for-editor-ready", &json!({"timeout_seconds": 5})).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(took < Duration::from_secs(5) + LATE, "answered after {took:?}");
    assert_eq!(runs(&fake, "clear-console"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_editor_ready_keeps_its_deadline_against_a_hung_editor() {
    let project = project();
    let fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &[]);
    raw.handshake().await;
    let (answer, _) = timed_call(&mut raw, "warm", "get-logs", &json!({})).await;
    assert_eq!(answer["result"]["isError"], Value::Null, "{answer}");
    fake.hang(None);
    let (answer, took) = timed_call(&mut raw, "wait", "wait-for-editor-ready", &json!({"timeout_seconds": 5})).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(took < Duration::from_secs(5) + LATE, "answered after {took:?}");
    // Unity's own spelling of the parameter means the same.
    let (answer, took) = timed_call(&mut raw, "wait2", "wait-for-editor-ready", &json!({"TimeoutSeconds": 5})).await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(took < Duration::from_secs(5) + LATE, "answered after {took:?}");
    fake.end_hang();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_request_with_the_id_of_one_in_flight_is_refused_and_runs_nothing() {
    let project = project();
    let fake = fake(project.path()).await;
    let _slow = fake
        .add_fault(
            RuleSpec::new(Fault::SlowTool(fake_unity::faults::SlowTool { ms: 800, progress: false }))
                .method("clear-console"),
        )
        .unwrap();
    let mut raw = client::in_memory(project.path(), &[]);
    raw.handshake().await;
    tools_call(&mut raw, &json!(7), "clear-console", &json!({})).await;
    tools_call(&mut raw, &json!(7), "clear-console", &json!({})).await;
    let first = raw.answer(&json!(7)).await;
    let second = raw.answer(&json!(7)).await;
    let (refused, answered) = if first.get("error").is_some() { (first, second) } else { (second, first) };
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("in flight"), "{refused}");
    assert_eq!(answered["result"]["isError"], Value::Null, "{answered}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(runs(&fake, "clear-console"), 1);
    // Once answered, the id can be used again.
    tools_call(&mut raw, &json!(7), "get-logs", &json!({})).await;
    assert_eq!(raw.answer(&json!(7)).await["result"]["isError"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_timeout_seconds_gets_a_clear_answer_and_the_bridge_keeps_serving() {
    let project = project();
    let fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &[]);
    raw.handshake().await;
    for (n, value) in [json!(1e19), json!(1e300), json!(-5), json!(0), json!("ten")].into_iter().enumerate() {
        let id = format!("t{n}");
        let (answer, _) = timed_call(&mut raw, &id, "clear-console", &json!({"TimeoutSeconds": value})).await;
        assert_eq!(answer["result"]["isError"], true, "{value}: {answer}");
        assert!(text(&answer).contains("TimeoutSeconds"), "{value}: {answer}");
    }
    assert_eq!(runs(&fake, "clear-console"), 0, "refused before it was sent");
    let (answer, _) = timed_call(&mut raw, "ok", "clear-console", &json!({"TimeoutSeconds": 86400})).await;
    assert_eq!(answer["result"]["isError"], Value::Null, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn methods_the_bridge_does_not_serve_are_not_found() {
    let project = project();
    let _fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &[]);
    raw.line(r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-test","version":"1"}}}"#).await;
    let capabilities = raw.answer(&json!("init")).await["result"]["capabilities"].clone();
    raw.line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    for (n, (method, capability)) in [
        ("tools/foo", None),
        ("resources/list", Some("resources")),
        ("prompts/list", Some("prompts")),
        ("completion/complete", Some("completions")),
        ("logging/setLevel", Some("logging")),
    ]
    .into_iter()
    .enumerate()
    {
        let params = if method == "logging/setLevel" { json!({"level": "info"}) } else { json!({}) };
        raw.line(&json!({"jsonrpc": "2.0", "id": n, "method": method, "params": params}).to_string()).await;
        let answer = raw.answer(&json!(n)).await;
        match capability.and_then(|c| capabilities.get(c)) {
            Some(_) => assert!(answer.get("result").is_some(), "{method} is declared, so served: {answer}"),
            None => assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}"),
        }
    }
}

/// A crash with no Editor coming back: the call reached an Editor, so it
/// may have run; the answer comes at the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cut_off_by_a_crash_with_no_editor_back_may_have_run() {
    let project = project();
    let fake = fake(project.path()).await;
    let _slow = fake
        .add_fault(
            RuleSpec::new(Fault::SlowTool(fake_unity::faults::SlowTool { ms: 5_000, progress: false }))
                .method("clear-console"),
        )
        .unwrap();
    let mut raw = client::in_memory(project.path(), &[]);
    raw.handshake().await;
    let started = Instant::now();
    tools_call(&mut raw, &json!("c"), "clear-console", &json!({"TimeoutSeconds": 3})).await;
    eventually("the call to start", || runs(&fake, "clear-console") == 1).await;
    fake.crash(CrashOptions::default()).await;
    let answer = raw.answer(&json!("c")).await;
    says_it_may_have_run(&answer);
    assert!(started.elapsed() < Duration::from_secs(3) + LATE, "answered after {:?}", started.elapsed());
}

/// An Editor that hangs while it is being told the client's name holds no
/// call past the call's own deadline (the naming waits at most 5 s, and
/// never longer than the call may). A 2026-07-28 client names itself on
/// every request: a new name makes the bridge tell the Editor again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn naming_the_client_never_holds_a_call_past_its_deadline() {
    let project = project();
    let fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &[]);
    let stateless = |id: &str, name: &str, tool: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"}}}})
        .to_string()
    };
    raw.line(&stateless("first", "agent-one", "get-logs", json!({}))).await;
    assert!(raw.answer(&json!("first")).await.get("result").is_some());
    let _hang = fake
        .add_fault(
            RuleSpec::new(Fault::SlowTool(fake_unity::faults::SlowTool { ms: 30_000, progress: false }))
                .method("set-client-name"),
        )
        .unwrap();
    let started = Instant::now();
    raw.line(&stateless("second", "agent-two", "clear-console", json!({"TimeoutSeconds": 1}))).await;
    let answer = raw.answer(&json!("second")).await;
    let took = started.elapsed();
    assert!(answer.get("result").is_some(), "{answer}");
    assert!(took < Duration::from_secs(1) + LATE, "answered after {took:?} (the naming waited its own 5 s)");
}

/// The time an answer says the bridge waited counts from the client's call:
/// a call that first waited for the Editor's tool list said "within 1 s"
/// of a 3 s wait (issue 34).
#[tokio::test]
async fn an_unreachable_editor_is_said_to_have_been_waited_for_as_long_as_the_call_waited() {
    let project = e2e::project();
    // Unity has the project open (starting: its package not listening yet),
    // so the call waits for it, to its deadline.
    let starting = editor_link::unity_instance::UnityInstance {
        process_id: std::process::id(),
        version: None,
        app_path: None,
        app_contents_path: None,
    };
    starting.write(project.path()).unwrap();
    let (client, _) = e2e::bridge_in(e2e::Era::Handshake, project.path(), &[]).await;
    let absent = e2e::call(&client, "get-logs", json!({"TimeoutSeconds": 2})).await;
    let said = e2e::text(&absent);
    let seconds: f64 = said
        .split("answered within ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no duration in {said}"));
    assert!(seconds >= 2.0, "the call waited at least its 2 s, the answer says {seconds} s: {said}");
}
