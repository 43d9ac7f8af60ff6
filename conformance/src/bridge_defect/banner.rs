//! Prints a banner on stdout before serving.

use super::{Breaks, Relay};

#[derive(Debug, Default)]
pub(super) struct Banner;

impl Breaks for Banner {
    fn start(&self, relay: &Relay) -> Result<(), String> {
        relay.say("unity-mcp-bridge ready (serving MCP on stdio)");
        Ok(())
    }
}
