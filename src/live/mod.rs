//! Live state: what the service holds for exactly the objects the manifests
//! name, as the service returned it (normalization is the plan's job).
//!
//! - [`Live`] and its parts are plain data, so `plan` can be tested with literals.
//! - The fetcher that fills them over the API lives in [`fetch`].
//! - [`people`] names the people behind `created_by` ids.
//! - [`blast_radius`] adds, after planning, who else uses the scorer versions a plan touches.

pub mod blast_radius;
pub mod fetch;
pub mod people;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::api::{
    AnnotationTemplate, FeedbackTemplate, IntegrationConfig, MetricSettingsResponse, Scorer,
    ScorerVersionRecord, TrendsDashboard,
};
use crate::plan::resolve::did_you_mean;

/// How a manifest refers to an object: by name or by id.
///
/// Serialized as one string (so it can key JSON maps): the name itself, or
/// `id:<id>`; a name that itself starts with `id:` or `name:` is written
/// `name:<name>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum ObjectKey {
    /// By name.
    Name(String),
    /// By id.
    Id(String),
}

impl ObjectKey {
    /// The key of a spec that gives `name` or `id` (name wins when both are given;
    /// validation refuses that case before this is called).
    pub fn from_parts(name: Option<&str>, id: Option<&str>) -> Option<ObjectKey> {
        match (name, id) {
            (Some(n), _) => Some(ObjectKey::Name(n.to_owned())),
            (None, Some(i)) => Some(ObjectKey::Id(i.to_owned())),
            (None, None) => None,
        }
    }
}

impl From<ObjectKey> for String {
    fn from(key: ObjectKey) -> String {
        match key {
            ObjectKey::Id(id) => format!("id:{id}"),
            ObjectKey::Name(n) if n.starts_with("id:") || n.starts_with("name:") => {
                format!("name:{n}")
            }
            ObjectKey::Name(n) => n,
        }
    }
}

impl From<String> for ObjectKey {
    fn from(s: String) -> ObjectKey {
        if let Some(id) = s.strip_prefix("id:") {
            ObjectKey::Id(id.to_owned())
        } else if let Some(name) = s.strip_prefix("name:") {
            ObjectKey::Name(name.to_owned())
        } else {
            ObjectKey::Name(s)
        }
    }
}

impl std::fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ObjectKey::Name(n) => f.write_str(n),
            ObjectKey::Id(i) => write!(f, "id:{i}"),
        }
    }
}

/// The live state of everything the manifests name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Live {
    /// Projects, by how the manifests refer to them.
    pub projects: BTreeMap<ObjectKey, LiveProject>,
    /// Integrations of the calling user, by provider; `None` when the user has
    /// no integration of that provider.
    pub integrations: BTreeMap<String, Option<IntegrationConfig>>,
    /// The scorer catalog.
    pub catalog: Catalog,
    /// Objects the manifests name that do not exist, with the nearest names.
    #[serde(default)]
    pub missing: Vec<MissingObject>,
}

/// An object the manifests name that the service does not have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MissingObject {
    /// `project`, `log stream` or `experiment`.
    pub kind: String,
    /// How the manifest refers to it.
    pub key: ObjectKey,
    /// The project it was looked for in, for runs.
    pub project: Option<String>,
    /// The nearest existing names, best first.
    pub suggestions: Vec<String>,
}

impl std::fmt::Display for MissingObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} `{}` not found", self.kind, self.key)?;
        if let Some(p) = &self.project {
            write!(f, " in project `{p}`")?;
        }
        f.write_str(&did_you_mean(&self.suggestions))
    }
}

/// A project and the parts of it the manifests name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveProject {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Log streams, by how the manifests refer to them.
    pub log_streams: BTreeMap<ObjectKey, LiveRun>,
    /// Experiments, by how the manifests refer to them.
    pub experiments: BTreeMap<ObjectKey, LiveRun>,
    /// Annotation templates, when the manifests manage them.
    pub annotation_templates: Option<Vec<AnnotationTemplate>>,
    /// Feedback templates, when the manifests manage them.
    pub feedback_templates: Option<Vec<FeedbackTemplate>>,
}

/// A log stream or experiment and the parts of it the manifests name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveRun {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Metric settings, when the manifests manage them.
    pub metric_settings: Option<MetricSettingsResponse>,
    /// The default trends dashboard, when the manifests manage trends.
    pub dashboard: Option<TrendsDashboard>,
}

/// The scorer catalog: every scorer the credentials can see, and the versions
/// of the scorers whose version the manifests pin.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// Scorers.
    pub scorers: Vec<Scorer>,
    /// Versions, by scorer id.
    pub versions: BTreeMap<String, Vec<ScorerVersionRecord>>,
}

impl Catalog {
    /// The scorer with this id.
    pub fn by_id(&self, id: &str) -> Option<&Scorer> {
        self.scorers.iter().find(|s| s.id == id)
    }

    /// The scorer with this exact name.
    pub fn by_name(&self, name: &str) -> Option<&Scorer> {
        self.scorers.iter().find(|s| s.name == name)
    }
}
