//! The bridge's subcommands as a user runs them: tools, call, status, setup.

use assert_cmd::Command as Cmd;
use serde_json::Value;

use crate::service::{fake, project};

fn bridge_in(project: &std::path::Path) -> Cmd {
    let mut cmd = Cmd::cargo_bin("unity-mcp-bridge").unwrap();
    cmd.current_dir(project).args(["--log-level", "error"]);
    cmd
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_call_and_status_find_the_project_from_the_working_directory() {
    let project = project();
    let _fake = fake(project.path()).await;
    let dir = project.path().to_owned();
    let out = tokio::task::spawn_blocking(move || {
        let tools = bridge_in(&dir.join("Assets/Scripts")).arg("tools").assert().success();
        let tools = String::from_utf8_lossy(&tools.get_output().stdout).into_owned();
        let json = bridge_in(&dir).args(["tools", "--json"]).assert().success();
        let json: Value = serde_json::from_slice(&json.get_output().stdout).unwrap();
        let call = bridge_in(&dir).args(["call", "get-logs", r#"{"LogType":"Warning"}"#]).assert().success();
        let call: Value = serde_json::from_slice(&call.get_output().stdout).unwrap();
        let failing = bridge_in(&dir).args(["call", "run-tests"]).assert().code(1);
        let failing_err = String::from_utf8_lossy(&failing.get_output().stderr).into_owned();
        let unknown = bridge_in(&dir).args(["call", "make-coffee"]).assert().code(2);
        let unknown_err = String::from_utf8_lossy(&unknown.get_output().stderr).into_owned();
        let bad_json = bridge_in(&dir).args(["call", "get-logs", "{nope"]).assert().code(2);
        let bad_json_err = String::from_utf8_lossy(&bad_json.get_output().stderr).into_owned();
        let status = bridge_in(&dir).arg("status").assert().success();
        let status: Value = serde_json::from_slice(&status.get_output().stdout).unwrap();
        (tools, json, call, failing_err, unknown_err, bad_json_err, status)
    })
    .await
    .unwrap();
    let (tools, json, call, failing_err, unknown_err, bad_json_err, status) = out;
    assert!(tools.lines().any(|l| l.starts_with("get-logs ")), "{tools}");
    assert!(json.as_array().unwrap().iter().any(|t| t["name"] == "unity-search"));
    assert_eq!(call["TotalCount"], 2);
    assert!(failing_err.contains("run-tests failed"), "{failing_err}");
    assert!(unknown_err.contains("no tool \"make-coffee\""), "{unknown_err}");
    assert!(bad_json_err.contains("not valid JSON"), "{bad_json_err}");
    assert_eq!(status["connected"], true);
    assert_eq!(status["unityVersion"], "6000.0.65f1");
}

#[test]
fn status_without_unity_says_what_was_tried() {
    let project = project();
    let status = bridge_in(project.path()).args(["status", "--wait", "0.3"]).assert().code(1);
    let status: Value = serde_json::from_slice(&status.get_output().stdout).unwrap();
    assert_eq!(status["connected"], false);
    let tried = status["tried"].to_string();
    assert!(tried.contains("MCPInstance.json: not there") && tried.contains("port 8700"), "{tried}");
}

#[test]
fn setup_writes_each_clients_config_and_merges() {
    let project = project();
    let home = tempfile::tempdir().unwrap();
    let existing = project.path().join(".cursor/mcp.json");
    std::fs::create_dir_all(existing.parent().unwrap()).unwrap();
    std::fs::write(&existing, r#"{"mcpServers":{"github":{"command":"gh-mcp"}}}"#).unwrap();
    for client in ["claude-code", "cursor", "vscode", "windsurf", "codex", "gemini"] {
        let out = bridge_in(project.path()).env("HOME", home.path()).args(["setup", client]).assert().success();
        let said = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(said.starts_with(&format!("{client}: the unity server ")), "{said}");
    }
    let canonical = std::fs::canonicalize(project.path()).unwrap();
    let claude: Value =
        serde_json::from_str(&std::fs::read_to_string(project.path().join(".mcp.json")).unwrap()).unwrap();
    let entry = &claude["mcpServers"]["unity"];
    assert_eq!(entry["type"], "stdio");
    assert_eq!(entry["args"], serde_json::json!(["--project", canonical.to_string_lossy()]));
    assert!(std::path::Path::new(entry["command"].as_str().unwrap()).is_absolute());
    let cursor: Value = serde_json::from_str(&std::fs::read_to_string(&existing).unwrap()).unwrap();
    assert_eq!(cursor["mcpServers"]["github"]["command"], "gh-mcp", "other servers are kept");
    let vscode: Value =
        serde_json::from_str(&std::fs::read_to_string(project.path().join(".vscode/mcp.json")).unwrap()).unwrap();
    assert!(vscode["servers"]["unity"].is_object());
    assert!(home.path().join(".codeium/windsurf/mcp_config.json").exists());
    let codex = std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap();
    assert!(codex.contains("[mcp_servers.unity]"), "{codex}");
    assert!(project.path().join(".gemini/settings.json").exists());

    // The configuration it wrote starts a working server: initialize answers.
    let mut command = tokio::process::Command::new(entry["command"].as_str().unwrap());
    command.args(entry["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap())).args(["--log-level", "error"]);
    tokio::runtime::Runtime::new().unwrap().block_on(async move {
        let mut client = mcp_client::McpClient::spawn(command, mcp_client::Stderr::Discard).unwrap().strict();
        let result = client.initialize().await.unwrap();
        assert_eq!(result["serverInfo"]["name"], "unity-mcp-bridge");
        client.finish(crate::e2e::WAIT).await;
    });

    // A broken file is reported and left alone.
    std::fs::write(project.path().join(".mcp.json"), "{ broken").unwrap();
    let failed = bridge_in(project.path()).env("HOME", home.path()).args(["setup", "claude-code"]).assert().code(2);
    assert!(String::from_utf8_lossy(&failed.get_output().stderr).contains("left as it is"));
    assert_eq!(std::fs::read_to_string(project.path().join(".mcp.json")).unwrap(), "{ broken");
}

/// Started by the npm package's launcher, setup writes `npx` pinned to this
/// version; `--via uvx` writes `uvx`; Codex gets its time limits.
#[test]
fn setup_via_npx_or_uvx_pins_this_version() {
    let project = project();
    let home = tempfile::tempdir().unwrap();
    let pinned = format!("unity-mcp-bridge@{}", env!("CARGO_PKG_VERSION"));
    let canonical = std::fs::canonicalize(project.path()).unwrap();
    let out = bridge_in(project.path())
        .env("HOME", home.path())
        .env("UNITY_MCP_BRIDGE_LAUNCHER", "npm")
        .args(["setup", "cursor"])
        .assert()
        .success();
    assert!(String::from_utf8_lossy(&out.get_output().stdout).contains("(npx)"));
    let cursor: Value =
        serde_json::from_str(&std::fs::read_to_string(project.path().join(".cursor/mcp.json")).unwrap()).unwrap();
    assert_eq!(cursor["mcpServers"]["unity"]["command"], "npx");
    assert_eq!(
        cursor["mcpServers"]["unity"]["args"],
        serde_json::json!(["-y", pinned, "--project", canonical.to_string_lossy()])
    );
    bridge_in(project.path()).env("HOME", home.path()).args(["setup", "codex", "--via", "uvx"]).assert().success();
    let codex: toml_edit::DocumentMut =
        std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap().parse().unwrap();
    let server = &codex["mcp_servers"]["unity"];
    assert_eq!(server["command"].as_str(), Some("uvx"));
    assert_eq!(server["args"][0].as_str(), Some(pinned.as_str()));
    assert_eq!(server["startup_timeout_sec"].as_integer(), Some(120));
    let refused = bridge_in(project.path()).args(["setup", "cursor", "--via", "brew"]).assert().code(2);
    assert!(String::from_utf8_lossy(&refused.get_output().stderr).contains("binary, npx or uvx"));
}

/// Outside every project with no Editor open, `call` and `status` answer at
/// once (the call did not run); inside WSL 2 in NAT mode (simulated with
/// `UNITY_MCP_WSL`) the answer says what to change; `status` lists what it
/// looked at.
#[test]
fn outside_every_project_with_no_editor_call_and_status_say_so_and_what_helps() {
    let room = tempfile::tempdir().unwrap();
    let outside = room.path().join("work");
    std::fs::create_dir_all(&outside).unwrap();
    let alone = |cmd: &mut Cmd| {
        cmd.env("UNITY_MCP_EDITORS_DIR", room.path().join("editors"))
            .env("UNITY_MCP_ULOOP3_SOCKETS", room.path().join("uloop"))
            .env("UNITY_MCP_SCAN_PORTS", "")
            .env_remove("UNITY_TCP_PORT");
    };
    let mut call = bridge_in(&outside);
    alone(&mut call);
    let call =
        call.env("UNITY_MCP_WSL", "nat").args(["call", "get-logs", r#"{"TimeoutSeconds":600}"#]).assert().code(1);
    let said = String::from_utf8_lossy(&call.get_output().stderr).into_owned();
    assert!(said.contains("No Unity Editor is open") && said.contains("did not run"), "{said}");
    assert!(said.contains("NAT networking mode") && said.contains("networkingMode=mirrored"), "{said}");

    let mut status = bridge_in(&outside);
    alone(&mut status);
    let status = status.env("UNITY_MCP_WSL", "off").arg("status").assert().code(1);
    let status: Value = serde_json::from_slice(&status.get_output().stdout).unwrap();
    assert_eq!(status["absent"], "no Unity Editor is open", "{status}");
    assert_eq!(status["editorChoice"]["how"], "outside any project: none chosen yet", "{status}");
    assert_eq!(status["openEditors"], serde_json::json!([]), "{status}");
}

/// `UNITY_MCP_PROJECT` names the project as `--project` does (an MCP
/// bundle's setting, passed as a variable); left empty, it is not given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_project_may_come_from_unity_mcp_project_and_an_empty_one_is_none() {
    let project = project();
    let _fake = fake(project.path()).await;
    let room = tempfile::tempdir().unwrap();
    let (dir, outside) = (project.path().to_owned(), room.path().to_owned());
    let (named, empty) = tokio::task::spawn_blocking(move || {
        let isolated = |cmd: &mut Cmd| {
            cmd.env("UNITY_MCP_EDITORS_DIR", outside.join("editors"))
                .env("UNITY_MCP_ULOOP3_SOCKETS", outside.join("uloop"))
                .env("UNITY_MCP_SCAN_PORTS", "")
                .env("UNITY_MCP_WSL", "off")
                .env_remove("UNITY_TCP_PORT");
        };
        let mut named = bridge_in(&outside);
        isolated(&mut named);
        let named = named.env("UNITY_MCP_PROJECT", &dir).arg("status").assert().success();
        let mut empty = bridge_in(&outside);
        isolated(&mut empty);
        let empty = empty.env("UNITY_MCP_PROJECT", "").arg("status").assert().code(1);
        let parse = |out: &std::process::Output| serde_json::from_slice::<Value>(&out.stdout).unwrap();
        (parse(named.get_output()), parse(empty.get_output()))
    })
    .await
    .unwrap();
    assert_eq!(named["connected"], true, "{named}");
    assert_eq!(empty["absent"], "no Unity Editor is open", "{empty}");
}
