//! The scorer catalog as the planner needs it: each scorer's identity, kind,
//! the defaults the service fills into a config that leaves them out, and the
//! version numbers a manifest may pin. Everything else the catalog returns
//! (prompts, templates, tags, permissions) is dropped as it arrives.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::api::{
    InputType, ModelType, OutputType, RollUpMethod, Scorer, ScorerType, ScorerVersion,
    ScorerVersionRecord,
};

/// A scorer version: enough to pin it in a config and to list who uses it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionRef {
    /// The version's id.
    pub id: String,
    /// The version number, counting from 1.
    pub version: i64,
    /// The scorer it is a version of.
    pub scorer_id: String,
}

impl VersionRef {
    /// The version as a config sends it (`BaseScorerVersionDB`: the required fields).
    pub fn to_wire(&self) -> ScorerVersion {
        ScorerVersion {
            id: self.id.clone(),
            version: self.version,
            scorer_id: self.scorer_id.clone(),
            generated_scorer: None,
            registered_scorer: None,
            finetuned_scorer: None,
            model_name: None,
            num_judges: None,
            scoreable_node_types: None,
            cot_enabled: None,
            output_type: None,
            input_type: None,
        }
    }
}

impl From<&ScorerVersion> for VersionRef {
    fn from(v: &ScorerVersion) -> Self {
        VersionRef {
            id: v.id.clone(),
            version: v.version,
            scorer_id: v.scorer_id.clone(),
        }
    }
}

impl From<&ScorerVersionRecord> for VersionRef {
    fn from(v: &ScorerVersionRecord) -> Self {
        VersionRef {
            id: v.id.clone(),
            version: v.version,
            scorer_id: v.scorer_id.clone(),
        }
    }
}

/// One scorer of the catalog, reduced to what planning compares and fills.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogScorer {
    /// Id.
    pub id: String,
    /// Name (a preset's ScorerName, or a custom scorer's name).
    pub name: String,
    /// Kind.
    pub scorer_type: ScorerType,
    /// The latest version, when the catalog reports it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_version: Option<VersionRef>,
    /// Default model tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_type: Option<ModelType>,
    /// Default output type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_type: Option<OutputType>,
    /// Default input type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<InputType>,
    /// Default roll-up method.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roll_up_method: Option<RollUpMethod>,
    /// Default number of judges (its defaults, else its latest version's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_judges: Option<i64>,
    /// Default model (its defaults, else its latest version's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// The node types it scores by default (sorted set; empty: not said).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scoreable_node_types: Vec<String>,
    /// Whether it has multimodal capabilities (what `multimodal_scorers`
    /// sampling rules select).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multimodal: bool,
}

impl From<Scorer> for CatalogScorer {
    fn from(s: Scorer) -> Self {
        let defaults = s.defaults.as_ref();
        let latest = s.latest_version.as_ref();
        let mut scoreable_node_types = s
            .scoreable_node_types
            .clone()
            .or_else(|| defaults.and_then(|d| d.scoreable_node_types.clone()))
            .or_else(|| latest.and_then(|v| v.scoreable_node_types.clone()))
            .unwrap_or_default();
        scoreable_node_types.sort();
        scoreable_node_types.dedup();
        CatalogScorer {
            num_judges: defaults
                .and_then(|d| d.num_judges)
                .or_else(|| latest.and_then(|v| v.num_judges)),
            model_name: defaults
                .and_then(|d| d.model_name.clone())
                .or_else(|| latest.and_then(|v| v.model_name.clone())),
            scoreable_node_types,
            multimodal: s
                .multimodal_capabilities
                .as_ref()
                .is_some_and(|m| !m.is_empty()),
            latest_version: s.latest_version.as_ref().map(VersionRef::from),
            id: s.id,
            name: s.name,
            scorer_type: s.scorer_type,
            model_type: s.model_type,
            output_type: s.output_type,
            input_type: s.input_type,
            roll_up_method: s.roll_up_method,
        }
    }
}

/// The scorer catalog: every scorer the credentials can see, and the versions
/// of the scorers whose version the manifests pin.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// Scorers, in the service's order.
    pub scorers: Vec<CatalogScorer>,
    /// Versions, by scorer id (only of scorers a manifest pins).
    pub versions: BTreeMap<String, Vec<VersionRef>>,
}

impl Catalog {
    /// The scorer with this id.
    pub fn by_id(&self, id: &str) -> Option<&CatalogScorer> {
        self.scorers.iter().find(|s| s.id == id)
    }

    /// The scorer with this exact name (the first, when several share it).
    pub fn by_name(&self, name: &str) -> Option<&CatalogScorer> {
        self.scorers.iter().find(|s| s.name == name)
    }

    /// The name a scorer is shown under: its catalog name, else the name its
    /// config carries, else its id.
    pub fn scorer_key(&self, id: &str, config_name: Option<&str>) -> String {
        self.by_id(id)
            .map(|s| s.name.clone())
            .or_else(|| config_name.map(str::to_owned))
            .unwrap_or_else(|| id.to_owned())
    }
}
