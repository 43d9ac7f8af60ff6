//! uLoopMCP 2.1.1's internal tools (`ping`, `set-client-name`,
//! `get-version`, `get-tool-details`, `debug-sleep`) and its editor-window
//! tools (`focus-window`, `control-play-mode`).

use serde_json::{Value, json};

use super::super::{After, BoxFuture, Outcome, ToolCall, ToolSchema, result};
use crate::Defect;

pub fn ping(call: &ToolCall) -> Outcome {
    let message = call.args.get("Message").as_str().unwrap_or("");
    Outcome::Reply(result([("Message", format!("Unity MCP Bridge received: {message}").into())]))
}

pub fn set_client_name(call: &ToolCall) -> Outcome {
    let name = call.args.get("ClientName").as_str().unwrap_or("");
    call.client.set_name(name);
    Outcome::Reply(result([
        ("Message", format!("Client name registered successfully: {name}").into()),
        ("ClientName", call.args.get("ClientName").clone()),
    ]))
}

pub fn get_version(call: &ToolCall) -> Outcome {
    let editor = &call.editor;
    let info = &editor.base.editor;
    let company = info.company_name.as_str();
    let product = info.product_name.as_str();
    let persistent =
        info.persistent_data_path.clone().unwrap_or_else(|| format!("~/.config/unity3d/{company}/{product}"));
    let cache = info.temporary_cache_path.clone().unwrap_or_else(|| format!("/tmp/{company}/{product}"));
    Outcome::Reply(result([
        ("UnityVersion", info.unity_version.clone().into()),
        ("Platform", info.platform.clone().into()),
        ("DataPath", editor_link::discovery::unity_path(&editor.project.join("Assets")).into()),
        ("PersistentDataPath", persistent.into()),
        ("TemporaryCachePath", cache.into()),
        ("IsEditor", true.into()),
        ("ProductName", product.into()),
        ("CompanyName", company.into()),
    ]))
}

/// Lists the tools as 2.1.1 does: each its recorded listing. The
/// deliberate defects of this tool's answer break it here as they break
/// the package's.
pub fn get_tool_details(call: &ToolCall) -> Outcome {
    let include_dev = call.args.bool("IncludeDevelopmentOnly") || call.editor.has_defect(Defect::ListsInternalTools);
    let types_as_strings = call.editor.has_defect(Defect::SchemaTypesAsStrings);
    let reworded = call.editor.has_defect(Defect::RewordedDescriptions);
    let outside_enum = call.editor.has_defect(Defect::EnumDefaultsOutsideEnum);
    let lists_internal_commands = call.editor.has_defect(Defect::ListsInternalCommands);
    let tools: Vec<Value> = crate::tools::offered(&call.editor, include_dev)
        .into_iter()
        .filter_map(|t| match &t.schema {
            // uLoopMCP 3's internal commands have no listing.
            ToolSchema::Uloop(binding) if !binding.listing.is_null() => Some(binding.listing.clone()),
            // Unless a defect lists them (as v3's listing shapes a tool).
            ToolSchema::Uloop(_) if lists_internal_commands => Some(json!({
                "name": t.name,
                "parameterSchema": {"Properties": {}, "Required": []},
                "displayDevelopmentOnly": false,
            })),
            ToolSchema::Uloop(_) | ToolSchema::Declared => None,
        })
        .map(|mut listing| {
            if let Some(Value::String(description)) = listing.get_mut("description").filter(|_| reworded) {
                *description = format!("Reworded: {description}");
            }
            let properties = listing.pointer_mut("/parameterSchema/Properties").and_then(Value::as_object_mut);
            for property in properties.into_iter().flat_map(|p| p.values_mut()).filter(|_| outside_enum) {
                // 2.1.1 sends an enum's default as its integer: one no value has.
                if property["Enum"].is_array() && property["DefaultValue"].is_i64() {
                    property["DefaultValue"] = json!(-1);
                }
            }
            if types_as_strings {
                let properties = listing.pointer_mut("/parameterSchema/Properties").and_then(Value::as_object_mut);
                for property in properties.into_iter().flat_map(|p| p.values_mut()) {
                    property["Type"] = json!("string");
                }
            }
            listing
        })
        .collect();
    Outcome::Reply(result([("Tools", tools.into())]))
}

/// `SleepTool`: whole seconds (the schema's int), one at a time.
pub fn debug_sleep(call: ToolCall) -> BoxFuture {
    Box::pin(async move {
        let seconds = call.args.int("SleepSeconds").max(0);
        for _ in 0..seconds {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
        Outcome::Reply(result([
            ("Message", format!("Successfully slept for {seconds} seconds").into()),
            ("ActualSleepSeconds", seconds.into()),
            ("WasCancelled", false.into()),
        ]))
    })
}

/// 2.1.1's CLI focuses the window itself; the Editor's tool asks for a newer CLI.
pub fn focus_window(_call: &ToolCall) -> Outcome {
    Outcome::Reply(result([
        ("Success", false.into()),
        ("Message", "Please update uloop-cli to the latest version for improved focus-window support. Run: npm install -g uloop-cli@latest".into()),
        ("ErrorMessage", "focus-window now uses OS-level commands and works even during Unity compilation. Update CLI to use this feature.".into()),
    ]))
}

/// `ControlPlayModeUseCase`: Play (0), Stop (1), Pause (2); the flags as
/// they are after acting.
pub fn control_play_mode(call: &ToolCall) -> Outcome {
    let action = call.args.int("Action");
    let editor = &call.editor;
    let (message, after) = {
        let mut sim = editor.sim();
        match action {
            0 => {
                let was_paused = sim.paused;
                sim.paused = false;
                let starts = !sim.playing;
                sim.playing = true;
                let after = (starts && editor.entering_play_mode_reloads()).then_some(After::Reload);
                (if was_paused { "Play mode resumed" } else { "Play mode started" }.to_owned(), after)
            }
            1 => {
                sim.paused = false;
                sim.playing = false;
                super::input::play_mode_ended(&mut sim.input);
                ("Play mode stopped".to_owned(), None)
            }
            2 => {
                sim.paused = true;
                ("Play mode paused".to_owned(), None)
            }
            other => (format!("Unknown action: {other}"), None),
        }
    };
    let (playing, paused) = {
        let sim = editor.sim();
        (sim.playing, sim.paused)
    };
    let reply = result([("IsPlaying", playing.into()), ("IsPaused", paused.into()), ("Message", json!(message))]);
    match after {
        Some(after) => Outcome::ReplyThen(reply, after),
        None => Outcome::Reply(reply),
    }
}
