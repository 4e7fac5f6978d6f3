//! evalctl: a declarative, GitOps-style configuration reconciler for the
//! evaluation-and-observability service, and a faithful local sandbox of it.
//!
//! The flow runs one way:
//!
//! ```text
//! manifests (YAML) --manifest::load--> Desired
//! service (HTTP)   --live::fetch-----> Live      (as the service returns it)
//! plan::plan(&Desired, &Live) -> Plan            (pure, no I/O; normalizes both sides)
//! render::render_plan(&Plan, format, ..)         (text | json | markdown)
//! apply::apply(&Plan, &Client, ..) -> ApplyReport (ordered, bounded, re-reads to confirm)
//! ```
//!
//! Module map:
//! - [`api`]: wire types of the service (serde), one module per resource kind.
//! - [`client`]: the HTTP client: auth, retries, pagination, typed errors.
//! - [`sandbox`]: the local implementation of the service (axum).
//! - [`schemacheck`]: a small JSON Schema interpreter that reports every violation
//!   with its path; the sandbox renders them as the service's 422 body, the
//!   manifest loader as `file:line:column` diagnostics.
//! - [`manifest`]: desired state: manifest types, YAML loading, validation.
//! - [`plan`], [`render`], [`apply`], [`live`]: the reconciler.
//! - [`export`]: live configuration written as manifests (adoption).
//! - [`cli`], [`commands`], [`exit`], [`output`]: the command line.

pub mod api;
pub mod apply;
pub mod cli;
pub mod client;
pub mod commands;
pub mod exit;
pub mod export;
pub mod live;
pub mod logging;
pub mod manifest;
pub mod output;
pub mod plan;
pub mod progress;
pub mod render;
pub mod sandbox;
pub mod schemacheck;

use std::ffi::OsString;

use clap::Parser;

use crate::exit::ExitStatus;

/// Runs the command line `args` (program name first) and returns the exit
/// status. clap's usage errors become [`ExitStatus::Usage`] (64), so a typo
/// can never look like "changes present" (2); `--help` and `--version` are 0.
pub fn run_cli(args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> ExitStatus {
    let cli = match cli::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let status = if e.use_stderr() {
                ExitStatus::Usage
            } else {
                ExitStatus::Success
            };
            // clap prints help to stdout and errors to stderr; a closed pipe is fine.
            let _ = e.print();
            return status;
        }
    };
    let printer = output::Printer::new(cli.global.color, cli.global.quiet);
    logging::init(cli.global.verbose, cli.global.quiet, printer.color_stderr());
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            printer.error(&format!("cannot start the async runtime: {e}"));
            return ExitStatus::Failure;
        }
    };
    runtime.block_on(commands::run(cli, &printer))
}
