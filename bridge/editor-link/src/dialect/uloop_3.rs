//! uLoopMCP 3 ("Unity CLI Loop", `hatayama/uLoopMCP` branch `v3-beta` at
//! c50f54c, `docs/uloop-3-wire.md`): a Unix domain socket (Windows: a named
//! pipe) named after the project, no discovery file, no token, no
//! notifications; `get-version` and `get-tool-details` answered as internal
//! commands, never listed; no `ping`, no `set-client-name`; every request
//! names the project root it expects (`x-uloop.expectedProjectRoot`).

use super::{Catalogue, Dialect, MainThread, Ordering, PlayModeTests, Reached, ReloadSignal, uloop_2_1_1};
use crate::{framing::Framing, methods};

/// Exists while its server is starting (binding), written with a GUID
/// token (`ServerStartingLockService.cs`) and deleted, with the other two,
/// once it listens (`UnityCliLoopBridgeServer.cs:136-142`).
pub const SERVER_STARTING_LOCK: &str = "Temp/serverstarting.lock";

/// Its locks: uLoopMCP 2.1.1's, and while its server starts.
pub const BUSY_LOCKS: &[&str] = &[uloop_2_1_1::COMPILING_LOCK, uloop_2_1_1::DOMAIN_RELOAD_LOCK, SERVER_STARTING_LOCK];

/// Where a compile that waits for its reload leaves its result (its CLI's
/// `compile_wait.go:22`).
pub const COMPILE_RESULTS: &str = "Temp/UnityCliLoop/compile-results";

/// `UnityCliLoopVersion.VERSION` at c50f54c
/// (`Packages/src/Editor/Application/Config/UnityCliLoopVersion.cs:9`):
/// `Ver` in every result.
pub const VERSION: &str = "3.0.0-beta.1";

/// The commit of hatayama/uLoopMCP (branch `v3-beta`) this dialect follows.
pub const COMMIT: &str = "c50f54c3afe7cb94985c26eb6eaec910f1ae2cce";

/// Its answer (`-32603`, the only code it sends) to an
/// `x-uloop.expectedProjectRoot` that is not its project's (§5).
pub const OTHER_PROJECT: &str = "Connected Unity instance belongs to a different project.";

/// Its answer to an `x-uloop.expectedServerSessionId` of an earlier session.
pub const SESSION_CHANGED: &str = "Unity CLI Loop server session changed. Retry the command.";

pub const ULOOP_3: Dialect = Dialect {
    name: "uloop-3",
    title: "uLoopMCP 3",
    reached: Reached::ProjectSocket,
    framings: &[Framing::Header],
    ordering: Ordering::OneAtATime,
    // It has no ping: its get-version says as much.
    probe: methods::GET_VERSION,
    names_client: false,
    resumes: false,
    // Only the x-uloop check runs before the switch to the main thread
    // (`JsonRpcProcessor.cs:174-177`); every request then waits for it.
    main_thread: MainThread::EveryRequest,
    reload: ReloadSignal::LockFile(uloop_2_1_1::DOMAIN_RELOAD_LOCK),
    // `PlayModeTestExecuter.cs:22`: a `DomainReloadDisableScope`, as 2.1.1.
    play_mode_tests: PlayModeTests::ReloadOffForTheRun,
    busy_locks: BUSY_LOCKS,
    compile_results: COMPILE_RESULTS,
    catalogue: Catalogue {
        reference: "uLoopMCP 3's tool catalogue and wire (v3-beta c50f54c, docs/uloop-3-wire.md)",
        // c50f54c's, and 3.0.0-beta.2's, which is c50f54c released
        // (docs/uloop-3-wire.md §1, §10).
        versions: &[VERSION, "3.0.0-beta.2"],
        // In the order of `InternalBridgeCommandRouter.cs:14-35`.
        unlisted: &[methods::GET_TOOL_DETAILS, methods::GET_VERSION],
    },
};
