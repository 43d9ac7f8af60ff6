//! The simulated Editor at work: its lifecycle driver (what it accepts,
//! reloads, crashes, restarts, quits), each client connection, each request
//! from its checks to its response, and the one place the faults' effects
//! are carried out. It stands on the [`Editor`](crate::editor::Editor) and
//! its tools.
//!
//! - [`driver`] — the listener and the lifecycle: reload, crash, restart, quit.
//! - [`connection`] — one client connection: frames in, answers out.
//! - [`decoder`] — how a connection's bytes are cut into frames.
//! - [`request`] — one request from its checks to its response.
//! - [`effects`] — what the faults that fired do to the Editor, carried out.

mod connection;
mod decoder;
pub mod driver;
pub mod effects;
mod request;
