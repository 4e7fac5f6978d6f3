//! The manifest format: the types users write in YAML.
//!
//! Field names follow the service's API (snake_case), so what users read in the
//! service's docs is what they write here. Each document carries a `kind`:
//! `Project` ([`ProjectSpec`]) or `Integration` ([`IntegrationSpec`]).
//!
//! Authority rules, which the plan relies on:
//! - A field or list that is absent is unmanaged: evalctl never touches it.
//! - A list that is present (even empty) is authoritative: live is made to
//!   match it exactly (a scorer removed from the list is removed live).
//! - Within a declared scope (`trends.sections`, a project's templates), live
//!   objects missing from the manifest are deleted only with `--prune`.
//!
//! These types derive `JsonSchema`; `evalctl schema` writes the schema editors
//! use, and the loader validates documents against that same schema, so the
//! rules live in one place. The service's own limits (lengths, patterns, ranges,
//! item counts, formats) are not written here: [`super::limits`] derives them from
//! the service's reference and adds them to the schema.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::api::{
    ContentModality, InputType, IntegrationCreate, ModelType, MultimodalCapability, Operator,
    OutputType, RollUpMethod,
};

/// The manifest format version this build reads (`api_version`, optional).
pub const API_VERSION: &str = "evalctl/v1";

/// A `kind: Project` document: the configuration of one project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectSpec {
    /// The project's name (give `name` or `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// The project's id (uuid), instead of its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub id: Option<String>,
    /// The project's description. Absent: not managed; `""` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The project's labels. Absent: not managed; `[]` clears them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<crate::kinds::projects::wire::ProjectLabel>>,
    /// Log streams of the project whose configuration is managed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_streams: Vec<LogStreamSpec>,
    /// Experiments of the project whose configuration is managed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub experiments: Vec<ExperimentSpec>,
    /// Annotation templates. When present, the project's annotation templates
    /// are managed: missing ones are created, changed ones updated, and
    /// undeclared ones deleted with `--prune`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation_templates: Option<Vec<AnnotationTemplateSpec>>,
    /// Feedback templates, managed like `annotation_templates`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_templates: Option<Vec<FeedbackTemplateSpec>>,
    /// Prompt templates. When present, the project's prompt templates are
    /// managed: missing ones are created, a changed template or settings is
    /// one new version, and undeclared ones are deleted with `--prune`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_templates: Option<Vec<crate::kinds::prompt_templates::PromptTemplateSpec>>,
    /// Protect stages. When present, the project's stages are managed:
    /// missing ones are created, a changed `paused` is a pause or a resume,
    /// changed rulesets are one replace; the service cannot delete a stage,
    /// so an undeclared one is paused with `--prune`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protect_stages: Option<Vec<crate::kinds::protect_stages::ProtectStageSpec>>,
    /// The project's log streams are a managed scope: a live log stream the
    /// manifests do not declare is unmanaged, and deleted, with its traces,
    /// only with `--prune` and `--allow-destroy`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prune_log_streams: bool,
    /// Names the project had: when `name` does not exist and one of these
    /// does, it is renamed (it keeps its id, log streams and traces).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renamed_from: Vec<String>,
}

impl ProjectSpec {
    /// Drops what a plan compares (each run's metric settings and
    /// dashboards, the templates) and keeps the names and ids of the project
    /// and its runs: what is left of a project once it is planned, for
    /// saying where a missing one is declared.
    pub fn release_planned(&mut self) {
        for log_stream in &mut self.log_streams {
            log_stream.metric_settings = None;
            log_stream.trends = None;
        }
        for experiment in &mut self.experiments {
            experiment.metric_settings = None;
        }
        self.annotation_templates = None;
        self.feedback_templates = None;
        self.prompt_templates = None;
        self.protect_stages = None;
    }

    /// Gives the spec what the loader kept of the strings it took from the
    /// environment (`env`, by JSON pointer): its Protect stages' webhook URLs.
    pub fn attach_env(&mut self, env: &EnvFields) {
        if let Some(stages) = &mut self.protect_stages {
            crate::kinds::protect_stages::webhooks::attach(stages, env);
        }
    }
}

