//! The simulated Editor's lifecycle, as the server's driver runs it:
//! listening, reloads, crashes, restarts, and the discovery file.

use super::*;
use crate::editor::model::{
    DiscoveryFileKind, discovery,
    discovery::{DiscoveryPid, Readers, Writes},
    lifecycle::{InFlightAtShutdown, SessionAfterReload},
};
use crate::events::Event;

impl Editor {
    // ---- lifecycle (called by the server's driver) ----

    pub(super) fn discovery(&self, link: &Lifecycle) -> DiscoveryFile {
        DiscoveryFile {
            port: link.port,
            pid: match (self.model.discovery.pid, link.crashed) {
                (DiscoveryPid::Own, false) => std::process::id(),
                (DiscoveryPid::Dead, _) | (_, true) => DEAD_PID,
            },
            project_path: unity_path(&self.project),
            unity_version: Some(self.base.editor.unity_version.clone()),
            package_version: Some(self.base.editor.package_version.clone()),
            protocol_version: Some(PROTOCOL_VERSION).filter(|_| self.model.discovery.names_session),
            server_session_id: Some(link.session_id.clone()).filter(|_| self.model.discovery.names_session),
            state: Some(link.phase),
            updated_at: Some(self.timestamp()),
            token: Some(link.token.clone()).filter(|_| self.model.extensions.token),
        }
    }

    pub(super) fn publish(&self, phase: EditorState, port: Option<u16>, new_session: bool) {
        let file = {
            let mut link = lock(&self.lifecycle);
            link.phase = phase;
            if let Some(port) = port {
                link.port = port;
            }
            if new_session {
                link.session_id = self.model.discovery.session_id(&new_session_id(&mut lock(&self.rng)));
            }
            self.discovery(&link)
        };
        let mut file = file;
        if phase == EditorState::Reloading && !self.model.discovery.says_reloading {
            file.state = Some(EditorState::Ready);
        }
        // The disk may be slow (issue 34): the runtime's other tasks go on meanwhile.
        let written = editor_link::blocking(|| {
            match (self.model.discovery.file, self.model.discovery.writes) {
                (DiscoveryFileKind::UloopSettings, _) => {
                    self.uloop_locks(phase);
                    let session = file.server_session_id.as_deref().unwrap_or_default();
                    let settings = discovery::uloop_settings(phase, file.port, &file.project_path, session);
                    discovery::write_uloop_settings(&self.project, &settings)
                }
                (DiscoveryFileKind::Uloop3Locks, _) => {
                    self.uloop_locks(phase);
                    Ok(())
                }
                (DiscoveryFileKind::InstanceFile, Writes::InPlace) => {
                    write_in_place(&DiscoveryFile::path_in(&self.project), &file)
                }
                (DiscoveryFileKind::InstanceFile, Writes::Atomic) => file.write_atomic(&self.project),
            }
            .and_then(|()| match self.model.discovery.readers {
                Readers::Owner => Ok(()),
                Readers::Everyone => world_readable(&DiscoveryFile::path_in(&self.project)),
            })
        });
        match written {
            Ok(()) => self.register(&file),
            Err(err) => tracing::error!(%err, "cannot write the discovery file"),
        }
    }

    /// uLoopMCP's lock files as a reload goes (`DomainReloadDetectionService`,
    /// `McpBridgeServer`): `Temp/domainreload.lock` from `beforeAssemblyReload`
    /// until the server listens again, which also clears `Temp/compiling.lock`
    /// (and, in uLoopMCP 3, `Temp/serverstarting.lock`: `StartServer`,
    /// `UnityCliLoopBridgeServer.cs:136-142`).
    fn uloop_locks(&self, phase: EditorState) {
        editor_link::blocking(|| self.uloop_locks_now(phase));
    }

    fn uloop_locks_now(&self, phase: EditorState) {
        use crate::editor::model::lifecycle::{COMPILING_LOCK, DOMAIN_RELOAD_LOCK, SERVER_STARTING_LOCK, lock_stamp};
        if phase == EditorState::Ready && self.model.dialect.busy_locks.contains(&SERVER_STARTING_LOCK) {
            let _ = std::fs::remove_file(self.project.join(SERVER_STARTING_LOCK));
        }
        match phase {
            EditorState::Reloading => {
                let _ = std::fs::create_dir_all(self.project.join("Temp"));
                let _ = std::fs::write(self.project.join(DOMAIN_RELOAD_LOCK), lock_stamp(self.now()));
            }
            EditorState::Ready => {
                let _ = std::fs::remove_file(self.project.join(DOMAIN_RELOAD_LOCK));
                let _ = std::fs::remove_file(self.project.join(COMPILING_LOCK));
            }
            _ => {}
        }
    }

    /// About to bind (at start, after a reload, in a new process): uLoopMCP
    /// 3 writes `Temp/serverstarting.lock` with a GUID token first
    /// (`ServerStartingLockService.cs:28-61`); the others write nothing.
    pub fn starting_server(&self) {
        use crate::editor::model::lifecycle::SERVER_STARTING_LOCK;
        if !self.model.dialect.busy_locks.contains(&SERVER_STARTING_LOCK) {
            return;
        }
        let token = new_session_id(&mut lock(&self.rng));
        let written = editor_link::blocking(|| {
            std::fs::create_dir_all(self.project.join("Temp"))?;
            std::fs::write(self.project.join(SERVER_STARTING_LOCK), token)
        });
        if let Err(err) = written {
            tracing::warn!(%err, "cannot write Temp/serverstarting.lock");
        }
    }

