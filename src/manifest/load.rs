//! Loading manifests: from paths to a validated [`ManifestSet`] and every diagnostic.
//!
//! [`load`] reads the files ([`super::files`], with the YAML budgets of
//! [`super::yaml::Limits`]), checks every document ([`super::check`]: kind and
//! `api_version`, environment interpolation, the generated JSON Schema, the semantic
//! rules) and then the rules across documents: a project declared once, one Integration
//! document per provider. Nothing stops at the first problem: the outcome lists every
//! error and warning of every file, sorted by file and position, each with
//! `file:line:column`.
//!
//! The outcome keeps each file's text to quote the offending lines, with literal secrets
//! masked ([`super::mask`]); the unmasked text is dropped before `load` returns.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use super::check::{self, Input, Spec};
use super::diagnostic::{self, Diagnostic, Span};
use super::files::{self, FileError};
use super::mask;
use super::set::{Located, ManifestSet, Origin};
use super::yaml::Limits;
use crate::api::SECRET_FIELDS;

/// Everything [`load`] found.
#[derive(Debug, Default)]
pub struct LoadOutcome {
    /// The validated manifests; complete only when [`LoadOutcome::has_errors`] is false.
    pub set: ManifestSet,
    /// Errors and warnings, sorted by file, position, severity.
    pub diagnostics: Vec<Diagnostic>,
    /// Files read.
    pub files: usize,
    /// Documents found in them (empty documents are not counted).
    pub documents: usize,
    /// Each file's text, secrets masked, by the name diagnostics use.
    sources: BTreeMap<String, String>,
    /// Whether a path could not be found or read (as opposed to invalid content).
    unreadable: bool,
}

impl LoadOutcome {
    /// Whether any diagnostic is an error.
    #[must_use]
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The number of errors.
    #[must_use]
    pub fn error_count(&self) -> usize {
        self.diagnostics.iter().filter(|d| d.is_error()).count()
    }

    /// The number of warnings.
    #[must_use]
    pub fn warning_count(&self) -> usize {
        self.diagnostics.len() - self.error_count()
    }

    /// Whether a path named did not exist, was not a file or directory, held no
    /// manifests, or could not be read: trouble reaching the manifests, rather than
    /// manifests that are wrong.
    #[must_use]
    pub fn unreadable(&self) -> bool {
        self.unreadable
    }

    /// Every diagnostic rendered with its source line (rustc-like), in order, ready to
    /// print; empty when there are none. Literal secrets are masked in quoted lines.
    #[must_use]
    pub fn render_diagnostics(&self, color: bool) -> String {
        diagnostic::render_all(
            &self.diagnostics,
            |file| self.sources.get(file).map(String::as_str),
            color,
        )
    }
}

/// Loads the manifests under `paths` (files, or directories searched recursively for
/// `*.yaml`/`*.yml`), reading environment variables through `env`.
#[must_use]
pub fn load(paths: &[PathBuf], env: &dyn Fn(&str) -> Option<String>) -> LoadOutcome {
    let loaded = files::load(paths, &Limits::default());
    let mut outcome = LoadOutcome {
        files: loaded.files.len(),
        unreadable: loaded.errors.iter().any(|e| {
            matches!(
                e,
                FileError::NotFound { .. }
                    | FileError::NoManifests { .. }
                    | FileError::NotAFile { .. }
                    | FileError::Io { .. }
            )
        }),
        ..LoadOutcome::default()
    };
    outcome
        .diagnostics
        .extend(loaded.errors.iter().map(FileError::to_diagnostic));

    let mut across = Across::default();
    for file in &loaded.files {
        let documents = file.documents();
        outcome.documents += documents.len();
        let mut hidden: Vec<Span> = Vec::new();
        if file.parsed.is_err() {
            outcome.diagnostics.extend(file.diagnostics());
        }
        for document in documents {
            let input = Input {
                file: &file.name,
                source: &file.text,
                document,
            };
            let checked = check::check(&input, env);
            outcome.diagnostics.extend(checked.diagnostics);
            hidden.extend(checked.hidden);
            let origin = Origin {
                file: file.path.clone(),
                line: document.root().value.line as usize,
            };
            across.document(&input, &checked.value, &origin, &mut outcome.diagnostics);
            match checked.spec {
                Some(Spec::Project(spec)) => outcome.set.projects.push(Located { origin, spec }),
                Some(Spec::Integration(spec)) => {
                    outcome.set.integrations.push(Located {
                        origin,
                        spec: *spec,
                    });
                }
                None => {}
            }
        }
        // Parsed text is masked where the documents say; text that did not parse, by
        // the look of its lines.
        let masked = if file.parsed.is_ok() {
            mask::mask_spans(&file.text, &hidden)
        } else {
            mask::mask_secret_lines(&file.text, SECRET_FIELDS)
        };
        outcome.sources.insert(file.name.clone(), masked);
    }
    diagnostic::sort(&mut outcome.diagnostics);
    outcome
}

/// The rules across documents: each project and each provider is declared once.
#[derive(Default)]
struct Across {
    /// `name:<name>` or `id:<id>` of each project seen, with its origin.
    projects: BTreeMap<String, Origin>,
    /// Each provider seen, with its origin.
    providers: BTreeMap<String, Origin>,
}

impl Across {
    fn document(
        &mut self,
        input: &Input<'_>,
        value: &Value,
        origin: &Origin,
        out: &mut Vec<Diagnostic>,
    ) {
        let get = |key: &str| value.get(key).and_then(Value::as_str);
        match get("kind") {
            Some("Project") => {
                for (field, label) in [("name", "project `{}`"), ("id", "project with id `{}`")] {
                    let Some(identity) = get(field) else {
                        continue;
                    };
                    let key = format!("{field}:{identity}");
                    if let Some(first) = self.projects.get(&key) {
                        let what = label.replace("{}", identity);
                        out.push(
                            Diagnostic::error(
                                input.file,
                                Some(input.node(&format!("/{field}")).value),
                                format!("{what} is declared twice: here and at {first}"),
                            )
                            .with_help("declare each project in one document; merge the two"),
                        );
                    } else {
                        self.projects.insert(key, origin.clone());
                    }
                }
            }
            Some("Integration") => {
                let Some(provider) = get("provider") else {
                    return;
                };
                if let Some(first) = self.providers.get(provider) {
                    out.push(
                        Diagnostic::error(
                            input.file,
                            Some(input.node("/provider").value),
                            format!(
                                "a second Integration document for provider `{provider}` (the first is at {first})"
                            ),
                        )
                        .with_help("there is one integration per provider: merge the two documents"),
                    );
                } else {
                    self.providers.insert(provider.to_owned(), origin.clone());
                }
            }
            _ => {}
        }
    }
}
