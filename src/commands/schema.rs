//! `evalctl schema`: write the JSON Schema of the manifest format
//! (`schemas/evalctl-manifest.schema.json`), for editors and CI, or check with `--check`
//! that the file in the directory is up to date.

use std::path::Path;

use crate::cli::SchemaArgs;
use crate::exit::ExitStatus;
use crate::manifest::schema::{SCHEMA_FILE, render};
use crate::output::Printer;

/// Runs `evalctl schema`.
pub fn run(args: &SchemaArgs, printer: &Printer) -> ExitStatus {
    let path = args.out.join(SCHEMA_FILE);
    let wanted = render();
    if args.check {
        return match std::fs::read_to_string(&path) {
            Ok(found) if found == wanted => {
                printer.info(&format!("{} is up to date", path.display()));
                ExitStatus::Success
            }
            Ok(_) => {
                printer.error(&format!(
                    "{} is stale; regenerate it with `{}`",
                    path.display(),
                    regenerate(&args.out)
                ));
                ExitStatus::Failure
            }
            Err(e) => {
                printer.error(&format!(
                    "cannot read {}: {e}; generate it with `{}`",
                    path.display(),
                    regenerate(&args.out)
                ));
                ExitStatus::Failure
            }
        };
    }
    match write(&args.out, &path, &wanted) {
        Ok(()) => {
            printer.info(&format!("wrote {}", path.display()));
            ExitStatus::Success
        }
        Err(e) => {
            printer.error(&format!("cannot write {}: {e}", path.display()));
            ExitStatus::Failure
        }
    }
}

/// The command that regenerates the schema into `dir`.
fn regenerate(dir: &Path) -> String {
    if dir == Path::new("schemas") {
        "evalctl schema".to_owned()
    } else {
        format!("evalctl schema --out {}", dir.display())
    }
}

/// Writes the file atomically: a temporary file in the same directory, then a rename,
/// so a reader never sees half a schema.
fn write(dir: &Path, path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(text.as_bytes())?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}
