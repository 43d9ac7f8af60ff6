//! uLoopMCP 2.1.1's Editor server (`hatayama/uLoopMCP`, tag `v2.1.1`), the
//! one most users of the protocol run, as it is on the wire
//! (`shared/reference/uloop-2.1.1.md`, `fixtures/recordings/uloop-2.1.1/`):
//! a TCP port in its settings file, header framing only, one request at a
//! time per connection, no resume journal; a compile asked to wait for its
//! reload leaves its result in a file.

use super::{Catalogue, Dialect, MainThread, Ordering, PlayModeTests, Reached, ReloadSignal};
use crate::{discovery::ULOOP_SETTINGS_FILE, framing::Framing, methods};

/// Exists while scripts compile.
pub const COMPILING_LOCK: &str = "Temp/compiling.lock";
/// Exists from a domain reload's start until the server listens again.
pub const DOMAIN_RELOAD_LOCK: &str = "Temp/domainreload.lock";
/// Its locks: while it compiles, and from a domain reload's start until it
/// listens again.
pub const BUSY_LOCKS: &[&str] = &[COMPILING_LOCK, DOMAIN_RELOAD_LOCK];
/// Where a compile that waits for its reload leaves its result.
pub const COMPILE_RESULTS: &str = "Temp/uLoopMCP/compile-results";

/// `McpVersion.VERSION`: `Ver` in every result.
pub const VERSION: &str = "2.1.1";

pub const ULOOP_2_1_1: Dialect = Dialect {
    name: "uloop-2.1.1",
    title: "uLoopMCP 2.1.1",
    reached: Reached::Tcp { published_in: ULOOP_SETTINGS_FILE },
    framings: &[Framing::Header],
    ordering: Ordering::OneAtATime,
    probe: methods::PING,
    names_client: true,
    resumes: false,
    // Every request, the handshake included, runs on the main thread.
    main_thread: MainThread::EveryRequest,
    // `McpBridgeServer.Dispose` sends the shutdown notification.
    reload: ReloadSignal::Announced,
    // `PlayModeTestExecuter.ExecutePlayModeTest` in a `DomainReloadDisableScope`.
    play_mode_tests: PlayModeTests::ReloadOffForTheRun,
    busy_locks: BUSY_LOCKS,
    compile_results: COMPILE_RESULTS,
    catalogue: Catalogue {
        reference: "uLoopMCP 2.1.1's tool catalogue (its recorded get-tool-details and answers)",
        versions: &[VERSION],
        unlisted: &[],
    },
};
