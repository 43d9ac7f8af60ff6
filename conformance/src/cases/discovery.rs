//! §7 Discovery: the discovery file, also through reloads (these need the
//! fake's control API).

use std::time::Duration;

use editor_link::{
    discovery::{DiscoveryFile, EditorState},
    framing::Framing,
};

use super::lifecycle::reload;
use crate::{
    case::{Case, CheckFuture, Level, Needs, Requires, check},
    ensure,
    finding::Finding,
    target::Session,
};

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            id: "7.discovery-fields".into(),
            requirement: "The discovery file names the port the Editor answers on, the project, protocolVersion 1, a serverSessionId, state ready and an updatedAt time.".into(),
            reference: "docs/editor-link-protocol.md §7",
            level: Level::Must,
            needs: Needs::Project,
            requires: Requires::extension(crate::case::Extension::DiscoveryFile),
            check: check(discovery_fields),
        },
        Case {
            id: "7.discovery-atomic".into(),
            requirement: "The discovery file is replaced atomically: read continuously through a reload, it is never missing, empty or cut.".into(),
            reference: "docs/editor-link-protocol.md §7",
            level: Level::Must,
            needs: Needs::Reload,
            requires: Requires::extension(crate::case::Extension::DiscoveryFile),
            check: check(discovery_atomic),
        },
        Case {
            id: "7.discovery-reload-state".into(),
            requirement: "While the domain reloads the discovery file says reloading; once the Editor listens again, ready.".into(),
            reference: "docs/editor-link-protocol.md §5, §7",
            level: Level::Must,
            needs: Needs::Reload,
            requires: Requires::extension(crate::case::Extension::DiscoveryFile),
            check: check(discovery_reload_state),
        },
        Case {
            id: "7.discovery-pid".into(),
            requirement: "The discovery file's pid is a live process (the Editor's), so clients can tell a stale file.".into(),
            reference: "docs/editor-link-protocol.md §7",
            level: Level::Must,
            needs: Needs::Project,
            requires: Requires::extension(crate::case::Extension::DiscoveryFile),
            check: check(discovery_pid),
        },
        Case {
            id: "7.discovery-port".into(),
            requirement: "When a reload moves the port, the discovery file names the port the Editor listens on.".into(),
            reference: "docs/editor-link-protocol.md §5, §7",
            level: Level::Must,
            needs: Needs::Control("a domain reload that moves the port"),
            requires: Requires::extension(crate::case::Extension::DiscoveryFile),
            check: check(discovery_port),
        },
    ]
}

/// How often the discovery file is read during a reload: often enough to
/// catch a torn write. On Windows a rename over a file someone has open
/// fails where the file system has no POSIX rename semantics (Wine, FAT,
/// some network shares) and the writer must try again, so a reader that is
/// never off the file would starve it: there the reads leave it gaps.
const READ_PAUSE: Duration = if cfg!(windows) { Duration::from_millis(2) } else { Duration::from_micros(200) };

/// What a reader of the discovery file saw during a reload: each read's
/// outcome (the state, or why the file could not be read), a run of equal
/// outcomes kept once (a real reload compiles first and lasts seconds), and
/// how many reads there were.
struct Reads {
    outcomes: Vec<Result<Option<EditorState>, String>>,
    total: usize,
}

/// Reads the discovery file continuously while the Editor reloads.
async fn discovery_during_reload(s: &Session) -> Result<Reads, Finding> {
    let project = s.project.clone().ok_or_else(|| Finding::Harness("the project folder is not known".into()))?;
    let stop = tokio_util::sync::CancellationToken::new();
    let reader = tokio::task::spawn_blocking({
        let stop = stop.clone();
        move || {
            let mut reads = Reads { outcomes: Vec::new(), total: 0 };
            while !stop.is_cancelled() {
                let read = DiscoveryFile::read(&project).map(|f| f.state).map_err(|e| e.to_string());
                reads.total += 1;
                if reads.outcomes.last() != Some(&read) {
                    reads.outcomes.push(read);
                }
                std::thread::sleep(READ_PAUSE);
            }
            reads
        }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let reloaded = s.reload_and_wait().await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    stop.cancel();
    let reads = reader.await.map_err(|e| Finding::Harness(format!("the reader: {e}")))?;
    reloaded?;
    Ok(reads)
}

fn discovery_atomic(s: Session) -> CheckFuture {
    Box::pin(async move {
        let reads = discovery_during_reload(&s).await?;
        let bad: Vec<&String> = reads.outcomes.iter().filter_map(|r| r.as_ref().err()).collect();
        ensure!(
            bad.is_empty(),
            "{} of {} reads of the discovery file during a reload failed, first: {}",
            bad.len(),
            reads.total,
            bad[0]
        );
        Ok(())
    })
}

fn discovery_reload_state(s: Session) -> CheckFuture {
    Box::pin(async move {
        let reads = discovery_during_reload(&s).await?;
        let states: Vec<Option<EditorState>> = reads.outcomes.into_iter().filter_map(Result::ok).collect();
        let reloading = states.iter().position(|st| *st == Some(EditorState::Reloading));
        ensure!(
            reloading.is_some(),
            "the discovery file never said reloading during the reload ({} reads: {states:?})",
            reads.total
        );
        ensure!(
            states.last() == Some(&Some(EditorState::Ready)),
            "after the reload the discovery file says {:?}, not ready",
            states.last()
        );
        Ok(())
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

fn discovery_fields(s: Session) -> CheckFuture {
    Box::pin(async move {
        // Linking first waits for a remote Editor an earlier case reloaded.
        let mut link = s.link(Framing::Header).await?;
        let file = s.discovery()?;
        let port = link.peer_port()?;
        ensure!(port == file.port, "the file names port {}, the Editor answers on {port}", file.port);
        link.probe_with("before").await?;
        let project = s.project.clone().ok_or_else(|| Finding::Harness("the project folder is not known".into()))?;
        let named = std::fs::canonicalize(&file.project_path).ok();
        ensure!(
            named.is_some() && named == std::fs::canonicalize(&project).ok(),
            "projectPath {:?} is not the project {}",
            file.project_path,
            project.display()
        );
        ensure!(file.protocol_version == Some(1), "protocolVersion {:?}", file.protocol_version);
        ensure!(file.server_session_id.as_deref().is_some_and(|id| !id.is_empty()), "no serverSessionId");
        ensure!(file.state == Some(EditorState::Ready), "state {:?}", file.state);
        ensure!(file.updated_at.is_some(), "no updatedAt");
        Ok(())
    })
}

fn discovery_pid(s: Session) -> CheckFuture {
    Box::pin(async move {
        let file = s.discovery()?;
        ensure!(
            editor_link::discovery::pid_alive(file.pid),
            "pid {} in the discovery file is not a live process",
            file.pid
        );
        Ok(())
    })
}
