//! Every tool of protocol §6 against the fixture project's state: results,
//! filters, state changes that stick, and the errors of §3.

use std::collections::BTreeSet;

use editor_link::{jsonrpc::notifications, tool_details::ToolDetails};
use serde_json::{Value, json};

use crate::support::{TestEditor, fixtures, kind, none};

fn names(list: &Value, field: &str) -> Vec<String> {
    list.as_array().unwrap().iter().map(|v| v[field].as_str().unwrap().to_owned()).collect()
}

// ---- internal tools ----

#[tokio::test]
async fn get_tool_details_lists_public_tools_with_their_schemas() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    let details: ToolDetails = serde_json::from_value(client.ok("get-tool-details", none()).await).unwrap();
    let listed: Vec<&str> = details.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        listed,
        [
            "compile",
            "get-logs",
            "run-tests",
            "clear-console",
            "find-game-objects",
            "unity-search",
            "get-hierarchy",
            "get-provider-details",
            "get-menu-items",
            "execute-menu-item",
            "execute-dynamic-code",
            "focus-window",
            "control-play-mode",
            "screenshot"
        ]
    );
    assert_eq!(details.ver.as_deref(), Some("0.1.0"));
    let logs = details.get("get-logs").unwrap();
    let props: Vec<&str> = logs.parameter_schema.properties.keys().map(String::as_str).collect();
    assert_eq!(
        props,
        ["LogType", "MaxCount", "SearchText", "UseRegex", "SearchInStackTrace", "IncludeStackTrace", "TimeoutSeconds"]
    );
    let log_type = &logs.parameter_schema.properties["LogType"];
    assert_eq!(log_type.enum_values.as_deref().unwrap(), ["Error", "Warning", "Log", "All"]);
    assert_eq!(log_type.default_value, Some(json!("All")));
    assert_eq!(logs.annotations.as_ref().unwrap().read_only_hint, Some(true));

    let all: ToolDetails =
        serde_json::from_value(client.ok("get-tool-details", json!({"IncludeDevelopmentOnly": true})).await).unwrap();
    assert_eq!(all.tools.len(), 19);
    for internal in ["ping", "set-client-name", "get-tool-details", "get-version", "debug-sleep"] {
        assert!(all.get(internal).unwrap().display_development_only, "{internal}");
    }
}

#[tokio::test]
async fn disabling_a_tool_hides_it_refuses_it_and_tells_clients() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    client.ok("ping", none()).await;
    editor.fake.control().post("/settings", json!({"disabledTools": ["get-hierarchy"]})).await.unwrap();
    client.notification(notifications::TOOLS_LIST_CHANGED).await;
    let details: ToolDetails = serde_json::from_value(client.ok("get-tool-details", none()).await).unwrap();
    assert!(details.get("get-hierarchy").is_none());
    let err = client.err("get-hierarchy", none()).await;
    assert_eq!((err.code, kind(&err)), (-32603, "tool_disabled"));
    assert_eq!(err.detail(), "Tool 'get-hierarchy' is disabled in settings");
}

#[tokio::test]
async fn get_version_set_client_name_and_debug_sleep() {
    let editor = TestEditor::start().await;
    let mut client = editor.connect().await;
    let version = client.ok("get-version", none()).await;
    assert_eq!(version["UnityVersion"], "6000.0.65f1");
    assert_eq!(version["ProtocolVersion"], 1);
    assert_eq!(
        version["Capabilities"],
        json!(["resume", "progress", "newline-framing", "image-data", "output-schema", "editor-state"])
    );
    // Answered by the link, not a tool: a free main thread, nothing waiting.
    let state = client.ok("get-editor-state", none()).await;
    assert_eq!(
        (state["QueuedForMainThread"].as_u64(), state["OldestQueuedMs"].as_u64()),
        (Some(0), Some(0)),
        "{state}"
    );
    assert_eq!(state["PlayMode"], "edit");
    assert!(state.get("Dialog").is_none() && state["Ver"].is_string(), "{state}");
    assert_eq!(version["DataPath"], format!("{}/Assets", std::fs::canonicalize(editor.path()).unwrap().display()));

    let named = client.ok("set-client-name", json!({"ClientName": "claude-code"})).await;
    assert_eq!(named["ClientName"], "claude-code");
    assert_eq!(editor.state().await["connections"][0]["name"], "claude-code");

    let slept = client.ok("debug-sleep", json!({"SleepSeconds": 0.05})).await;
    assert_eq!((slept["ActualSleepSeconds"].clone(), slept["WasCancelled"].clone()), (json!(0.05), json!(false)));
    let err = client.err("debug-sleep", json!({"SleepSeconds": 5, "TimeoutSeconds": 0.1})).await;
    assert_eq!((err.code, kind(&err)), (-32603, "timeout"));
    assert!(err.detail().contains("timed out after 0.1 seconds"), "{}", err.detail());
}

// ---- console ----

