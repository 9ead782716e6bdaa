//! The `stackbot` binary: parse arguments, run, map the outcome to an exit code. Nothing else.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(stackbot::cli::main() as u8)
}