/// A log stream's managed configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogStreamSpec {
    /// The log stream's name (give `name` or `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// The log stream's id, instead of its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub id: Option<String>,
    /// Scorers and sampling rules.
    // Shared: thousands of runs often declare the same settings, held once
    // (`manifest::shared`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_settings: Option<Arc<MetricSettingsSpec>>,
    /// The trends dashboard (the log stream's default dashboard).
    // Shared, like `metric_settings`; behind a pointer, a planned log stream
    // keeps its name and id, not this room.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trends: Option<Arc<TrendsSpec>>,
    /// The traffic the plan's judge-call forecast assumes, where the log
    /// stream's past is a bad guide (a new stream, a launch). Left out: its
    /// traces and spans counted so far, over its age.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<TrafficSpec>,
    /// Names the log stream had: when `name` does not exist and one of
    /// these does, it is renamed (it keeps its id and traces).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renamed_from: Vec<String>,
}

/// A log stream's expected traffic, for the judge-call forecast.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    /// Traces a day.
    pub traces_per_day: u64,
    /// Spans a day. Left out: the traces a day times the spans per trace
    /// counted so far (one span a trace when nothing was counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spans_per_day: Option<u64>,
}

/// An experiment's managed configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    /// The experiment's name (give `name` or `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// The experiment's id, instead of its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub id: Option<String>,
    /// Scorers and sampling rules.
    // Shared: thousands of runs often declare the same settings, held once
    // (`manifest::shared`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric_settings: Option<Arc<MetricSettingsSpec>>,
}

/// Metric settings: each list, when present, is authoritative.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricSettingsSpec {
    /// The scorers to enable: a set keyed by scorer. Absent: unmanaged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scorers: Option<Vec<ScorerSpec>>,
    /// Sampling rules, in order. Absent: unmanaged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segment_filters: Option<Vec<SegmentFilterSpec>>,
}

/// A scorer to enable, referenced by name (a preset ScorerName or a custom
/// scorer of the catalog) or by id. Fields left out take the scorer's
/// defaults from the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScorerSpec {
    /// The scorer's name in the catalog, e.g. `correctness` (give `name` or `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// The scorer's id, instead of its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub id: Option<String>,
    /// Pin a version by number; omit to use the latest version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub scorer_version: Option<i64>,
    /// Model used by a model-based scorer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<String>,
    /// Number of judges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub num_judges: Option<i64>,
    /// Filters selecting what the scorer scores, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<FilterSpec>>,
    /// Node types the scorer scores (a set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoreable_node_types: Option<Vec<String>>,
    /// Chain of thought.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cot_enabled: Option<bool>,
    /// Output type (default: the scorer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_type: Option<OutputType>,
    /// Input type (default: the scorer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_type: Option<InputType>,
    /// Model tier (default: the scorer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_type: Option<ModelType>,
    /// Capabilities the scorer may use (a set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multimodal_capabilities: Option<Vec<MultimodalCapability>>,
    /// Roll-up method (default: the scorer's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roll_up_method: Option<RollUpMethod>,
    /// Return type of a code scorer (bool, int, float, str).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_type: Option<String>,
}

/// A sampling rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SegmentFilterSpec {
    /// Fraction of data to sample, 0 to 1 inclusive.
    pub sample_rate: f64,
    /// Which data the rule applies to; absent: all data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<FilterSpec>,
    /// Sample only on llm scorers (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_scorers: Option<bool>,
    /// Sample only on multimodal scorers (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multimodal_scorers: Option<bool>,
}