#[tokio::test]
async fn get_logs_filters() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let all = c.ok("get-logs", none()).await;
    assert_eq!((all["TotalCount"].clone(), all["DisplayedCount"].clone()), (json!(8), json!(8)));
    assert_eq!(all["Logs"][0]["Message"], "GameManager initialised for level Meadow");

    let errors = c.ok("get-logs", json!({"LogType": "Error"})).await;
    assert_eq!(errors["TotalCount"], 2);
    assert!(errors["Logs"].as_array().unwrap().iter().all(|l| l["Type"] == "Error"));
    assert_eq!(c.ok("get-logs", json!({"LogType": "Warning"})).await["TotalCount"], 2);
    assert_eq!(c.ok("get-logs", json!({"LogType": "Log"})).await["TotalCount"], 4);

    let last = c.ok("get-logs", json!({"MaxCount": 2})).await;
    assert_eq!((last["TotalCount"].clone(), last["DisplayedCount"].clone()), (json!(8), json!(2)));
    // The last two: the recorded console's last line, then what a package logged as the scripts loaded.
    assert_eq!(last["Logs"][0]["Message"], "Player reached checkpoint 1 (score 20)");
    assert_eq!(last["Logs"][1]["Message"], "Fixture logs-at-load 1.0.0: scripts loaded");

    // Case-insensitive: two recorded lines and the package's "Fixture logs-at-load".
    assert_eq!(c.ok("get-logs", json!({"SearchText": "FIXTURE"})).await["TotalCount"], 3);
    let regex = c.ok("get-logs", json!({"SearchText": "^(Hello|Player)\\b", "UseRegex": true})).await;
    assert_eq!(
        names(&regex["Logs"], "Message"),
        ["Hello from the fixture project", "Player reached checkpoint 1 (score 20)"]
    );
    assert_eq!(c.ok("get-logs", json!({"SearchText": "EnemyAI.cs"})).await["TotalCount"], 0);
    assert_eq!(
        c.ok("get-logs", json!({"SearchText": "EnemyAI.cs", "SearchInStackTrace": true})).await["TotalCount"],
        2
    );

    let bare = c.ok("get-logs", json!({"IncludeStackTrace": false, "MaxCount": 1})).await;
    assert!(bare["Logs"][0].get("StackTrace").is_none());
    assert_eq!(bare["IncludeStackTrace"], false);

    let err = c.err("get-logs", json!({"SearchText": "(unclosed", "UseRegex": true})).await;
    assert_eq!((err.code, err.data.unwrap()["parameter"].clone()), (-32602, json!("SearchText")));
}

#[tokio::test]
async fn clear_console_empties_the_log_and_reports_what_it_cleared() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let cleared = c.ok("clear-console", none()).await;
    assert_eq!(cleared["ClearedLogCount"], 8);
    assert_eq!(cleared["ClearedCounts"], json!({"ErrorCount": 2, "WarningCount": 2, "LogCount": 4}));
    let logs = c.ok("get-logs", none()).await;
    assert_eq!(names(&logs["Logs"], "Message"), ["=== Console cleared via MCP ==="]);
    let again = c.ok("clear-console", json!({"AddConfirmationMessage": false})).await;
    assert_eq!(again["ClearedCounts"], json!({"ErrorCount": 0, "WarningCount": 0, "LogCount": 1}));
    assert_eq!(c.ok("get-logs", none()).await["TotalCount"], 0);
}

// ---- scene ----

