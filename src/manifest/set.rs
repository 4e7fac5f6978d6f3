//! A loaded, validated set of manifests: what `plan` takes as the desired state.

use std::path::PathBuf;

use serde::Serialize;

use super::pricing::PricingSpec;
use super::types::{IntegrationSpec, ProjectSpec};
use crate::policy::{PolicySpec, SettingsSpec};

/// Where a document came from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Origin {
    /// The file.
    pub file: PathBuf,
    /// The 1-based line the document starts at.
    pub line: usize,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// A document with its origin.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Located<T> {
    /// Where it came from.
    pub origin: Origin,
    /// The document.
    pub spec: T,
}

/// Every document of a config repo, validated, in deterministic order
/// (file path, then position in the file).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ManifestSet {
    /// `kind: Project` documents, one per project.
    pub projects: Vec<Located<ProjectSpec>>,
    /// `kind: Integration` documents, one per provider.
    pub integrations: Vec<Located<IntegrationSpec>>,
    /// `kind: Policy` documents ([`crate::policy`]).
    pub policies: Vec<Located<PolicySpec>>,
    /// The `kind: Settings` document, at most one.
    pub settings: Option<Located<SettingsSpec>>,
    /// The `kind: Pricing` document, when the repo has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pricing: Option<Located<PricingSpec>>,
    /// The documents of the kinds of the registry (`kind: Scorer`, `kind:
    /// PromptTemplate`), one list per kind.
    #[serde(flatten)]
    pub global: crate::kinds::GlobalDocuments,
}
