//! What an export writes, as the service returned it: plain data that
//! `crate::reconcile::collect` fills through the plan's own readers and
//! `crate::export` renders as manifests (export itself reads nothing).

use super::{Catalog, IntegrationState, ProjectState};

/// What to export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Project names to export (exact, case-sensitive); empty: every project
    /// the credentials can see.
    pub projects: Vec<String>,
    /// Whether to export the caller's integrations.
    pub integrations: bool,
    /// Whether to export the global prompt templates.
    pub prompt_templates: bool,
}

/// A project the credentials can see: its id and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ProjectRef {
    /// Name.
    pub name: String,
    /// Id.
    pub id: String,
}

/// Everything an export writes, as the service returned it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Every project the credentials can see, sorted by name then id (file
    /// names are derived from all of them, so they do not depend on the
    /// selection).
    pub visible: Vec<ProjectRef>,
    /// The selected projects, loaded completely, sorted by name then id. Runs
    /// are keyed by id ([`ObjectKey::Id`]); templates are always `Some`.
    pub projects: Vec<ProjectState>,
    /// The scorer catalog.
    pub catalog: Catalog,
    /// The caller's integrations, by provider, when selected.
    pub integrations: Option<Vec<IntegrationState>>,
    /// The global kinds of the registry, when selected: the custom scorers
    /// (with the integrations: an export of the whole organization), the
    /// global prompt templates.
    pub global: crate::kinds::GlobalParts,
    /// Things that were listed but could not be read (they changed during
    /// the export), for the user.
    pub warnings: Vec<String>,
}