#[tokio::test]
async fn find_game_objects_search_modes_and_filters() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let find = |params: Value| params;
    let exact = c.ok("find-game-objects", find(json!({"NamePattern": "Crate"}))).await;
    assert_eq!(names(&exact["results"], "path"), ["Environment/Props/Crate"]);
    assert_eq!(
        exact["results"][0]["components"][0]["AssemblyQualifiedName"],
        "UnityEngine.Transform, UnityEngine.CoreModule, Version=0.0.0.0, Culture=neutral, PublicKeyToken=null"
    );

    let path = c.ok("find-game-objects", json!({"NamePattern": "Player/Model/Head", "SearchMode": "Path"})).await;
    assert_eq!(names(&path["results"], "name"), ["Head"]);

    let contains = c.ok("find-game-objects", json!({"NamePattern": "enemy", "SearchMode": "Contains"})).await;
    assert_eq!(names(&contains["results"], "name"), ["Enemy_01", "Enemy_02"], "inactive excluded by default");
    let with_inactive = c
        .ok("find-game-objects", json!({"NamePattern": "enemy", "SearchMode": "Contains", "IncludeInactive": true}))
        .await;
    assert_eq!(names(&with_inactive["results"], "name"), ["Enemy_01", "Enemy_02", "Enemy_Dormant"]);

    let regex = c.ok("find-game-objects", json!({"NamePattern": "^Coin_\\d+$", "SearchMode": "Regex"})).await;
    assert_eq!(names(&regex["results"], "name"), ["Coin_01", "Coin_02"]);

    let scripted = c.ok("find-game-objects", json!({"RequiredComponents": ["EnemyAI", "Health"]})).await;
    assert_eq!(names(&scripted["results"], "name"), ["Enemy_01", "Enemy_02"]);
    let qualified = c.ok("find-game-objects", json!({"RequiredComponents": ["FixtureProject.PlayerController"]})).await;
    assert_eq!(names(&qualified["results"], "name"), ["Player"]);

    let tagged = c.ok("find-game-objects", json!({"Tag": "Pickup", "MaxResults": 2})).await;
    assert_eq!((tagged["totalFound"].clone(), tagged["results"].as_array().unwrap().len()), (json!(3), 2));
    let layered = c.ok("find-game-objects", json!({"Layer": 8})).await;
    assert_eq!(names(&layered["results"], "name"), ["Ground"]);
    // A child of an inactive parent is inactive in the hierarchy.
    let lid = c.ok("find-game-objects", json!({"NamePattern": "BarrelLid"})).await;
    assert_eq!(lid["totalFound"], 0);
    let lid = c.ok("find-game-objects", json!({"NamePattern": "BarrelLid", "IncludeInactive": true})).await;
    assert_eq!(lid["results"][0]["isActive"], true, "isActive is activeSelf");

    let player = c.ok("find-game-objects", json!({"NamePattern": "Player"})).await;
    let controller = &player["results"][0]["components"][3];
    assert_eq!(controller["TypeName"], "PlayerController");
    assert_eq!(controller["Properties"], json!({"moveSpeed": 5.0, "jumpHeight": 2.0}));
    let inherited =
        c.ok("find-game-objects", json!({"NamePattern": "Player", "IncludeInheritedProperties": true})).await;
    let props = &inherited["results"][0]["components"][3]["Properties"];
    assert_eq!(
        (props["enabled"].clone(), props["name"].clone(), props["moveSpeed"].clone()),
        (json!(true), json!("Player"), json!(5.0))
    );

    let nothing = c.ok("find-game-objects", none()).await;
    assert_eq!(nothing["totalFound"], 0);
    assert!(nothing["errorMessage"].as_str().unwrap().contains("At least one search criterion"));
}

#[tokio::test]
async fn get_hierarchy_depth_root_inactive_and_components() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let full = c.ok("get-hierarchy", none()).await;
    assert_eq!(
        full["context"],
        json!({"sceneType": "editor", "sceneName": "SampleScene", "nodeCount": 21, "maxDepth": 3})
    );
    assert_eq!(
        names(&full["hierarchy"], "name"),
        ["Main Camera", "Directional Light", "GameManager", "Environment", "Player", "Enemies", "Pickups"]
    );
    assert_eq!(full["hierarchy"][0]["components"], json!(["Transform", "Camera", "AudioListener"]));

    let shallow = c.ok("get-hierarchy", json!({"MaxDepth": 0})).await;
    assert_eq!(shallow["context"]["nodeCount"], 7);
    assert!(shallow["hierarchy"][3]["children"].as_array().unwrap().is_empty());

    let active = c.ok("get-hierarchy", json!({"IncludeInactive": false})).await;
    assert_eq!(active["context"]["nodeCount"], 18, "Barrel, its lid and Enemy_Dormant are left out");

    let rooted = c.ok("get-hierarchy", json!({"RootPath": "Environment/Props", "IncludeComponents": false})).await;
    assert_eq!(rooted["hierarchy"][0]["name"], "Props");
    assert_eq!(rooted["hierarchy"][0]["depth"], 0);
    assert_eq!(rooted["hierarchy"][0]["children"][1]["children"][0]["name"], "BarrelLid");
    assert_eq!(rooted["hierarchy"][0]["components"], json!([]));
    assert_eq!(rooted["context"]["nodeCount"], 4);

    let missing = c.ok("get-hierarchy", json!({"RootPath": "Nowhere"})).await;
    assert_eq!(missing["ErrorMessage"], "GameObject not found at path: Nowhere");

    let saved = c.ok("get-hierarchy", json!({"MaxResponseSizeKB": 1})).await;
    assert_eq!(
        (saved["hierarchySavedToFile"].clone(), saved["saveToFileReason"].clone()),
        (json!(true), json!("auto_threshold"))
    );
    let rel = saved["hierarchyFilePath"].as_str().unwrap();
    assert!(rel.starts_with(".uloop/outputs/HierarchyResults/hierarchy_") && rel.ends_with(".json"), "{rel}");
    let file: Value = serde_json::from_slice(&std::fs::read(editor.path().join(rel)).unwrap()).unwrap();
    assert_eq!(file["hierarchy"], full["hierarchy"]);
    assert_eq!(saved["context"]["nodeCount"], 21);
}

// ---- search ----