/// A filter, discriminated by `name`: `node_name`, `metadata` or `modality`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "name", rename_all = "snake_case", deny_unknown_fields)]
pub enum FilterSpec {
    /// Matches node names. Operators: eq, ne, contains, one_of, not_in.
    NodeName {
        /// Comparison operator.
        #[schemars(extend("enum" = ["eq", "ne", "contains", "one_of", "not_in"]))]
        operator: Operator,
        /// A string, or a list for one_of / not_in.
        value: FilterValueSpec,
        /// Case-sensitive comparison (default true).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        case_sensitive: Option<bool>,
    },
    /// Matches a metadata key. Operators: one_of, not_in, eq, ne.
    Metadata {
        /// Comparison operator.
        #[schemars(extend("enum" = ["one_of", "not_in", "eq", "ne"]))]
        operator: Operator,
        /// The metadata key.
        key: String,
        /// A string, or a list for one_of / not_in.
        value: FilterValueSpec,
    },
    /// Matches when at least one of the modalities is present.
    /// Operators: eq, ne, one_of, not_in.
    Modality {
        /// Comparison operator.
        #[schemars(extend("enum" = ["eq", "ne", "one_of", "not_in"]))]
        operator: Operator,
        /// A modality, or a list of them.
        value: ModalityValueSpec,
    },
}

/// A filter value: one string, or a list of strings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FilterValueSpec {
    /// One value.
    One(String),
    /// Several values (for one_of / not_in).
    Many(Vec<String>),
}

/// A modality filter value: one modality, or a list of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ModalityValueSpec {
    /// One modality.
    One(ContentModality),
    /// Several modalities.
    Many(Vec<ContentModality>),
}

/// The log stream's trends dashboards: its default dashboard (sections,
/// widgets, settings, favorite), and, under `dashboards`, the others.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrendsSpec {
    /// Sections, keyed by name. When present, sections are managed: missing
    /// ones are created, changed ones updated, undeclared ones deleted with
    /// `--prune` (with their widgets). A section's widgets are managed only
    /// where its `widgets` list is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<SectionSpec>>,
    /// Widgets at the dashboard's top level (outside any section), keyed by
    /// name. When present, they are managed like a section's `widgets`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widgets: Option<Vec<WidgetSpec>>,
    /// Favorite the dashboard for the calling user (`user`) or the whole
    /// project (`project`), or make sure it is not favorited (`none`).
    ///
    /// The service reads back only whether the dashboard is favorited for the
    /// caller, not for whom: once it is, `user` and `project` cannot be told
    /// apart, so a dashboard favorited for the caller alone also satisfies
    /// `project` (the plan says so in a note). `none` is checked exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub favorite: Option<FavoriteSpec>,
    /// Bucket width of the charts, in minutes. Left out: unmanaged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_mins: Option<i64>,
    /// The time range, a rolling window from now: `last_<n>_<unit>`, unit
    /// `seconds` to `months` (singular or plural), at most five years, e.g.
    /// `last_7_days`. Left out: unmanaged (an absolute range set in the UI is
    /// left as it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_time: Option<String>,
    /// The column the charts group by; `""` for none. Left out: unmanaged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_by: Option<String>,
    /// The log stream's other dashboards, keyed by name. When present, they
    /// are managed: missing ones are created, changed ones updated, and the
    /// ones the caller sees that are not declared are deleted with `--prune`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dashboards: Option<Vec<DashboardSpec>>,
}

/// A dashboard of a log stream other than its default one.
///
/// The service has no operation that creates an empty dashboard: a new one
/// is a copy of `copy_from` (the default dashboard when left out), with that
/// dashboard's sections, widgets, layout and settings; the lists and
/// settings declared here are then made to match, and what is left out stays
/// as copied. Names are not unique in the service: the first dashboard of a
/// name the caller sees is the one managed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DashboardSpec {
    /// Name, 1 to 255 characters; unique among the log stream's dashboards
    /// declared here.
    pub name: String,
    /// Earlier names of this dashboard: a rename is then an update, which
    /// keeps the dashboard (its id, favorites and links), instead of a create.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renamed_from: Vec<String>,
    /// Who sees it: its creator only (`user`) or the whole project
    /// (`project`). The service cannot change a dashboard's visibility: a
    /// change replaces the dashboard with a copy (a new id; favorites of the
    /// old one are lost). Left out: a new dashboard takes `copy_from`'s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<crate::api::Visibility>,
    /// The dashboard a new one is copied from, by name (its contents are the
    /// starting point); the log stream's default dashboard when left out.
    /// Ignored once the dashboard exists. It must exist in the service when the
    /// plan is made: to copy a dashboard these manifests declare too, apply
    /// that one first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub copy_from: Option<String>,
    /// Description, at most 1,000 characters; `""` for none. Left out:
    /// unmanaged (a new dashboard keeps `copy_from`'s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Sections, managed as the default dashboard's `sections`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<SectionSpec>>,
    /// Widgets at the top level, managed as the default dashboard's `widgets`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widgets: Option<Vec<WidgetSpec>>,
    /// Bucket width of the charts, in minutes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_mins: Option<i64>,
    /// The time range, a rolling window from now (see the default dashboard's
    /// `relative_time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_time: Option<String>,
    /// The column the charts group by; `""` for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_by: Option<String>,
}

