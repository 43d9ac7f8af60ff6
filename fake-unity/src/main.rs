//! The `fake-unity` binary: its command line is [`fake_unity::cli`].

fn main() -> anyhow::Result<()> {
    fake_unity::cli::main(std::env::args_os())
}
