//! uLoopMCP 2.1.1 fidelity: the transcripts of the real 2.1.1 Editor server
//! (`fixtures/recordings/uloop-2.1.1/`) have their client side sent, in
//! order and over real TCP, to `fake-unity` playing that Editor
//! (`--editor uloop-2.1.1`, on the state the recordings began from), and
//! every answer must be the recorded one after redaction: the project
//! folder, and Newtonsoft's `position N` (counted over bytes the recorder
//! did not keep: it re-serialised each message).
//!
//! Answers of the tools that were stand-ins when the recordings were made
//! ([`STAND_INS`]: their answers are not the real tools') are not compared.
//! [`KNOWN_DIFFERENCES`] lists what the model does not do yet, each with
//! why; the test fails if one of them starts to match, so the list stays true.

use std::{collections::HashMap, path::Path, time::Duration};

use bytes::BytesMut;
use editor_link::{
    framing::{Frame, FrameDecoder, Framing, encode_frame},
    transcript::{Direction, Entry, Payload, Transcript},
};
use fake_unity::{Config, EditorKind, EditorStateFile, FakeUnity};
use futures_util::StreamExt;
use serde_json::Value;
use tokio::{
    io::AsyncWriteExt,
    net::{TcpStream, tcp::OwnedReadHalf, tcp::OwnedWriteHalf},
};
use tokio_util::codec::FramedRead;

use crate::support::{copy_dir, fixture_project, fixtures};

/// Tools whose answers in the recordings came from stand-ins of the
/// recording host ("… is not ported to the headless mono host").
const STAND_INS: &[&str] = &[
    "compile",
    "run-tests",
    "execute-dynamic-code",
    "screenshot",
    "find-game-objects",
    "get-hierarchy",
    "simulate-mouse-ui",
];

/// Recorded answers the model does not give yet: (transcript, request id, why).
const KNOWN_DIFFERENCES: &[(&str, &str, &str)] = &[];

const WAIT: Duration = Duration::from_secs(5);

/// Both sides made comparable.
fn normalise(value: &Value, project: &str) -> Value {
    match value {
        Value::String(s) => {
            let s = s.replace("${PROJECT}", project);
            let re = regex::Regex::new(r"line 1, position \d+").unwrap();
            Value::String(re.replace_all(&s, "line 1, position N").into_owned())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| normalise(v, project)).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), normalise(v, project))).collect()),
        other => other.clone(),
    }
}

/// What one transcript's replay found.
#[derive(Debug, Default)]
struct Fidelity {
    /// Answers compared and equal.
    matched: usize,
    /// Answers compared.
    compared: usize,
    /// Answers of stand-ins, not compared.
    stand_ins: usize,
    /// (request id, the difference).
    differences: Vec<(String, String)>,
}

