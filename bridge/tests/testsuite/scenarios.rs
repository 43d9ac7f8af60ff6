//! Every scenario in `fixtures/scenarios/` run through the real bridge: a
//! fake Editor with the scenario loaded (durations scaled down), the bridge
//! binary in front of it, an MCP client making the scenario's exercise
//! calls. Each call must get the answer the scenario expects, the bridge
//! must keep serving, and every fault rule must have fired (a rule that
//! never fired would make the run a false green).

use std::path::{Path, PathBuf};

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::Value;

use crate::e2e::{WAIT, bridge, project};

/// A tool call's answer: the result, or the JSON-RPC error (an unknown
/// tool is one) as `{"error": …}` with `isError`.
async fn answer(client: &rmcp::Peer<rmcp::RoleClient>, tool: &str, args: Value) -> Value {
    let Value::Object(arguments) = args else { panic!("arguments must be an object") };
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    match tokio::time::timeout(WAIT, client.call_tool_once(params)).await {
        Err(_) => panic!("{tool} not answered within {WAIT:?}"),
        Ok(Ok(CallToolResponse::Complete(result))) => serde_json::to_value(result).unwrap(),
        Ok(Ok(other)) => panic!("{tool}: unexpected {other:?}"),
        Ok(Err(error)) => serde_json::json!({"isError": true, "error": error.to_string()}),
    }
}
use fake_unity::{
    Config, EditorStateFile, FakeUnity, Scenario,
    scenario::{ExerciseStep, Expect},
};

/// Scenario durations are scaled by this: a 20-minute compile takes 2.4 s.
const TIME_SCALE: f64 = 0.002;

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/scenarios")
}

/// A port nothing listens on now (scenarios that hold the preferred port need one).
fn free_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port()
}

async fn run(file: &str) {
    let path = scenarios_dir().join(file);
    let scenario = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(!scenario.description.trim().is_empty(), "{file}: describe the situation");
    assert!(!scenario.exercise.is_empty(), "{file}: say how to run into it");
    let project = project();
    let mut config = Config::new(project.path());
    if let Some(state) = &scenario.state {
        config.state = EditorStateFile::load(state).unwrap();
    }
    let seed = scenario.seed.unwrap_or(1);
    config.seed = Some(seed);
    // Failures name the seed, which replays them.
    let file = format!("{file} (seed {seed})");
    config.port = free_port();
    config.time_scale = TIME_SCALE;
    let exercise = scenario.exercise.clone();
    config.scenario = scenario;
    let fake = FakeUnity::start(config).await.unwrap_or_else(|e| panic!("{file}: {e}"));
    let (client, _) = bridge(project.path(), &[]).await;

    for (n, ExerciseStep { call: tool, args, expect }) in exercise.iter().enumerate() {
        let result = answer(client.peer(), tool, args.clone()).await;
        let is_error = result["isError"].as_bool().unwrap_or(false);
        let ok = match expect {
            Expect::Success => !is_error,
            Expect::Error => is_error,
            Expect::Any => true,
        };
        assert!(ok, "{file}: step {} ({tool}) expected {expect:?}, got {result:#}", n + 1);
    }
    // Still serving after it all.
    assert!(!client.list_all_tools().await.unwrap().is_empty(), "{file}: the bridge still lists tools");

    let stats = fake.control().get("/stats").await.unwrap();
    let silent: Vec<&str> = stats["faults"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|rule| rule["fired"].as_u64() == Some(0))
        .map(|rule| rule["name"].as_str().unwrap_or("?"))
        .collect();
    assert!(silent.is_empty(), "{file}: these faults never fired, the run proves nothing about them: {silent:?}");
    let _ = client.cancel().await;
    fake.quit().await;
}

macro_rules! scenarios {
    ($($name:ident => $file:literal,)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                run($file).await;
            }
        )*

        #[test]
        fn every_scenario_file_has_a_test() {
            let mut files: Vec<String> = std::fs::read_dir(scenarios_dir())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".toml") || name.ends_with(".json"))
                .collect();
            files.sort();
            let mut tested = vec![$($file.to_owned()),*];
            tested.sort();
            assert_eq!(files, tested, "add the new scenario to the list in this file");
        }
    };
}

scenarios! {
    broken_responses => "broken-responses.toml",
    compile_errors => "compile-errors.toml",
    deadlocked_test_run => "deadlocked-test-run.toml",
    flaky_link => "flaky-link.toml",
    half_open => "half-open.toml",
    huge_response => "huge-response.toml",
    long_compile => "long-compile.toml",
    modal_dialog => "modal-dialog.toml",
    port_held_at_startup => "port-held-at-startup.toml",
    port_moves => "port-moves.toml",
    reload_during_call => "reload-during-call.toml",
    stale_discovery => "stale-discovery.toml",
    throttled_main_thread => "throttled-main-thread.toml",
    tools_changed_after_reload => "tools-changed-after-reload.toml",
    unity_absent_at_startup => "unity-absent-at-startup.toml",
    zombie_listener => "zombie-listener.toml",
}
