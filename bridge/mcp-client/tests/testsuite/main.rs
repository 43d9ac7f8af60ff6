//! The MCP client against scripted servers over in-memory pipes (what is
//! tested is the client's logic), and against a real child process.

mod client;