async fn replay(fake: &FakeUnity, project: &Path, name: &str) -> Fidelity {
    let path = fixtures().join(format!("recordings/uloop-2.1.1/{name}.jsonl"));
    let transcript = Transcript::read(&path).unwrap();
    let project_text = project.to_string_lossy().into_owned();
    let mut links: HashMap<u64, Caller> = HashMap::new();
    // Request id (as JSON text) → method.
    let mut methods: HashMap<String, String> = HashMap::new();
    let mut found = Fidelity::default();
    for record in &transcript.records {
        match &record.entry {
            Entry::Event { event, .. } if event == "connect" => {
                links.insert(record.conn, Caller::connect(fake.port()).await);
            }
            Entry::Event { event, .. } if event == "close" => {
                if let Some(mut link) = links.remove(&record.conn) {
                    let _ = link.write.shutdown().await;
                }
            }
            Entry::Event { .. } => {}
            Entry::Frame { dir: Direction::ToEditor, payload } => {
                let body = match payload {
                    Payload::Message(message) => {
                        if let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) {
                            methods.insert(id.to_string(), method.to_owned());
                        }
                        serde_json::to_vec(message).unwrap()
                    }
                    Payload::Raw(bytes) => bytes.clone(),
                };
                let mut frame = BytesMut::new();
                encode_frame(Framing::Header, &body, &mut frame).unwrap();
                let link = links.get_mut(&record.conn).expect("a frame on a connection the transcript opened");
                link.write.write_all(&frame).await.unwrap();
            }
            Entry::Frame { dir: Direction::FromEditor, payload: Payload::Message(recorded) } => {
                let id = recorded.get("id").map(Value::to_string).unwrap_or_default();
                let link = links.get_mut(&record.conn).expect("an answer on a connection the transcript opened");
                let answer = match tokio::time::timeout(WAIT, link.read.next()).await {
                    Ok(Some(Ok(Frame::Body(body)))) => serde_json::from_slice::<Value>(&body).unwrap(),
                    other => {
                        found.differences.push((id, format!("no answer within {WAIT:?} ({other:?})")));
                        continue;
                    }
                };
                if methods.get(&id).is_some_and(|m| STAND_INS.contains(&m.as_str())) {
                    found.stand_ins += 1;
                    continue;
                }
                found.compared += 1;
                let (expected, actual) = (normalise(recorded, &project_text), normalise(&answer, &project_text));
                if expected == actual {
                    found.matched += 1;
                } else {
                    let diff = fake_unity::replay::matching::diff(&expected, &actual, &[]);
                    found.differences.push((id, format!("{diff:?}")));
                }
            }
            Entry::Frame { dir: Direction::FromEditor, payload: Payload::Raw(_) } => {
                panic!("{name}: the real server sent a frame that is not JSON");
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_recorded_requests_get_the_recorded_answers_from_the_2_1_1_model() {
    let project = tempfile::tempdir().unwrap();
    copy_dir(&fixture_project(), project.path());
    // The recorded Editor did not reload on entering play mode (its
    // project, like uLoopMCP's own, has domain reload off): it answered on
    // the same connection for a second after "Play mode started".
    crate::support::switch_domain_reload(project.path(), false);
    let mut config = Config::new(project.path());
    config.editor = EditorKind::Uloop211;
    config.seed = Some(211);
    config.state = EditorStateFile::load(&fixtures().join("editor-states/uloop-2.1.1-recording.json")).unwrap();
    let fake = FakeUnity::start(config).await.unwrap();
    let mut report = Vec::new();
    // The TypeScript server's session ran on the same Editor after the raw requests.
    for name in ["raw-requests", "ts-server-session"] {
        let found = replay(&fake, project.path(), name).await;
        report.push(format!(
            "{name}: {} of {} answers as recorded ({} stand-ins not compared)",
            found.matched, found.compared, found.stand_ins
        ));
        let known: Vec<&str> = KNOWN_DIFFERENCES.iter().filter(|(t, _, _)| *t == name).map(|(_, id, _)| *id).collect();
        let unexpected: Vec<&(String, String)> =
            found.differences.iter().filter(|(id, _)| !known.contains(&id.as_str())).collect();
        assert!(unexpected.is_empty(), "{name}: answers that differ from the recording: {unexpected:#?}");
        for id in known {
            assert!(
                found.differences.iter().any(|(d, _)| d == id),
                "{name}: the answer to {id} now matches the recording: take it off KNOWN_DIFFERENCES"
            );
        }
    }
    eprintln!("{}", report.join("\n"));
}

/// A uLoopMCP 2.1.1 model on a copy of the fixture project.
async fn uloop_editor() -> (FakeUnity, tempfile::TempDir) {
    let project = tempfile::tempdir().unwrap();
    copy_dir(&fixture_project(), project.path());
    let mut config = Config::new(project.path());
    config.editor = EditorKind::Uloop211;
    config.seed = Some(212);
    let fake = FakeUnity::start(config).await.unwrap();
    (fake, project)
}

/// Whatever the Editor sends within `wait`: `Ok(None)` if nothing, `Err` once it closed.
async fn next_within(stream: &mut TcpStream, wait: Duration) -> Result<Option<Vec<u8>>, ()> {
    use tokio::io::AsyncReadExt;
    let mut buf = vec![0; 4096];
    match tokio::time::timeout(wait, stream.read(&mut buf)).await {
        Err(_) => Ok(None),
        Ok(Ok(0)) | Ok(Err(_)) => Err(()),
        Ok(Ok(n)) => Ok(Some(buf[..n].to_vec())),
    }
}

#[tokio::test]
async fn the_2_1_1_model_frames_and_publishes_as_uloop_does() {
    let (fake, project) = uloop_editor().await;
    // Discovery: uLoopMCP's settings file, no Library/MCPInstance.json.
    assert!(!project.path().join("Library/MCPInstance.json").exists());
    let settings: Value =
        serde_json::from_slice(&std::fs::read(project.path().join("UserSettings/UnityMcpSettings.json")).unwrap())
            .unwrap();
    assert_eq!(settings["customPort"], fake.port());
    assert_eq!(settings["isServerRunning"], true);
    assert_eq!(settings["serverSessionId"].as_str().map(str::len), Some(32), "{settings}");

    // A header block that does not parse is never answered; the connection stays open.
    let mut stream = TcpStream::connect(("127.0.0.1", fake.port())).await.unwrap();
    stream.write_all(b"Content-Length: ten\r\n\r\n{}").await.unwrap();
    assert_eq!(next_within(&mut stream, Duration::from_millis(500)).await, Ok(None));
    // Newline framing is never answered either.
    let mut stream = TcpStream::connect(("127.0.0.1", fake.port())).await.unwrap();
    stream.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{}}\n").await.unwrap();
    assert_eq!(next_within(&mut stream, Duration::from_millis(500)).await, Ok(None));
    // A frame over 1 MiB closes the connection without a reply.
    let mut stream = TcpStream::connect(("127.0.0.1", fake.port())).await.unwrap();
    let body = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"Message\":\"{}\"}}}}",
        "x".repeat(1 << 20)
    );
    let _ = stream.write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).await;
    assert_eq!(next_within(&mut stream, WAIT).await, Err(()), "closed, and nothing sent");

    // x-uloop needs both fields; a bare request is served.
    let mut stream = TcpStream::connect(("127.0.0.1", fake.port())).await.unwrap();
    let request =
        br#"{"jsonrpc":"2.0","id":"x","method":"ping","params":{},"x-uloop":{"expectedProjectRoot":"/elsewhere"}}"#;
    stream.write_all(format!("Content-Length: {}\r\n\r\n", request.len()).as_bytes()).await.unwrap();
    stream.write_all(request).await.unwrap();
    let answer = String::from_utf8(next_within(&mut stream, WAIT).await.unwrap().unwrap()).unwrap();
    assert!(
        answer.contains(r#""message":"Invalid x-uloop metadata: expectedServerSessionId is required.""#),
        "{answer}"
    );
}

/// Sends one request in header framing.
async fn send(stream: &mut TcpStream, request: &Value) {
    let body = request.to_string();
    stream.write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).await.unwrap();
}

