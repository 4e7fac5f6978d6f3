//! Loading manifests: from paths to a validated [`ManifestSet`] and every diagnostic.
//!
//! [`load`] reads the files ([`super::files`], with the YAML budgets of
//! [`super::yaml::Limits`]), checks every document ([`super::check`]: kind and
//! `api_version`, environment interpolation, the generated JSON Schema, the semantic
//! rules) and then the rules across documents: a project declared once, one Integration
//! document per provider. Files are read and checked one at a time (`pipeline`: on the
//! calling thread, and on helper threads too when a repo holds over 2 MiB of YAML),
//! each file's parsed documents dropped once checked; the rules across documents then
//! run over the results in file order: besides, no document may refer to evalctl's own
//! credentials (`${EVALCTL_API_KEY}`, `${EVALCTL_PASSWORD}`, `${EVALCTL_ACCESS_TOKEN}`, or
//! any variable whose value holds one of theirs), and a Project may not show what an
//! Integration takes from the environment as a secret; the values an Integration
//! takes from the environment are registered as held secrets ([`crate::scrub`]), so no
//! output shows them. Nothing stops at the first problem: the outcome
//! lists every error and warning of every file, sorted by file and position, each with
//! `file:line:column`. A path that does not exist, a directory without manifests and a
//! file that cannot be read are errors of the outcome like any other, named by their
//! path, so every command that loads manifests exits 65 for them.
//!
//! The outcome keeps each file's text to quote the offending lines, with literal secrets
//! masked ([`super::mask`]); the unmasked text is dropped before `load` returns.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use super::check::{Claim, Spec, UsedVariable};
use super::diagnostic::{self, Diagnostic, Span};
use super::files::{self, FileError, ManifestFile};
use super::mask::Masked;
use super::pipeline::{self, Threads};
use super::set::{Located, ManifestSet, Origin};
use super::shared::SharedParts;
use super::yaml::Limits;
use crate::scrub;

/// Everything [`load`] found.
#[derive(Debug, Default)]
pub struct LoadOutcome {
    /// The validated manifests; complete only when [`LoadOutcome::has_errors`] is false.
    pub set: ManifestSet,
    /// Errors and warnings, sorted by file, position, severity.
    pub diagnostics: Vec<Diagnostic>,
    /// Manifest files found (each read, or reported as unreadable).
    pub files: usize,
    /// Documents found in them (empty documents are not counted).
    pub documents: usize,
    /// Each file's text, secrets masked, by the name diagnostics use.
    sources: BTreeMap<String, Masked>,
    /// A hash of every file read, its name and text as read, in order: two
    /// loads of the same paths with equal digests read the same manifests
    /// (`apply` loads them again to confirm, rather than holding them).
    pub digest: u64,
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

    /// Every diagnostic rendered with its source line (rustc-like), in order, ready to
    /// print; empty when there are none. Literal secrets are masked in quoted lines.
    #[must_use]
    pub fn render_diagnostics(&self, color: bool) -> String {
        diagnostic::render_all(
            &self.diagnostics,
            |d| {
                let masked = self.sources.get(&d.file)?;
                Some((masked.text(), masked.shown(d.span?)))
            },
            color,
        )
    }

    /// Every diagnostic as a GitHub Actions workflow command (`::error file=…,line=…,col=…::…`),
    /// one a line, in order ([`diagnostic::github`]); empty when there are none.
    #[must_use]
    pub fn github_annotations(&self) -> String {
        diagnostic::github::annotations(&self.diagnostics)
    }
}

/// Loads the manifests under `paths` (files, or directories searched recursively for
/// `*.yaml`/`*.yml`), reading environment variables through `env`.
///
/// Files are checked one at a time per worker thread: each file's parse
/// tree is dropped once its documents are checked, so memory holds the outcome and a few
/// files' trees, not every file's. `env` may be called from any of the worker threads.
#[must_use]
pub fn load(paths: &[PathBuf], env: &(dyn Fn(&str) -> Option<String> + Sync)) -> LoadOutcome {
    load_on(Threads::Cores, paths, env)
}