#[tokio::test]
async fn unity_search_query_syntax_and_filters() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let scripts = c.ok("unity-search", json!({"SearchQuery": "*.cs"})).await;
    assert_eq!(scripts["TotalCount"], 11);
    assert_eq!(scripts["ProvidersUsed"], json!(["asset", "scene", "menu", "settings"]));
    assert!(scripts["Results"].as_array().unwrap().iter().all(|r| r["Type"] == "MonoScript"));

    let textures = c.ok("unity-search", json!({"SearchQuery": "t:Texture2D", "IncludeMetadata": true})).await;
    assert_eq!(names(&textures["Results"], "Path"), ["Assets/Textures/Checker.png"]);
    assert_eq!(
        textures["Results"][0]["FileSize"],
        std::fs::metadata(editor.path().join("Assets/Textures/Checker.png")).unwrap().len()
    );

    let folder = c.ok("unity-search", json!({"SearchQuery": "Assets/Tests/*/*.cs"})).await;
    assert_eq!(folder["TotalCount"], 3);

    let cameras = c.ok("unity-search", json!({"SearchQuery": "h: t:Camera"})).await;
    assert_eq!(names(&cameras["Results"], "Label"), ["Main Camera"]);
    assert_eq!(cameras["ProvidersUsed"], json!(["scene"]));

    let filtered = c
        .ok(
            "unity-search",
            json!({"SearchQuery": "p: Health", "FileExtensions": ["cs"], "PathFilter": "Assets/Tests/*"}),
        )
        .await;
    assert_eq!(names(&filtered["Results"], "Path"), ["Assets/Tests/EditMode/HealthTests.cs"]);
    assert_eq!(filtered["AppliedFilters"]["FilteredOutCount"], 1);

    let by_type =
        c.ok("unity-search", json!({"SearchQuery": "Fixture", "AssetTypes": ["AssemblyDefinitionAsset"]})).await;
    assert_eq!(by_type["TotalCount"], 5);

    let menus = c.ok("unity-search", json!({"SearchQuery": "fixture", "Providers": ["menu"]})).await;
    assert_eq!(
        names(&menus["Results"], "Path"),
        ["Tools/Fixture/Log Hello", "Tools/Fixture/Log Warning", "Tools/Fixture/Reset Player"]
    );

    let packages = c
        .ok("unity-search", json!({"SearchQuery": "package", "SearchFlags": "Packages", "Providers": ["asset"]}))
        .await;
    assert_eq!(names(&packages["Results"], "Path"), ["Packages/dev.unitymcp.bridge/package.json"]);
    let no_packages = c.ok("unity-search", json!({"SearchQuery": "package", "Providers": ["asset"]})).await;
    assert_eq!(no_packages["TotalCount"], 0);
    let manifest = c.ok("unity-search", json!({"SearchQuery": "newtonsoft", "Providers": ["packages"]})).await;
    assert_eq!(names(&manifest["Results"], "Label"), ["com.unity.nuget.newtonsoft-json"]);

    let limited = c.ok("unity-search", json!({"SearchQuery": "*.cs", "MaxResults": 3})).await;
    assert_eq!((limited["TotalCount"].clone(), limited["DisplayedCount"].clone()), (json!(11), json!(3)));

    let unknown = c.ok("unity-search", json!({"SearchQuery": "x", "Providers": ["web"]})).await;
    assert_eq!(unknown["Success"], false);
    assert!(unknown["ErrorMessage"].as_str().unwrap().starts_with("Unknown search provider: web"));
    let empty = c.ok("unity-search", none()).await;
    assert_eq!(empty["Success"], false);
    let refs = c.ok("unity-search", json!({"SearchQuery": "ref:Player"})).await;
    assert!(refs["ErrorMessage"].as_str().unwrap().contains("ref:"));
}

#[tokio::test]
async fn unity_search_saves_large_results_to_files() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let saved = c.ok("unity-search", json!({"SearchQuery": "*.cs", "SaveToFile": true, "OutputFormat": "CSV"})).await;
    assert_eq!(
        (saved["ResultsSavedToFile"].clone(), saved["SaveToFileReason"].clone(), saved["SavedFileFormat"].clone()),
        (json!(true), json!("user_request"), json!("CSV"))
    );
    assert_eq!((saved["Results"].clone(), saved["TotalCount"].clone()), (json!([]), json!(11)));
    let rel = saved["ResultsFilePath"].as_str().unwrap();
    assert!(rel.starts_with(".uloop/outputs/SearchResults/") && rel.ends_with(".csv"), "{rel}");
    let csv = std::fs::read_to_string(editor.path().join(rel)).unwrap();
    assert_eq!(csv.lines().count(), 12);
    assert!(csv.starts_with("Id,Label,Description,Provider,Type,Path,Score\n"));

    let auto = c.ok("unity-search", json!({"SearchQuery": "*.cs", "AutoSaveThreshold": 5})).await;
    assert_eq!(
        (auto["SaveToFileReason"].clone(), auto["SavedFileFormat"].clone()),
        (json!("auto_threshold"), json!("JSON"))
    );
    let file: Value =
        serde_json::from_slice(&std::fs::read(editor.path().join(auto["ResultsFilePath"].as_str().unwrap())).unwrap())
            .unwrap();
    assert_eq!(file["Results"].as_array().unwrap().len(), 11);
}