/// A dashboard section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SectionSpec {
    /// Name, 1 to 100 characters; unique within the dashboard.
    pub name: String,
    /// Earlier names of this section: a rename is then an update, which keeps
    /// the section's widgets, instead of a create (and a delete with `--prune`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renamed_from: Vec<String>,
    /// Description, at most 500 characters; left as it is when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Colour, `#RRGGBB`; left as it is when absent (the service cannot clear one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// The section's widgets, keyed by name. When present, they are managed:
    /// missing ones are created (or moved here, see [WidgetSpec](#widgetspec)),
    /// changed ones updated, undeclared ones deleted with `--prune`.
    /// Left out: the section's widgets are not touched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub widgets: Option<Vec<WidgetSpec>>,
}

/// A chart of a dashboard, keyed by name within its section (or the top
/// level).
///
/// A widget declared in one place and found live, by name (or a name of
/// `renamed_from`), in another place whose widgets are also managed is
/// moved: an update that keeps it (its id and layout), not a delete and a
/// create. Widgets in places whose widget list is not written are never
/// moved or touched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WidgetSpec {
    /// Name, 1 to 100 characters; unique within its section (or the top level).
    pub name: String,
    /// Earlier names of this widget: a rename is then an update, which keeps
    /// the widget and its place in the layout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renamed_from: Vec<String>,
    /// Chart type.
    #[serde(rename = "type")]
    pub widget_type: crate::api::WidgetType,
    /// The metric charted, e.g. `correctness` or `latency_ms`.
    pub metric: String,
    /// How the metric is aggregated per bucket.
    pub aggregation: crate::api::MetricAggregation,
    /// Description, at most 500 characters; `""` for none. Left out: left as
    /// it is (a new widget has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Data sets, in order: at most 50, each mapping a name to a list of
    /// strings (e.g. `{metrics: [correctness]}`); `[]` for none. Left out:
    /// left as it is (a new widget has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<crate::api::Dataset>,
}

/// Who a dashboard is favorited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FavoriteSpec {
    /// Favorited for the calling user.
    User,
    /// Favorited for the whole project.
    Project,
    /// Not favorited.
    None,
}

/// A template, generic over its constraints type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
// `TemplateWithAnnotationConstraints`: the reference and editors show this
// name (schemars' default joins the Rust names: `TemplateSpec_...`).
#[schemars(rename = "TemplateWith{C}")]
pub struct TemplateSpec<C> {
    /// Name, 1 to 255 characters; unique among the project's templates of this kind.
    pub name: String,
    /// Earlier names of this template: a rename is then an update, which keeps
    /// the ratings, instead of a delete and a create.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub renamed_from: Vec<String>,
    /// Rating criteria, at least one character. Left out: an existing
    /// template keeps its criteria; a new one has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria: Option<String>,
    /// Whether raters give an explanation. Left out: an existing template
    /// keeps its setting; a new one gets the service's default, false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_explanation: Option<bool>,
    /// What a rating may be. Changing it replaces the template (the service
    /// cannot change constraints in place).
    pub constraints: C,
}

/// An annotation template (`constraints.annotation_type`).
pub type AnnotationTemplateSpec = TemplateSpec<crate::kinds::templates::AnnotationConstraints>;
/// A feedback template (`constraints.feedback_type`).
pub type FeedbackTemplateSpec = TemplateSpec<crate::kinds::templates::FeedbackConstraints>;