/// [`load`] on the `threads` given ([`Threads::One`]: the calling thread alone).
#[must_use]
pub fn load_on(
    threads: Threads,
    paths: &[PathBuf],
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> LoadOutcome {
    let (found, mut errors) = files::discover(paths);
    let mut read = Vec::with_capacity(found.len());
    for outcome in pipeline::run(&found, &Limits::default(), threads, env) {
        match outcome {
            Ok(file) => read.push(file),
            Err(error) => errors.push(error),
        }
    }
    let mut outcome = LoadOutcome {
        // Every file found, read or not (too large, not UTF-8, unreadable).
        files: found.len(),
        ..LoadOutcome::default()
    };
    outcome
        .diagnostics
        .extend(errors.iter().map(FileError::to_diagnostic));

    // The variables whose values an Integration never shows, and the first place each is.
    let mut hidden_variables: BTreeMap<String, (String, u32)> = BTreeMap::new();
    for file in &read {
        for variable in file
            .documents
            .iter()
            .flat_map(|d| &d.checked.variables)
            .filter(|v| v.hidden)
        {
            hidden_variables
                .entry(variable.name.clone())
                .or_insert_with(|| (file.name.clone(), variable.at.line));
        }
    }

    // What an Integration takes from the environment is a secret evalctl holds:
    // no output shows it, whatever text carries it (a Project's field holding
    // the same value under another name).
    for name in hidden_variables.keys() {
        if let Some(value) = env(name) {
            scrub::register(&value);
        }
    }
    let mut credentials = OwnCredentials::new(env);
    // No document anywhere says what it is: these are not manifests (a repo's
    // other YAML, with no path given), so one error says so, not one per file.
    let kindless: Vec<&str> = read
        .iter()
        .filter(|f| !f.documents.is_empty() && f.documents.iter().all(|d| d.checked.kindless))
        .map(|f| f.name.as_str())
        .collect();
    let no_manifest = !kindless.is_empty()
        && read
            .iter()
            .flat_map(|f| &f.documents)
            .all(|d| d.checked.kindless);
    if no_manifest {
        outcome
            .diagnostics
            .push(no_manifest_found(paths, &kindless));
    }

    let mut across = Across::default();
    let mut shared = SharedParts::default();
    let mut digest = std::hash::DefaultHasher::new();
    for file in read {
        (&file.name, file.digest).hash(&mut digest);
        let shown = outcome.diagnostics.len();
        outcome.documents += file.documents.len();
        outcome.diagnostics.extend(file.yaml_errors);
        for document in file.documents {
            let mut checked = document.checked;
            if no_manifest {
                checked.diagnostics.clear();
            }
            let origin = document.origin;
            outcome.diagnostics.extend(checked.diagnostics);
            for variable in &checked.variables {
                if let Some(holds) = credentials.held_by(&variable.name) {
                    outcome
                        .diagnostics
                        .push(own_credential(&file.name, variable, holds));
                }
            }
            for variable in checked.variables.iter().filter(|v| !v.hidden) {
                if credentials.held_by(&variable.name).is_some() {
                    // Refused above, whatever else holds it.
                    continue;
                }
                if let Some((taken_in, line)) = hidden_variables.get(&variable.name) {
                    outcome
                        .diagnostics
                        .push(shown_secret(&file.name, variable, taken_in, *line));
                }
            }
            for claim in checked.claims {
                across.claim(&file.name, claim, &origin, &mut outcome.diagnostics);
            }
            match checked.spec {
                Some(Spec::Project(mut spec)) => {
                    shared.share(&mut spec);
                    outcome.set.projects.push(Located { origin, spec });
                }
                Some(Spec::Integration(spec)) => {
                    outcome.set.integrations.push(Located {
                        origin,
                        spec: *spec,
                    });
                }
                Some(Spec::Policy(spec)) => outcome.set.policies.push(Located { origin, spec }),
                Some(Spec::Global(document)) => outcome.set.global.push(origin, document),
                // A second one is an error (`Across`); the first is kept.
                Some(Spec::Settings(spec)) if outcome.set.settings.is_none() => {
                    outcome.set.settings = Some(Located { origin, spec });
                }
                // A second one is refused by its claim.
                Some(Spec::Pricing(spec)) if outcome.set.pricing.is_none() => {
                    outcome.set.pricing = Some(Located { origin, spec });
                }
                _ => {}
            }
        }
        if outcome.diagnostics.len() > shown {
            // Quoted by its diagnostics. A file kept no text when nothing in
            // it needed showing or masking: a diagnostic across files (a
            // project declared twice) quotes it as read again.
            let text = file.masked.or_else(|| {
                ManifestFile::read(&file.path, &Limits::default())
                    .ok()
                    .map(|f| Masked::plain(f.text))
            });
            if let Some(text) = text {
                outcome.sources.insert(file.name, text);
            }
        }
    }
    outcome.digest = digest.finish();
    // The policies' rules, over what loaded: each violation at its object.
    let (violations, quoted) = crate::policy::diagnostics(&crate::policy::evaluate(&outcome.set));
    outcome.diagnostics.extend(violations);
    for (name, text) in quoted {
        outcome.sources.entry(name).or_insert(text);
    }
    // A diagnostic across documents may be at a file that had none of its own (the
    // first of two Settings documents): quoted as read again.
    let unquoted: std::collections::BTreeSet<String> = outcome
        .diagnostics
        .iter()
        .filter(|d| d.span.is_some() && !outcome.sources.contains_key(&d.file))
        .map(|d| d.file.clone())
        .collect();
    for name in unquoted {
        if let Ok(file) = ManifestFile::read(std::path::Path::new(&name), &Limits::default()) {
            outcome
                .sources
                .insert(name, crate::policy::masked_text(&file));
        }
    }
    diagnostic::sort(&mut outcome.diagnostics);
    outcome
}

/// The error for `paths` holding YAML files (`files`) none of whose
/// documents has a `kind`: no manifest was found there.
fn no_manifest_found(paths: &[PathBuf], files: &[&str]) -> Diagnostic {
    let named: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let example: Vec<String> = files.iter().take(3).map(|f| format!("`{f}`")).collect();
    let more = match files.len() {
        n if n > 3 => format!(" and {} more", n - 3),
        _ => String::new(),
    };
    Diagnostic::error(
        named.join(" "),
        None,
        format!(
            "no manifest found: the YAML file(s) here ({}{more}) have no document with a `kind`",
            example.join(", ")
        ),
    )
    .with_help(
        "manifests are documents with a `kind` (`Project`, `Integration`, `Scorer`, `Policy`, `Settings`, `Pricing`); name their files or directories as arguments (the default is `.`), e.g. `evalctl plan config/`",
    )
}

/// The error for `variable`, which the document in `file` shows, while an Integration
/// (at `taken_in`:`line`) takes it from the environment as a secret.
fn shown_secret(file: &str, variable: &UsedVariable, taken_in: &str, line: u32) -> Diagnostic {
    Diagnostic::error(
        file,
        Some(variable.at),
        format!(
            "`${{{}}}` is an integration's secret (taken from the environment at {taken_in}:{line}); it cannot be shown here",
            variable.name
        ),
    )
    .with_help(
        "refer to another variable here, or write the value out: plans, exports and logs show this field",
    )
}

/// evalctl's own credentials ([`scrub::credential_values`]) and which variables the
/// manifests refer to hold them, each variable looked up once.
struct OwnCredentials<'a> {
    env: &'a (dyn Fn(&str) -> Option<String> + Sync),
    values: Vec<(&'static str, String)>,
    seen: BTreeMap<String, Option<Holds>>,
}

/// How a variable holds one of evalctl's own credentials.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Holds {
    /// It is the credential's variable (`EVALCTL_API_KEY`).
    Named(&'static str),
    /// Its value holds the value of this credential variable.
    Value(&'static str),
}

impl<'a> OwnCredentials<'a> {
    fn new(env: &'a (dyn Fn(&str) -> Option<String> + Sync)) -> Self {
        OwnCredentials {
            env,
            values: scrub::credential_values(env),
            seen: BTreeMap::new(),
        }
    }

    /// Whether (and how) the variable `name` holds one of evalctl's credentials: it
    /// is one of [`scrub::CREDENTIAL_VARIABLES`], set or not, or its value contains
    /// the value of one (or the HTTP Basic value of the user and password).
    fn held_by(&mut self, name: &str) -> Option<Holds> {
        if let Some(known) = self.seen.get(name) {
            return *known;
        }
        let holds = match scrub::CREDENTIAL_VARIABLES.iter().find(|v| **v == name) {
            Some(variable) => Some(Holds::Named(variable)),
            None => (self.env)(name).and_then(|value| {
                self.values
                    .iter()
                    .find(|(_, credential)| value.contains(credential.as_str()))
                    .map(|(variable, _)| Holds::Value(variable))
            }),
        };
        self.seen.insert(name.to_owned(), holds);
        holds
    }
}

/// The error for `variable`, which holds one of evalctl's own credentials.
fn own_credential(file: &str, variable: &UsedVariable, holds: Holds) -> Diagnostic {
    let message = match holds {
        Holds::Named(credential) => format!(
            "`${{{credential}}}` is evalctl's own credential; a manifest cannot refer to it"
        ),
        Holds::Value(credential) => format!(
            "`${{{}}}` holds the value of {credential}, evalctl's own credential; a manifest cannot refer to it",
            variable.name
        ),
    };
    Diagnostic::error(file, Some(variable.at), message).with_help(
        "plans, pull-request comments, exports and logs would show it, and apply would write it into the service: give the manifest a variable of its own",
    )
}

/// The rules across documents: each project and each provider is declared once.
#[derive(Default)]
struct Across {
    /// `name:<name>` or `id:<id>` of each project seen, with its origin.
    projects: BTreeMap<String, Origin>,
    /// Each provider seen, with its origin.
    providers: BTreeMap<String, Origin>,
    /// The first Settings document: its file, where it starts, and whether the
    /// error at it was given.
    settings: Option<(String, Span, bool)>,
    /// The Pricing document seen, with its origin.
    pricing: Option<Origin>,
}

impl Across {
    /// Records `claim` of the document at `origin` in `file`, or reports it taken.
    fn claim(&mut self, file: &str, claim: Claim, origin: &Origin, out: &mut Vec<Diagnostic>) {
        match claim {
            Claim::Project {
                field,
                identity,
                at,
            } => {
                let key = format!("{field}:{identity}");
                if let Some(first) = self.projects.get(&key) {
                    let what = match field {
                        "id" => format!("project with id `{identity}`"),
                        _ => format!("project `{identity}`"),
                    };
                    out.push(
                        Diagnostic::error(
                            file,
                            Some(at),
                            format!("{what} is declared twice: here and at {first}"),
                        )
                        .with_help("declare each project in one document; merge the two"),
                    );
                } else {
                    self.projects.insert(key, origin.clone());
                }
            }
            Claim::Settings { at } => match &mut self.settings {
                None => self.settings = Some((file.to_owned(), at, false)),
                Some((first_file, first_at, told)) => {
                    let help = "a repo has one Settings document: merge the two";
                    if !*told {
                        *told = true;
                        out.push(
                            Diagnostic::error(
                                first_file.clone(),
                                Some(*first_at),
                                format!(
                                    "a second Settings document is at {file}:{}; which one applies cannot be told",
                                    at.line
                                ),
                            )
                            .with_help(help),
                        );
                    }
                    out.push(
                        Diagnostic::error(
                            file,
                            Some(at),
                            format!(
                                "a second Settings document (the first is at {first_file}:{})",
                                first_at.line
                            ),
                        )
                        .with_help(help),
                    );
                }
            },
            Claim::Provider { provider, at } => {
                if let Some(first) = self.providers.get(&provider) {
                    out.push(
                        Diagnostic::error(
                            file,
                            Some(at),
                            format!(
                                "a second Integration document for provider `{provider}` (the first is at {first})"
                            ),
                        )
                        .with_help("there is one integration per provider: merge the two documents"),
                    );
                } else {
                    self.providers.insert(provider, origin.clone());
                }
            }
            Claim::Pricing { at } => {
                if let Some(first) = &self.pricing {
                    out.push(
                        Diagnostic::error(
                            file,
                            Some(at),
                            format!("a second Pricing document (the first is at {first})"),
                        )
                        .with_help("a repo has one Pricing document: merge the two"),
                    );
                } else {
                    self.pricing = Some(origin.clone());
                }
            }
        }
    }
}