#[tokio::test]
async fn get_provider_details_filters_and_sorts() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let all = c.ok("get-provider-details", none()).await;
    assert_eq!(names(&all["Providers"], "Id"), ["asset", "scene", "menu", "settings", "packages"]);
    assert_eq!(
        (all["TotalCount"].clone(), all["ActiveCount"].clone(), all["InactiveCount"].clone()),
        (json!(5), json!(4), json!(1))
    );
    assert_eq!(all["AppliedFilter"], "all");
    let one = c.ok("get-provider-details", json!({"ProviderId": "scene", "IncludeDescriptions": false})).await;
    assert_eq!(
        one["Providers"],
        json!([{"Id": "scene", "DisplayName": "Hierarchy", "IsActive": true, "Priority": 50, "FilterId": "h:"}])
    );
    let active = c.ok("get-provider-details", json!({"ActiveOnly": true})).await;
    assert_eq!(active["TotalCount"], 4);
    let missing = c.ok("get-provider-details", json!({"ProviderId": "nope"})).await;
    assert_eq!(
        (missing["Success"].clone(), missing["ErrorMessage"].clone()),
        (json!(false), json!("Search provider not found: nope"))
    );
}

// ---- menus ----

#[tokio::test]
async fn get_menu_items_filters_and_leaves_out_native_items() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let all = c.ok("get-menu-items", none()).await;
    assert_eq!(
        names(&all["MenuItems"], "Path"),
        [
            "Tools/Fixture/Log Hello",
            "Tools/Fixture/Log Warning",
            "Tools/Fixture/Reset Player",
            "Window/General/Test Runner"
        ]
    );
    assert_eq!((all["TotalCount"].clone(), all["FilteredCount"].clone()), (json!(5), json!(4)));
    let with_validation = c.ok("get-menu-items", json!({"FilterText": "log hello", "IncludeValidation": true})).await;
    assert_eq!(names(&with_validation["MenuItems"], "MethodName"), ["LogHello", "ValidateLogHello"]);
    let starts = c.ok("get-menu-items", json!({"FilterText": "Window/", "FilterType": "startswith"})).await;
    assert_eq!(starts["FilteredCount"], 1);
    let exact =
        c.ok("get-menu-items", json!({"FilterText": "tools/fixture/reset player", "FilterType": "exact"})).await;
    assert_eq!(exact["MenuItems"][0]["TypeName"], "FixtureProject.EditorTools.FixtureMenu");
    let capped = c.ok("get-menu-items", json!({"MaxCount": 1})).await;
    assert_eq!(capped["FilteredCount"], 1);
}

#[tokio::test]
async fn execute_menu_item_changes_the_editor() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let hello = c.ok("execute-menu-item", json!({"MenuItemPath": "Tools/Fixture/Log Hello"})).await;
    assert_eq!(
        (hello["Success"].clone(), hello["MenuItemFound"].clone(), hello["ExecutionMethod"].clone()),
        (json!(true), json!(true), json!("EditorApplication"))
    );
    let logs = c.ok("get-logs", json!({"MaxCount": 1})).await;
    assert_eq!(logs["Logs"][0]["Message"], "Hello from the fixture project");

    c.ok("execute-menu-item", json!({"MenuItemPath": "GameObject/Create Empty"})).await;
    c.ok("execute-menu-item", json!({"MenuItemPath": "GameObject/Create Empty"})).await;
    let roots = c.ok("get-hierarchy", json!({"MaxDepth": 0})).await;
    let root_names = names(&roots["hierarchy"], "name");
    assert_eq!(&root_names[7..], ["GameObject", "GameObject (1)"]);

    c.ok("execute-menu-item", json!({"MenuItemPath": "Edit/Play"})).await;
    assert_eq!(editor.state().await["playMode"], json!({"isPlaying": true, "isPaused": false}));
    // Entering play mode reloads the domain (Unity's default, the fixture
    // project's): the connection closes, the Editor comes back playing.
    c.until_closed().await;
    let fake = &editor.fake;
    crate::support::eventually("the Editor back from the reload", || {
        fake.editor().stats.reloads.load(std::sync::atomic::Ordering::Relaxed) == 1
            && fake.editor().phase() == editor_link::discovery::EditorState::Ready
    })
    .await;
    let mut c = editor.connect().await;

    let missing = c.ok("execute-menu-item", json!({"MenuItemPath": "Tools/Nothing"})).await;
    assert_eq!((missing["Success"].clone(), missing["MenuItemFound"].clone()), (json!(false), json!(false)));
    let err = c.err("execute-menu-item", none()).await;
    assert_eq!((err.code, err.data.unwrap()["parameter"].clone()), (-32602, json!("MenuItemPath")));
}

// ---- play mode, windows ----