/// Every frame the Editor sends until it closes the connection (or `WAIT` passes).
async fn frames_until_closed(stream: TcpStream) -> Vec<Value> {
    let mut read = FramedRead::new(stream, FrameDecoder::new(Framing::Header, 64 << 20));
    let mut frames = Vec::new();
    while let Ok(Some(Ok(Frame::Body(body)))) = tokio::time::timeout(WAIT, read.next()).await {
        frames.push(serde_json::from_slice(&body).unwrap());
    }
    frames
}

#[tokio::test]
async fn a_compile_waiting_for_the_domain_reload_leaves_its_result_in_a_file() {
    let (fake, project) = uloop_editor().await;
    let root = project.path();
    let results = root.join("Temp/uLoopMCP/compile-results");
    // A script with an error: answered at once, and the file written too.
    let script = root.join("Assets/Scripts/Turret.cs");
    std::fs::write(&script, "public class Turret {\n#error Turret is not finished\n}\n").unwrap();
    let mut editor = Caller::connect(fake.port()).await;
    let answer =
        editor.call("compile", serde_json::json!({"WaitForDomainReload": true, "RequestId": "compile_1_000001"})).await;
    let result = &answer;
    assert_eq!((&result["Success"], &result["ErrorCount"]), (&Value::Bool(false), &serde_json::json!(1)), "{answer}");
    assert_eq!(
        result["Errors"][0]["Message"],
        "Assets/Scripts/Turret.cs(2,1): error CS1029: #error: 'Turret is not finished'"
    );
    assert_eq!(result["ProjectRoot"], root.to_string_lossy().as_ref());
    let file = std::fs::read(results.join("compile_1_000001.json")).unwrap();
    assert!(file.starts_with("\u{feff}".as_bytes()), "a UTF-8 BOM first");
    assert_eq!(serde_json::from_slice::<Value>(&file[3..]).unwrap(), *result);

    // Fixed: the compile succeeds, the domain reloads before the answer can
    // go out, and the client finds the result in the file.
    std::fs::write(&script, "public class Turret {\n    public int Range = 5;\n}\n").unwrap();
    // Which lock files a client polling the project would see, as uLoopMCP's own does.
    let seen = {
        let root = root.to_owned();
        tokio::spawn(async move {
            let (mut compiling, mut reloading) = (false, false);
            let deadline = tokio::time::Instant::now() + WAIT;
            while !(compiling && reloading) && tokio::time::Instant::now() < deadline {
                compiling |= root.join("Temp/compiling.lock").exists();
                reloading |= root.join("Temp/domainreload.lock").exists();
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            (compiling, reloading)
        })
    };
    let mut stream = TcpStream::connect(("127.0.0.1", fake.port())).await.unwrap();
    send(
        &mut stream,
        &serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "compile",
        "params": {"WaitForDomainReload": true, "RequestId": "compile_2_000002"}}),
    )
    .await;
    let frames = frames_until_closed(stream).await;
    assert_eq!(
        frames,
        [
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/server/shutdown", "params": {"reason": "DomainReload"}})
        ],
        "only the shutdown notification, then the connection closes"
    );
    let file = std::fs::read(results.join("compile_2_000002.json")).unwrap();
    let written: Value = serde_json::from_slice(&file[3..]).unwrap();
    assert_eq!(
        written,
        serde_json::json!({"Success": true, "ErrorCount": 0, "WarningCount": 0, "Errors": [], "Warnings": [],
            "Message": null, "ProjectRoot": root.to_string_lossy(), "Ver": "2.1.1"})
    );
    assert_eq!(
        seen.await.unwrap(),
        (true, true),
        "Temp/compiling.lock while compiling, Temp/domainreload.lock while reloading"
    );
    // Back: the lock files are gone and the Editor answers again.
    let deadline = tokio::time::Instant::now() + WAIT;
    while root.join("Temp/domainreload.lock").exists() {
        assert!(tokio::time::Instant::now() < deadline, "Temp/domainreload.lock never went away");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!root.join("Temp/compiling.lock").exists());
    let settings: Value =
        serde_json::from_slice(&std::fs::read(root.join("UserSettings/UnityMcpSettings.json")).unwrap()).unwrap();
    let port = settings["customPort"].as_u64().unwrap() as u16;
    let pong = Caller::connect(port).await.call("ping", serde_json::json!({})).await;
    assert_eq!(pong["Ver"], "2.1.1");
}