/// A `kind: Integration` document: the calling user's integration with one
/// model provider. Secret fields (`token`, ...) must be environment references
/// such as `${OPENAI_API_KEY}`: a literal secret in a file is refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IntegrationSpec {
    /// Re-send the secrets on every apply (they cannot be read back, so a
    /// changed secret is otherwise invisible). `--rotate-secrets` does the same
    /// for every integration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotate_secrets: Option<bool>,
    /// With `provider: custom` only: the name of one of the caller's named
    /// custom integrations (PUT `/v2/integrations/custom/{name}`), a slug of
    /// letters, digits, `.`, `_` and `-`. Left out: the caller's one custom
    /// integration.
    ///
    /// The service returns neither the settings of a named custom integration
    /// nor offers a way to delete one: evalctl creates it when the
    /// integration listing does not show it, and otherwise sends it again
    /// only with `rotate_secrets: true` or `--rotate-secrets` (a change to its
    /// settings cannot be seen, so it is not drift); removing the document
    /// leaves it in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = CUSTOM_NAME_PATTERN))]
    pub name: Option<String>,
    /// The provider and its fields. Strings that take a value from the
    /// environment (`${NAME}` outside the secret fields) are kept as written:
    /// `apply` expands them at the last moment, and [`IntegrationSpec::env`]
    /// says which they are.
    #[serde(flatten)]
    pub config: IntegrationCreate<EnvRef>,
    /// Which strings of `config` are kept as written, and what the plan may
    /// know of their values (a fingerprint, never the value). Filled by the
    /// loader; empty for a spec built otherwise (e.g. by export).
    #[serde(skip)]
    #[schemars(skip)]
    pub env: EnvFields,
}

/// The strings of an Integration document's fields that are kept as written
/// (see [`IntegrationSpec::config`]), by JSON pointer in the document (keys
/// escaped as in [`crate::manifest::yaml::escape_token`]).
///
/// In an Integration document every value taken from the environment is a
/// secret: plans, saved plans, exports and logs show the `${NAME}` reference,
/// and a change of the value is seen by comparing fingerprints.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct EnvFields {
    by_pointer: std::collections::BTreeMap<String, EnvField>,
}

/// One string of [`EnvFields`].
#[derive(Clone, PartialEq, Eq)]
pub enum EnvField {
    /// The string takes (part of) its value from the environment.
    FromEnv {
        /// The fingerprint of the expanded value
        /// ([`crate::api::fingerprint::fingerprint`] of the JSON string),
        /// `None` when a variable it refers to is not set (the value is then
        /// unknown until `apply`, which needs it).
        fingerprint: Option<String>,
    },
    /// The string refers to no variable but writes a literal `${` as `$${`:
    /// this is its text (not a secret).
    Escaped {
        /// The text with `$${` read as `${`.
        text: String,
    },
}

impl EnvFields {
    /// Records the string at `pointer`.
    pub fn insert(&mut self, pointer: String, field: EnvField) {
        self.by_pointer.insert(pointer, field);
    }

    /// The string at `pointer`, when it is kept as written.
    pub fn get(&self, pointer: &str) -> Option<&EnvField> {
        self.by_pointer.get(pointer)
    }

    /// The strings kept as written, by pointer.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &EnvField)> {
        self.by_pointer.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Whether no string is kept as written.
    pub fn is_empty(&self) -> bool {
        self.by_pointer.is_empty()
    }
}

/// Shows the pointers and whether each value is known, never a fingerprint:
/// a fingerprint of a short secret could be searched for.
impl std::fmt::Debug for EnvFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.by_pointer.iter().map(|(k, v)| {
                let shown = match v {
                    EnvField::FromEnv {
                        fingerprint: Some(_),
                    } => "from the environment",
                    EnvField::FromEnv { fingerprint: None } => "from the environment (unset)",
                    EnvField::Escaped { .. } => "escaped",
                };
                (k, shown)
            }))
            .finish()
    }
}

impl std::fmt::Debug for EnvField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EnvField::FromEnv { fingerprint } => f
                .debug_struct("FromEnv")
                .field("known", &fingerprint.is_some())
                .finish(),
            EnvField::Escaped { text } => f.debug_struct("Escaped").field("text", text).finish(),
        }
    }
}

