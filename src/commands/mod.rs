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
        }
    }
}

/// Runs a parsed command line.
pub async fn run(cli: Cli, printer: &Printer) -> ExitStatus {
    match cli.command {
        Command::Validate(args) => validate::run(&args, printer),
        Command::Schema(args) => schema::run(&args, printer),
        Command::Plan(args) => plan::run(&args, printer).await,
        Command::Apply(args) => apply::run(&args, printer).await,
        Command::Drift(args) => drift::run(&args, printer).await,
        Command::Export(args) => export::run(&args, printer).await,
        Command::Sandbox(args) => sandbox::run(args, printer).await,
        Command::Whoami(args) => whoami::run(&args, printer).await,
        Command::Scorers(command) => scorers::run(&command, printer).await,
        Command::Completions(args) => docs::completions(&args, printer),
        Command::Man(args) => docs::man(&args, printer),
    }
}