/// One connection to the model, a request at a time.
struct Caller {
    read: FramedRead<OwnedReadHalf, FrameDecoder>,
    write: OwnedWriteHalf,
    next: u64,
}

impl Caller {
    async fn connect(port: u16) -> Caller {
        let (read, write) = TcpStream::connect(("127.0.0.1", port)).await.unwrap().into_split();
        Caller { read: FramedRead::new(read, FrameDecoder::new(Framing::Header, 64 << 20)), write, next: 0 }
    }

    /// The result (or the whole answer when it is an error).
    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let body =
            serde_json::json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}).to_string();
        self.write.write_all(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).await.unwrap();
        let Some(Ok(Frame::Body(body))) = tokio::time::timeout(WAIT, self.read.next()).await.unwrap() else {
            panic!("no answer to {method}")
        };
        let mut answer: Value = serde_json::from_slice(&body).unwrap();
        match answer.get_mut("result") {
            Some(result) => result.take(),
            None => answer,
        }
    }
}

#[tokio::test]
async fn the_playmode_input_tools_need_play_mode_and_record_under_the_project() {
    let (fake, project) = uloop_editor().await;
    // The input tools on one connection: the reload entering play mode
    // makes by default is lifecycle.rs's.
    crate::support::switch_domain_reload(project.path(), false);
    let mut editor = Caller::connect(fake.port()).await;
    // Outside play mode: uLoopMCP's own answers.
    let not_playing = "PlayMode is not active. Use control-play-mode tool to start PlayMode first.";
    for (tool, expected) in [
        (
            "record-input",
            serde_json::json!({"Success": false, "Message": not_playing, "Action": "Start", "OutputPath": null, "TotalFrames": null, "DurationSeconds": null, "Ver": "2.1.1"}),
        ),
        (
            "replay-input",
            serde_json::json!({"Success": false, "Message": not_playing, "Action": "Start", "InputPath": null, "CurrentFrame": null, "TotalFrames": null, "Progress": null, "IsReplaying": null, "Ver": "2.1.1"}),
        ),
        (
            "simulate-keyboard",
            serde_json::json!({"Success": false, "Message": not_playing, "Action": "Press", "KeyName": null, "Ver": "2.1.1"}),
        ),
        (
            "simulate-mouse-input",
            serde_json::json!({"Success": false, "Message": not_playing, "Action": "Click", "Button": null, "PositionX": null, "PositionY": null, "Ver": "2.1.1"}),
        ),
        (
            "simulate-mouse-ui",
            serde_json::json!({"Success": false, "Message": not_playing, "Action": "Click", "HitGameObjectName": null, "PositionX": 0.0, "PositionY": 0.0, "EndPositionX": null, "EndPositionY": null, "Ver": "2.1.1"}),
        ),
    ] {
        assert_eq!(editor.call(tool, serde_json::json!({})).await, expected, "{tool}");
    }

    // In play mode: record simulated input, save it under the project, replay it.
    assert_eq!(editor.call("control-play-mode", serde_json::json!({"Action": 0})).await["IsPlaying"], true);
    let started = editor.call("record-input", serde_json::json!({"DelaySeconds": 0, "Keys": "W"})).await;
    assert_eq!(started["Message"], "Recording started (filtering: W). Use Stop to save.", "{started}");
    let pressed = editor.call("simulate-keyboard", serde_json::json!({"Key": "w"})).await;
    assert_eq!((&pressed["Success"], &pressed["Message"]), (&Value::Bool(true), &serde_json::json!("Pressed 'W'")));
    let clicked = editor.call("simulate-mouse-input", serde_json::json!({"X": 10, "Y": 20.5})).await;
    assert_eq!(clicked["Message"], "Clicked Left at (10.0, 20.5)", "{clicked}");
    let again = editor.call("record-input", serde_json::json!({"DelaySeconds": 0})).await;
    assert_eq!(again["Message"], "Already recording. Stop the current recording first.");
    let saved = editor.call("record-input", serde_json::json!({"Action": "Stop"})).await;
    assert_eq!(saved["Success"], true, "{saved}");
    assert!(saved["Message"].as_str().unwrap().starts_with("Recording saved: 4 events across "), "{saved}");
    let path = saved["OutputPath"].as_str().unwrap();
    assert!(path.starts_with(".uloop/outputs/InputRecordings/") && path.ends_with(".json"), "{path}");
    let recording: Value = serde_json::from_slice(&std::fs::read(project.path().join(path)).unwrap()).unwrap();
    let events: Vec<&Value> =
        recording["frames"].as_array().unwrap().iter().flat_map(|f| f["events"].as_array().unwrap()).collect();
    assert_eq!(events[0], &serde_json::json!({"type": "key_down", "data": "W"}), "{recording}");

    let replay = editor.call("replay-input", serde_json::json!({"Loop": true})).await;
    assert_eq!(replay["InputPath"], path, "the newest recording: {replay}");
    assert_eq!(replay["IsReplaying"], true);
    let status = editor.call("replay-input", serde_json::json!({"Action": "Status"})).await;
    assert!(status["Message"].as_str().unwrap().starts_with("Replaying: frame "), "{status}");
    let stopped = editor.call("replay-input", serde_json::json!({"Action": 1})).await;
    assert!(stopped["Message"].as_str().unwrap().starts_with("Replay stopped at frame "), "{stopped}");
    let ui = editor.call("simulate-mouse-ui", serde_json::json!({})).await;
    assert_eq!(ui["Message"], "No EventSystem found in the scene. Ensure an EventSystem GameObject exists.");
    let undefined = editor.call("replay-input", serde_json::json!({"Action": 7})).await;
    assert_eq!(undefined["error"]["data"]["message"], "Unknown replay-input action: 7", "{undefined}");
}

