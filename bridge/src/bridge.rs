//! The bridge as a service, independent of the MCP SDK: the tool catalogue
//! (kept fresh from the Editor, answered from the on-disk cache before Unity
//! is reachable), tool calls with deadlines, progress and cancellation
//! ([`tool_call`], step by step), and the bridge's own tools
//! (`bridge-status`, `wait-for-editor-ready`).

mod select_editor;
mod tool_call;

pub use select_editor::SELECT_TOOL;

use std::{
    future::Future,
    path::PathBuf,
    pin::Pin,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::{
    link::{CallError, CallOptions, Link, LinkEvent, NotSent, whereabouts::Place},
    main_thread,
    results::{ResultPolicy, ToolResult},
    silent_editor,
    tools::{self, McpTool, ToolCache},
};
use editor_link::{methods, tool_details::ToolDetails};

/// The bridge's own tools.
pub const STATUS_TOOL: &str = "bridge-status";
pub const WAIT_TOOL: &str = "wait-for-editor-ready";

/// How the bridge behaves.
#[derive(Clone, Debug)]
pub struct BridgeOptions {
    /// Offer the Editor's internal tools too (`--dev`).
    pub include_internal: bool,
    /// Without a cached tool list, how long `tools/list` waits for the Editor.
    pub tools_wait: Duration,
    pub results: ResultPolicy,
    /// Deadline of a tool that names none.
    pub default_timeout: Duration,
    /// Added to a tool's own deadline, so Unity's timeout answer arrives
    /// first: every call is answered by its deadline plus this (and the
    /// moment it takes to write the answer).
    pub timeout_grace: Duration,
    /// Progress heartbeat during long calls.
    pub heartbeat: Duration,
    /// The project, for status reports.
    pub project: Option<PathBuf>,
}

impl Default for BridgeOptions {
    fn default() -> Self {
        BridgeOptions {
            include_internal: false,
            tools_wait: Duration::from_secs(10),
            results: ResultPolicy::default(),
            default_timeout: Duration::from_secs(60),
            timeout_grace: Duration::from_secs(1),
            heartbeat: Duration::from_secs(5),
            project: None,
        }
    }
}

/// Where the Editor's tools came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CatalogSource {
    /// Not known yet.
    None,
    /// The on-disk cache of an earlier run.
    Cache,
    /// The Editor, on this connection.
    Editor,
}

impl CatalogSource {
    fn as_str(self) -> &'static str {
        match self {
            CatalogSource::None => "none yet",
            CatalogSource::Cache => "cache",
            CatalogSource::Editor => "editor",
        }
    }
}

/// The Editor's tools as offered.
#[derive(Clone, Debug)]
pub struct Catalog {
    /// Shared: a call takes its tool without copying its schema.
    pub unity: Vec<Arc<McpTool>>,
    pub source: CatalogSource,
    pub warnings: Vec<String>,
    /// Lists fetched from the Editor so far, and when the last one came:
    /// a client (or a test) can tell the list followed a reconnect.
    pub fetches: u64,
    pub fetched_at: Option<String>,
}

/// One progress report for an MCP client.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// Increases with every report.
    pub progress: f64,
    pub message: String,
}

/// Where a call's progress goes; the future completes once the report is
/// handed to the client's connection.
pub type ProgressSink = Arc<dyn Fn(Progress) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Why a call could not be made at all (a JSON-RPC error, not a tool result).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallRefused {
    UnknownTool(String),
    /// The client cancelled: nothing is sent back.
    Cancelled,
}

type Listener = Box<dyn Fn() + Send + Sync>;

/// The bridge.
pub struct Bridge {
    pub link: Arc<Link>,
    options: BridgeOptions,
    catalog: watch::Sender<Catalog>,
    cache: Option<ToolCache>,
    on_change: Mutex<Option<Listener>>,
    started: Instant,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge").field("options", &self.options).finish_non_exhaustive()
    }
}

