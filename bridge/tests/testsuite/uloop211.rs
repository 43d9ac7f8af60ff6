//! End to end in front of a uLoopMCP 2.1.1 Editor (fake-unity's model of
//! it): the bridge binary driven by rmcp's MCP client, as in [`crate::e2e`],
//! in both eras of MCP.

use std::path::Path;

use fake_unity::{FakeUnity, ReloadOptions};
use rstest::rstest;
use serde_json::{Value, json};

use crate::e2e::{Era, Model, bridge_in, call, project, text};

/// A uLoopMCP 2.1.1 Editor (fake-unity's model of it) on `project`.
async fn uloop_editor(project: &Path) -> FakeUnity {
    let mut config = Model::Uloop211.config(project);
    config.seed = Some(211);
    config.state.editor.reload_downtime_ms = 100;
    config.state.compile.duration_ms = 20;
    FakeUnity::start(config).await.unwrap()
}

/// What the agent reads, with Newtonsoft's character positions (which
/// depend on the request's bytes) as `N`.
fn read_by_agent(result: &Value) -> String {
    let mut rest = text(result);
    let mut out = String::new();
    while let Some(at) = rest.find("position ") {
        out.push_str(&rest[..at + "position ".len()]);
        let after = &rest[at + "position ".len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        out.push_str(if digits > 0 { "N" } else { "" });
        rest = after[digits..].to_owned();
    }
    out + &rest
}

#[rstest]
#[tokio::test]
async fn a_uloop_2_1_1_editor_is_served_through_the_bridge(#[values(Era::Handshake, Era::Stateless)] era: Era) {
    let project = project();
    let fake = uloop_editor(project.path()).await;
    let (client, _) = bridge_in(era, project.path(), &[]).await;
    // Found through UserSettings/UnityMcpSettings.json; its 15 public tools.
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
            "find-game-objects",
            "focus-window",
            "get-hierarchy",
            "get-logs",
            "record-input",
            "replay-input",
            "run-tests",
            "screenshot",
            "simulate-keyboard",
            "simulate-mouse-input",
            "simulate-mouse-ui"
        ]
    );
    // An integer enum default (2.1.1 sends the C# value) becomes its name.
    let default_of = |tool: &str, param: &str| {
        let tool = tools.iter().find(|t| t.name == tool).unwrap();
        Value::Object((*tool.input_schema).clone())["properties"][param].clone()
    };
    let action = default_of("control-play-mode", "Action");
    assert_eq!((&action["enum"], &action["default"]), (&json!(["Play", "Stop", "Pause"]), &json!("Play")), "{action}");
    assert_eq!(default_of("run-tests", "TestMode")["default"], "EditMode", "RunTestMode's EditMode is 1");

    let status = call(&client, "bridge-status", json!({})).await;
    assert_eq!(status["structuredContent"]["connected"], true, "{status}");
    let cleared = call(&client, "clear-console", json!({"AddConfirmationMessage": true})).await;
    assert_eq!(cleared["structuredContent"]["Success"], true, "{cleared}");
    let logs = call(&client, "get-logs", json!({"LogType": "Log"})).await;
    assert_eq!(logs["structuredContent"]["Logs"][0]["Message"], "=== Console cleared via MCP tool ===", "{logs}");
    let played = call(&client, "control-play-mode", json!({"Action": "Play"})).await;
    assert_eq!(played["structuredContent"]["Message"], "Play mode started", "{played}");
    let compiled = call(&client, "compile", json!({})).await;
    assert_eq!(compiled["structuredContent"]["Success"], true, "{compiled}");
    // Every other tool of 2.1.1, through the bridge: (tool, arguments, a field, its value).
    let others: [(&str, Value, &str, Value); 9] = [
        ("execute-dynamic-code", json!({"Code": "return 40 + 2;"}), "Result", json!("42")),
        ("find-game-objects", json!({"NamePattern": "Player"}), "totalFound", json!(1)),
        (
            "get-hierarchy",
            json!({"MaxDepth": 0}),
            "message",
            json!("Hierarchy data saved below. Open the JSON to read 'Context' and 'Hierarchy'."),
        ),
        ("run-tests", json!({"TestMode": "PlayMode"}), "PassedCount", json!(2)),
        ("screenshot", json!({"ResolutionScale": 0.25}), "ScreenshotCount", json!(1)),
        ("record-input", json!({"DelaySeconds": 0}), "Message", json!("Recording started. Use Stop to save.")),
        ("simulate-keyboard", json!({"Key": "Space"}), "Message", json!("Pressed 'Space'")),
        ("simulate-mouse-input", json!({"X": 1, "Y": 2}), "Message", json!("Clicked Left at (1.0, 2.0)")),
        ("replay-input", json!({"Action": "Status"}), "Message", json!("Not replaying.")),
    ];
    for (tool, arguments, field, expected) in others {
        let result = call(&client, tool, arguments.clone()).await;
        assert_eq!(result["structuredContent"][field], expected, "{tool} {arguments}: {result}");
    }
    // 2.1.1 has no ImageDataBase64: the image comes from the file at ImagePath.
    let shot = call(&client, "screenshot", json!({"ResolutionScale": 0.25})).await;
    let image = &shot["content"][1];
    assert_eq!((&image["type"], &image["mimeType"]), (&json!("image"), &json!("image/png")), "{shot}");
    assert!(image["data"].as_str().unwrap().starts_with("iVBORw0KGgo"), "{shot}");
    let saved = call(&client, "record-input", json!({"Action": "Stop"})).await;
    assert!(text(&saved).contains("Recording saved: 4 events"), "{saved}");
    // Outside the EventSystem-less scene's reach: uLoopMCP's own refusal, as a failed result.
    let ui = call(&client, "simulate-mouse-ui", json!({})).await;
    assert_eq!(ui["isError"], true, "{ui}");
    assert!(text(&ui).contains("No EventSystem found in the scene"), "{ui}");

    // What the agent reads for each of uLoopMCP's answers that is not a
    // plain result, and for arguments the bridge refuses before sending
    // them (it checks them against the input schema); never an empty
    // explanation.
    let cases = [
        (
            "get-logs",
            json!({"MaxCount": "ten"}),
            "The arguments of get-logs do not fit its input schema: Parameter 'MaxCount' must be a number, not string \"ten\". The bridge did not send the call to Unity, so it did not run. Check them against the tool's input schema.",
        ),
        (
            "control-play-mode",
            json!({"Action": "Sideways"}),
            "The arguments of control-play-mode do not fit its input schema: Parameter 'Action' must be one of Play, Stop, Pause, not string \"Sideways\". The bridge did not send the call to Unity, so it did not run. Check them against the tool's input schema.",
        ),
        // uLoopMCP's first shape: the explanation in data.message.
        (
            "get-logs",
            json!({"MaxCount": 99999999999_i64}),
            "Unity failed to run get-logs: Value was either too large or too small for an Int32 (error -32603, internal_error).",
        ),
        // Its second: the explanation in the top-level message, data.message empty.
        (
            "clear-console",
            json!({"AddConfirmationMessage": null}),
            "Unity rejected the arguments of clear-console: Parameter type mismatch for tool 'clear-console': Error converting value {null} to type 'System.Boolean'. Path 'AddConfirmationMessage', line 1, position N. Check them against the tool's input schema.",
        ),
        (
            "get-logs",
            json!({"UseRegex": true, "SearchText": "("}),
            "Unity failed to run get-logs: Failed to retrieve logs: Failed to retrieve logs: parsing \"(\" - Not enough )'s (error -32603, internal_error).",
        ),
    ];
    for (tool, arguments, expected) in cases {
        let answer = call(&client, tool, arguments.clone()).await;
        assert_eq!(answer["isError"], true, "{tool} {arguments}: {answer}");
        assert_eq!(read_by_agent(&answer), expected, "{tool} {arguments}");
    }
    // focus-window answers Success: false (2.1.1's CLI focuses the window itself).
    let focus = call(&client, "focus-window", json!({})).await;
    assert_eq!(focus["isError"], true, "{focus}");
    assert!(text(&focus).contains("Please update uloop-cli"), "{focus}");

    // A domain reload: the bridge comes back to the same Editor.
    fake.reload(ReloadOptions::default()).await.unwrap();
    let logs = call(&client, "get-logs", json!({"MaxCount": 1})).await;
    assert_eq!(logs["structuredContent"]["Ver"], "2.1.1", "{logs}");
}

