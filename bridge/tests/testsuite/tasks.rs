//! MCP's tasks extension (`io.modelcontextprotocol/tasks`) through the
//! bridge, in front of fake-unity: calls answered with a task for a
//! 2026-07-28 client that declares it, `tasks/get` polled to the result,
//! `tasks/cancel`, the errors the extension names, and no change at all for
//! a client that does not declare it.

use std::time::{Duration, Instant};

use fake_unity::{FakeUnity, Fault, RuleSpec};
use mcp_client::McpClient;
use serde_json::{Value, json};

use crate::{
    client::{self, Expect},
    e2e::WAIT,
    service::{fake, project},
};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A 2026-07-28 request's `_meta`, declaring the tasks extension or not.
fn meta(takes_tasks: bool) -> Value {
    let capabilities = match takes_tasks {
        true => json!({"extensions": {TASKS: {}}}),
        false => json!({}),
    };
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "1"},
    })
}

fn request(id: &str, method: &str, mut params: Value, takes_tasks: bool) -> String {
    params["_meta"] = meta(takes_tasks);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

async fn call(raw: &mut McpClient, id: &str, tool: &str, arguments: Value, takes_tasks: bool) -> Value {
    raw.line(&request(id, "tools/call", json!({"name": tool, "arguments": arguments}), takes_tasks)).await;
    raw.answer(&json!(id)).await
}

async fn task_request(raw: &mut McpClient, id: &str, method: &str, task: &str) -> Value {
    raw.line(&request(id, method, json!({"taskId": task}), true)).await;
    raw.answer(&json!(id)).await
}

/// A task handed out: its id, after checking the `CreateTaskResult`.
fn task_of(answer: &Value) -> String {
    let handle = &answer["result"];
    assert_eq!(handle["resultType"], "task", "{answer}");
    assert_eq!(handle["status"], "working", "{answer}");
    assert_eq!(handle["ttlMs"], Value::Null, "kept while it runs: {answer}");
    assert_eq!(handle["pollIntervalMs"], 1000);
    assert!(handle["createdAt"].is_string() && handle["lastUpdatedAt"].is_string(), "{answer}");
    assert!(handle.get("content").is_none(), "a handle is not a result: {answer}");
    handle["taskId"].as_str().unwrap().to_owned()
}

/// Polls `tasks/get` until the task has ended; its last answer's result.
async fn settled(raw: &mut McpClient, task: &str) -> Value {
    let started = Instant::now();
    for n in 0.. {
        let got = task_request(raw, &format!("get-{task}-{n}"), "tasks/get", task).await;
        let detailed = &got["result"];
        assert_eq!(detailed["resultType"], "complete", "{got}");
        assert_eq!(detailed["taskId"], task, "{got}");
        if detailed["status"] != "working" {
            return detailed.clone();
        }
        assert!(started.elapsed() < 3 * WAIT, "the task still works after {:?}: {got}", started.elapsed());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    unreachable!()
}

fn runs(fake: &FakeUnity, tool: &str) -> u64 {
    fake.editor().stats.runs(tool)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compile_and_run_tests_are_tasks_for_a_client_that_takes_them() {
    let project = project();
    let fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &[]);
    raw.line(&request("d", "server/discover", json!({}), true)).await;
    let discover = raw.answer(&json!("d")).await;
    assert_eq!(discover["result"]["capabilities"]["extensions"][TASKS], json!({}), "{discover}");

    let compile = call(&mut raw, "c", "compile", json!({}), true).await;
    let task = task_of(&compile);
    let done = settled(&mut raw, &task).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["structuredContent"]["Success"], true, "{done}");
    assert!(done["ttlMs"].as_u64().unwrap() >= 30 * 60 * 1000, "kept 30 min after it ends: {done}");
    assert_eq!(runs(&fake, "compile"), 1, "one call, one run");

    // Progress reaches the task as its status message.
    let tests = call(&mut raw, "t", "run-tests", json!({}), true).await;
    let task = task_of(&tests);
    let done = settled(&mut raw, &task).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["structuredContent"]["TestCount"], 9, "{done}");
    let message = done["statusMessage"].as_str().unwrap_or_default();
    assert!(message.contains("/9: FixtureProject.Tests."), "{done}");
    assert_eq!(runs(&fake, "run-tests"), 1);
    // A result is kept: asked for again, the same.
    let again = task_request(&mut raw, "again", "tasks/get", &task).await;
    assert_eq!(again["result"]["result"], done["result"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_declare_tasks_sees_no_change() {
    let project = project();
    let _fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &[]);
    let plain = call(&mut raw, "s", "compile", json!({}), false).await;
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    assert_eq!(plain["result"]["structuredContent"]["Success"], true, "{plain}");
    raw.line(&request("g", "tasks/get", json!({"taskId": "x"}), false)).await;
    let refused = raw.answer(&json!("g")).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS], json!({}));

    let mut old = client::in_memory(project.path(), &[]);
    old.handshake().await;
    old.line(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"compile","arguments":{}}}"#).await;
    let plain = old.answer(&json!(1)).await;
    assert_eq!(plain["result"]["structuredContent"]["Success"], true, "{plain}");
    assert!(plain["result"].get("resultType").is_none(), "{plain}");
    old.line(r#"{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"x"}}"#).await;
    assert_eq!(old.answer(&json!(2)).await["error"]["code"], -32601, "no tasks in the handshake revisions");
}

