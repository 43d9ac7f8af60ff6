//! §1 Transport, §6 security and §7 the token: loopback only, disabled
//! tools, who may call at all.

use std::{
    net::{IpAddr, SocketAddr, UdpSocket},
    time::Duration,
};

use editor_link::{framing::Framing, jsonrpc::TOKEN_MEMBER, methods};
use serde_json::json;

use crate::{
    case::{Case, CheckFuture, Extension, Level, Needs, Requires, check},
    ensure,
    finding::Finding,
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
            needs: Needs::Control("the Editor's settings changed for the case (a tool disabled)"),
            requires: Requires::tools(&["get-menu-items"]).and_extension(crate::case::Extension::ErrorCodes),
            check: check(disabled_tool),
        },
        Case {
            id: "6.security-blocked".into(),
            requirement: "With \"Enable Tests Execution\" off, run-tests is answered -32603 with data.type security_blocked, data.command and data.reason.".into(),
            reference: "docs/editor-link-protocol.md §3, §6",
            level: Level::Must,
            needs: Needs::Control("the Editor's settings changed for the case (its security level)"),
            requires: Requires::catalogue_tool("run-tests"),
            check: check(security_blocked),
        },
        Case {
            id: "1.token-required".into(),
            requirement: "An Editor that publishes a token refuses a request without it, with a wrong one or with one that is not a string (-32603, data.type unauthorized), answers one with it, and still answers a parse error without it (-32700).".into(),
            reference: "docs/editor-link-protocol.md §3, §7",
            level: Level::Must,
            needs: Needs::Link,
            requires: Requires::extension(Extension::Token),
            check: check(token_required),
        },
        Case {
            id: "7.discovery-token-private".into(),
            requirement: "The discovery file holds a token of at least 128 bits (22 base64url characters) and, on Unix, only its owner may read it (no group or other permission bits).".into(),
            reference: "docs/editor-link-protocol.md §7",
            level: Level::Must,
            needs: Needs::Project,
            requires: Requires::extension(Extension::Token),
            check: check(discovery_token_private),
        },
    ]
}

fn token_required(s: Session) -> CheckFuture {
    Box::pin(async move {
        let Some(token) = s.token() else {
            return Err(Finding::Harness(
                "the Editor's token is not known: give --project DIR (its discovery file) or --token".into(),
            ));
        };
        let mut anonymous = s.link_without_token(Framing::Header).await?;
        let last = if token.ends_with('x') { "y" } else { "x" };
        let wrong = format!("{}{last}", &token[..token.len() - 1]);
        let probe = anonymous.probe().method();
        let attempts = [
            ("without a token", json!({"jsonrpc": "2.0", "id": "t-none", "method": probe, "params": {}})),
            (
                "with a wrong token",
                json!({"jsonrpc": "2.0", "id": "t-wrong", "method": probe, "params": {}, TOKEN_MEMBER: wrong}),
            ),
            (
                "with the token in an array",
                json!({"jsonrpc": "2.0", "id": "t-array", "method": probe, "params": {}, TOKEN_MEMBER: [token]}),
            ),
        ];
        for (how, request) in &attempts {
            anonymous.send_json(request).await?;
            let answer = anonymous.response(&request["id"]).await?;
            let error = &answer["error"];
            ensure!(
                error["code"] == -32603 && error["data"]["type"] == "unauthorized",
                "a request {how} was answered {answer} (must be -32603 with data.type unauthorized)"
            );
        }
        anonymous.send_body(b"{\"jsonrpc\": \"2.0\", oops").await?;
        let parse = anonymous.message().await?;
        ensure!(
            parse["error"]["code"] == -32700 && parse["id"].is_null(),
            "a body that is not JSON, without a token, was answered {parse} (the parse error comes first: -32700)"
        );
        let mut client = s.link(Framing::Header).await?;
        client
            .probe_with("with the token")
            .await
            .map_err(|e| e.into_violation(|why| format!("a request with the token: {why}")))?;
        Ok(())
    })
}

fn discovery_token_private(s: Session) -> CheckFuture {
    Box::pin(async move {
        let file = s.discovery()?;
        let Some(token) = file.token else {
            return Err(Finding::Violation("the discovery file has no token".into()));
        };
        ensure!(
            token.len() >= 22 && token.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "the token {:?}… is not at least 22 base64url characters ({} characters)",
            &token[..token.len().min(4)],
            token.len()
        );
        private_file(&s)
    })
}

#[cfg(unix)]
fn private_file(s: &Session) -> Result<(), Finding> {
    use std::os::unix::fs::PermissionsExt;
    let project = s.project.as_ref().ok_or_else(|| Finding::Harness("the project folder is not known".into()))?;
    let path = editor_link::discovery::DiscoveryFile::path_in(project);
    let mode = std::fs::metadata(&path)
        .map_err(|e| Finding::Violation(format!("{}: {e}", path.display())))?
        .permissions()
        .mode();
    ensure!(mode & 0o077 == 0, "{} has mode {:o}: other users can read the token", path.display(), mode & 0o777);
    Ok(())
}

#[cfg(not(unix))]
fn private_file(s: &Session) -> Result<(), Finding> {
    // Windows: the file inherits the project folder's ACL (protocol §7).
    s.note("not Unix: the file's permissions are the project folder's ACL, not checked here");
    Ok(())
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
        let port = link.peer_port()?;
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
        let details = link.result(methods::GET_TOOL_DETAILS, json!({})).await?;
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
