//! `evalctl sandbox`: run the local sandbox server.

use crate::cli::SandboxArgs;
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::sandbox::run as run_sandbox;

/// Runs `evalctl sandbox` until interrupted.
pub async fn run(args: SandboxArgs, printer: &Printer) -> ExitStatus {
    match run_sandbox(args.into()).await {
        Ok(()) => ExitStatus::Success,
        Err(e) => {
            printer.error(&e.to_string());
            ExitStatus::Failure
        }
    }
}
