//! uLoopMCP 2.1.1's PlayMode input tools (`record-input`, `replay-input`,
//! `simulate-keyboard`, `simulate-mouse-input`, `simulate-mouse-ui`), with
//! the Input System package present: each needs play mode running (and not
//! paused) and answers as uLoopMCP does outside it. A recording collects the
//! simulated input sent while it runs (the fake has no real devices), at 60
//! frames a second, and is saved under `.uloop/outputs/InputRecordings/`; a
//! replay plays one back in simulated time.

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::super::{BoxFuture, Outcome, ToolCall};
use crate::editor::{
    Editor,
    model::errors::uloop_internal,
    simulation::{INPUT_FPS, InputState, Recording, Replay},
};

/// Where recordings go, relative to the project.
const RECORDINGS: &str = ".uloop/outputs/InputRecordings";
const NOT_PLAYING: &str = "PlayMode is not active. Use control-play-mode tool to start PlayMode first.";

/// Play mode must run, unpaused: the answer when it does not.
fn playing(editor: &Editor, doing: &str) -> Result<(), &'static str> {
    let sim = editor.sim();
    match (sim.playing, sim.paused) {
        (false, _) => Err(NOT_PLAYING),
        (true, true) => Err(match doing {
            "recording" => "PlayMode is paused. Resume PlayMode before recording input.",
            "replaying" => "PlayMode is paused. Resume PlayMode before replaying input.",
            "keyboard" => "PlayMode is paused. Resume PlayMode before simulating keyboard input.",
            _ => "PlayMode is paused. Resume PlayMode before simulating mouse input.",
        }),
        _ => Ok(()),
    }
}

/// The enum's name for `value`, or the number when it names none (as .NET prints it).
fn action_name(values: &[(&str, i64)], value: i64) -> Value {
    values.iter().find(|(_, v)| *v == value).map_or_else(|| Value::String(value.to_string()), |(n, _)| json!(n))
}

fn reply(fields: Vec<(&str, Value)>) -> Outcome {
    Outcome::Reply(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<Map<String, Value>>())
}

/// `yyyyMMdd-HHmmss` (the Editor's local time; the fake's is UTC).
fn file_stamp(editor: &Editor) -> String {
    let text = humantime::format_rfc3339_seconds(editor.now()).to_string();
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    format!("{}-{}", &digits[..8], &digits[8..14])
}

/// Adds a simulated event to a recording in progress.
fn record_event(editor: &Editor, kind: &'static str, data: String) {
    if let Some(recording) = editor.sim().input.recording.as_mut() {
        let frame = (recording.started.elapsed().as_secs_f64() * INPUT_FPS) as u64;
        recording.events.push((frame, kind, data));
    }
}

const RECORD_ACTIONS: &[(&str, i64)] = &[("Start", 0), ("Stop", 1)];
const REPLAY_ACTIONS: &[(&str, i64)] = &[("Start", 0), ("Stop", 1), ("Status", 2)];

