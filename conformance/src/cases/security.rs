//! §1 Transport and §6 security: loopback only, disabled tools.

use std::{
    net::{IpAddr, SocketAddr, UdpSocket},
    time::Duration,
};

use editor_link::framing::Framing;
use serde_json::json;

use crate::{
    case::{Case, CheckFuture, Finding, Level, Needs, Requires, check},
    ensure,
    target::Session,
};

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            id: "1.loopback-only".into(),
            requirement: "The Editor listens on loopback only: its port is not reachable on another address of this machine.".into(),
            reference: "docs/editor-link-protocol.md §1",
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::CORE,
            check: check(loopback_only),
        },
        Case {
            id: "6.disabled-tool".into(),
            requirement: "A tool disabled in settings is not listed by get-tool-details, and calling it is answered -32603 with data.type tool_disabled.".into(),
            reference: "docs/editor-link-protocol.md §3, §6",
            level: Level::Must,
            needs: Needs::Control,
            requires: Requires::tools(&["get-menu-items"]).and_extension(crate::case::Extension::ErrorCodes),
            check: check(disabled_tool),
        },
        Case {
            id: "6.security-blocked".into(),
            requirement: "With \"Enable Tests Execution\" off, run-tests is answered -32603 with data.type security_blocked, data.command and data.reason.".into(),
            reference: "docs/editor-link-protocol.md §3, §6",
            level: Level::Must,
            needs: Needs::Control,
            requires: Requires::catalogue_tool("run-tests"),
            check: check(security_blocked),
        },
    ]
}

/// An address of this machine other than loopback (the one a packet to the
/// outside would leave from; nothing is sent).
fn other_local_address() -> Option<IpAddr> {
    let socket = UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

fn loopback_only(s: Session) -> CheckFuture {
    Box::pin(async move {
        let link = s.link(Framing::Header).await?;
        let port = link.peer_port();
        drop(link);
        let Some(ip) = other_local_address() else {
            return Err(Finding::Harness("this machine has no address besides loopback to try".into()));
        };
        let addr = SocketAddr::new(ip, port);
        s.note(format!("connect {addr} (must be refused)"));
        let reached = tokio::time::timeout(Duration::from_secs(2), tokio::net::TcpStream::connect(addr)).await;
        ensure!(!matches!(reached, Ok(Ok(_))), "port {port} accepts connections on {ip}, not only on loopback");
        Ok(())
    })
}

/// Runs `check` with the Editor's settings patched, and puts the patched
/// settings back afterwards, whatever the outcome (a remote Editor is shared
/// by every case of the run).
async fn with_settings(
    s: &Session,
    patch: serde_json::Value,
    check: impl std::future::Future<Output = Result<(), Finding>>,
) -> Result<(), Finding> {
    let control = s.control()?;
    let harness = |e: fake_unity::control::ControlError| Finding::Harness(format!("settings: {e}"));
    let state = control.get("/state").await.map_err(harness)?;
    let mut previous = serde_json::Map::new();
    for key in patch.as_object().into_iter().flatten().map(|(k, _)| k) {
        previous.insert(key.clone(), state["settings"][key].clone());
    }
    control.post("/settings", patch).await.map_err(harness)?;
    let outcome = check.await;
    control.post("/settings", serde_json::Value::Object(previous)).await.map_err(harness)?;
    outcome
}

fn disabled_tool(s: Session) -> CheckFuture {
    Box::pin(
        async move { with_settings(&s, json!({"disabledTools": ["get-menu-items"]}), disabled_tool_check(&s)).await },
    )
}

async fn disabled_tool_check(s: &Session) -> Result<(), Finding> {
    {
        let mut link = s.link(Framing::Header).await?;
        let details = link.result("get-tool-details", json!({})).await?;
        let listed = details["Tools"].as_array().into_iter().flatten().any(|t| t["name"] == "get-menu-items");
        ensure!(!listed, "a disabled tool is still listed");
        let answer = link.call("get-menu-items", json!({})).await?;
        let error = &answer["error"];
        ensure!(error["code"] == -32603 && error["data"]["type"] == "tool_disabled", "answered {answer}");
        Ok(())
    }
}

fn security_blocked(s: Session) -> CheckFuture {
    Box::pin(async move { with_settings(&s, json!({"enableTestsExecution": false}), security_blocked_check(&s)).await })
}

async fn security_blocked_check(s: &Session) -> Result<(), Finding> {
    {
        let mut link = s.link(Framing::Header).await?;
        let answer = link.call("run-tests", json!({})).await?;
        let error = &answer["error"];
        ensure!(error["code"] == -32603 && error["data"]["type"] == "security_blocked", "answered {answer}");
        ensure!(
            error["data"]["command"].is_string() && error["data"]["reason"].is_string(),
            "no data.command or data.reason: {answer}"
        );
        Ok(())
    }
}
