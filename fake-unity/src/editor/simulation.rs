//! What the simulated Editor remembers across domain reloads: the console,
//! the scene, play mode, the settings, the scripts as last compiled, the
//! PlayMode input tools' recording and replay. The ground the Editor and its
//! tools stand on; it imports neither.

use std::{
    collections::BTreeMap,
    fs,
    hash::{DefaultHasher, Hash, Hasher},
    path::Path,
    time::Instant,
};

use crate::editor::state::{EditorStateFile, GameObject, LogEntry, Settings};

/// Frames a second of the simulated player loop (the input tools' clock).
pub(crate) const INPUT_FPS: f64 = 60.0;

/// Everything the simulated Editor remembers across domain reloads.
#[derive(Debug)]
pub struct Simulation {
    pub console: Vec<ConsoleEntry>,
    pub scene_roots: Vec<GameObject>,
    pub playing: bool,
    pub paused: bool,
    pub settings: Settings,
    /// Fingerprint of the scripts as last compiled.
    pub compiled_scripts: Fingerprint,
    pub next_instance_id: i64,
    /// uLoopMCP's PlayMode input tools: a recording, a replay, held keys.
    pub input: InputState,
}

impl Simulation {
    /// The Editor as it opens the project: the recorded console, then the
    /// messages of the compile that ran at opening; the scene as saved; the
    /// scripts as they are on disk, compiled.
    pub fn opened(state: &EditorStateFile, project: &Path) -> Simulation {
        let mut console: Vec<ConsoleEntry> =
            state.console.iter().map(|e| ConsoleEntry { entry: e.clone(), from_compile: false }).collect();
        console.extend(state.compile.diagnostics.iter().map(|d| ConsoleEntry {
            entry: LogEntry {
                log_type: match d.severity {
                    crate::editor::state::Severity::Error => crate::editor::state::LogType::Error,
                    crate::editor::state::Severity::Warning => crate::editor::state::LogType::Warning,
                },
                message: d.unity_message(),
                stack_trace: String::new(),
            },
            from_compile: true,
        }));
        console.extend(state.load_logs.iter().map(|e| ConsoleEntry { entry: e.clone(), from_compile: false }));
        Simulation {
            console,
            scene_roots: state.scene.roots.clone(),
            playing: false,
            paused: false,
            settings: state.settings.clone(),
            compiled_scripts: Fingerprint::of_project(project),
            next_instance_id: -1000,
            input: Default::default(),
        }
    }
}

/// A console line; `from_compile` marks compiler messages, which the next
/// compile replaces, as Unity does.
#[derive(Clone, Debug)]
pub struct ConsoleEntry {
    pub entry: LogEntry,
    pub from_compile: bool,
}

/// The project's scripts: project-relative path → content hash.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fingerprint(BTreeMap<String, u64>);

impl Fingerprint {
    /// Hashes every script Unity would compile: `*.cs` under `Assets/`,
    /// skipping hidden folders and those ending in `~`, as Unity does.
    pub fn of_project(project: &Path) -> Fingerprint {
        let mut scripts = BTreeMap::new();
        for (rel, text) in scripts_of(project) {
            let mut h = DefaultHasher::new();
            text.hash(&mut h);
            scripts.insert(rel, h.finish());
        }
        Fingerprint(scripts)
    }
}

/// (project-relative path, contents) of every script.
pub(crate) fn scripts_of(project: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![project.join("Assets")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name.ends_with('~') {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if name.ends_with(".cs") {
                if let (Ok(text), Ok(rel)) = (fs::read_to_string(&path), path.strip_prefix(project)) {
                    out.push((rel.to_string_lossy().replace('\\', "/"), text));
                }
            }
        }
    }
    out.sort();
    out
}

/// What the input tools remember between calls.
#[derive(Debug, Default)]
pub struct InputState {
    pub(crate) recording: Option<Recording>,
    pub(crate) replay: Option<Replay>,
    /// Keys held down by `simulate-keyboard` KeyDown.
    pub(crate) held: Vec<String>,
}

#[derive(Debug)]
pub(crate) struct Recording {
    pub(crate) started: Instant,
    pub(crate) output: Option<String>,
    /// (frame, event type, data)
    pub(crate) events: Vec<(u64, &'static str, String)>,
}

#[derive(Debug)]
pub(crate) struct Replay {
    pub(crate) started: Instant,
    pub(crate) path: String,
    pub(crate) total_frames: u64,
    pub(crate) looping: bool,
}

impl Replay {
    /// The frame it is at, or `None` once a replay that does not loop ended.
    pub(crate) fn frame(&self) -> Option<u64> {
        let frame = (self.started.elapsed().as_secs_f64() * INPUT_FPS) as u64;
        match (self.looping, self.total_frames) {
            (_, 0) => None,
            (true, total) => Some(frame % total),
            (false, total) => (frame < total).then_some(frame),
        }
    }
}