pub fn record_input(call: ToolCall) -> BoxFuture {
    Box::pin(async move {
        let action = call.args.int("Action");
        let base = |success: bool, message: &str| {
            vec![
                ("Success", json!(success)),
                ("Message", json!(message)),
                ("Action", action_name(RECORD_ACTIONS, action)),
                ("OutputPath", Value::Null),
                ("TotalFrames", Value::Null),
                ("DurationSeconds", Value::Null),
            ]
        };
        if let Err(why) = playing(&call.editor, "recording") {
            return reply(base(false, why));
        }
        match action {
            0 => {
                {
                    let sim = call.editor.sim();
                    if sim.input.recording.is_some() {
                        return reply(base(false, "Already recording. Stop the current recording first."));
                    }
                    if sim.input.replay.is_some() {
                        return reply(base(false, "Cannot record while replaying. Stop the replay first."));
                    }
                }
                let delay = call.args.int("DelaySeconds").clamp(0, 10);
                // The answer waits for the countdown, as uLoopMCP's does.
                tokio::time::sleep(Duration::from_secs(delay as u64)).await;
                if !call.editor.sim().playing {
                    return reply(base(false, "Recording cancelled (PlayMode ended during countdown)."));
                }
                let output = call.args.str("OutputPath");
                call.editor.sim().input.recording = Some(Recording {
                    started: Instant::now(),
                    output: (!output.is_empty()).then(|| output.to_owned()),
                    events: Vec::new(),
                });
                let keys = call.args.str("Keys");
                let filtering = if keys.is_empty() { String::new() } else { format!(" (filtering: {keys})") };
                let countdown = if delay > 0 { format!(" (after {delay}s countdown)") } else { String::new() };
                reply(base(true, &format!("Recording started{filtering}{countdown}. Use Stop to save.")))
            }
            1 => {
                let Some(recording) = call.editor.sim().input.recording.take() else {
                    return reply(base(false, "Not currently recording. Use Start first."));
                };
                let seconds = recording.started.elapsed().as_secs_f64();
                // Every frame up to now, and at least those that hold an event.
                let last_event = recording.events.iter().map(|(frame, _, _)| frame + 1).max().unwrap_or(0);
                let frames = ((seconds * INPUT_FPS) as u64).max(last_event);
                let path =
                    recording.output.unwrap_or_else(|| format!("{RECORDINGS}/{}.json", file_stamp(&call.editor)));
                let mut by_frame: std::collections::BTreeMap<u64, Vec<Value>> = Default::default();
                for (frame, kind, data) in &recording.events {
                    by_frame.entry(*frame).or_default().push(json!({"type": kind, "data": data}));
                }
                let file = json!({
                    "metadata": {"recordedAt": call.editor.timestamp(), "totalFrames": frames, "durationSeconds": seconds},
                    "frames": by_frame.into_iter().map(|(frame, events)| json!({"frame": frame, "events": events})).collect::<Vec<_>>(),
                });
                let absolute = call.editor.project.join(&path);
                let written = absolute
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(&absolute, serde_json::to_vec_pretty(&file).unwrap_or_default()));
                if let Err(err) = written {
                    return Outcome::Fail(uloop_internal(format!("Failed to save recording: {err}")));
                }
                let message = format!(
                    "Recording saved: {} events across {frames} frames ({seconds:.1}s)",
                    recording.events.len()
                );
                let mut fields = base(true, &message);
                fields[3].1 = json!(path);
                fields[4].1 = json!(frames);
                fields[5].1 = json!(seconds);
                reply(fields)
            }
            other => Outcome::Fail(uloop_internal(format!("Unknown record-input action: {other}"))),
        }
    })
}

