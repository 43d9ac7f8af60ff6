//! §5 Lifecycle and §7 Discovery (these need the fake's control API).

use std::time::Duration;

use serde_json::json;
use unity_mcp_bridge::{discovery::EditorState, framing::Framing};

use crate::{
    case::{Case, CheckFuture, Finding, Level, Needs, check},
    ensure,
    target::{Received, Session},
};

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            id: "5.reload-shutdown-notification".into(),
            requirement: "On a domain reload every client gets notifications/server/shutdown {\"reason\":\"DomainReload\"}, then the connection closes.".into(),
            reference: "editor-link-protocol.md §5",
            level: Level::Must,
            needs: Needs::Control,
            check: check(reload_shutdown_notification),
        },
        Case {
            id: "5.reload-new-session".into(),
            requirement: "After a domain reload the Editor listens again with a new serverSessionId and discovery state ready.".into(),
            reference: "editor-link-protocol.md §5, §7",
            level: Level::Must,
            needs: Needs::Control,
            check: check(reload_new_session),
        },
        Case {
            id: "5.reload-list-changed".into(),
            requirement: "Once tools are registered after a reload, clients connected by then get notifications/tools/list_changed.".into(),
            reference: "editor-link-protocol.md §4, §5",
            level: Level::Must,
            needs: Needs::Control,
            check: check(reload_list_changed),
        },
        Case {
            id: "7.discovery-port".into(),
            requirement: "When a reload moves the port, the discovery file names the port the Editor listens on.".into(),
            reference: "editor-link-protocol.md §5, §7",
            level: Level::Must,
            needs: Needs::Control,
            check: check(discovery_port),
        },
    ]
}

async fn reload(s: &Session, move_port: bool) -> Result<serde_json::Value, Finding> {
    s.control()?
        .reload(100, move_port)
        .await
        .map_err(|e| Finding::Harness(format!("reload through the control API: {e}")))
}

fn reload_shutdown_notification(s: Session) -> CheckFuture {
    Box::pin(async move {
        let mut link = s.link(Framing::Header).await?;
        link.result("ping", json!({})).await?;
        s.control()?.post("/reload", json!({"downtimeMs": 100})).await.map_err(|e| Finding::Harness(e.to_string()))?;
        let first = link.receive(Duration::from_secs(5)).await;
        let Received::Message(note) = first else {
            return crate::case::violation(format!("expected the shutdown notification, got {first:?}"));
        };
        ensure!(
            note["method"] == "notifications/server/shutdown" && note["params"] == json!({"reason": "DomainReload"}),
            "expected the shutdown notification, got {note}"
        );
        ensure!(link.closes_within(Duration::from_secs(5)).await, "the connection stayed open through the reload");
        Ok(())
    })
}

fn reload_new_session(s: Session) -> CheckFuture {
    Box::pin(async move {
        let before = s.discovery()?;
        reload(&s, false).await?;
        let after = s.discovery()?;
        ensure!(after.state == Some(EditorState::Ready), "discovery state {:?} after the reload", after.state);
        ensure!(
            after.server_session_id.is_some() && after.server_session_id != before.server_session_id,
            "serverSessionId {:?} did not change",
            after.server_session_id
        );
        let mut link = s.link(Framing::Header).await?;
        link.result("ping", json!({})).await?;
        Ok(())
    })
}

fn reload_list_changed(s: Session) -> CheckFuture {
    Box::pin(async move {
        reload(&s, false).await?;
        let mut link = s.link(Framing::Header).await?;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match link.receive(left).await {
                Received::Message(m) if m["method"] == "notifications/tools/list_changed" => return Ok(()),
                Received::Message(_) => {}
                other => {
                    return crate::case::violation(format!(
                        "no tools/list_changed within 5 s of the reload ({other:?})"
                    ));
                }
            }
        }
    })
}

fn discovery_port(s: Session) -> CheckFuture {
    Box::pin(async move {
        let before = s.discovery()?;
        let report = reload(&s, true).await?;
        let listening = report["port"].as_u64().ok_or_else(|| Finding::Harness(format!("reload report {report}")))?;
        ensure!(
            listening != u64::from(before.port),
            "the harness asked for a port move but the port stayed {listening}"
        );
        let after = s.discovery()?;
        ensure!(
            u64::from(after.port) == listening,
            "discovery names port {} but the Editor listens on {listening}",
            after.port
        );
        Ok(())
    })
}
