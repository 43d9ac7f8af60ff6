//! The bridge service (catalogue, calls, own tools) against fake-unity.

use std::{path::Path, sync::Arc, time::Duration};

use editor_link::discovery::Locator;
use fake_unity::{Config, FakeUnity};
use serde_json::{Map, json};
use tokio_util::sync::CancellationToken;
use unity_mcp_bridge::{
    bridge::{Bridge, BridgeOptions},
    link::{Link, LinkConfig},
    tools::ToolCache,
};

use crate::link::copy_dir;

pub async fn fake(project: &Path) -> FakeUnity {
    let mut config = Config::new(project);
    config.seed = Some(5);
    config.state.editor.reload_downtime_ms = 100;
    config.state.editor.tools_ready_delay_ms = 10;
    config.state.compile.duration_ms = 20;
    FakeUnity::start(config).await.unwrap()
}

pub fn project() -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/unity-project"), project.path());
    project
}

fn bridge(project: &Path) -> Arc<Bridge> {
    let link = Link::start(LinkConfig::new(Locator { project: Some(project.to_owned()), ..Locator::default() }), None);
    let options = BridgeOptions {
        tools_wait: Duration::from_secs(5),
        project: Some(project.to_owned()),
        ..BridgeOptions::default()
    };
    Bridge::start(link, options, Some(ToolCache::for_project(project)))
}

#[tokio::test]
async fn tools_are_listed_from_the_editor_and_cached() {
    let project = project();
    let _fake = fake(project.path()).await;
    let bridge = bridge(project.path());
    let tools =
        tokio::time::timeout(Duration::from_secs(10), bridge.list_tools()).await.expect("tools/list answered in time");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(&names[..2], ["bridge-status", "wait-for-editor-ready"]);
    assert!(names.contains(&"get-logs") && !names.contains(&"ping"), "{names:?}");
    assert!(ToolCache::for_project(project.path()).load().is_some(), "the list is cached for the next start");
    let result = bridge.call_tool("get-logs", Map::new(), None, CancellationToken::new()).await.unwrap();
    assert_eq!(result.to_value()["structuredContent"]["TotalCount"], 8, "7 recorded lines and the package's load line");
    let _ = json!({});
}

/// A bridge that begins following a link already connected fetches the
/// tool list once for that connection. (The race where the `Connected`
/// event is also queued, which fetched twice, shows under load in the
/// session replays: a second fetch is not in the recording.)
#[tokio::test]
async fn one_connection_one_tool_list_fetch() {
    let project = project();
    let fake = fake(project.path()).await;
    let link =
        Link::start(LinkConfig::new(Locator { project: Some(project.path().to_owned()), ..Locator::default() }), None);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    link.wait_connected(deadline, &CancellationToken::new()).await.expect("connected");
    let bridge = Bridge::start(link.clone(), BridgeOptions::default(), None);
    let mut catalog = bridge.catalog_watch();
    tokio::time::timeout(Duration::from_secs(10), catalog.wait_for(|c| c.fetches == 1)).await.unwrap().unwrap();
    // Round trips after the fetch: a second fetch would already be on its way.
    for _ in 0..3 {
        let mut options = unity_mcp_bridge::link::CallOptions::within(Duration::from_secs(5));
        options.read_only = true;
        link.call("ping", json!({}), options).await.unwrap();
    }
    let calls = &fake.editor().stats.to_json()["calls"];
    assert_eq!(calls["get-tool-details"], 1, "{calls}");
    assert_eq!(bridge.catalog().fetches, 1);
}