pub fn replay_input(call: &ToolCall) -> Outcome {
    let action = call.args.int("Action");
    let base = |success: bool, message: &str| {
        vec![
            ("Success", json!(success)),
            ("Message", json!(message)),
            ("Action", action_name(REPLAY_ACTIONS, action)),
            ("InputPath", Value::Null),
            ("CurrentFrame", Value::Null),
            ("TotalFrames", Value::Null),
            ("Progress", Value::Null),
            ("IsReplaying", Value::Null),
        ]
    };
    if let Err(why) = playing(&call.editor, "replaying") {
        return reply(base(false, why));
    }
    let editor = &call.editor;
    // A replay that reached its end is over.
    {
        let mut sim = editor.sim();
        if sim.input.replay.as_ref().is_some_and(|r| r.frame().is_none()) {
            sim.input.replay = None;
        }
    }
    match action {
        0 => {
            {
                let sim = editor.sim();
                if sim.input.replay.is_some() {
                    return reply(base(false, "Already replaying. Stop the current replay first."));
                }
                if sim.input.recording.is_some() {
                    return reply(base(false, "Cannot replay while recording. Stop the recording first."));
                }
            }
            let requested = call.args.str("InputPath");
            let path = if requested.is_empty() {
                let newest = std::fs::read_dir(editor.project.join(RECORDINGS)).ok().and_then(|entries| {
                    entries
                        .flatten()
                        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                        .max_by_key(|e| (e.metadata().and_then(|m| m.modified()).ok(), e.file_name()))
                        .map(|e| format!("{RECORDINGS}/{}", e.file_name().to_string_lossy()))
                });
                match newest {
                    Some(path) => path,
                    None => return reply(base(false, "No recording files found in .uloop/outputs/InputRecordings/")),
                }
            } else {
                requested.to_owned()
            };
            let Ok(text) = std::fs::read(editor.project.join(&path)) else {
                return reply(base(false, &format!("Recording file not found: {path}")));
            };
            let Some(recording) = serde_json::from_slice::<Value>(&text).ok().filter(|r| r["frames"].is_array()) else {
                return reply(base(false, &format!("Failed to parse recording file: {path}")));
            };
            let total_frames = recording["metadata"]["totalFrames"].as_u64().unwrap_or(0);
            let events: usize = recording["frames"]
                .as_array()
                .map_or(0, |f| f.iter().map(|f| f["events"].as_array().map_or(0, Vec::len)).sum());
            let looping = call.args.bool("Loop");
            editor.sim().input.replay =
                Some(Replay { started: Instant::now(), path: path.clone(), total_frames, looping });
            let suffix = if looping { " (looping)" } else { "" };
            let mut fields =
                base(true, &format!("Replay started: {events} events across {total_frames} frames{suffix}"));
            fields[3].1 = json!(path);
            fields[5].1 = json!(total_frames);
            fields[7].1 = json!(true);
            reply(fields)
        }
        1 => match editor.sim().input.replay.take() {
            None => reply(base(false, "Not currently replaying.")),
            Some(replay) => {
                let frame = replay.frame().unwrap_or(replay.total_frames);
                let mut fields = base(true, &format!("Replay stopped at frame {frame}/{}", replay.total_frames));
                fields[3].1 = json!(replay.path);
                fields[4].1 = json!(frame);
                fields[5].1 = json!(replay.total_frames);
                fields[7].1 = json!(false);
                reply(fields)
            }
        },
        2 => match editor.sim().input.replay.as_ref() {
            None => {
                let mut fields = base(true, "Not replaying.");
                fields[7].1 = json!(false);
                reply(fields)
            }
            Some(replay) => {
                let frame = replay.frame().unwrap_or(replay.total_frames);
                let progress = frame as f64 / replay.total_frames.max(1) as f64;
                let mut fields = base(
                    true,
                    &format!("Replaying: frame {frame}/{} ({:.0} %)", replay.total_frames, progress * 100.0),
                );
                fields[3].1 = json!(replay.path);
                fields[4].1 = json!(frame);
                fields[5].1 = json!(replay.total_frames);
                fields[6].1 = json!(progress);
                fields[7].1 = json!(true);
                reply(fields)
            }
        },
        other => Outcome::Fail(uloop_internal(format!("Unknown replay-input action: {other}"))),
    }
}

const KEYBOARD_ACTIONS: &[(&str, i64)] = &[("Press", 0), ("KeyDown", 1), ("KeyUp", 2)];
/// Input System `Key` names the simulation knows (letters, digits and these).
const NAMED_KEYS: &[&str] = &[
    "Space",
    "Enter",
    "Tab",
    "Escape",
    "Backspace",
    "LeftShift",
    "RightShift",
    "LeftCtrl",
    "RightCtrl",
    "LeftAlt",
    "RightAlt",
    "UpArrow",
    "DownArrow",
    "LeftArrow",
    "RightArrow",
    "Delete",
    "Home",
    "End",
    "PageUp",
    "PageDown",
];