#[tokio::test]
async fn the_scene_tools_answer_in_2_1_1s_shapes() {
    let (fake, project) = uloop_editor().await;
    let mut editor = Caller::connect(fake.port()).await;
    let none = editor.call("find-game-objects", serde_json::json!({})).await;
    assert_eq!(
        none,
        serde_json::json!({"results": [], "totalFound": 0, "errorMessage": "At least one search criterion must be provided",
            "resultsFilePath": null, "message": null, "processingErrors": null, "Ver": "2.1.1"})
    );
    let player = editor.call("find-game-objects", serde_json::json!({"NamePattern": "Player"})).await;
    assert_eq!(
        (&player["totalFound"], &player["results"][0]["path"]),
        (&serde_json::json!(1), &serde_json::json!("Player"))
    );
    let transform = &player["results"][0]["components"][0];
    assert_eq!(
        (&transform["type"], &transform["fullTypeName"]),
        (&serde_json::json!("Transform"), &serde_json::json!("UnityEngine.Transform"))
    );
    // Contains is ordinal (case-sensitive), as .NET's string.Contains.
    let enemies = editor
        .call(
            "find-game-objects",
            serde_json::json!({"NamePattern": "Enemy", "SearchMode": "Contains", "IncludeInactive": true}),
        )
        .await;
    let lower = editor.call("find-game-objects", serde_json::json!({"NamePattern": "enemy", "SearchMode": 3})).await;
    assert!(enemies["totalFound"].as_u64().unwrap() >= 2 && lower["totalFound"] == 0, "{enemies} {lower}");

    let hierarchy = editor.call("get-hierarchy", serde_json::json!({})).await;
    assert_eq!(hierarchy["message"], "Hierarchy data saved below. Open the JSON to read 'Context' and 'Hierarchy'.");
    let rel = hierarchy["hierarchyFilePath"].as_str().unwrap();
    assert!(rel.starts_with(".uloop/outputs/HierarchyResults/hierarchy_"), "{rel}");
    let file: Value = serde_json::from_slice(&std::fs::read(project.path().join(rel)).unwrap()).unwrap();
    assert_eq!(file["Context"]["nodeCount"], 21, "every GameObject, inactive ones included: {}", file["Context"]);
    assert_eq!(file["Hierarchy"][0]["stats"]["rootCount"], 7);
}

