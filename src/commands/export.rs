//! `evalctl export`: write live configuration as manifests (one file per
//! project, `integrations.yaml`), check that they load, and with `--verify`
//! that planning them against live state is empty.

use std::path::PathBuf;

use crate::cli::ExportArgs;
use crate::exit::ExitStatus;
use crate::export::files::{self, FilesError};
use crate::export::{Export, Provenance, SchemaLocation, Selection, export};
use crate::manifest::{self, set::ManifestSet};
use crate::output::Printer;
use crate::plan::PlanOptions;
use crate::progress::Progress;
use crate::render::{Format, Mode, RenderOptions, render_plan};

use super::connect::{Connection, connect_or_fail};
use super::reconcile::fetch_and_plan;

/// Runs `evalctl export`.
pub async fn run(args: &ExportArgs, printer: &Printer) -> ExitStatus {
    let connection = match connect_or_fail(&args.live, printer) {
        Ok(c) => c,
        Err(status) => return status,
    };
    let selection = Selection {
        projects: args.projects.clone(),
        integrations: args.projects.is_empty(),
    };
    let provenance = Provenance {
        schema: match &args.schema_url {
            Some(url) => SchemaLocation::At(url.clone()),
            None => files::schema_location(&args.dir),
        },
        service: connection.service_label(),
    };
    let progress = Progress::start(printer, &connection.client, "Loading live state");
    let exported = export(&connection.client, &selection, &provenance).await;
    drop(progress);
    let exported = match exported {
        Ok(e) => e,
        Err(e) => {
            printer.error(&e.to_string());
            return ExitStatus::Failure;
        }
    };
    for warning in &exported.warnings {
        printer.warn(warning);
    }
    if exported.files.is_empty() {
        printer.warn("nothing to export: the credentials see no project and no integration");
        return ExitStatus::Success;
    }
    let written = match write(args, &exported) {
        Ok(paths) => paths,
        Err(e) => {
            printer.error(&e.to_string());
            return ExitStatus::Failure;
        }
    };
    summarize(args, &exported, &written, printer);
    let Some(desired) = reload(&written, printer) else {
        return ExitStatus::Failure;
    };
    if args.verify {
        verify(&connection, &desired, printer).await
    } else {
        ExitStatus::Success
    }
}

fn write(args: &ExportArgs, exported: &Export) -> Result<Vec<PathBuf>, FilesError> {
    let texts: Vec<(&str, &str)> = exported
        .files
        .iter()
        .map(|f| (f.name.as_str(), f.text.as_str()))
        .collect();
    files::write_all(&args.dir, &texts, args.force)
}

fn summarize(args: &ExportArgs, exported: &Export, written: &[PathBuf], printer: &Printer) {
    let projects = exported
        .files
        .iter()
        .filter(|f| matches!(f.content, crate::export::Content::Project { .. }))
        .count();
    let mut lines = vec![format!(
        "Exported {projects} project{} into {}:",
        if projects == 1 { "" } else { "s" },
        args.dir.display()
    )];
    for (file, path) in exported.files.iter().zip(written) {
        lines.push(format!("  wrote {} ({})", path.display(), file.content));
    }
    if !args.projects.is_empty() {
        lines.push(
            "Integrations were not exported: --project limits the export to projects.".to_owned(),
        );
    }
    printer.info(&lines.join("\n"));
}

/// Loads the written files as `plan` would. Any error is a bug of export:
/// the files are printed with their diagnostics.
fn reload(written: &[PathBuf], printer: &Printer) -> Option<ManifestSet> {
    // No environment: secrets stay references; nothing else refers to one.
    let outcome = manifest::load(written, &|_| None);
    if outcome.has_errors() {
        printer.diagnostics(&outcome.render_diagnostics(printer.color_stderr()));
        printer.error(
            "the exported files do not load as manifests: this is a bug in evalctl export; \
             please report it with the diagnostics above",
        );
        return None;
    }
    Some(outcome.set)
}

/// Plans the written files against live state (no prune): success only when
/// the plan is empty.
async fn verify(connection: &Connection, desired: &ManifestSet, printer: &Printer) -> ExitStatus {
    let options = PlanOptions::default();
    let planned = match fetch_and_plan(connection, desired, &options, "Verifying", printer).await {
        Ok((_, planned)) => planned,
        Err(status) => return status,
    };
    let bug = "this is a bug in evalctl export (or live state changed during the export); \
               please report it with this output";
    match planned {
        Ok(p) if p.is_empty() => {
            printer
                .info("Verified: planning the exported files against live state shows no changes.");
            ExitStatus::Success
        }
        Ok(p) => {
            let options = RenderOptions {
                color: printer.color_stdout(),
                mode: Mode::Plan,
            };
            printer.out(&render_plan(&p, Format::Text, &options));
            printer.error(&format!(
                "verification failed: planning the exported files shows {} change(s) (above); {bug}",
                p.changes.len()
            ));
            ExitStatus::Failure
        }
        Err(e) => {
            printer.error(&format!("verification failed: {e}\n{bug}"));
            ExitStatus::Failure
        }
    }
}
