//! `evalctl completions` and `evalctl man`: generated from the clap
//! definition, so they can never disagree with the real flags.

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs, ManArgs};
use crate::exit::ExitStatus;
use crate::output::Printer;

/// Prints shell completions.
pub fn completions(args: &CompletionsArgs, printer: &Printer) -> ExitStatus {
    let mut command = Cli::command();
    let mut buffer = Vec::new();
    clap_complete::generate(args.shell, &mut command, "evalctl", &mut buffer);
    printer.out(&String::from_utf8_lossy(&buffer));
    ExitStatus::Success
}

/// Prints the man page, or writes one per command.
pub fn man(args: &ManArgs, printer: &Printer) -> ExitStatus {
    let command = Cli::command();
    match &args.out_dir {
        None => {
            let mut buffer = Vec::new();
            if let Err(e) = clap_mangen::Man::new(command).render(&mut buffer) {
                printer.error(&format!("cannot render the man page: {e}"));
                return ExitStatus::Failure;
            }
            printer.out(&String::from_utf8_lossy(&buffer));
        }
        Some(dir) => {
            if let Err(e) =
                std::fs::create_dir_all(dir).and_then(|()| clap_mangen::generate_to(command, dir))
            {
                printer.error(&format!("cannot write man pages to {}: {e}", dir.display()));
                return ExitStatus::Failure;
            }
            printer.info(&format!("Wrote the man pages to {}.", dir.display()));
        }
    }
    ExitStatus::Success
}