/// Pattern of the name of a named custom integration (a path segment).
pub const CUSTOM_NAME_PATTERN: &str = r"^[A-Za-z0-9][A-Za-z0-9._-]*$";

/// Pattern of a colour (`color` of a dashboard section): `#RRGGBB`, as the service's
/// reference declares it (the schema takes it from there; a test keeps the two equal).
pub const COLOR_PATTERN: &str = r"^#[0-9A-Fa-f]{6}$";

/// A reference to an environment variable, written `${NAME}`: how secrets
/// appear in manifests and saved plans. The value is read at apply time.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EnvRef {
    name: String,
}

impl EnvRef {
    /// Pattern of a reference.
    pub const PATTERN: &'static str = r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$";

    /// A reference to the variable `name`.
    pub fn new(name: impl Into<String>) -> Result<Self, EnvRefError> {
        let name = name.into();
        if is_env_name(&name) {
            Ok(EnvRef { name })
        } else {
            Err(EnvRefError::InvalidName { name })
        }
    }

    /// The variable's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// Why a text is not an [`EnvRef`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvRefError {
    /// The variable name is not letters, digits and `_` (not starting with a
    /// digit). A name is never a secret, so it is quoted.
    #[error("`{name}` is not a valid environment variable name")]
    InvalidName {
        /// The refused name.
        name: String,
    },
    /// The text is not exactly one `${NAME}` reference. The text itself is
    /// not kept: it may be a literal secret.
    #[error(
        "a secret must be an environment reference like `${{OPENAI_API_KEY}}`, not a literal value"
    )]
    NotAReference,
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

impl TryFrom<String> for EnvRef {
    type Error = EnvRefError;
    fn try_from(s: String) -> Result<Self, Self::Error> {
        match s.strip_prefix("${").and_then(|rest| rest.strip_suffix('}')) {
            Some(name) if is_env_name(name) => Ok(EnvRef {
                name: name.to_owned(),
            }),
            _ => Err(EnvRefError::NotAReference),
        }
    }
}

impl From<EnvRef> for String {
    fn from(r: EnvRef) -> String {
        format!("${{{}}}", r.name)
    }
}

impl std::fmt::Display for EnvRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "${{{}}}", self.name)
    }
}

impl JsonSchema for EnvRef {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EnvRef".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": EnvRef::PATTERN,
            "description": "A secret, written as a reference to an environment variable: `${NAME}`. Literal secrets are refused.",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_refs_accept_references_and_refuse_literals() {
        let r: EnvRef = serde_json::from_str("\"${OPENAI_API_KEY}\"").unwrap();
        assert_eq!(r.name(), "OPENAI_API_KEY");
        assert_eq!(serde_json::to_string(&r).unwrap(), "\"${OPENAI_API_KEY}\"");
        let err = serde_json::from_str::<EnvRef>("\"sk-live-abc\"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("environment reference"), "{err}");
        assert!(
            !err.contains("sk-live-abc"),
            "the refused literal is not echoed: {err}"
        );
        assert!(serde_json::from_str::<EnvRef>("\"${1BAD}\"").is_err());
        assert_eq!(
            EnvRef::new("1BAD"),
            Err(EnvRefError::InvalidName {
                name: "1BAD".into()
            })
        );
        assert_eq!(
            EnvRef::try_from("sk-live-abc".to_owned()),
            Err(EnvRefError::NotAReference)
        );
        assert_eq!(
            EnvRef::new("OK_1").map(|r| r.to_string()),
            Ok("${OK_1}".into())
        );
    }

    #[test]
    fn integration_spec_reads_provider_and_fields_flat() {
        let spec: IntegrationSpec = serde_json::from_value(serde_json::json!({
            "provider": "openai", "organization_id": "org-1", "token": "${OPENAI_API_KEY}",
            "rotate_secrets": true
        }))
        .unwrap();
        assert_eq!(spec.name, None);
        assert!(spec.env.is_empty());
        assert_eq!(spec.rotate_secrets, Some(true));
        assert_eq!(
            spec.config.provider(),
            crate::api::IntegrationProvider::Openai
        );
    }
}