    /// Bound and listening: discovery `ready`.
    pub fn listening(&self, port: u16) {
        self.publish(EditorState::Ready, Some(port), false);
        self.events.send(Event::Listening { port });
    }

    /// Steps 1–3 of a domain reload (protocol §5): discovery `reloading`, the
    /// shutdown notification, every connection closed, tool calls in flight
    /// abandoned.
    pub(crate) fn begin_shutdown(&self, reason: ShutdownReason) {
        let reloading = reason == ShutdownReason::DomainReload;
        self.events.send(if reloading { Event::ReloadBegan } else { Event::Quitting });
        if reloading {
            self.publish(EditorState::Reloading, None, false);
        }
        {
            let mut domain = lock(&self.domain);
            domain.token.cancel();
            domain.generation += 1;
            domain.token = CancellationToken::new();
        }
        if self.model.lifecycle.shutdown_notice {
            self.broadcast(notifications::SERVER_SHUTDOWN, json!({"reason": reason.as_str()}));
        }
        match self.model.lifecycle.in_flight {
            InFlightAtShutdown::Abandoned => {
                for client in self.clients() {
                    client.end(Ending::Graceful);
                }
            }
            InFlightAtShutdown::AnsweredAfterNotice => {
                // Calls in flight get their answers out before the sockets close.
                let clients = self.clients();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    clients.iter().for_each(|c| c.end(Ending::Graceful));
                });
            }
        }
        if !reloading && self.model.discovery.says_stopped {
            self.publish(EditorState::Stopped, None, false);
        }
    }

    /// Step 4: listening again with a new session; the new domain's scripts
    /// have loaded, and what they log at load is in the Console again.
    pub(crate) fn finish_reload(&self, port: u16) {
        {
            let mut sim = self.sim();
            let logs = self.base.load_logs.iter().map(|e| ConsoleEntry { entry: e.clone(), from_compile: false });
            sim.console.extend(logs);
        }
        let published = Some(port).filter(|_| self.model.discovery.follows_port);
        let new_session = self.model.lifecycle.session_after_reload == SessionAfterReload::New;
        self.publish(EditorState::Ready, published, new_session);
        lock(&self.lifecycle).port = port;
        self.stats.reloads.fetch_add(1, Ordering::Relaxed);
        self.events.send(Event::Reloaded { port });
    }

    /// The Editor process dies: tool calls in flight abandoned, no shutdown
    /// notification, every connection closed by the "kernel" at once, the
    /// discovery file left saying `ready` for a process that is gone.
    /// `restarting`: a new Unity opens the project at once (its
    /// `EditorInstance.json` written as it starts), and takes the restart's
    /// delay to listen.
    pub(crate) fn crash(&self, restarting: bool) {
        {
            let mut domain = lock(&self.domain);
            domain.token.cancel();
            domain.generation += 1;
            domain.token = CancellationToken::new();
        }
        for client in self.clients() {
            client.end(Ending::Close);
        }
        self.hang.end();
        let file = {
            let mut link = lock(&self.lifecycle);
            link.crashed = true;
            self.discovery(&link)
        };
        // uLoopMCP's settings file keeps saying running, as a crash leaves it.
        let written = match self.model.discovery.file {
            // Atomic writes leave the runtime's other tasks going (`editor_link::blocking`).
            DiscoveryFileKind::InstanceFile => file.write_atomic(&self.project),
            DiscoveryFileKind::UloopSettings | DiscoveryFileKind::Uloop3Locks => Ok(()),
        };
        if let Err(err) = written {
            tracing::error!(%err, "cannot leave the discovery file of the crashed Editor");
        }
        // With a restart planned its file keeps naming a live Unity.
        if !restarting {
            self.unity_died();
        }
        self.stats.crashes.fetch_add(1, Ordering::Relaxed);
        self.events.send(Event::Crashed { restarting });
    }

    /// A new Editor process has opened the project and listens on `port`:
    /// a new instance and session, an empty journal (Unity's SessionState
    /// died with the process), the scene and console as on disk; settings
    /// (in `UserSettings/`) are kept.
    pub(crate) fn restart(&self, port: u16) {
        *lock(&self.journal) = Journal::default();
        {
            let fresh = Simulation::opened(&self.base, &self.project);
            let mut sim = self.sim();
            let settings = sim.settings.clone();
            *sim = Simulation { settings, ..fresh };
        }
        {
            let mut link = lock(&self.lifecycle);
            link.crashed = false;
            link.instance_id = new_session_id(&mut lock(&self.rng));
            link.token = new_token(&mut lock(&self.rng));
        }
        self.unity_opened();
        self.publish(EditorState::Ready, Some(port), true);
        self.stats.restarts.fetch_add(1, Ordering::Relaxed);
        self.events.send(Event::Restarted { port });
    }

    /// The current domain's generation and token.
    pub(crate) fn domain(&self) -> (u64, CancellationToken) {
        let domain = lock(&self.domain);
        (domain.generation, domain.token.clone())
    }

    pub fn generation(&self) -> u64 {
        lock(&self.domain).generation
    }
}

/// The `discovery-world-readable` defect: the file any local user can read.
fn world_readable(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}