#[tokio::test]
async fn run_tests_answers_in_2_1_1s_shape() {
    let (fake, _project) = uloop_editor().await;
    let mut editor = Caller::connect(fake.port()).await;
    let edit = editor.call("run-tests", serde_json::json!({})).await;
    assert_eq!(
        (&edit["Success"], &edit["Message"], &edit["FailedCount"]),
        (
            &Value::Bool(false),
            &serde_json::json!("Test execution completed with status: Failed"),
            &serde_json::json!(1)
        ),
        "{edit}"
    );
    let xml = edit["XmlPath"].as_str().unwrap();
    assert!(
        xml.contains("/.uloop/outputs/TestResults/") && std::path::Path::new(xml).is_file(),
        "an absolute path: {xml}"
    );
    let play = editor.call("run-tests", serde_json::json!({"TestMode": "PlayMode"})).await;
    assert_eq!(
        (&play["Success"], &play["PassedCount"], &play["XmlPath"]),
        (&Value::Bool(true), &serde_json::json!(2), &Value::Null),
        "{play}"
    );
    let none = editor.call("run-tests", serde_json::json!({"FilterType": 1, "FilterValue": "No.Such.Test"})).await;
    assert_eq!(none["Message"], "No tests found matching the specified filter criteria");
    let bad = editor.call("run-tests", serde_json::json!({"FilterType": 5})).await;
    assert_eq!(bad["error"]["data"]["message"], "Unsupported filter type: 5", "{bad}");
    editor.call("control-play-mode", serde_json::json!({"Action": "Play"})).await;
    // Entering play mode reloads the domain (the project keeps Unity's
    // default); the Editor comes back in play mode.
    crate::support::eventually("the reload of entering play mode", || {
        fake.editor().stats.reloads.load(std::sync::atomic::Ordering::Relaxed) == 1
            && fake.editor().phase() == editor_link::discovery::EditorState::Ready
    })
    .await;
    let mut editor = Caller::connect(fake.port()).await;
    let playing = editor.call("run-tests", serde_json::json!({"TestMode": 1})).await;
    assert_eq!(playing["Message"], "EditMode tests cannot run during play mode");
}

