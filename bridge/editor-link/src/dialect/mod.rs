//! Which Editor is at the other end, and what follows from that: one
//! [`Dialect`] per Editor the project knows, each a file of its own
//! ([`package`], [`uloop_2_1_1`], [`uloop_3`]), each its policies as data.
//! The bridge, fake-unity and the suite ask the dialect how to reach, probe,
//! follow and read an Editor; none of them tests which Editor it is.
//!
//! A new Editor is a new file here, and a line in [`ALL`].
//!
//! How a dialect is told:
//! - by the bridge, from where it reached the Editor and what `get-version`
//!   said ([`Dialect::speaking`]): how to talk to it;
//! - by the suite, from `get-version` alone, and only for an Editor whose
//!   catalogue it has a reference for ([`Dialect::catalogue_of`]).

pub mod package;
pub mod uloop_2_1_1;
pub mod uloop_3;

use std::{fmt, hash::Hash};

use crate::{endpoint::Endpoint, framing::Framing, methods, version::Version};

pub use package::PACKAGE;
pub use uloop_2_1_1::ULOOP_2_1_1;
pub use uloop_3::ULOOP_3;

/// Every dialect, the package's first.
pub const ALL: [&Dialect; 3] = [&PACKAGE, &ULOOP_2_1_1, &ULOOP_3];

/// An Editor's ways on the wire and on disk.
#[derive(Debug)]
pub struct Dialect {
    /// Its name in case ids, profiles, baselines and `--editor`:
    /// `package`, `uloop-2.1.1`, `uloop-3`.
    pub name: &'static str,
    /// How messages name it: "uLoopMCP 2.1.1".
    pub title: &'static str,
    /// How a client finds it.
    pub reached: Reached,
    /// The framings it speaks, the one to try first first.
    pub framings: &'static [Framing],
    /// Whether it answers requests on one connection side by side.
    pub ordering: Ordering,
    /// Its harmless request: asked to learn whether it answers at all.
    pub probe: &'static str,
    /// It knows `set-client-name`.
    pub names_client: bool,
    /// It may keep a resume journal (protocol §5), which takes up a call a
    /// domain reload cut off: where its `get-version` names the extension
    /// and the Editor process. Without one, a call that may have run is
    /// never sent again (one that only reads is).
    pub resumes: bool,
    /// What waits for its main thread, which a modal dialog, a long import
    /// or an unfocused, throttled Editor holds.
    pub main_thread: MainThread,
    /// What tells a client that a closed connection was a domain reload.
    pub reload: ReloadSignal,
    /// How a PlayMode test run meets the domain reload entering play mode
    /// makes (unless the project's Enter Play Mode settings turn it off).
    pub play_mode_tests: PlayModeTests,
    /// Files under the project that exist while it compiles, reloads or
    /// starts its server (uLoopMCP's), none of them while it is ready.
    pub busy_locks: &'static [&'static str],
    /// Where a `compile` asked to wait for its domain reload
    /// (`WaitForDomainReload`, with a `RequestId`) leaves its result under
    /// the project, `<dir>/<RequestId>.json`.
    pub compile_results: &'static str,
    /// The tool catalogue the suite holds it to.
    pub catalogue: Catalogue,
}

/// How a client finds an Editor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reached {
    /// A TCP port on 127.0.0.1, published in this file under the project.
    Tcp { published_in: &'static str },
    /// A Unix domain socket (Windows: a named pipe) named from the
    /// project's canonical root ([`crate::endpoint::uloop3_endpoint`]); no
    /// discovery file, no token.
    ProjectSocket,
}

/// Whether an Editor answers the requests of one connection side by side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ordering {
    /// Side by side, each when it is done (protocol §3): a `ping` is
    /// answered beside a running call.
    Concurrent,
    /// One at a time, in order: a request waits for every one before it
    /// on its connection, so a client gives each call a connection of its own.
    OneAtATime,
}

/// What of a request waits for an Editor's main thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MainThread {
    /// Every request, before it is read further: its parameters bound, its
    /// tool run (uLoopMCP switches to the main thread first).
    EveryRequest,
    /// Only a tool's body, under its deadline (tools run on a worker and ask
    /// the main thread for what they need: a request that is refused is
    /// refused at once, and a held tool answers `timeout` at its
    /// deadline); these methods never wait.
    ToolBodies { never: &'static [&'static str] },
}

impl MainThread {
    /// Whether `method`'s tool waits for the main thread at all.
    pub fn holds(self, method: &str) -> bool {
        match self {
            MainThread::EveryRequest => true,
            MainThread::ToolBodies { never } => !never.contains(&method),
        }
    }
}

/// How a PlayMode test run meets the domain reload that entering play
/// mode makes: Unity's default (`ProjectSettings/EditorSettings.asset`'s
/// Enter Play Mode options), which kills every callback and continuation of
/// the domain that started the run (the Test Framework's own run goes on in
/// the new domain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayModeTests {
    /// The run goes on in the new domain and its answer is journaled there
    /// for `x-resume` (the connection that asked closed with the old domain;
    /// a resumed request waits for the answer): the project's setting kept.
    GoOnAfterReload,
    /// Domain reload is turned off for the run and restored after it
    /// (uLoopMCP's `DomainReloadDisableScope`): the answer comes on the
    /// connection that asked, and nothing reloads.
    ReloadOffForTheRun,
}

/// What tells a client a closed connection was a domain reload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReloadSignal {
    /// `notifications/server/shutdown` with `reason: DomainReload` before
    /// the connection closes (protocol §4).
    Announced,
    /// Nothing on the wire: this file under the project exists while it reloads.
    LockFile(&'static str),
}

