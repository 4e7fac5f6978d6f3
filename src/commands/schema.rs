//! `evalctl schema`: write the JSON Schema of the manifest format
//! (`schemas/evalctl-manifest.schema.json`), for editors and CI, the manifest
//! reference generated from it (`schemas/REFERENCE.md`), and the JSON Schemas of
//! what `-o json` prints (`schemas/evalctl-plan.schema.json`,
//! `schemas/evalctl-apply-report.schema.json`), or check with `--check` that every
//! file in the directory is up to date.

use std::path::Path;

use crate::cli::SchemaArgs;
use crate::exit::ExitStatus;
use crate::manifest::reference::{self, REFERENCE_FILE};
use crate::manifest::schema::{self, SCHEMA_FILE};
use crate::output::Printer;
use crate::render::schema::{APPLY_SCHEMA_FILE, PLAN_SCHEMA_FILE, apply_schema, plan_schema};

/// Runs `evalctl schema`.
pub fn run(args: &SchemaArgs, printer: &Printer) -> ExitStatus {
    let files = [
        (SCHEMA_FILE, schema::render()),
        (REFERENCE_FILE, reference::render()),
        (PLAN_SCHEMA_FILE, plan_schema()),
        (APPLY_SCHEMA_FILE, apply_schema()),
    ];
    let mut status = ExitStatus::Success;
    for (name, wanted) in &files {
        let path = args.out.join(name);
        let ok = if args.check {
            check(&args.out, &path, wanted, printer)
        } else {
            match write(&args.out, &path, wanted) {
                Ok(()) => {
                    printer.info(&format!("wrote {}", path.display()));
                    true
                }
                Err(e) => {
                    printer.error(&format!("cannot write {}: {e}", path.display()));
                    false
                }
            }
        };
        if !ok {
            status = ExitStatus::Failure;
        }
    }
    status
}

/// Whether the file at `path` holds `wanted`, saying so (or how to fix it).
fn check(dir: &Path, path: &Path, wanted: &str, printer: &Printer) -> bool {
    match std::fs::read_to_string(path) {
        Ok(found) if found == wanted => {
            printer.info(&format!("{} is up to date", path.display()));
            true
        }
        Ok(_) => {
            printer.error(&format!(
                "{} is stale; regenerate it with `{}`",
                path.display(),
                regenerate(dir)
            ));
            false
        }
        Err(e) => {
            printer.error(&format!(
                "cannot read {}: {e}; generate it with `{}`",
                path.display(),
                regenerate(dir)
            ));
            false
        }
    }
}

/// The command that regenerates the files into `dir`.
fn regenerate(dir: &Path) -> String {
    if dir == Path::new("schemas") {
        "evalctl schema".to_owned()
    } else {
        format!("evalctl schema --out {}", dir.display())
    }
}

/// Writes the file atomically: a temporary file in the same directory, then a rename,
/// so a reader never sees half a file.
fn write(dir: &Path, path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(text.as_bytes())?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}
