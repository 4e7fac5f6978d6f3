//! Thin glue per subcommand: parse nothing, decide nothing the library can;
//! turn results into output and an exit status.

pub mod apply;
pub mod connect;
pub mod docs;
pub mod drift;
pub mod export;
pub mod plan;
pub mod reconcile;
pub mod sandbox;
pub mod saved_plan;
pub mod schema;
pub mod scorers;
pub mod validate;
pub mod whoami;

use crate::cli::{Cli, Command, PlanShapeArgs};
use crate::error::Error;
use crate::exit::ExitStatus;
use crate::output::Printer;
use crate::plan::PlanOptions;

// Here rather than in `cli`, which only declares the command line.
impl PlanShapeArgs {
    /// The plan options these flags ask for.
    pub fn options(&self) -> PlanOptions {
        PlanOptions {
            prune: self.prune,
            rotate_secrets: self.rotate_secrets,
            targets: self.target.clone().into(),
            guard: crate::plan::GuardLimits::default(),
            allow_destroy: self.allow_destroy,
        }
    }
}

/// Runs a parsed command line. The one place an [`Error`] is rendered and
/// turned into an exit status.
pub async fn run(cli: Cli, printer: &Printer) -> ExitStatus {
    // Every command but the sandbox (which serves its own demo credentials, and
    // prints them for the user to export) holds evalctl's credentials from the
    // environment: no output shows them, whether or not it connects.
    if !matches!(cli.command, Command::Sandbox(_)) {
        crate::scrub::register_credentials(&|name| std::env::var(name).ok());
    }
    let result: Result<ExitStatus, Error> = match cli.command {
        Command::Validate(args) => Ok(validate::run(&args, printer)),
        Command::Schema(args) => Ok(schema::run(&args, printer)),
        Command::Plan(args) => plan::run(&args, printer).await,
        Command::Apply(args) => apply::run(&args, printer).await,
        Command::Drift(args) => drift::run(&args, printer).await,
        Command::Export(args) => export::run(&args, printer).await,
        Command::Sandbox(args) => Ok(sandbox::run(args, printer).await),
        Command::Whoami(args) => Ok(whoami::run(&args, printer).await),
        Command::Scorers(command) => scorers::run(&command, printer).await,
        Command::Completions(args) => Ok(docs::completions(&args, printer)),
        Command::Man(args) => Ok(docs::man(&args, printer)),
    };
    match result {
        Ok(status) => status,
        Err(error) => {
            printer.error(&error.to_string());
            error.exit_status()
        }
    }
}
