//! The Editor's windows and play mode: `focus-window`, `control-play-mode`
//! and `screenshot` (a real PNG, drawn from the scene).

use base64::Engine as _;
use editor_link::jsonrpc::{ErrorKind, ErrorObject};
use serde_json::json;

use super::{After, Outcome, ToolCall, result};
use crate::editor::{Editor, state::GameObject};

pub const PLAY_ACTIONS: &[(&str, i64)] = &[("Play", 0), ("Stop", 1), ("Pause", 2)];

pub fn focus_window(call: &ToolCall) -> Outcome {
    let product = &call.editor.base.editor.product_name;
    Outcome::Reply(result([
        ("Success", true.into()),
        ("Message", format!("Unity Editor window for {product} brought to front").into()),
        ("ErrorMessage", "".into()),
    ]))
}

/// Applies a play-mode action; returns the message and what follows (a
/// domain reload when entering play mode reloads the domain).
pub fn apply_play_action(editor: &Editor, action: &str) -> (String, Option<After>) {
    let mut sim = editor.sim();
    match action {
        "Play" if sim.playing && sim.paused => {
            sim.paused = false;
            ("Play mode resumed".into(), None)
        }
        "Play" if sim.playing => ("Already in play mode".into(), None),
        "Play" => {
            sim.playing = true;
            sim.paused = false;
            let after = editor.entering_play_mode_reloads().then_some(After::Reload);
            ("Entered play mode".into(), after)
        }
        "Stop" if sim.playing => {
            sim.playing = false;
            sim.paused = false;
            ("Exited play mode".into(), None)
        }
        "Stop" => ("Not in play mode".into(), None),
        _ => {
            sim.paused = true;
            let message = if sim.playing { "Play mode paused" } else { "Paused: play mode will start paused" };
            (message.into(), None)
        }
    }
}

pub fn control_play_mode(call: &ToolCall) -> Outcome {
    let (message, after) = apply_play_action(&call.editor, call.args.str("Action"));
    let (playing, paused) = {
        let sim = call.editor.sim();
        (sim.playing, sim.paused)
    };
    let reply = result([("IsPlaying", playing.into()), ("IsPaused", paused.into()), ("Message", message.into())]);
    match after {
        Some(after) => Outcome::ReplyThen(reply, after),
        None => Outcome::Reply(reply),
    }
}

pub fn screenshot(call: &ToolCall) -> Outcome {
    let args = &call.args;
    let editor = &call.editor;
    let wanted = args.str("WindowName");
    let scale = args.float("ResolutionScale");
    let Some(window) = editor.base.windows.iter().find(|w| w.name.eq_ignore_ascii_case(wanted)) else {
        let open: Vec<&str> = editor.base.windows.iter().map(|w| w.name.as_str()).collect();
        return Outcome::Reply(result([
            ("Screenshots", json!([])),
            ("ScreenshotCount", 0.into()),
            ("Message", format!("Window '{wanted}' is not open. Open windows: {}", open.join(", ")).into()),
        ]));
    };
    let width = ((f64::from(window.width) * scale).round() as u32).max(1);
    let height = ((f64::from(window.height) * scale).round() as u32).max(1);
    let roots = editor.sim().scene_roots.clone();
    let png = match render_png(width, height, &window.name, &roots) {
        Ok(png) => png,
        Err(err) => {
            return Outcome::Fail(ErrorObject::new(ErrorKind::InternalError, format!("PNG encoding failed: {err}")));
        }
    };
    let rel = match editor.write_output("Screenshots", &window.name.replace(' ', "_"), "png", &png) {
        Ok(rel) => rel,
        Err(error) => return Outcome::Fail(error),
    };
    let mut shot = json!({"ImagePath": rel, "Width": width, "Height": height, "FileSizeBytes": png.len()});
    if args.bool("IncludeImageData") {
        shot["ImageDataBase64"] = base64::engine::general_purpose::STANDARD.encode(&png).into();
    }
    Outcome::Reply(result([
        ("Screenshots", json!([shot])),
        ("ScreenshotCount", 1.into()),
        ("Message", format!("Captured the {} window ({width}x{height})", window.name).into()),
    ]))
}

/// Draws a simple, deterministic picture of the scene: sky, ground, and a
/// block for each active root object.
pub(crate) fn render_png(
    width: u32,
    height: u32,
    window: &str,
    roots: &[GameObject],
) -> Result<Vec<u8>, png::EncodingError> {
    let (w, h) = (width as usize, height as usize);
    let mut pixels = vec![0u8; w * h * 3];
    let tint = window.bytes().fold(0u32, |a, b| a.wrapping_mul(31).wrapping_add(u32::from(b)));
    let horizon = h * 2 / 3;
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) * 3;
            let rgb = if y < horizon {
                let t = (y * 255 / horizon.max(1)) as u8;
                [90u8.saturating_add(t / 3), 150u8.saturating_add(t / 4), 230]
            } else {
                let checker = ((x / 16 + y / 16) % 2) as u8 * 20;
                [60 + checker, 110 + checker, 60 + (tint % 40) as u8]
            };
            pixels[i..i + 3].copy_from_slice(&rgb);
        }
    }
    let active: Vec<&GameObject> = roots.iter().filter(|g| g.active).collect();
    for (n, go) in active.iter().enumerate() {
        let bw = (w / (active.len() * 2 + 1)).max(1);
        let x0 = bw * (2 * n + 1);
        let bh = (h / 6).max(1) + (go.instance_id.unsigned_abs() as usize % (h / 6).max(1));
        let y0 = horizon.saturating_sub(bh);
        let color = [(go.instance_id.unsigned_abs() % 200) as u8 + 40, 70, (tint % 200) as u8 + 40];
        for y in y0..horizon {
            for x in x0..(x0 + bw).min(w) {
                let i = (y * w + x) * 3;
                pixels[i..i + 3].copy_from_slice(&color);
            }
        }
    }
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&pixels)?;
    }
    Ok(out)
}