#[tokio::test]
async fn control_play_mode_tracks_play_and_pause() {
    let editor = TestEditor::start().await;
    // Play and pause on one connection: the reload entering play mode
    // makes by default is lifecycle.rs's.
    crate::support::switch_domain_reload(editor.path(), false);
    let mut c = editor.connect().await;
    let play = c.ok("control-play-mode", json!({"Action": "Play"})).await;
    assert_eq!(
        (play["IsPlaying"].clone(), play["IsPaused"].clone(), play["Message"].clone()),
        (json!(true), json!(false), json!("Entered play mode"))
    );
    assert_eq!(c.ok("get-hierarchy", json!({"MaxDepth": 0})).await["context"]["sceneType"], "runtime");
    let pause = c.ok("control-play-mode", json!({"Action": "Pause"})).await;
    assert_eq!((pause["IsPlaying"].clone(), pause["IsPaused"].clone()), (json!(true), json!(true)));
    let resume = c.ok("control-play-mode", json!({"Action": "play"})).await;
    assert_eq!((resume["IsPaused"].clone(), resume["Message"].clone()), (json!(false), json!("Play mode resumed")));
    let stop = c.ok("control-play-mode", json!({"Action": "Stop"})).await;
    assert_eq!((stop["IsPlaying"].clone(), stop["IsPaused"].clone()), (json!(false), json!(false)));
    assert_eq!(
        c.ok("control-play-mode", json!({"Action": 1})).await["Message"],
        "Not in play mode",
        "enum by C# value"
    );
}

#[tokio::test]
async fn screenshot_writes_a_real_png() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let shot = c.ok("screenshot", none()).await;
    assert_eq!(shot["ScreenshotCount"], 1);
    let image = &shot["Screenshots"][0];
    assert_eq!((image["Width"].clone(), image["Height"].clone()), (json!(640), json!(360)));
    assert!(image.get("ImageDataBase64").is_none());
    let bytes = std::fs::read(editor.path().join(image["ImagePath"].as_str().unwrap())).unwrap();
    assert_eq!(bytes.len() as u64, image["FileSizeBytes"].as_u64().unwrap());
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(&bytes[12..16], b"IHDR");
    assert_eq!(u32::from_be_bytes(bytes[16..20].try_into().unwrap()), 640);
    assert_eq!(u32::from_be_bytes(bytes[20..24].try_into().unwrap()), 360);

    let scene =
        c.ok("screenshot", json!({"WindowName": "scene", "ResolutionScale": 0.5, "IncludeImageData": true})).await;
    let image = &scene["Screenshots"][0];
    assert_eq!((image["Width"].clone(), image["Height"].clone()), (json!(400), json!(225)));
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD.decode(image["ImageDataBase64"].as_str().unwrap()).unwrap();
    assert_eq!(decoded, std::fs::read(editor.path().join(image["ImagePath"].as_str().unwrap())).unwrap());

    let missing = c.ok("screenshot", json!({"WindowName": "Animator"})).await;
    assert_eq!(missing["ScreenshotCount"], 0);
    assert!(missing["Message"].as_str().unwrap().contains("Open windows: Game, Scene"));
    let focus = c.ok("focus-window", none()).await;
    assert_eq!(focus["Success"], true);
}

// ---- tests ----

#[tokio::test]
async fn run_tests_honours_filters_and_counts() {
    let editor = TestEditor::start().await;
    // Every run answers on this connection: the PlayMode run across the
    // reload of entering play mode is lifecycle.rs's.
    crate::support::switch_domain_reload(editor.path(), false);
    let mut c = editor.connect().await;
    let counts = |r: &Value| {
        (
            r["TestCount"].as_u64().unwrap(),
            r["PassedCount"].as_u64().unwrap(),
            r["FailedCount"].as_u64().unwrap(),
            r["SkippedCount"].as_u64().unwrap(),
        )
    };
    let all = c.ok("run-tests", none()).await;
    assert_eq!(counts(&all), (9, 7, 1, 1));
    assert_eq!(all["Success"], false);
    assert_eq!(
        all["FailedTests"],
        json!([{"FullName": "FixtureProject.Tests.ScoreKeeperTests.HighScore_SurvivesReset", "Message": "  Expected: 30\n  But was:  0\n"}])
    );
    assert_eq!(all["XmlPath"], "");

    let play = c.ok("run-tests", json!({"TestMode": "PlayMode"})).await;
    assert_eq!(counts(&play), (3, 2, 0, 1));
    assert_eq!(play["Success"], true);
    let exact = c
        .ok(
            "run-tests",
            json!({"FilterType": "exact", "FilterValue": "FixtureProject.Tests.HealthTests.IsDead_AfterLethalDamage"}),
        )
        .await;
    assert_eq!(counts(&exact), (1, 1, 0, 0));
    let regex = c.ok("run-tests", json!({"FilterType": "regex", "FilterValue": "ScoreKeeperTests"})).await;
    assert_eq!(counts(&regex), (4, 2, 1, 1));
    let assembly = c
        .ok(
            "run-tests",
            json!({"FilterType": 3, "FilterValue": "FixtureProject.Tests.PlayMode", "TestMode": "PlayMode"}),
        )
        .await;
    assert_eq!(counts(&assembly), (3, 2, 0, 1));
    let none_matched = c.ok("run-tests", json!({"FilterType": "exact", "FilterValue": "Nope"})).await;
    assert_eq!((counts(&none_matched), none_matched["Success"].clone()), ((0, 0, 0, 0), json!(false)));

    let err = c.err("run-tests", json!({"FilterType": "regex"})).await;
    assert_eq!(err.data.unwrap()["parameter"], "FilterValue");
    let err = c.err("run-tests", json!({"FilterType": "regex", "FilterValue": "[bad"})).await;
    assert_eq!(err.code, -32602);
}