/// The Input System name of `key` (any case; `Return` is `Enter`), if it is one.
fn key_name(key: &str) -> Option<String> {
    let key = if key.eq_ignore_ascii_case("Return") { "Enter" } else { key };
    if key.len() == 1 && key.chars().all(|c| c.is_ascii_alphanumeric()) {
        let c = key.to_ascii_uppercase();
        return Some(if c.chars().all(|c| c.is_ascii_digit()) { format!("Digit{c}") } else { c });
    }
    NAMED_KEYS.iter().find(|k| k.eq_ignore_ascii_case(key)).map(|k| (*k).to_owned())
}

pub fn simulate_keyboard(call: &ToolCall) -> Outcome {
    let action = call.args.int("Action");
    let result = |success: bool, message: &str, key: Value| {
        reply(vec![
            ("Success", json!(success)),
            ("Message", json!(message)),
            ("Action", action_name(KEYBOARD_ACTIONS, action)),
            ("KeyName", key),
        ])
    };
    if let Err(why) = playing(&call.editor, "keyboard") {
        return result(false, why, Value::Null);
    }
    let requested = call.args.str("Key");
    if requested.is_empty() {
        return result(
            false,
            "Key parameter is required. Examples: \"W\", \"Space\", \"LeftShift\", \"A\", \"Enter\".",
            Value::Null,
        );
    }
    let Some(key) = key_name(requested) else {
        let message = format!(
            "Invalid key name: \"{requested}\". Use Input System Key enum names (e.g. \"W\", \"Space\", \"LeftShift\", \"A\", \"Enter\")."
        );
        return result(false, &message, Value::Null);
    };
    let duration = call.args.float("Duration");
    if duration < 0.0 {
        return result(false, &format!("Duration must be non-negative, got: {duration}"), Value::Null);
    }
    let editor = &call.editor;
    let message = match action {
        0 => {
            record_event(editor, "key_down", key.clone());
            record_event(editor, "key_up", key.clone());
            if duration > 0.0 { format!("Pressed '{key}' for {duration:.1}s") } else { format!("Pressed '{key}'") }
        }
        1 => {
            let mut sim = editor.sim();
            if sim.input.held.contains(&key) {
                return result(false, &format!("Key '{key}' is already held down. Call KeyUp first."), json!(key));
            }
            sim.input.held.push(key.clone());
            drop(sim);
            record_event(editor, "key_down", key.clone());
            format!("Key '{key}' held down")
        }
        2 => {
            let mut sim = editor.sim();
            let Some(at) = sim.input.held.iter().position(|k| *k == key) else {
                return result(false, &format!("Key '{key}' is not currently held. Call KeyDown first."), json!(key));
            };
            sim.input.held.remove(at);
            drop(sim);
            record_event(editor, "key_up", key.clone());
            format!("Key '{key}' released")
        }
        other => return Outcome::Fail(uloop_internal(format!("Unknown keyboard action: {other}"))),
    };
    result(true, &message, json!(key))
}

const MOUSE_BUTTONS: &[(&str, i64)] = &[("Left", 0), ("Right", 1), ("Middle", 2)];
const MOUSE_INPUT_ACTIONS: &[(&str, i64)] =
    &[("Click", 0), ("LongPress", 1), ("MoveDelta", 2), ("Scroll", 3), ("SmoothDelta", 4)];

