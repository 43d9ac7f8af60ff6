//! The `unity-conformance` command line ([`unity_conformance::cli`]).

fn main() -> std::process::ExitCode {
    unity_conformance::cli::main()
}
