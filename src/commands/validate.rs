//! `evalctl validate`: check manifests offline (syntax, fields, the service's rules,
//! environment references) and report every problem at once. Never contacts the service.
//!
//! Text output: the diagnostics on stderr (rustc-like, coloured when stderr is a colour
//! terminal), then one summary line on stdout. JSON output (`-o json`): one document on
//! stdout, `{"valid", "files", "documents", "diagnostics"}`. GitHub output (`-o github`):
//! one workflow command per diagnostic on stdout (`::error file=…,line=…,col=…::…`, see
//! [`crate::manifest::diagnostic::github`]), then the summary line; the diagnostics on
//! stderr as in text output. Exit status: 0 when valid
//! (warnings allowed), 65 when invalid, as for every command that loads manifests; a
//! path that does not exist, a directory without manifests and a file that cannot be
//! read are manifest problems too (65), each reported with its path. An
//! integration token whose variable is not set is not a warning but one note
//! on stderr (only `apply` needs tokens), except in `-o json`.

use serde::Serialize;

use crate::cli::ValidateArgs;
use crate::exit::ExitStatus;
use crate::manifest::{self, LoadOutcome, diagnostic::Diagnostic};
use crate::output::Printer;

/// Output formats of `evalctl validate`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum DiagnosticsFormat {
    /// Diagnostics on stderr, a summary line on stdout.
    #[default]
    Text,
    /// One JSON document on stdout.
    Json,
    /// GitHub Actions annotations (`::error file=…,line=…,col=…::…`) and the summary line on
    /// stdout, so errors show inline on a pull request; the diagnostics on stderr for the log.
    Github,
}

/// The JSON form of a validation.
#[derive(Debug, Serialize)]
pub struct Report<'a> {
    /// No errors (warnings allowed).
    pub valid: bool,
    /// Files read.
    pub files: usize,
    /// Documents in them.
    pub documents: usize,
    /// Errors and warnings, sorted.
    pub diagnostics: &'a [Diagnostic],
}

/// Runs `evalctl validate`.
pub fn run(args: &ValidateArgs, printer: &Printer) -> ExitStatus {
    let mut outcome = manifest::load(&args.manifests.paths, &|name| std::env::var(name).ok());
    if args.output != DiagnosticsFormat::Json {
        // Said once, not as a warning (and an annotation) per integration:
        // only apply needs the tokens. `-o json` keeps each, marked.
        super::reconcile::note_unset_secrets(&mut outcome, printer);
    }
    match args.output {
        DiagnosticsFormat::Text => {
            let rendered = outcome.render_diagnostics(printer.color_stderr());
            if !rendered.is_empty() {
                // Ends in a blank line, which separates the diagnostics from the summary.
                printer.diagnostics(rendered.trim_end_matches('\n'));
            }
            let annotations = outcome.github_annotations();
            if args.manifests.github_annotations && !annotations.is_empty() {
                printer.diagnostics(annotations.trim_end_matches('\n'));
            }
            printer.out(&format!("{}\n", summary(&outcome)));
        }
        DiagnosticsFormat::Json => printer.out(&json(&outcome)),
        DiagnosticsFormat::Github => {
            let rendered = outcome.render_diagnostics(printer.color_stderr());
            if !rendered.is_empty() {
                printer.diagnostics(rendered.trim_end_matches('\n'));
            }
            printer.out(&outcome.github_annotations());
            printer.out(&format!("{}\n", summary(&outcome)));
        }
    }
    status(&outcome)
}

/// The exit status of a validation: 65 when the manifests have errors (a path that could
/// not be read included), else 0.
#[must_use]
pub fn status(outcome: &LoadOutcome) -> ExitStatus {
    if outcome.has_errors() {
        ExitStatus::InvalidManifests
    } else {
        ExitStatus::Success
    }
}

/// The summary line: `3 files, 5 documents: valid`, or `2 errors, 1 warning in 3 files`.
#[must_use]
pub fn summary(outcome: &LoadOutcome) -> String {
    let files = count(outcome.files, "file");
    let warnings = outcome.warning_count();
    if outcome.has_errors() {
        let mut line = count(outcome.error_count(), "error");
        if warnings > 0 {
            line.push_str(&format!(", {}", count(warnings, "warning")));
        }
        format!("{line} in {files}")
    } else {
        let mut line = format!("{files}, {}: valid", count(outcome.documents, "document"));
        if warnings > 0 {
            line.push_str(&format!(" ({})", count(warnings, "warning")));
        }
        line
    }
}

/// The `-o json` document, pretty-printed, with a final newline.
#[must_use]
pub fn json(outcome: &LoadOutcome) -> String {
    let report = Report {
        valid: !outcome.has_errors(),
        files: outcome.files,
        documents: outcome.documents,
        diagnostics: &outcome.diagnostics,
    };
    let mut text = serde_json::to_string_pretty(&report).unwrap_or_default();
    text.push('\n');
    text
}

fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}
