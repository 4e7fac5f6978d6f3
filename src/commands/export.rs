//! `evalctl export`: write live configuration as manifests (one file per
//! project, `integrations.yaml`), check that they load, and with `--verify`
//! that planning them against live state is empty.

use std::path::PathBuf;

use crate::cli::ExportArgs;
use crate::error::{Error, Unverified};
use crate::exit::ExitStatus;
use crate::export::files::{self, FilesError};
use crate::export::{Export, Provenance, SchemaLocation, Selection, render};
use crate::manifest::{self, set::ManifestSet};
use crate::output::Printer;
use crate::plan::{Action, Enrichment, PlanOptions};
use crate::progress::Progress;
use crate::reconcile::collect::collect;
use crate::reconcile::read_and_plan;
use crate::render::{Format, Mode, RenderOptions, render_plan};
use crate::scrub::escape_controls;

use super::connect::{Connection, connect};

/// Runs `evalctl export`.
pub async fn run(args: &ExportArgs, printer: &Printer) -> Result<ExitStatus, Error> {
    let connection = connect(&args.live)?;
    let selection = Selection {
        projects: args.projects.clone(),
        integrations: args.projects.is_empty(),
        prompt_templates: args.projects.is_empty(),
    };
    let provenance = Provenance {
        schema: match &args.schema_url {
            Some(url) => SchemaLocation::At(url.clone()),
            None => files::schema_location(&args.dir),
        },
        service: connection.service_label(),
    };
    let progress = Progress::start(printer, &connection.client, "Loading live state");
    let snapshot = collect(&connection.client, &selection).await;
    drop(progress);
    let exported = render(&snapshot?, &provenance);
    for warning in &exported.warnings {
        // Names read from the service, shown as plan and drift show them.
        printer.warn(&escape_controls(warning));
    }
    if exported.files.is_empty() {
        printer.warn("nothing to export: the credentials see no project and no integration");
        return Ok(ExitStatus::Success);
    }
    let written = write(args, &exported)?;
    summarize(args, &exported, &written, printer);
    // The manifests, not the prompt and code files their documents name.
    let manifests: Vec<PathBuf> = exported
        .files
        .iter()
        .zip(&written)
        .filter(|(f, _)| !matches!(f.content, crate::export::Content::NamedFile { .. }))
        .map(|(_, path)| path.clone())
        .collect();
    let desired = reload(&manifests, printer)?;
    if args.verify {
        verify(&connection, &desired, printer).await?;
    }
    Ok(ExitStatus::Success)
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
fn reload(written: &[PathBuf], printer: &Printer) -> Result<ManifestSet, Error> {
    // No environment: secrets stay references; nothing else refers to one.
    let outcome = manifest::load(written, &|_| None);
    if outcome.has_errors() {
        printer.diagnostics(&outcome.render_diagnostics(printer.color_stderr()));
        return Err(Error::ExportUnloadable);
    }
    Ok(outcome.set)
}

/// Plans the written files against live state (no prune): an error unless
/// the plan is empty.
async fn verify(
    connection: &Connection,
    desired: &ManifestSet,
    printer: &Printer,
) -> Result<(), Error> {
    let options = PlanOptions::default();
    let progress = Progress::start(printer, &connection.client, "Verifying");
    let read = read_and_plan(&connection.client, desired, &options).await;
    drop(progress);
    match read?.plan {
        Ok(p) if p.is_empty() => {
            printer
                .info("Verified: planning the exported files against live state shows no changes.");
            Ok(())
        }
        // Without --prune a plan deletes only a second object of a declared
        // name (drift), which export warned it left out.
        Ok(p) if p.changes.actions().all(|action| action == Action::Delete) => {
            printer.info(&format!(
                "Verified: planning the exported files against live state shows no changes but the deletion of {} second object(s) of a name, which export left out (see the warnings above).",
                p.changes.len()
            ));
            Ok(())
        }
        Ok(p) => {
            let options = RenderOptions {
                color: printer.color_stdout(),
                mode: Mode::Plan,
                saved_plan: None,
                artifact: None,
            };
            printer.out(&render_plan(
                &p,
                &Enrichment::default(),
                Format::Text,
                &options,
            )?);
            Err(Error::ExportUnverified(Unverified::Changes(
                p.changes.len(),
            )))
        }
        Err(e) => Err(Error::ExportUnverified(Unverified::Unplannable(e))),
    }
}