pub fn simulate_mouse_input(call: &ToolCall) -> Outcome {
    let args = &call.args;
    let action = args.int("Action");
    let button = args.int("Button");
    let result = |success: bool, message: &str, position: Option<(f64, f64)>| {
        reply(vec![
            ("Success", json!(success)),
            ("Message", json!(message)),
            ("Action", action_name(MOUSE_INPUT_ACTIONS, action)),
            ("Button", if position.is_some() { action_name(MOUSE_BUTTONS, button) } else { Value::Null }),
            ("PositionX", position.map_or(Value::Null, |p| json!(p.0))),
            ("PositionY", position.map_or(Value::Null, |p| json!(p.1))),
        ])
    };
    if let Err(why) = playing(&call.editor, "mouse") {
        return result(false, why, None);
    }
    if !(0..=4).contains(&action) {
        let message =
            format!("Invalid Action value: {action}. Use Click, LongPress, MoveDelta, Scroll, or SmoothDelta.");
        return result(false, &message, None);
    }
    if !(0..=2).contains(&button) {
        return result(false, &format!("Invalid Button value: {button}. Use Left, Right, or Middle."), None);
    }
    let (x, y, duration) = (args.float("X"), args.float("Y"), args.float("Duration"));
    let name = MOUSE_BUTTONS[button as usize].0;
    let editor = &call.editor;
    let message = match action {
        0 if duration < 0.0 => return result(false, &format!("Duration must be non-negative, got: {duration}"), None),
        0 => {
            record_event(editor, "mouse_click", format!("{name},{x},{y}"));
            record_event(editor, "mouse_release", format!("{name},{x},{y}"));
            let held = if duration > 0.0 { format!(" for {duration:.1}s") } else { String::new() };
            format!("Clicked {name} at ({x:.1}, {y:.1}){held}")
        }
        1 | 4 if duration <= 0.0 => {
            let what = if action == 1 { "LongPress" } else { "SmoothDelta" };
            return result(false, &format!("Duration must be positive for {what}, got: {duration}"), None);
        }
        1 => {
            record_event(editor, "mouse_click", format!("{name},{x},{y}"));
            record_event(editor, "mouse_release", format!("{name},{x},{y}"));
            format!("Long-pressed {name} at ({x:.1}, {y:.1}) for {duration:.1}s")
        }
        2 => {
            let (dx, dy) = (args.float("DeltaX"), args.float("DeltaY"));
            record_event(editor, "mouse_delta", format!("{dx},{dy}"));
            format!("Mouse delta injected: ({dx:.1}, {dy:.1})")
        }
        3 => {
            let (sx, sy) = (args.float("ScrollX"), args.float("ScrollY"));
            record_event(editor, "mouse_scroll", format!("{sx},{sy}"));
            format!("Scroll injected: ({sx:.1}, {sy:.1})")
        }
        _ => {
            let (dx, dy) = (args.float("DeltaX"), args.float("DeltaY"));
            record_event(editor, "mouse_delta", format!("{dx},{dy}"));
            format!("Smooth delta ({dx:.1}, {dy:.1}) over {duration:.2}s")
        }
    };
    result(true, &message, Some((x, y)))
}

const MOUSE_UI_ACTIONS: &[(&str, i64)] =
    &[("Click", 0), ("Drag", 1), ("DragStart", 2), ("DragMove", 3), ("DragEnd", 4), ("LongPress", 5)];

/// `simulate-mouse-ui` answers its checks as uLoopMCP does; the fixture
/// scene has no EventSystem, so in play mode it says so (uLoopMCP's second check).
pub fn simulate_mouse_ui(call: &ToolCall) -> Outcome {
    let action = call.args.int("Action");
    let result = |message: &str| {
        reply(vec![
            ("Success", json!(false)),
            ("Message", json!(message)),
            ("Action", action_name(MOUSE_UI_ACTIONS, action)),
            ("HitGameObjectName", Value::Null),
            ("PositionX", json!(call.args.float("X"))),
            ("PositionY", json!(call.args.float("Y"))),
            ("EndPositionX", Value::Null),
            ("EndPositionY", Value::Null),
        ])
    };
    if let Err(why) = playing(&call.editor, "mouse") {
        return result(why);
    }
    let has_event_system = call.editor.sim().scene_roots.iter().any(|root| root.name == "EventSystem");
    if !has_event_system {
        return result("No EventSystem found in the scene. Ensure an EventSystem GameObject exists.");
    }
    Outcome::Fail(uloop_internal("fake-unity does not simulate uGUI raycasts for simulate-mouse-ui yet"))
}

/// Play mode ended: recordings and replays stop, held keys are released.
pub fn play_mode_ended(state: &mut InputState) {
    *state = InputState::default();
}
