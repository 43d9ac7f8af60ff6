//! `unity-mcp-bridge`: see [`unity_mcp_bridge::cli`].

fn main() -> std::process::ExitCode {
    unity_mcp_bridge::cli::main(std::env::args_os())
}
