//! `stackbot completions <shell>`.

use clap::CommandFactory;

use super::{Cli, Global};
use crate::error::ExitStatus;

/// Print a completion script for a shell.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  stackbot completions bash > /etc/bash_completion.d/stackbot\n  stackbot completions zsh > ~/.zfunc/_stackbot"
)]
pub struct Args {
    /// Shell to generate for.
    pub shell: clap_complete::Shell,
}

/// Write the script to stdout.
pub fn run(a: &Args, _g: &Global) -> anyhow::Result<ExitStatus> {
    clap_complete::generate(
        a.shell,
        &mut Cli::command(),
        "stackbot",
        &mut std::io::stdout(),
    );
    Ok(ExitStatus::Success)
}