impl Bridge {
    /// Starts keeping the tool catalogue fresh from `link`.
    pub fn start(link: Arc<Link>, options: BridgeOptions, cache: Option<ToolCache>) -> Arc<Bridge> {
        let mut catalog = Catalog {
            unity: Vec::new(),
            source: CatalogSource::None,
            warnings: Vec::new(),
            fetches: 0,
            fetched_at: None,
        };
        if let Some(details) = cache.as_ref().and_then(ToolCache::load) {
            let (unity, warnings) = tools::from_editor(&details, options.include_internal);
            catalog = Catalog { unity: without_own(unity), source: CatalogSource::Cache, warnings, ..catalog };
        }
        let bridge = Arc::new(Bridge {
            link,
            options,
            catalog: watch::channel(catalog).0,
            cache,
            on_change: Mutex::new(None),
            started: Instant::now(),
        });
        let events = bridge.link.subscribe();
        tokio::spawn(bridge.clone().follow(events));
        bridge
    }

    /// `f` runs whenever the set of tools really changes.
    pub fn on_tools_changed(&self, f: impl Fn() + Send + Sync + 'static) {
        *editor_link::lock(&self.on_change) = Some(Box::new(f));
    }

    pub fn catalog(&self) -> Catalog {
        self.catalog.borrow().clone()
    }

    /// The catalogue as it changes.
    pub fn catalog_watch(&self) -> watch::Receiver<Catalog> {
        self.catalog.subscribe()
    }

