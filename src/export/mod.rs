//! Export: live configuration written as manifests, the way teams adopt
//! evalctl. Each project becomes `<slug>.yaml`, the caller's integrations
//! `integrations.yaml`, in exactly the format users write and minimal, so
//! that planning the exported files against the same live state is empty.
//!
//! The flow, one way like the reconciler's:
//!
//! ```text
//! service --reconcile::collect--> Snapshot --to_spec / integrations--> Documents --write/emit--> text
//! ```
//!
//! - `crate::reconcile::collect` loads everything of the selected projects, the catalog and
//!   the integrations (the I/O, through the plan's readers) into a [`Snapshot`]; this
//!   module reads nothing and imports no client.
//! - [`to_spec`]: live projects to Project specs (pure), mirroring the plan's
//!   normalization; [`integrations`]: live integrations to Integration specs,
//!   secrets as `${...}` references.
//! - [`write`](mod@write): documents to file text (header comments, `kind`, defaults
//!   left out, `${` escaped); [`emit`]: the YAML emitter.
//! - [`files`]: file names, the schema path, writing files whole.
//!
//! Everything here is pure, so it is unit-tested with literals.

pub mod emit;
pub mod files;
pub mod integrations;
pub mod to_spec;
pub mod write;

use std::collections::BTreeMap;

pub use crate::state::snapshot::{ProjectRef, Selection, Snapshot};
pub use write::SchemaLocation;

use write::{Header, render_file};

/// What one exported file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A project.
    Project {
        /// Its name.
        name: String,
        /// Its id.
        id: String,
    },
    /// The caller's integrations, by provider.
    Integrations {
        /// The providers, in file order.
        providers: Vec<String>,
    },
    /// The documents of a kind of the registry (the custom scorers, the
    /// global prompt templates: `crate::kinds::export_global_parts`).
    Documents {
        /// What they are, as their kind says it (`3 custom scorers`).
        description: String,
    },
    /// A file a document names (a custom scorer's prompt or code).
    NamedFile {
        /// What it is, as its kind says it.
        description: String,
    },
}

impl std::fmt::Display for Content {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // A name read from the service: control characters escaped, as
            // plans show it.
            Content::Project { name, .. } => {
                write!(f, "project `{}`", crate::scrub::escape_controls(name))
            }
            Content::Integrations { providers } => {
                let list: Vec<String> = providers.iter().map(|p| format!("`{p}`")).collect();
                write!(
                    f,
                    "integration{} {}",
                    if providers.len() == 1 { "" } else { "s" },
                    list.join(", ")
                )
            }
            Content::Documents { description } | Content::NamedFile { description } => {
                f.write_str(description)
            }
        }
    }
}

/// One exported file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedFile {
    /// The file name, in the export directory.
    pub name: String,
    /// The text.
    pub text: String,
    /// What it holds.
    pub content: Content,
}

/// The result of an export, before anything is written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Export {
    /// The files, projects first (by name), then `integrations.yaml`.
    pub files: Vec<ExportedFile>,
    /// What could not be exported as it is live, for the user.
    pub warnings: Vec<String>,
}

/// Where the files say they come from, and where editors find the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The schema location for the `yaml-language-server` line.
    pub schema: SchemaLocation,
    /// The service (a base URL, or `sandbox`).
    pub service: String,
}

impl Provenance {
    /// The header of a file whose content `about` describes.
    #[must_use]
    pub fn header(&self, about: &[&str]) -> Header {
        Header {
            schema: self.schema.clone(),
            service: self.service.clone(),
            about: about.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

const PROJECT_ABOUT: &[&str] = &[
    "",
    "Every log stream and experiment with its scorers and sampling rules, each",
    "log stream's trends dashboards (sections, widgets, settings, the other",
    "dashboards), and the templates, as they were live. A list written here is",
    "the whole truth: `apply` turns off a scorer missing from `scorers`; sections,",
    "widgets, dashboards and templates not listed are deleted only with --prune.",
    "Right after the export, `evalctl plan` on this file shows no changes.",
];

const INTEGRATIONS_ABOUT: &[&str] = &[
    "",
    "The calling user's model-provider integrations, one document per provider.",
    "Secrets are never exported: each is a `${NAME}` reference to an environment",
    "variable, read only when `apply` sends it. Secrets cannot be read back, so",
    "`plan` cannot see a changed one: `apply --rotate-secrets` sends them again.",
];

/// Renders a snapshot into files (pure).
#[must_use]
pub fn render(snapshot: &Snapshot, provenance: &Provenance) -> Export {
    let names = files::file_names(&snapshot.visible);
    let mut name_count: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &snapshot.visible {
        *name_count.entry(p.name.as_str()).or_default() += 1;
    }
    let mut warnings = snapshot.warnings.clone();
    let mut out = Vec::new();
    for project in &snapshot.projects {
        let unique = name_count
            .get(project.name.as_str())
            .is_none_or(|n| *n <= 1);
        let document = to_spec::project_document(project, &snapshot.catalog, unique, &mut warnings);
        let header = Header {
            schema: provenance.schema.clone(),
            service: provenance.service.clone(),
            about: PROJECT_ABOUT.iter().map(|s| (*s).to_owned()).collect(),
        };
        let name = names
            .get(&project.id)
            .cloned()
            .unwrap_or_else(|| format!("{}.yaml", files::slug(&project.name)));
        out.push(ExportedFile {
            name,
            text: render_file(&header, &[document]),
            content: Content::Project {
                name: project.name.clone(),
                id: project.id.clone(),
            },
        });
    }
    if let Some(integrations) = &snapshot.integrations {
        let mut sorted: Vec<_> = integrations.iter().collect();
        sorted.sort_by(|a, b| a.provider.as_str().cmp(b.provider.as_str()));
        let mut documents = Vec::new();
        let mut providers = Vec::new();
        for live in sorted {
            match integrations::integration_document(live) {
                Ok(document) => {
                    documents.push(document);
                    providers.push(live.provider.as_str().to_owned());
                }
                Err(why) => warnings.push(why.to_string()),
            }
        }
        if !documents.is_empty() {
            let header = Header {
                schema: provenance.schema.clone(),
                service: provenance.service.clone(),
                about: INTEGRATIONS_ABOUT.iter().map(|s| (*s).to_owned()).collect(),
            };
            out.push(ExportedFile {
                name: files::INTEGRATIONS_FILE.to_owned(),
                text: render_file(&header, &documents),
                content: Content::Integrations { providers },
            });
        }
    }
    crate::kinds::export_global_parts(&snapshot.global, provenance, &mut out, &mut warnings);
    Export {
        files: out,
        warnings,
    }
}

#[cfg(test)]
#[path = "tests.rs"]
pub(crate) mod tests;
