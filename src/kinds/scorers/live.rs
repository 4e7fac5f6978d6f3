//! Custom scorers as the planner needs them: identity, metadata (as
//! compared), scope, the pinned version and the latest version's
//! definition (what a new version is compared with). Earlier versions are
//! immutable and never compared.

use serde::Serialize;

use super::normalize::{NormDefinition, node_set};
use super::spec::{CustomScorerType, FewShotSpec, ScorerDefaultsSpec};
use crate::api::{Scorer, ScorerDefaults, ScorerType, ScorerVersion};

/// The service's model when a version names none.
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";
/// The service's number of judges when a version says none.
pub const DEFAULT_JUDGES: i64 = 3;

/// The latest version, reduced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScorerVersionState {
    /// Its number, from 1.
    pub version: u32,
    /// Every field of its definition, the service's defaults filled in.
    pub definition: NormDefinition,
}

/// A custom scorer, reduced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CustomScorerState {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// `llm` or `code`.
    pub scorer_type: CustomScorerType,
    /// Description (empty when none).
    pub description: String,
    /// Tags, sorted, each once.
    pub tags: Vec<String>,
    /// Defaults.
    pub defaults: ScorerDefaultsSpec,
    /// Whether every project sees it.
    pub is_global: bool,
    /// The projects it is shared with (when not global), by name, sorted.
    pub projects: Vec<String>,
    /// The pinned version's number.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_version: Option<u32>,
    /// The latest version (none yet: the scorer was made but its first
    /// version was not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest: Option<ScorerVersionState>,
    /// The user id of its creator, when the service says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// Whether a scorer of the catalog is a custom one (managed by this kind).
pub fn custom_type(s: &Scorer) -> Option<CustomScorerType> {
    match s.scorer_type {
        ScorerType::Llm if !s.is_global || s.created_by.is_some() => Some(CustomScorerType::Llm),
        ScorerType::Code => Some(CustomScorerType::Code),
        _ => None,
    }
}

fn defaults_of(d: Option<ScorerDefaults>) -> ScorerDefaultsSpec {
    let d = d.unwrap_or_default();
    ScorerDefaultsSpec {
        model_name: d.model_name,
        num_judges: d.num_judges,
        scoreable_node_types: d.scoreable_node_types.as_deref().map(node_set),
        cot_enabled: d.cot_enabled,
        output_type: d.output_type,
        input_type: d.input_type,
    }
}

/// A version's definition as the service holds it; `code` is the code
/// scorer's file, read on its own.
pub fn definition_of(v: &ScorerVersion, code: Option<String>) -> NormDefinition {
    let mut d = NormDefinition {
        scoreable_node_types: Some(node_set(
            v.scoreable_node_types
                .as_deref()
                .unwrap_or(&["llm".to_owned()]),
        )),
        code,
        ..NormDefinition::default()
    };
    if let Some(g) = &v.generated_scorer {
        let c = &g.chain_poll_template;
        d.template = Some(c.template.clone());
        d.metric_system_prompt = c.metric_system_prompt.clone();
        d.metric_description = c.metric_description.clone();
        d.value_field_name = Some(c.value_field_name.clone());
        d.explanation_field_name = Some(c.explanation_field_name.clone());
        d.metric_few_shot_examples = Some(
            c.metric_few_shot_examples
                .iter()
                .map(|e| FewShotSpec {
                    generation_prompt_and_response: e.generation_prompt_and_response.clone(),
                    evaluating_response: e.evaluating_response.clone(),
                })
                .collect(),
        );
        d.response_schema = c.response_schema.clone();
        d.instructions = g.instructions.clone();
        d.user_prompt = g.user_prompt.clone();
        d.model_name = Some(
            v.model_name
                .clone()
                .unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
        );
        d.num_judges = Some(v.num_judges.unwrap_or(DEFAULT_JUDGES));
        d.cot_enabled = Some(v.cot_enabled.unwrap_or(false));
        d.output_type = Some(
            v.output_type
                .as_ref()
                .map_or("boolean", |o| o.as_str())
                .to_owned(),
        );
        d.input_type = v.input_type.as_ref().map(|o| o.as_str().to_owned());
    }
    d
}

impl CustomScorerState {
    /// A scorer of the listing, custom, with the projects it is shared with
    /// and its latest version's code (a code scorer).
    pub fn from_wire(
        s: Scorer,
        scorer_type: CustomScorerType,
        projects: Vec<String>,
        code: Option<String>,
    ) -> Self {
        let mut tags = s.tags;
        tags.sort();
        tags.dedup();
        let mut projects = projects;
        projects.sort();
        projects.dedup();
        let latest = s.latest_version.as_ref().map(|v| ScorerVersionState {
            version: u32::try_from(v.version).unwrap_or(0),
            definition: definition_of(v, code),
        });
        let default_version = s
            .default_version
            .as_ref()
            .map(|v| u32::try_from(v.version).unwrap_or(0))
            .or_else(|| {
                let id = s.default_version_id.as_deref()?;
                let latest = s.latest_version.as_ref().filter(|v| v.id == id)?;
                u32::try_from(latest.version).ok()
            });
        CustomScorerState {
            id: s.id,
            name: s.name,
            scorer_type,
            description: s.description.unwrap_or_default(),
            tags,
            defaults: defaults_of(s.defaults),
            is_global: s.is_global,
            projects: if s.is_global { Vec::new() } else { projects },
            default_version,
            latest,
            created_by: s.created_by,
        }
    }
}