    async fn follow(self: Arc<Self>, mut events: tokio::sync::broadcast::Receiver<LinkEvent>) {
        // The link may have connected before this task first ran: one
        // refresh covers that and every event already queued (a second
        // fetch for the same connection would be noise on the wire).
        let mut due = self.link.is_connected();
        loop {
            match events.try_recv() {
                Ok(event) => due |= matches!(event, LinkEvent::Connected | LinkEvent::ToolsChanged),
                Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => due = true,
                Err(_) => break,
            }
        }
        if due {
            self.refresh().await;
        }
        loop {
            match events.recv().await {
                Ok(event @ (LinkEvent::Connected | LinkEvent::ToolsChanged)) => {
                    tracing::debug!(?event, "refreshing the tool list");
                    // Coalesce a burst (connected, then list_changed).
                    while let Ok(event) = events.try_recv() {
                        tracing::trace!(?event, "coalesced");
                    }
                    self.refresh().await;
                }
                Ok(LinkEvent::Disconnected) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => self.refresh().await,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    /// Fetches the Editor's tools; tells the client when the set changed.
    pub async fn refresh(&self) {
        let params = json!({"IncludeDevelopmentOnly": self.options.include_internal});
        let mut options = CallOptions::within(Duration::from_secs(15));
        options.read_only = true;
        let details = match self.link.call(methods::GET_TOOL_DETAILS, params, options).await {
            Ok(result) => match serde_json::from_value::<ToolDetails>(result) {
                Ok(details) => details,
                Err(e) => {
                    tracing::warn!(%e, "the Editor's tool list does not have the shape of protocol §6");
                    return;
                }
            },
            Err(e) => {
                tracing::debug!(%e, "cannot fetch the Editor's tools now");
                return;
            }
        };
        let (unity, warnings) = tools::from_editor(&details, self.options.include_internal);
        for warning in &warnings {
            tracing::warn!("{warning}");
        }
        let unity = without_own(unity);
        let (changed, fetches) = {
            let current = self.catalog.borrow();
            (current.unity != unity, current.fetches + 1)
        };
        let fetched_at = Some(editor_link::discovery::iso_timestamp(std::time::SystemTime::now()));
        self.catalog.send_replace(Catalog { unity, source: CatalogSource::Editor, warnings, fetches, fetched_at });
        if let Some(cache) = &self.cache {
            cache.store(&details);
        }
        if changed {
            tracing::info!("the Editor's tools changed");
            if let Some(f) = editor_link::lock(&self.on_change).as_ref() {
                f();
            }
        }
    }

    /// Every tool, the bridge's own first, then the Editor's by name. Without
    /// a known tool list, waits a bounded time for the Editor.
    pub async fn list_tools(&self) -> Vec<Value> {
        let mut watch = self.catalog.subscribe();
        if watch.borrow().source == CatalogSource::None {
            // Not while a look says there is no Editor to wait for.
            let wait = watch.wait_for(|c| c.source != CatalogSource::None);
            let until = Instant::now() + self.options.tools_wait;
            tokio::select! {
                _ = tokio::time::timeout(self.options.tools_wait, wait) => {}
                Some(_) = self.link.absence_by(until) => {}
            }
        }
        self.current_tools()
    }

    /// Every tool known now, without waiting.
    pub fn current_tools(&self) -> Vec<Value> {
        let mut out = own_tools();
        if self.link.started_outside_project() {
            out.push(select_editor::definition());
        }
        out.extend(self.catalog.borrow().unity.iter().map(|t| t.definition.clone()));
        out
    }

    /// The tool called `name`. Only the Editor's own list can say a tool does
    /// not exist: without it (Unity absent, or only a cached list), an unknown
    /// name is sent to Unity all the same, whose answer (or absence) is the
    /// honest result.
    async fn find_tool(&self, name: &str, wait: Duration) -> Option<Arc<McpTool>> {
        let mut watch = self.catalog.subscribe();
        let known = |c: &Catalog| c.unity.iter().any(|t| t.name() == name);
        if !known(&watch.borrow()) && watch.borrow().source != CatalogSource::Editor {
            // Not known yet: wait (up to `wait`) for the Editor's list, as tools/list does.
            let editor_list = watch.wait_for(|c| c.source == CatalogSource::Editor);
            let until = Instant::now() + wait;
            tokio::select! {
                _ = tokio::time::timeout(wait, editor_list) => {}
                Some(_) = self.link.absence_by(until) => {}
            }
        }
        let catalog = watch.borrow();
        match catalog.unity.iter().find(|t| t.name() == name) {
            Some(tool) => Some(tool.clone()),
            None if catalog.source == CatalogSource::Editor || !tools::valid_tool_name(name) => None,
            None => {
                Some(Arc::new(McpTool { definition: json!({"name": name}), read_only: false, timeout_seconds: None }))
            }
        }
    }

    /// The results saved to files, offered as resources.
    pub fn saved_results(&self) -> Vec<crate::results::SavedResult> {
        self.options.results.saved.all()
    }

    /// The `bridge-status` document.
    pub fn status(&self) -> Value {
        let link = self.link.status();
        let catalog = self.catalog.borrow();
        let editor = link.editor.as_ref();
        json!({
            "bridgeVersion": crate::VERSION,
            "connected": link.state == crate::link::LinkState::Connected,
            "state": link.state,
            // As Unity names it (Windows: `C:/…`, not `canonicalize`'s `\\?\C:\…`).
            "project": self.link.project().as_deref().map(editor_link::discovery::unity_path),
            "editorChoice": link.place.to_json(),
            "openEditors": match link.place {
                Place::Anywhere { .. } => json!(link.open_editors),
                Place::Project { .. } | Place::Pinned => Value::Null,
            },
            "absent": link.absence.as_ref().map(ToString::to_string),
            "port": link.port,
            "endpoint": link.endpoint,
            "framing": link.framing,
            "unityVersion": editor.map(|e| &e.version.unity_version),
            "packageVersion": editor.map(|e| e.version.package()),
            "protocolVersion": editor.map(|e| e.version.protocol_version),
            "capabilities": editor.and_then(|e| e.version.capabilities.as_ref()).map_or(&[][..], |c| c.names()),
            "serverSessionId": link.session_id,
            "connectedSince": link.connected_since,
            "reloads": link.reloads,
            "lastReload": link.last_reload,
            "callsInFlight": link.calls_in_flight,
            "tools": {
                "count": catalog.unity.len(),
                "source": catalog.source.as_str(),
                "fetches": catalog.fetches,
                "fetchedAt": catalog.fetched_at,
                "warnings": catalog.warnings,
            },
            "uptimeSeconds": self.started.elapsed().as_secs(),
            "tried": link.tried,
        })
    }

    /// `bridge-status`: [`Bridge::status`], and whether the Editor's main
    /// thread runs (asked now, where the Editor answers that: `mainThread`;
    /// `null` where it does not).
    async fn status_result(&self) -> ToolResult {
        let mut status = self.status();
        let can_press = main_thread::can_press(&self.link);
        status["mainThread"] = match main_thread::ask(&self.link).await {
            Some(state) => match main_thread::Blocked::from_state(&state, can_press) {
                Some(held) => held.to_json(),
                None => json!({"blocked": false, "lastRanMsAgo": state.get("MainThreadLastRanMsAgo")}),
            },
            None => Value::Null,
        };
        // Not connected: is Unity open with the project anyway?
        if status["connected"] != true {
            let silent = self.link.project().as_deref().and_then(silent_editor::diagnose);
            status["unityOpen"] = silent.map_or(
                Value::Null,
                |s| json!({"pid": s.editor.pid, "unityVersion": s.editor.version, "says": s.to_string()}),
            );
        }
        ToolResult::Built(json!({
            "content": [{"type": "text", "text": status.to_string()}],
            "structuredContent": status,
        }))
    }

    async fn wait_for_editor(
        &self,
        arguments: &Map<String, Value>,
        cancel: CancellationToken,
    ) -> Result<ToolResult, CallRefused> {
        // Unity's tools spell it TimeoutSeconds: both mean the same here.
        let given = arguments.get("timeout_seconds").filter(|v| !v.is_null()).map(|v| ("timeout_seconds", v));
        let given =
            given.or_else(|| arguments.get("TimeoutSeconds").filter(|v| !v.is_null()).map(|v| ("TimeoutSeconds", v)));
        let seconds = match given {
            None => 30.0,
            Some((name, v)) => match v.as_f64() {
                Some(s) if (5.0..=120.0).contains(&s) => s,
                _ => return Ok(ToolResult::error(format!("{name} must be a number from 5 to 120, not {v}"))),
            },
        };
        let started = Instant::now();
        let deadline = started + Duration::from_secs_f64(seconds);
        loop {
            match self.link.wait_connected(deadline, &cancel).await {
                Err(CallError::Cancelled) => return Err(CallRefused::Cancelled),
                Err(CallError::NotSent { why: NotSent::Absent(absence), .. }) => {
                    return Ok(ToolResult::error(crate::results::absent(WAIT_TOOL, &absence)));
                }
                Err(_) => {
                    let status = self.link.status();
                    return Ok(ToolResult::error(format!(
                        "Unity was not ready within {seconds} s ({}). Tried: {}",
                        serde_json::to_value(status.state).unwrap_or_default().as_str().unwrap_or(""),
                        status.tried.join("; ")
                    )));
                }
                Ok(()) => {}
            }
            let mut options = CallOptions::within(deadline.saturating_duration_since(Instant::now()));
            options.cancel = cancel.clone();
            options.read_only = true;
            match self.link.call(self.link.probe_method(), json!({}), options).await {
                Ok(_) => break,
                Err(CallError::Cancelled) => return Err(CallRefused::Cancelled),
                Err(_) if Instant::now() < deadline => tokio::time::sleep(Duration::from_millis(50)).await,
                Err(e) => {
                    return Ok(ToolResult::error(format!(
                        "Unity was not ready within {seconds} s: it is connected but does not answer ({e}). It may be busy (a long compile or import, a modal dialog, an unfocused window that is not updating) or hung; bridge-status shows the connection."
                    )));
                }
            }
        }
        let status = self.link.status();
        let result = json!({
            "ready": true,
            "waitedMs": started.elapsed().as_millis() as u64,
            "port": status.port,
            "unityVersion": status.editor.and_then(|e| e.version.unity_version),
        });
        Ok(ToolResult::Built(
            json!({"content": [{"type": "text", "text": result.to_string()}], "structuredContent": result}),
        ))
    }
}

/// A Unity tool with the name of one of the bridge's own is not offered.
fn without_own(unity: Vec<McpTool>) -> Vec<Arc<McpTool>> {
    unity.into_iter().filter(|t| ![STATUS_TOOL, WAIT_TOOL, SELECT_TOOL].contains(&t.name())).map(Arc::new).collect()
}

/// The definitions of the bridge's own tools.
pub fn own_tools() -> Vec<Value> {
    vec![
        json!({
            "name": STATUS_TOOL,
            "description": "Status of the connection to the Unity Editor: connected or not, project, port, Unity and package versions, protocol version, the last domain reload, calls in flight, and what was tried when Unity cannot be reached.",
            "inputSchema": {"type": "object", "properties": {}},
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
        }),
        json!({
            "name": WAIT_TOOL,
            "description": "Wait until the Unity Editor is ready (connected and answering), for example after changing C# scripts, which makes Unity recompile and reload. Returns as soon as it answers.",
            "inputSchema": {"type": "object", "properties": {
                "timeout_seconds": {"type": "number", "description": "Longest wait, 5 to 120 seconds", "minimum": 5, "maximum": 120, "default": 30}
            }},
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false},
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_tools_are_valid_mcp_tools() {
        for tool in own_tools() {
            assert!(tools::valid_tool_name(tool["name"].as_str().unwrap()));
            assert_eq!(tool["inputSchema"]["type"], "object");
        }
    }
}