#[tokio::test]
async fn run_tests_reports_progress_and_writes_nunit_xml() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let id = c.request("run-tests", json!({"SaveXml": true})).await;
    let result = c.response(&id).await.outcome.unwrap();
    let progress: Vec<Value> = c
        .backlog
        .iter()
        .filter_map(|m| match m {
            editor_link::jsonrpc::Message::Notification(n) if n.method == notifications::PROGRESS => n.params.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(progress.len(), 9);
    assert_eq!(
        progress[8],
        json!({"requestId": id.to_value(), "progress": 9, "total": 9, "message": "FixtureProject.Tests.ScoreKeeperTests.Multiplier_AppliesToAdd"})
    );
    let rel = result["XmlPath"].as_str().unwrap();
    assert!(rel.starts_with(".uloop/outputs/TestResults/") && rel.ends_with(".xml"), "{rel}");
    let xml = std::fs::read_to_string(editor.path().join(rel)).unwrap();
    assert!(xml.contains(r#"<test-run id="2" testcasecount="9" result="Failed" site="Child" total="9" passed="7" failed="1" inconclusive="0" skipped="1""#), "{xml}");
    assert_eq!(xml.matches("<test-case ").count(), 9);
    assert!(xml.contains("<![CDATA[  Expected: 30\n  But was:  0\n]]>"));
}

// ---- compile ----

#[tokio::test]
async fn compile_without_changes_answers_and_stays() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let result = c.ok("compile", none()).await;
    assert_eq!(
        (result["Success"].clone(), result["ErrorCount"].clone(), result["WarningCount"].clone()),
        (json!(true), json!(0), json!(0))
    );
    assert_eq!(result["Message"], "Compilation completed successfully");
    assert!(result["CompletedAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(editor.state().await["reloads"], 0);
}

#[tokio::test]
async fn compile_reports_error_directives_in_edited_scripts() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let script = editor.path().join("Assets/Scripts/ScoreKeeper.cs");
    let text = std::fs::read_to_string(&script).unwrap();
    std::fs::write(
        &script,
        format!("{text}\n#warning check the bonus rules\n    #error the score rules are not finished\n"),
    )
    .unwrap();
    let result = c.ok("compile", none()).await;
    assert_eq!(
        (result["Success"].clone(), result["ErrorCount"].clone(), result["WarningCount"].clone()),
        (json!(false), json!(1), json!(1))
    );
    let line = text.lines().count() as u64 + 3;
    assert_eq!(
        result["Errors"],
        json!([{"Message": format!("Assets/Scripts/ScoreKeeper.cs({line},5): error CS1029: #error: 'the score rules are not finished'"), "File": "Assets/Scripts/ScoreKeeper.cs", "Line": line}])
    );
    assert_eq!(result["Warnings"][0]["Line"], line - 1);
    // Unity shows compiler messages in the console; no reload on errors.
    let errors = c.ok("get-logs", json!({"LogType": "Error", "SearchText": "CS1029"})).await;
    assert_eq!(errors["TotalCount"], 1);
    assert_eq!(editor.state().await["reloads"], 0);
}

#[tokio::test]
async fn a_state_with_compile_errors_reports_them() {
    let state = fake_unity::EditorStateFile::load(&fixtures().join("editor-states/compile-errors.json")).unwrap();
    let editor = TestEditor::start_with(|c| {
        let duration = c.state.compile.duration_ms;
        c.state = state;
        c.state.compile.duration_ms = duration;
    })
    .await;
    let mut c = editor.connect().await;
    let result = c.ok("compile", json!({"ForceRecompile": true})).await;
    assert_eq!(
        (result["Success"].clone(), result["ErrorCount"].clone(), result["WarningCount"].clone()),
        (json!(false), json!(2), json!(2))
    );
    let files: BTreeSet<&str> =
        result["Errors"].as_array().unwrap().iter().map(|e| e["File"].as_str().unwrap()).collect();
    assert_eq!(files, BTreeSet::from(["Assets/Scripts/BrokenWeapon.cs"]));
    assert!(
        result["Errors"][0]["Message"]
            .as_str()
            .unwrap()
            .contains("error CS0029: Cannot implicitly convert type 'string' to 'int'")
    );
    // Already in the console when the Editor opened the project.
    let logs = c.ok("get-logs", json!({"LogType": "Error", "SearchText": "BrokenWeapon"})).await;
    assert_eq!(logs["TotalCount"], 2);
    let search = c.ok("unity-search", json!({"SearchQuery": "BrokenWeapon"})).await;
    assert_eq!(search["TotalCount"], 1);
}

// ---- dynamic code ----

#[tokio::test]
async fn execute_dynamic_code_runs_its_subset_and_says_what_it_cannot() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    let code = "using UnityEngine;\n// greet\nvar who = parameters[\"name\"];\nDebug.Log(\"Hello \" + who);\nreturn Application.unityVersion + \" \" + (1 + 2);";
    let run = c.ok("execute-dynamic-code", json!({"Code": code, "Parameters": {"name": "agent"}})).await;
    assert_eq!(
        (run["Success"].clone(), run["Result"].clone(), run["Logs"].clone()),
        (json!(true), json!("6000.0.65f1 3"), json!(["Hello agent"]))
    );
    assert_eq!((run["SecurityLevel"].clone(), run["UpdatedCode"].clone()), (json!("Restricted"), json!(code)));
    let logs = c.ok("get-logs", json!({"MaxCount": 1})).await;
    assert_eq!(logs["Logs"][0]["Message"], "Hello agent");

    let compile_only =
        c.ok("execute-dynamic-code", json!({"Code": "Debug.Log(\"not run\");", "CompileOnly": true})).await;
    assert_eq!((compile_only["Success"].clone(), compile_only["Logs"].clone()), (json!(true), json!([])));

    let broken = c.ok("execute-dynamic-code", json!({"Code": "Debug.Log(\"oops\";"})).await;
    assert_eq!(broken["Success"], false);
    assert_eq!(
        broken["CompilationErrors"],
        json!([{"Message": ") expected", "Line": 1, "Column": 10, "ErrorCode": "CS1026"}])
    );

    let restricted = c.ok("execute-dynamic-code", json!({"Code": "System.IO.File.Delete(\"x\");"})).await;
    // Word for word as the package's RestrictedCode.Refusal says it.
    assert_eq!(
        restricted["ErrorMessage"],
        "Security violation: the code uses System.IO.File.Delete (the file system), which is not allowed at security level \
         Restricted (it may read and change the open scenes, their GameObjects and components, and the data of assets; \
         not the file system, the network, processes, native code, threads, settings, packages or scripts)"
    );

    // A snippet that loops without end holds the main thread to the
    // deadline, where it is stopped as the package's guard stops one.
    for endless in ["while (true) { }", "for (;;) ;", "L: goto L;"] {
        let started = std::time::Instant::now();
        let stopped = c.err("execute-dynamic-code", json!({"Code": endless, "TimeoutSeconds": 0.5})).await;
        let message = stopped.detail();
        assert_eq!(stopped.kind(), editor_link::jsonrpc::ErrorKind::Timeout, "{endless}: {stopped:?}");
        assert!(
            message.starts_with("the snippet was stopped at its deadline, after 0.5 s and 4,750,000 steps"),
            "{endless}: {stopped:?}"
        );
        assert!(message.ends_with("; the Editor goes on"), "{stopped:?}");
        assert!(started.elapsed() >= std::time::Duration::from_millis(450), "{endless}: answered before its deadline");
    }

    let unsupported = c.ok("execute-dynamic-code", json!({"Code": "var go = new GameObject(\"x\");"})).await;
    assert_eq!(unsupported["Success"], false);
    assert!(
        unsupported["ErrorMessage"].as_str().unwrap().starts_with("fake-unity executes only a subset of C#"),
        "{unsupported}"
    );

    editor.fake.control().post("/settings", json!({"dynamicCodeSecurityLevel": "FullAccess"})).await.unwrap();
    let full =
        c.ok("execute-dynamic-code", json!({"Code": "System.IO.File.Delete(\"x\");", "CompileOnly": true})).await;
    assert_eq!((full["Success"].clone(), full["SecurityLevel"].clone()), (json!(true), json!("FullAccess")));
}

// ---- security ----

#[tokio::test]
async fn security_settings_block_tools_with_the_uloop_error_shape() {
    let editor = TestEditor::start().await;
    let mut c = editor.connect().await;
    editor
        .fake
        .control()
        .post("/settings", json!({"enableTestsExecution": false, "allowMenuItemExecution": false, "dynamicCodeSecurityLevel": "Disabled"}))
        .await
        .unwrap();
    for (tool, params) in [
        ("run-tests", none()),
        ("execute-menu-item", json!({"MenuItemPath": "Tools/Fixture/Log Hello"})),
        ("execute-dynamic-code", json!({"Code": "return 1;"})),
    ] {
        let err = c.err(tool, params).await;
        assert_eq!(
            (err.code, err.message.as_str(), kind(&err)),
            (-32603, "Tool blocked by security settings", "security_blocked")
        );
        let data = err.data.unwrap();
        assert_eq!(data["command"], tool);
        assert!(data["reason"].as_str().unwrap().contains("disabled"), "{data}");
    }
    // Listed, because the user can enable them.
    let details: ToolDetails = serde_json::from_value(c.ok("get-tool-details", none()).await).unwrap();
    assert!(details.get("run-tests").is_some());
    let bad = editor.fake.control().post("/settings", json!({"dynamicCodeSecurityLevel": "Open"})).await;
    assert!(bad.unwrap_err().to_string().contains("400"));
}