/// A fake whose clear-console takes a minute: a call that is a task for long.
async fn slow_clear_console() -> (tempfile::TempDir, FakeUnity, fake_unity::FaultGuard) {
    let project = project();
    let fake = fake(project.path()).await;
    let slow = fake
        .add_fault(
            RuleSpec::new(Fault::SlowTool(fake_unity::faults::SlowTool { ms: 60_000, progress: false }))
                .method("clear-console"),
        )
        .unwrap();
    (project, fake, slow)
}

/// Any call still running after 2 s becomes a task; `tasks/cancel` stops
/// it, and the task says what that means for the Editor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_becomes_a_task_that_tasks_cancel_stops() {
    let (project, fake, _slow) = slow_clear_console().await;
    let mut raw = client::in_memory(project.path(), &[]);
    let long = call(&mut raw, "l", "clear-console", json!({"TimeoutSeconds": 120}), true).await;
    let task = task_of(&long);
    let working = task_request(&mut raw, "w", "tasks/get", &task).await;
    assert_eq!(working["result"]["status"], "working", "{working}");
    assert_eq!(working["result"]["statusMessage"], "clear-console is running in the Unity Editor");
    let updated = task_request(&mut raw, "u", "tasks/update", &task).await;
    assert_eq!(updated["result"]["resultType"], "complete", "{updated}");
    let cancelled = task_request(&mut raw, "x", "tasks/cancel", &task).await;
    assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
    let done = settled(&mut raw, &task).await;
    assert_eq!(done["status"], "cancelled", "{done}");
    assert!(done["statusMessage"].as_str().unwrap().contains("may stay done"), "{done}");
    assert!(done.get("result").is_none() && done.get("error").is_none(), "{done}");
    assert_eq!(runs(&fake, "clear-console"), 1);
    // The bridge serves on.
    let logs = call(&mut raw, "after", "get-logs", json!({"MaxCount": 1}), false).await;
    assert_eq!(logs["result"]["structuredContent"]["DisplayedCount"], 1, "{logs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_requests_get_the_errors_the_extension_names() {
    let project = project();
    let _fake = fake(project.path()).await;
    let mut raw = client::in_memory(project.path(), &[]);
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let unknown = task_request(&mut raw, method, method, "no-such-task").await;
        assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
        assert!(unknown["error"]["message"].as_str().unwrap().contains("Task not found"), "{unknown}");
    }
    raw.line(&request("n", "tasks/get", json!({"taskId": 7}), true)).await;
    assert_eq!(raw.answer(&json!("n")).await["error"]["code"], -32602);
    for method in ["tasks/result", "tasks/list"] {
        raw.line(&request(method, method, json!({"taskId": "x"}), true)).await;
        assert_eq!(raw.answer(&json!(method)).await["error"]["code"], -32601, "{method} is not the extension's");
    }
}

/// A `subscriptions/listen` naming tasks is told when each ends
/// (`notifications/tasks`, the task as tasks/get gives it, tagged with the
/// subscription); one naming a task that has already ended is told at once;
/// a client that does not declare the extension may not listen to tasks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_is_told_when_its_tasks_end() {
    let (project, _fake, _slow) = slow_clear_console().await;
    let mut raw = client::in_memory(project.path(), &[]);
    let task = task_of(&call(&mut raw, "slow", "clear-console", json!({"TimeoutSeconds": 120}), true).await);
    let listen = json!({"notifications": {"taskIds": [task, "no-such-task"]}});
    raw.line(&request("sub", "subscriptions/listen", listen.clone(), true)).await;
    let subscription = "io.modelcontextprotocol/subscriptionId";
    let acknowledged = loop {
        let message = raw.next_json().await;
        if message["method"] == "notifications/subscriptions/acknowledged" {
            break message;
        }
    };
    assert_eq!(acknowledged["params"]["notifications"]["taskIds"], json!([task]), "{acknowledged}");
    assert_eq!(acknowledged["params"]["_meta"][subscription], "sub");
    task_request(&mut raw, "x", "tasks/cancel", &task).await;
    let told = loop {
        let message = raw.next_json().await;
        if message["method"] == "notifications/tasks" {
            break message;
        }
    };
    assert_eq!((&told["params"]["taskId"], &told["params"]["status"]), (&json!(task), &json!("cancelled")), "{told}");
    assert_eq!(told["params"]["_meta"][subscription], "sub");

    // A task already ended: told right after the acknowledgement.
    raw.line(&request("late", "subscriptions/listen", json!({"notifications": {"taskIds": [task]}}), true)).await;
    let told = loop {
        let message = raw.next_json().await;
        if message["method"] == "notifications/tasks" && message["params"]["_meta"][subscription] == "late" {
            break message;
        }
    };
    assert_eq!(told["params"]["status"], "cancelled");
    raw.line(&request("refused", "subscriptions/listen", listen, false)).await;
    assert_eq!(raw.answer(&json!("refused")).await["error"]["code"], -32021);
}
