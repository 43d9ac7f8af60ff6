//! A real Editor crash, as users meet it: the fake Editor is a process of its
//! own, killed with SIGKILL while a mutating call runs in it, and a new one
//! is started on the same project and port (new pid, new session in the
//! discovery file). The bridge, a process too, must answer the call once,
//! saying it may have run, and never give it to the new Editor.

#![cfg(unix)]

use std::{
    io::{BufRead, BufReader},
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use fake_unity::ControlClient;
use serde_json::{Value, json};
use unity_conformance::{bridge::McpProcess, did_it_run::claims, wire_log::WireLog};

use crate::embedded_bridge;

/// A fake Editor process; killed when dropped.
struct EditorProcess {
    child: Child,
    port: u16,
    control: ControlClient,
}

impl Drop for EditorProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_editor(project: &Path, port: u16, scenario: Option<&Path>) -> EditorProcess {
    let mut command = Command::new(env!("CARGO_BIN_EXE_unity-conformance"));
    command.args(["fake", "serve", "--project"]).arg(project).args(["--port", &port.to_string()]);
    if let Some(scenario) = scenario {
        command.arg("--scenario").arg(scenario);
    }
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let listening: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    assert_eq!(listening["event"], "listening", "{line}");
    EditorProcess {
        port: listening["port"].as_u64().unwrap() as u16,
        control: ControlClient::from_url(listening["control"].as_str().unwrap()).unwrap(),
        child,
    }
}

async fn runs(editor: &EditorProcess, tool: &str) -> u64 {
    editor.control.get("/stats").await.unwrap()["runs"][tool].as_u64().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutating_call_in_an_editor_killed_with_sigkill_is_never_run_by_the_next_one() {
    let project = unity_conformance::target::fixture_copy().unwrap();
    let scenario = project.path().join("slow-menu-items.toml");
    std::fs::write(
        &scenario,
        "description = \"menu items take a minute\"\n\n[[faults]]\nmatch = { method = \"execute-menu-item\" }\nfault = { kind = \"slowTool\", ms = 60000, progress = false }\n",
    )
    .unwrap();
    let first = start_editor(project.path(), 0, Some(&scenario));
    let first_pid = first.child.id();

    let log = WireLog::default();
    let mut mcp = McpProcess::spawn(&embedded_bridge(), Some(project.path()), first.port, None, log.clone()).unwrap();
    mcp.initialize().await.unwrap();
    let id = mcp
        .request(
            "tools/call",
            json!({"name": "execute-menu-item", "arguments": {"MenuItemPath": "Tools/Fixture/Log Hello", "TimeoutSeconds": 20}}),
        )
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while runs(&first, "execute-menu-item").await == 0 {
        assert!(Instant::now() < deadline, "the menu item never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // kill -9, and Unity opened again on the same project and port.
    let port = first.port;
    drop(first);
    let second = start_editor(project.path(), port, None);
    assert_ne!(second.child.id(), first_pid);

    let answer = mcp.response(&id).await.unwrap();
    let text: String =
        answer["result"]["content"].as_array().into_iter().flatten().filter_map(|c| c["text"].as_str()).collect();
    assert_eq!(answer["result"]["isError"], true, "{answer}\n{}", log.lines().join("\n"));
    assert_eq!(claims(&text), (true, false), "it reached the Editor that died, so it may have run: {text}");
    assert_eq!(runs(&second, "execute-menu-item").await, 0, "the new Editor never got it");

    // The bridge serves the new Editor.
    let logs = mcp.call("get-logs", json!({"MaxCount": 1})).await.unwrap();
    assert_eq!(logs["result"]["isError"], Value::Null, "{logs}");
    mcp.finish().await.unwrap();
}