#[tokio::test]
async fn screenshots_and_dynamic_code_answer_in_2_1_1s_shapes() {
    let (fake, project) = uloop_editor().await;
    let mut editor = Caller::connect(fake.port()).await;
    let shot = editor.call("screenshot", serde_json::json!({"ResolutionScale": 0.5})).await;
    assert_eq!(shot["ScreenshotCount"], 1, "{shot}");
    let image = &shot["Screenshots"][0];
    let path = image["ImagePath"].as_str().unwrap();
    assert!(
        path.starts_with(&project.path().to_string_lossy().into_owned())
            && path.contains("/.uloop/outputs/Screenshots/Game_"),
        "{path}"
    );
    assert!(std::fs::read(path).unwrap().starts_with(b"\x89PNG"));
    assert_eq!(
        (&image["CoordinateSystem"], &image["AnnotatedElements"]),
        (&serde_json::json!("window"), &serde_json::json!([]))
    );
    assert!(shot.get("ImageDataBase64").is_none() && image.get("ImageDataBase64").is_none(), "never the bytes");
    let none = editor.call("screenshot", serde_json::json!({"WindowName": "No Such Window"})).await;
    assert_eq!((&none["Screenshots"], &none["ScreenshotCount"]), (&serde_json::json!([]), &serde_json::json!(0)));
    let bad = editor.call("screenshot", serde_json::json!({"ResolutionScale": 2})).await;
    assert_eq!(bad["error"]["message"], "ResolutionScale must be between 0.1 and 1.0, got: 2", "{bad}");
    let rendering = editor.call("screenshot", serde_json::json!({"CaptureMode": "rendering"})).await;
    assert_eq!(rendering["ScreenshotCount"], 0, "not playing: {rendering}");

    let code = editor.call("execute-dynamic-code", serde_json::json!({"Code": "return 40 + 2;"})).await;
    assert_eq!(
        code,
        serde_json::json!({"Success": true, "Result": "42", "Logs": [], "CompilationErrors": [], "ErrorMessage": "",
            "SecurityLevel": "Restricted", "Error": "", "UpdatedCode": null, "DiagnosticsSummary": null, "Diagnostics": [], "Ver": "2.1.1"})
    );
    let broken = editor.call("execute-dynamic-code", serde_json::json!({"Code": "Debug.Log(\"x\";"})).await;
    assert_eq!(
        (&broken["Success"], &broken["ErrorMessage"]),
        (&Value::Bool(false), &serde_json::json!("Compilation error occurred")),
        "{broken}"
    );
    assert!(
        broken["DiagnosticsSummary"].as_str().unwrap().starts_with("Errors: 1 unique (1 total). First at L1: CS1026"),
        "{broken}"
    );
}

