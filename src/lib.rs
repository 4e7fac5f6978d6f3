//! evalctl: a declarative, GitOps-style configuration reconciler for the
//! evaluation-and-observability service, and a faithful local sandbox of it.
//!
//! The flow runs one way:
//!
//! ```text
//! manifests (YAML) --manifest::load-------> ManifestSet (desired)
//! service (HTTP)   --reconcile::read------> State   (plain data: per kind, reduced, normalized)
//! plan::plan(&ManifestSet, &State) -> Plan          (pure; plan::Planning is the same project
//!                                                    by project, as the readers deliver each
//!                                                    project: reconcile::read_and_plan; a plan's
//!                                                    changes past 1,024 wait in a temporary file,
//!                                                    plan::Changes, and are read back one by one)
//! render::render_plan(&Plan, ..)                    (text | json | markdown)
//! reconcile::apply::apply(&Plan, &Client) -> outcomes (ordered, bounded)
//! reconcile::confirm                                (reads the touched objects through the same
//!                                                    readers and plans them again)
//! reconcile::collect -> Snapshot -> export::render  (export reads through the same readers
//!                                                    and writes what they read)
//! ```
//!
//! The arrows run one way: `commands` → `reconcile` (the effects: read,
//! collect, apply, confirm, enrich) → {`client`, `plan`, `state`}; `plan` →
//! {`state`, `manifest`, `api`}; `manifest` → `api`; `export` → {`state`,
//! `manifest`}; `state` → `api`. clap lives only in [`cli`] and [`commands`]
//! (and [`run_cli`] here). `tests/it/architecture.rs` checks what it can of
//! this by reading the tree.
//!
//! Module map:
//! - [`kinds`]: resource kinds, each in a folder of its own (its wire types,
//!   client calls, live state, reader, comparable form, address, planner,
//!   operations and export), reached by the core through the registry
//!   (`kinds/mod.rs`, one line per kind in each list) and small traits
//!   (`plan::address::KindAddress`, a kind's operations sending themselves):
//!   custom scorers, prompt templates, Protect stages, projects and log
//!   streams, annotation and feedback templates; the older kinds (metric
//!   settings, integrations, trends dashboards) are still spread over the
//!   core and follow.
//! - [`api`]: wire types of the service (serde), one module per resource kind
//!   not yet in [`kinds`];
//!   the service's OpenAPI reference, a crate asset (`reference/`), embedded
//!   once ([`api::reference`]); the fingerprint manifests and plans share.
//! - [`client`]: the HTTP client: auth, retries, pagination, a byte budget on
//!   response bodies, typed errors.
//! - [`state`]: live state as plain data, one module per resource kind.
//! - [`reconcile`]: the effects: one reader per resource kind, apply,
//!   confirmation, enrichment, and what an export reads.
//! - [`plan`]: the pure planner, addresses and targets, the plan and report
//!   types, the mass-change guard.
//! - [`render`]: plans and reports as text, JSON or markdown (pure).
//! - [`manifest`]: desired state: manifest types, YAML loading, validation.
//! - [`export`]: live configuration written as manifests (adoption), pure.
//! - [`sandbox`]: the local implementation of the service (axum).
//! - [`schemacheck`]: a small JSON Schema interpreter that reports every violation
//!   with its path; the sandbox renders them as the service's 422 body, the
//!   manifest loader as `file:line:column` diagnostics.
//! - [`cli`] (flags), [`commands`] (one module per command), [`exit`],
//!   [`output`]: the command line.
//! - [`suggest`]: "did you mean" for every name that does not exist.
//! - [`scrub`]: the secrets evalctl holds, masked in every output; text from the
//!   service quoted safely.

pub mod api;
pub mod cli;
pub mod client;
pub mod commands;
pub mod error;
pub mod exit;
pub mod export;
pub mod kinds;
pub mod logging;
pub mod manifest;
pub mod output;
pub mod plan;
pub mod policy;
pub mod progress;
pub mod reconcile;
pub mod render;
pub mod sandbox;
pub mod schemacheck;
pub mod scrub;
pub mod state;
pub mod suggest;

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
    // One thread: the commands wait on the service far more than they
    // compute, and on one thread the memory a phase frees is reused by the
    // next one instead of each worker's allocator arena keeping its own
    // high-water mark (measured: docs/performance.md, "Figures behind
    // choices in the code").
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let error = error::Error::Runtime(e);
            printer.error(&error.to_string());
            return error.exit_status();
        }
    };
    runtime.block_on(commands::run(cli, &printer))
}
