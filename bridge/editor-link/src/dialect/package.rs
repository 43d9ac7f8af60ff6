//! This project's Unity package (`unity-package/`): the protocol of
//! `docs/editor-link-protocol.md` with every extension.

use super::{Catalogue, Dialect, Ordering, Reached, ReloadSignal, uloop_2_1_1};
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
    // The link's own methods run on a worker (`Dispatcher.cs`), as every
    // tool does; only what a tool asks of the Editor waits for the main
    // thread, and these ask nothing of it.
    off_main_thread: &[
        methods::PING,
        methods::GET_VERSION,
        methods::SET_CLIENT_NAME,
        methods::GET_TOOL_DETAILS,
        methods::GET_EDITOR_STATE,
    ],
    reload: ReloadSignal::Announced,
    // Its compile writes uLoopMCP 2.1.1's result files and locks too, for
    // clients that cannot resume.
    busy_locks: uloop_2_1_1::BUSY_LOCKS,
    compile_results: uloop_2_1_1::COMPILE_RESULTS,
    catalogue: Catalogue { reference: "the package's tool catalogue (§6's reference)", versions: &[], unlisted: &[] },
};