/// uLoopMCP 2.1.1's own MCP server (`fixtures/clients/uloop-2.1.1/`, a
/// client we did not write) in front of the model: its compile waits across
/// the reload through the result file and the lock files (before the model
/// wrote them it gave up after 90 s), then its prewarm and other calls work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uloops_own_mcp_server_compiles_across_the_reload_against_the_model() {
    if !crate::have(&["node"], "apt install nodejs") {
        return;
    }
    let (fake, project) = uloop_editor().await;
    let root = project.path();
    // Installed inside the project, where it looks for the project.
    let bundle = root.join("Library/uLoopMCP/server.bundle.js");
    std::fs::create_dir_all(bundle.parent().unwrap()).unwrap();
    std::fs::copy(fixtures().join("clients/uloop-2.1.1/server.bundle.js"), &bundle).unwrap();
    std::fs::write(root.join("Assets/Scripts/Turret.cs"), "public class Turret {\n    public int Range = 5;\n}\n")
        .unwrap();

    let mut command = tokio::process::Command::new("node");
    command.arg(&bundle).current_dir(root).env("UNITY_TCP_PORT", fake.port().to_string());
    let mut server = mcp_client::McpClient::spawn(command, mcp_client::Stderr::Tail(20)).unwrap();
    let init = server.initialize().await.unwrap();
    assert_eq!(init["serverInfo"]["name"], "uloopmcp-server");
    let tools = server.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t["name"] == "compile"), "{tools:?}");

    let compiled = server.call("compile", serde_json::json!({"WaitForDomainReload": true})).await.unwrap();
    let text = compiled["result"]["content"][0]["text"].as_str().unwrap_or_default();
    let result: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    assert_eq!(
        (&result["Success"], &result["ErrorCount"], &compiled["result"]["isError"]),
        (&Value::Bool(true), &serde_json::json!(0), &Value::Bool(false)),
        "{compiled} (its stderr: {:?})",
        server.stderr_tail()
    );
    let stats = fake.control().get("/stats").await.unwrap();
    assert_eq!(stats["reloads"], 1, "the compile reloaded the domain: {stats}");
    assert!(stats["runs"]["execute-dynamic-code"].as_u64() >= Some(1), "its prewarm ran: {stats}");

    let logs = server.call("get-logs", serde_json::json!({"LogType": "Error"})).await.unwrap();
    let text = logs["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(serde_json::from_str::<Value>(text).is_ok_and(|l| l["LogType"] == "Error"), "{logs}");
    server.finish(Duration::from_secs(5)).await;
}
