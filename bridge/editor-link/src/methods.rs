//! The link's own methods (protocol §6): what a client asks of any Editor,
//! whatever tools it has. Every crate names them through these constants,
//! never as literals, so a reader finds each use of one from here.
//!
//! Which of them a given Editor answers, and which it answers without its
//! main thread, is its [dialect](crate::dialect)'s to say (uLoopMCP 3 has
//! no `ping` and no `set-client-name`).

/// A harmless request: answered at once with `{"Message": "pong"}`-like text.
pub const PING: &str = "ping";

/// The Editor's self-description ([`crate::version::Version`]): which Unity,
/// which project, which package, and what it can do.
pub const GET_VERSION: &str = "get-version";

/// The Editor's tools and their parameter schemas
/// ([`crate::tool_details::ToolDetails`]).
pub const GET_TOOL_DETAILS: &str = "get-tool-details";

/// Names the client (`ClientName`): shown in the Editor's window; a resume
/// journal keeps its calls under it.
pub const SET_CLIENT_NAME: &str = "set-client-name";

/// **Extension** `editor-state`: whether the Editor's main thread runs,
/// answered without it; never a listed tool.
pub const GET_EDITOR_STATE: &str = "get-editor-state";