/// A tool catalogue the suite has a reference for.
#[derive(Clone, Copy, Debug)]
pub struct Catalogue {
    /// Where its reference is, in words.
    pub reference: &'static str,
    /// The `Ver`s of the Editors whose catalogue it is; empty: an Editor
    /// that says `ProtocolVersion` (the package's).
    pub versions: &'static [&'static str],
    /// Methods it answers without listing them in `get-tool-details`.
    pub unlisted: &'static [&'static str],
}

impl Dialect {
    /// How to talk to an Editor reached at `endpoint` that said `version`
    /// (`Version::default()` before it answered `get-version`, or when it
    /// has none): uLoopMCP 3's on a Unix socket or named pipe; the
    /// package's when it says a `ProtocolVersion`; otherwise uLoopMCP
    /// 2.1.1's, whose ways every uLoopMCP-2.x-compatible Editor follows.
    pub fn speaking(endpoint: &Endpoint, version: &Version) -> &'static Dialect {
        match endpoint {
            Endpoint::Unix(_) | Endpoint::Pipe(_) => &ULOOP_3,
            Endpoint::Tcp(_) if version.protocol_version.is_some() => &PACKAGE,
            Endpoint::Tcp(_) => &ULOOP_2_1_1,
        }
    }

    /// The dialect whose catalogue an Editor has, if the suite has its
    /// reference: the package's for `ProtocolVersion: 1`; otherwise the one
    /// whose `Ver`s include this Editor's (uLoopMCP 3 only where `ping` is
    /// not listed: the tag v3.0.0-beta.1 says the same `Ver` as c50f54c and
    /// listed it, with another catalogue).
    pub fn catalogue_of(version: &Version, lists_ping: bool) -> Option<&'static Dialect> {
        if version.protocol_version == Some(crate::discovery::PROTOCOL_VERSION) {
            return Some(&PACKAGE);
        }
        if version.protocol_version.is_some() {
            return None;
        }
        let ver = version.ver.as_deref()?;
        // A catalogue without `ping` (its probe is another method) is not
        // the catalogue of an Editor that lists one.
        ALL.into_iter()
            .filter(|d| d.catalogue.versions.contains(&ver))
            .find(|d| !lists_ping || d.probe == methods::PING)
    }

    /// The dialect called `name`.
    pub fn named(name: &str) -> Option<&'static Dialect> {
        ALL.into_iter().find(|d| d.name == name)
    }

    /// It answers the requests of one connection side by side.
    pub fn concurrent(&self) -> bool {
        self.ordering == Ordering::Concurrent
    }

    /// It is reached on a socket named from its project.
    pub fn on_project_socket(&self) -> bool {
        self.reached == Reached::ProjectSocket
    }
}

// A dialect is its name: two with one name are one.
impl PartialEq for Dialect {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Dialect {}

impl Hash for Dialect {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

// Ordered as ALL lists them.
impl PartialOrd for Dialect {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Dialect {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let place = |d: &Dialect| ALL.iter().position(|a| a.name == d.name);
        place(self).cmp(&place(other))
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl serde::Serialize for Dialect {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn version(value: &serde_json::Value) -> Version {
        Version::read(value)
    }

    #[test]
    fn the_bridge_tells_a_dialect_from_where_it_reached_the_editor_and_what_it_said() {
        let tcp = Endpoint::Tcp(std::net::SocketAddr::from(([127, 0, 0, 1], 8700)));
        assert_eq!(Dialect::speaking(&tcp, &version(&json!({"ProtocolVersion": 1}))), &PACKAGE);
        assert_eq!(Dialect::speaking(&tcp, &version(&json!({"Ver": "2.1.1"}))), &ULOOP_2_1_1);
        assert_eq!(Dialect::speaking(&tcp, &Version::default()), &ULOOP_2_1_1, "no get-version: uLoopMCP 2.x's ways");
        let socket = Endpoint::Unix("/tmp/uloop/x.sock".into());
        assert_eq!(Dialect::speaking(&socket, &version(&json!({"Ver": "3.0.0-beta.1"}))), &ULOOP_3);
        assert_eq!(Dialect::speaking(&Endpoint::Pipe(r"\\.\pipe\x".into()), &Version::default()), &ULOOP_3);
    }

    #[test]
    fn the_suite_knows_a_catalogue_only_where_it_has_its_reference() {
        let of = |v: serde_json::Value, ping| Dialect::catalogue_of(&version(&v), ping).map(|d| d.name);
        assert_eq!(of(json!({"ProtocolVersion": 1, "Ver": "2.1.1"}), true), Some("package"));
        assert_eq!(of(json!({"ProtocolVersion": 2}), true), None);
        assert_eq!(of(json!({"Ver": "2.1.1"}), true), Some("uloop-2.1.1"));
        assert_eq!(of(json!({"Ver": "2.0.0"}), true), None);
        assert_eq!(of(json!({"Ver": "3.0.0-beta.1"}), false), Some("uloop-3"));
        assert_eq!(of(json!({"Ver": "3.0.0-beta.2"}), false), Some("uloop-3"));
        assert_eq!(of(json!({"Ver": "3.0.0-beta.1"}), true), None, "the tag beta.1 listed ping: another catalogue");
    }

    #[test]
    fn every_dialect_is_found_by_its_name_and_ordered_as_listed() {
        for dialect in ALL {
            assert_eq!(Dialect::named(dialect.name), Some(dialect));
        }
        let mut sorted = [&ULOOP_3, &PACKAGE, &ULOOP_2_1_1];
        sorted.sort();
        assert_eq!(sorted, ALL);
    }
}
