//! The editor state is the model of `fixtures/unity-project`: these checks
//! keep the two in step (see fixtures/editor-states/README.md). Each reads the
//! project's own files — the scene's YAML, the scripts, the metas, the
//! project settings — and compares them with `default.json`.

use std::{
    collections::{BTreeMap, BTreeSet},
    fs,
    path::Path,
};

use fake_unity::editor::state::{EditorStateFile, GameObject, TestOutcome};
use regex::Regex;

use crate::support::{fixture_project, fixtures};

fn state() -> EditorStateFile {
    EditorStateFile::load(&fixtures().join("editor-states/default.json")).unwrap()
}

fn read(rel: &str) -> String {
    fs::read_to_string(fixture_project().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every file under `dir`, project-relative, with `/`.
fn files_under(root: &Path, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.join(dir)];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            if path.is_dir() {
                out.push(rel);
                stack.push(path);
            } else {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

fn meta_guid(rel: &str) -> String {
    let meta = read(&format!("{rel}.meta"));
    meta.lines().find_map(|l| l.strip_prefix("guid: ")).unwrap_or_else(|| panic!("{rel}.meta has no guid")).to_owned()
}

/// One YAML document of a Unity scene: class id, file id, and its top-level
/// `key: value` lines plus list items of `m_Component` / `m_Children` / `m_Roots`.
#[derive(Debug, Default)]
struct Doc {
    class_id: u32,
    fields: BTreeMap<String, String>,
    refs: Vec<u64>,
}

fn parse_scene(text: &str) -> BTreeMap<u64, Doc> {
    let header = Regex::new(r"^--- !u!(\d+) &(\d+)").unwrap();
    let file_id = Regex::new(r"fileID: (-?\d+)").unwrap();
    let mut docs = BTreeMap::new();
    let mut current: Option<(u64, Doc)> = None;
    for line in text.lines() {
        if let Some(c) = header.captures(line) {
            if let Some((id, doc)) = current.take() {
                docs.insert(id, doc);
            }
            current = Some((c[2].parse().unwrap(), Doc { class_id: c[1].parse().unwrap(), ..Doc::default() }));
            continue;
        }
        let Some((_, doc)) = current.as_mut() else { continue };
        if let Some(item) = line.strip_prefix("  - ") {
            if let Some(c) = file_id.captures(item) {
                doc.refs.push(c[1].parse().unwrap());
            }
        } else if let Some(field) = line.strip_prefix("  ").filter(|l| !l.starts_with(' ')) {
            if let Some((k, v)) = field.split_once(':') {
                doc.fields.insert(k.to_owned(), v.trim().to_owned());
            }
        }
    }
    if let Some((id, doc)) = current {
        docs.insert(id, doc);
    }
    docs
}

fn class_name(class_id: u32) -> &'static str {
    match class_id {
        4 => "Transform",
        20 => "Camera",
        23 => "MeshRenderer",
        33 => "MeshFilter",
        54 => "Rigidbody",
        65 => "BoxCollider",
        81 => "AudioListener",
        108 => "Light",
        114 => "MonoBehaviour",
        135 => "SphereCollider",
        136 => "CapsuleCollider",
        other => panic!("the scene uses class id {other}, unknown to this check"),
    }
}

/// The scene as (path → (tag, layer, active, components, child names)).
type SceneModel = BTreeMap<String, (String, u32, bool, Vec<String>, Vec<String>)>;

/// Walks the scene's YAML from the roots, resolving scripts through the metas.
struct SceneReader {
    docs: BTreeMap<u64, Doc>,
    /// Script guid → class name (the file stem).
    scripts: BTreeMap<String, String>,
    script_guid: Regex,
    file_id: Regex,
}

/// Serialized values by `path#Component`.
type Fields = BTreeMap<String, BTreeMap<String, String>>;

impl SceneReader {
    fn game_object_of(&self, transform: u64) -> &Doc {
        let id: u64 = self.file_id.captures(&self.docs[&transform].fields["m_GameObject"]).unwrap()[1].parse().unwrap();
        &self.docs[&id]
    }

    /// Visits one object and its children; returns its name.
    fn walk(&self, transform: u64, parent: Option<&str>, model: &mut SceneModel, fields: &mut Fields) -> String {
        let go = self.game_object_of(transform);
        let name = go.fields["m_Name"].clone();
        let path = parent.map_or(name.clone(), |p| format!("{p}/{name}"));
        let mut components = Vec::new();
        for component in &go.refs {
            let doc = &self.docs[component];
            let type_name = match class_name(doc.class_id) {
                "MonoBehaviour" => {
                    let guid = &self.script_guid.captures(&doc.fields["m_Script"]).unwrap()[1];
                    let script = self.scripts[guid].clone();
                    let own =
                        doc.fields.iter().filter(|(k, _)| !k.starts_with("m_")).map(|(k, v)| (k.clone(), v.clone()));
                    fields.insert(format!("{path}#{script}"), own.collect());
                    script
                }
                "Transform" => {
                    let position = doc.fields["m_LocalPosition"].clone();
                    fields.insert(
                        format!("{path}#Transform"),
                        BTreeMap::from([("m_LocalPosition".to_owned(), position)]),
                    );
                    "Transform".to_owned()
                }
                other => other.to_owned(),
            };
            components.push(type_name);
        }
        let children: Vec<String> =
            self.docs[&transform].refs.iter().map(|child| self.walk(*child, Some(&path), model, fields)).collect();
        let (tag, layer, active) =
            (go.fields["m_TagString"].clone(), go.fields["m_Layer"].parse().unwrap(), go.fields["m_IsActive"] == "1");
        model.insert(path, (tag, layer, active, components, children));
        name
    }
}

fn scene_from_yaml() -> (SceneModel, Vec<String>, Fields) {
    let reader = SceneReader {
        docs: parse_scene(&read("Assets/Scenes/SampleScene.unity")),
        scripts: files_under(&fixture_project(), "Assets")
            .into_iter()
            .filter(|f| f.ends_with(".cs"))
            .map(|f| (meta_guid(&f), Path::new(&f).file_stem().unwrap().to_string_lossy().into_owned()))
            .collect(),
        script_guid: Regex::new(r"guid: ([0-9a-f]{32})").unwrap(),
        file_id: Regex::new(r"fileID: (\d+)").unwrap(),
    };
    let roots_doc = reader.docs.values().find(|d| d.class_id == 1660057539).expect("a SceneRoots document");
    let (mut model, mut fields) = (SceneModel::new(), Fields::new());
    let root_names = roots_doc.refs.iter().map(|root| reader.walk(*root, None, &mut model, &mut fields)).collect();
    (model, root_names, fields)
}

fn scene_from_state(roots: &[GameObject]) -> SceneModel {
    fn walk(go: &GameObject, parent: Option<&str>, out: &mut SceneModel) {
        let path = parent.map_or(go.name.clone(), |p| format!("{p}/{}", go.name));
        let components = go.components.iter().map(|c| c.type_name.clone()).collect();
        let children = go.children.iter().map(|c| c.name.clone()).collect();
        out.insert(path.clone(), (go.tag.clone(), go.layer, go.active, components, children));
        for child in &go.children {
            walk(child, Some(&path), out);
        }
    }
    let mut out = SceneModel::new();
    for root in roots {
        walk(root, None, &mut out);
    }
    out
}

#[test]
fn the_scene_matches_the_state() {
    let state = state();
    let (yaml, roots, fields) = scene_from_yaml();
    let model = scene_from_state(&state.scene.roots);
    assert_eq!(roots, state.scene.roots.iter().map(|r| r.name.clone()).collect::<Vec<_>>(), "root order");
    for (path, expected) in &model {
        assert_eq!(yaml.get(path), Some(expected), "GameObject {path}");
    }
    assert_eq!(
        yaml.len(),
        model.len(),
        "objects in the scene but not the state: {:?}",
        yaml.keys().filter(|k| !model.contains_key(*k)).collect::<Vec<_>>()
    );
    // Serialized values: script fields and positions.
    fn check(go: &GameObject, parent: Option<&str>, fields: &Fields) {
        let path = parent.map_or(go.name.clone(), |p| format!("{p}/{}", go.name));
        for component in &go.components {
            let Some(yaml) = fields.get(&format!("{path}#{}", component.type_name)) else { continue };
            if component.type_name == "Transform" {
                let p = &component.properties["localPosition"];
                let expected = format!("{{x: {}, y: {}, z: {}}}", p["x"], p["y"], p["z"]);
                assert_eq!(yaml["m_LocalPosition"], expected, "{path} position");
                continue;
            }
            let expected: BTreeMap<String, String> = component
                .properties
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                .collect();
            let actual: BTreeMap<String, String> = yaml
                .iter()
                .map(|(k, v)| {
                    (k.clone(), v.parse::<f64>().ok().filter(|_| v.contains('.')).map_or(v.clone(), |f| f.to_string()))
                })
                .collect();
            let normalise = |m: &BTreeMap<String, String>| -> BTreeMap<String, String> {
                m.iter().map(|(k, v)| (k.clone(), v.parse::<f64>().map_or(v.clone(), |f| f.to_string()))).collect()
            };
            assert_eq!(normalise(&actual), normalise(&expected), "{path} {}", component.type_name);
        }
        for child in &go.children {
            check(child, Some(&path), fields);
        }
    }
    for root in &state.scene.roots {
        check(root, None, &fields);
    }
}

#[test]
fn tags_and_layers_exist_in_the_project_settings() {
    let tag_manager = read("ProjectSettings/TagManager.asset");
    let builtin_tags = ["Untagged", "MainCamera", "Player", "Respawn", "Finish", "EditorOnly", "GameController"];
    let layers: Vec<&str> = tag_manager
        .split("layers:\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("  - ") || *l == "  -")
        .map(|l| l.trim_start_matches("  -").trim())
        .collect();
    let model = scene_from_state(&state().scene.roots);
    for (path, (tag, layer, ..)) in &model {
        assert!(
            builtin_tags.contains(&tag.as_str()) || tag_manager.contains(&format!("  - {tag}\n")),
            "{path}: tag {tag}"
        );
        assert!(!layers[*layer as usize].is_empty(), "{path}: layer {layer} has no name");
    }
}

#[test]
fn the_asset_index_matches_the_files_and_their_metas() {
    let state = state();
    let root = fixture_project();
    let on_disk: Vec<String> = files_under(&root, "Assets").into_iter().filter(|f| !f.ends_with(".meta")).collect();
    let indexed: Vec<String> =
        state.assets.iter().filter(|a| a.path.starts_with("Assets/")).map(|a| a.path.clone()).collect();
    assert_eq!(indexed.iter().cloned().collect::<BTreeSet<_>>(), on_disk.iter().cloned().collect::<BTreeSet<_>>());
    for asset in state.assets.iter().filter(|a| a.path.starts_with("Assets/")) {
        assert_eq!(meta_guid(&asset.path), asset.guid, "{} guid", asset.path);
        let path = root.join(&asset.path);
        let expected_type = if path.is_dir() {
            "DefaultAsset"
        } else {
            match asset.extension().as_str() {
                "cs" => "MonoScript",
                "asmdef" => "AssemblyDefinitionAsset",
                "unity" => "SceneAsset",
                "mat" => "Material",
                "png" => "Texture2D",
                other => panic!("no expected type for .{other}"),
            }
        };
        assert_eq!(asset.asset_type, expected_type, "{}", asset.path);
        if path.is_file() {
            assert_eq!(asset.size_bytes, fs::metadata(&path).unwrap().len(), "{} size", asset.path);
        }
    }
    // The scene and material reference assets by these guids.
    let build = read("ProjectSettings/EditorBuildSettings.asset");
    assert!(build.contains(&meta_guid("Assets/Scenes/SampleScene.unity")));
    assert!(build.contains(&meta_guid("Assets/Scenes/Level2.unity")));
    assert!(read("Assets/Materials/Ground.mat").contains(&meta_guid("Assets/Textures/Checker.png")));
}

#[test]
fn the_tests_match_the_test_scripts() {
    let state = state();
    let test_attr = Regex::new(r"\[(Test|UnityTest)\]\s*public\s+\w+\s+(\w+)\s*\(\)\s*\{([^}]*)\}").unwrap();
    let namespace = Regex::new(r"namespace\s+([\w.]+)").unwrap();
    let class = Regex::new(r"public\s+class\s+(\w+)").unwrap();
    let mut found = BTreeMap::new();
    for (dir, assembly, mode) in [
        ("Assets/Tests/EditMode", "FixtureProject.Tests.EditMode", "EditMode"),
        ("Assets/Tests/PlayMode", "FixtureProject.Tests.PlayMode", "PlayMode"),
    ] {
        let asmdef: serde_json::Value = serde_json::from_str(&read(&format!("{dir}/{assembly}.asmdef"))).unwrap();
        assert_eq!(asmdef["name"], assembly);
        for file in files_under(&fixture_project(), dir).into_iter().filter(|f| f.ends_with(".cs")) {
            let text = read(&file);
            let ns = &namespace.captures(&text).unwrap()[1];
            let cls = &class.captures(&text).unwrap()[1];
            for c in test_attr.captures_iter(&text) {
                let skipped = c[3].contains("Assert.Ignore(");
                found.insert(format!("{ns}.{cls}.{}", &c[2]), (assembly.to_owned(), mode.to_owned(), skipped));
            }
        }
    }
    let recorded: BTreeMap<String, (String, String, bool)> = state
        .tests
        .iter()
        .map(|t| {
            (t.full_name.clone(), (t.assembly.clone(), format!("{:?}", t.mode), t.outcome == TestOutcome::Skipped))
        })
        .collect();
    assert_eq!(recorded, found);
}

#[test]
fn the_menu_items_match_the_editor_scripts() {
    let state = state();
    let menu_attr =
        Regex::new(r#"\[MenuItem\("([^"]+)"(?:,\s*(true|false))?(?:,\s*(\d+))?\)\]\s*public static \w+ (\w+)"#)
            .unwrap();
    let text = read("Assets/Scripts/Editor/FixtureMenu.cs");
    let found: BTreeSet<(String, String, bool)> = menu_attr
        .captures_iter(&text)
        .map(|c| (c[1].to_owned(), c[4].to_owned(), c.get(2).is_some_and(|v| v.as_str() == "true")))
        .collect();
    let recorded: BTreeSet<(String, String, bool)> = state
        .menu_items
        .iter()
        .filter(|m| m.assembly_name == "FixtureProject.Editor")
        .map(|m| (m.path.clone(), m.method_name.clone(), m.is_validate_function))
        .collect();
    assert_eq!(recorded, found);
}

#[test]
fn versions_packages_and_settings_agree() {
    let state = state();
    assert_eq!(
        read("ProjectSettings/ProjectVersion.txt").trim(),
        format!("m_EditorVersion: {}", state.editor.unity_version)
    );
    let manifest: serde_json::Value = serde_json::from_str(&read("Packages/manifest.json")).unwrap();
    let deps = &manifest["dependencies"];
    assert!(deps["com.unity.test-framework"].is_string());
    assert!(deps["com.unity.nuget.newtonsoft-json"].is_string());
    let package_path = deps["dev.unitymcp.bridge"].as_str().unwrap().strip_prefix("file:").unwrap();
    let package: serde_json::Value = serde_json::from_str(
        &fs::read_to_string(fixture_project().join("Packages").join(package_path).join("package.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(package["name"], "dev.unitymcp.bridge");
    assert_eq!(package["version"], state.editor.package_version);
    // Entering play mode reloads the domain in this project, as Unity 6's
    // default ("Reload Domain and Scene") does.
    let editor_settings = read("ProjectSettings/EditorSettings.asset");
    assert!(editor_settings.contains("m_EnterPlayModeOptions: 0"));
    assert!(fake_unity::editor::project_settings::reloads_domain(&editor_settings));
}

#[test]
fn the_console_points_at_real_lines() {
    let state = state();
    let at = Regex::new(r"\(at (Assets/[^:]+):(\d+)\)").unwrap();
    for entry in &state.console {
        for c in at.captures_iter(&entry.stack_trace) {
            let text = read(&c[1]);
            let line = c[2].parse::<usize>().unwrap();
            assert!(line >= 1 && line <= text.lines().count(), "{} line {line}", &c[1]);
        }
    }
    // What a package logs as the scripts load: the line that logs it, in the project's package.
    assert!(!state.load_logs.is_empty(), "the fixture project has a package that logs at load");
    let in_package = Regex::new(r"\(at \./(Packages/[^:]+):(\d+)\)").unwrap();
    for entry in &state.load_logs {
        let c = in_package.captures(&entry.stack_trace).unwrap_or_else(|| panic!("{:?}", entry.stack_trace));
        let text = read(&c[1]);
        let line = text.lines().nth(c[2].parse::<usize>().unwrap() - 1).unwrap_or_default();
        assert!(line.contains("Debug.Log(") && line.contains(&entry.message), "{} line {}: {line:?}", &c[1], &c[2]);
    }
    let errors = EditorStateFile::load(&fixtures().join("editor-states/compile-errors.json")).unwrap();
    let overlay =
        fs::read_to_string(fixtures().join("editor-states/compile-errors/Assets/Scripts/BrokenWeapon.cs")).unwrap();
    let lines: Vec<&str> = overlay.lines().collect();
    let quoted = Regex::new(r"'([A-Za-z.]+)").unwrap();
    for d in &errors.compile.diagnostics {
        let line = lines[d.line as usize - 1];

        let ident = quoted.captures(&d.text).map(|c| c[1].to_owned()).unwrap();
        let ident = ident.rsplit('.').next().unwrap();
        assert!(line.contains(ident) || d.code == "CS0029", "{}: line {} is {line:?}", d.code, d.line);
    }
}