/// Every outputSchema the bridge declares holds for the Editor's answers:
/// uLoopMCP 2.1.1's model answers each tool that has one (schemas inferred
/// from the real server's recordings), checked with a JSON Schema
/// validator; tools without recorded answers declare none.
#[tokio::test]
async fn output_schemas_hold_for_the_uloop_2_1_1_model_answers() {
    let project = project();
    let _fake = uloop_editor(project.path()).await;
    let (client, _) = bridge_in(Era::Handshake, project.path(), &[]).await;
    let tools = client.list_all_tools().await.unwrap();
    let schema_of = |name: &str| {
        tools.iter().find(|t| t.name == name).and_then(|t| t.output_schema.clone()).map(|s| Value::Object((*s).clone()))
    };
    let declared: Vec<&str> = tools.iter().filter(|t| t.output_schema.is_some()).map(|t| t.name.as_ref()).collect();
    assert_eq!(
        declared,
        ["clear-console", "control-play-mode", "focus-window", "get-logs"],
        "those with recorded answers"
    );
    for (tool, arguments) in [
        ("get-logs", json!({})),
        ("get-logs", json!({"LogType": "Error", "MaxCount": 1, "IncludeStackTrace": true})),
        ("clear-console", json!({})),
        ("control-play-mode", json!({"Action": "Play"})),
        ("control-play-mode", json!({"Action": "Stop"})),
        ("focus-window", json!({})),
    ] {
        let schema = schema_of(tool).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{tool}: not a JSON Schema: {e}"));
        let result = call(&client, tool, arguments.clone()).await;
        let structured = &result["structuredContent"];
        let errors: Vec<String> = validator.iter_errors(structured).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{tool} {arguments}: {errors:?} in {structured}");
    }
    // A schema that does not fit is caught: the check can fail.
    let schema = schema_of("get-logs").unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(!validator.is_valid(&json!({"TotalCount": "three"})));
}
