//! This project's Unity package (`unity-package/`): the protocol of
//! `docs/editor-link-protocol.md` with every extension.

use super::{Catalogue, Dialect, MainThread, Ordering, PlayModeTests, Reached, ReloadSignal, uloop_2_1_1};
use crate::{discovery::DISCOVERY_FILE, framing::Framing, methods};

pub const PACKAGE: Dialect = Dialect {
    name: "package",
    title: "the package",
    reached: Reached::Tcp { published_in: DISCOVERY_FILE },
    framings: &[Framing::Header, Framing::Newline],
    ordering: Ordering::Concurrent,
    probe: methods::PING,
    names_client: true,
    resumes: true,
    // Tools run on a worker (`Dispatcher.cs`); only what a tool asks of the
    // Editor waits for the main thread, and the link's own methods ask
    // nothing of it (`get-version` answers what was read at start-up).
    main_thread: MainThread::ToolBodies {
        never: &[
            methods::PING,
            methods::GET_VERSION,
            methods::SET_CLIENT_NAME,
            methods::GET_TOOL_DETAILS,
            methods::GET_EDITOR_STATE,
            // Sleeps on its worker (`InternalTools.cs`).
            "debug-sleep",
        ],
    },
    reload: ReloadSignal::Announced,
    // Callbacks registered at load take the run up in the new domain
    // (`PlayModeRuns.cs`); the user's Enter Play Mode settings stay as they are.
    play_mode_tests: PlayModeTests::GoOnAfterReload,
    // Its compile writes uLoopMCP 2.1.1's result files and locks too, for
    // clients that cannot resume.
    busy_locks: uloop_2_1_1::BUSY_LOCKS,
    compile_results: uloop_2_1_1::COMPILE_RESULTS,
    catalogue: Catalogue { reference: "the package's tool catalogue (§6's reference)", versions: &[], unlisted: &[] },
};
