//! The records of the sandbox's [`State`], as they are stored (and written to
//! fixture and `--state` files). Wire shapes are built from them by the
//! resource modules; where a record is exactly a wire type of `crate::api`,
//! that type is used.
//!
//! Optional fields default when absent, so a hand-written fixture file only
//! needs what it cares about.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Credential;
use crate::api::{
    AuthMethod, InputType, IntegrationProvider, MetricSettingsResponse, ModelType,
    MultimodalCapability, OutputType, ProjectType, RollUpMethod, ScorerDefaults, ScorerType,
    ScorerVersion, Section, UserInfo, UserRole, Widget,
};
use crate::kinds::templates::{AnnotationConstraints, FeedbackConstraints, Template};
use crate::sandbox::fingerprint::new_id;
use crate::sandbox::kinds::KindRecords;
use crate::sandbox::persist::Records;

/// Everything the sandbox holds. See the module docs of `store`. Each
/// collection is a [`Records`]: a `Vec` whose elements are rows of a table
/// of the state database, noting which rows a write touched, so the state
/// file saves only those (a new collection is also listed in
/// `persist::tables`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// Salt of every fingerprint in this state (credentials, tokens).
    #[serde(default = "new_id")]
    pub salt: String,
    /// The organization every user belongs to.
    pub organization: Organization,
    /// Users, with their (sealed) credentials.
    #[serde(default)]
    pub users: Records<UserRecord>,
    /// Projects.
    #[serde(default)]
    pub projects: Records<ProjectRecord>,
    /// Log streams of all projects.
    #[serde(default)]
    pub log_streams: Records<LogStreamRecord>,
    /// Experiments of all projects.
    #[serde(default)]
    pub experiments: Records<ExperimentRecord>,
    /// The scorer catalog: presets and custom scorers, with their versions.
    #[serde(default)]
    pub scorers: Records<ScorerRecord>,
    /// Trends dashboards of all log streams.
    #[serde(default)]
    pub dashboards: Records<DashboardRecord>,
    /// Annotation templates of all projects.
    #[serde(default)]
    pub annotation_templates: Records<TemplateRecord<AnnotationConstraints>>,
    /// Feedback templates of all projects.
    #[serde(default)]
    pub feedback_templates: Records<TemplateRecord<FeedbackConstraints>>,
    /// Integrations of all users (no secret values).
    #[serde(default)]
    pub integrations: Records<IntegrationRecord>,
    /// Favorited dashboards.
    #[serde(default)]
    pub favorites: Records<FavoriteRecord>,
    /// The collections the kinds add (code validations, prompt templates,
    /// Protect stages: see the sandbox's kinds registry), each a top-level
    /// field of the state file as the others.
    #[serde(flatten)]
    pub kinds: KindRecords,
}

/// The organization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Organization {
    /// Id (uuid4).
    pub id: String,
    /// Name.
    pub name: String,
}

/// A user of the organization.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UserRecord {
    /// Id (uuid4).
    pub id: String,
    /// Email, also the login name.
    pub email: String,
    /// First name.
    #[serde(default)]
    pub first_name: String,
    /// Last name.
    #[serde(default)]
    pub last_name: String,
    /// Role: `read_only` users get 403 on writes.
    #[serde(default = "default_role")]
    pub role: UserRole,
    /// How the user signs in.
    #[serde(default = "default_auth_method")]
    pub auth_method: AuthMethod,
    /// Whether the email is verified.
    #[serde(default = "yes")]
    pub email_is_verified: bool,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// Password for `/login` and HTTP Basic, if the user has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<Credential>,
    /// API keys for the key header.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_keys: Vec<Credential>,
}

fn default_role() -> UserRole {
    UserRole::User
}

fn default_auth_method() -> AuthMethod {
    AuthMethod::Email
}

fn yes() -> bool {
    true
}

impl UserRecord {
    /// The `created_by_user` summary of this user.
    pub fn info(&self) -> UserInfo {
        UserInfo {
            id: self.id.clone(),
            email: self.email.clone(),
            first_name: Some(self.first_name.clone()),
            last_name: Some(self.last_name.clone()),
        }
    }
}

/// A project.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProjectRecord {
    /// Id (uuid4).
    pub id: String,
    /// Name (unique in the organization).
    pub name: String,
    /// Creator's id.
    pub created_by: String,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Labels (`sample`).
    #[serde(default)]
    pub labels: Vec<String>,
    /// Project type.
    #[serde(default = "default_project_type", rename = "type")]
    pub project_type: ProjectType,
    /// Users who bookmarked the project.
    #[serde(default)]
    pub bookmarked_by: Vec<String>,
}

fn default_project_type() -> ProjectType {
    ProjectType::GenAi
}

/// A log stream, with its metric settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LogStreamRecord {
    /// Id (uuid4).
    pub id: String,
    /// Project.
    pub project_id: String,
    /// Name (unique in the project).
    pub name: String,
    /// Creator's id.
    #[serde(default)]
    pub created_by: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// Number of spans logged.
    #[serde(default)]
    pub num_spans: i64,
    /// Number of traces logged.
    #[serde(default)]
    pub num_traces: i64,
    /// Whether the user created sessions.
    #[serde(default)]
    pub has_user_created_sessions: bool,
    /// Stored metric settings (never-set segment filters are `None`).
    #[serde(default)]
    pub metric_settings: MetricSettingsResponse,
}

/// An experiment, with its metric settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExperimentRecord {
    /// Id (uuid4).
    pub id: String,
    /// Project.
    pub project_id: String,
    /// Name (unique in the project).
    pub name: String,
    /// Creator's id.
    #[serde(default)]
    pub created_by: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// Number of spans.
    #[serde(default)]
    pub num_spans: i64,
    /// Number of traces.
    #[serde(default)]
    pub num_traces: i64,
    /// Task type (one of the reference's TaskType integers).
    #[serde(default = "default_task_type")]
    pub task_type: i64,
    /// Experiment group id.
    #[serde(default)]
    pub experiment_group_id: Option<String>,
    /// Experiment group name.
    #[serde(default)]
    pub experiment_group_name: Option<String>,
    /// Stored metric settings.
    #[serde(default)]
    pub metric_settings: MetricSettingsResponse,
}

fn default_task_type() -> i64 {
    16
}

/// A scorer of the catalog, with its versions (oldest first).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ScorerRecord {
    /// Id (uuid4).
    pub id: String,
    /// Name: a ScorerName preset or a custom scorer's name.
    pub name: String,
    /// Kind.
    pub scorer_type: ScorerType,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Display label.
    #[serde(default)]
    pub label: Option<String>,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Catalog default: model tier.
    #[serde(default)]
    pub model_type: Option<ModelType>,
    /// Catalog default: output type.
    #[serde(default)]
    pub output_type: Option<OutputType>,
    /// Catalog default: input type.
    #[serde(default)]
    pub input_type: Option<InputType>,
    /// Catalog default: roll-up method.
    #[serde(default)]
    pub roll_up_method: Option<RollUpMethod>,
    /// Multimodal capabilities.
    #[serde(default)]
    pub multimodal_capabilities: Option<Vec<MultimodalCapability>>,
    /// Node types the scorer can score.
    #[serde(default)]
    pub scoreable_node_types: Option<Vec<String>>,
    /// Configuration defaults.
    #[serde(default)]
    pub defaults: Option<ScorerDefaults>,
    /// Whether the scorer is global (presets are).
    #[serde(default)]
    pub is_global: bool,
    /// Whether the scorer is deprecated.
    #[serde(default)]
    pub deprecated: Option<bool>,
    /// Whether ground truth is used.
    #[serde(default)]
    pub ground_truth: Option<bool>,
    /// Creator (none for presets).
    #[serde(default)]
    pub created_by: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// Versions, oldest first; the last is the latest.
    #[serde(default)]
    pub versions: Vec<VersionRecord>,
    /// The default version, when not the latest.
    #[serde(default)]
    pub default_version_id: Option<String>,
    /// The projects a scoped (not global) custom scorer is shared with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub project_ids: Vec<String>,
}

impl ScorerRecord {
    /// The latest version.
    pub fn latest(&self) -> Option<&VersionRecord> {
        self.versions.iter().max_by_key(|v| v.version.version)
    }
}

/// A scorer version with its bookkeeping.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VersionRecord {
    /// The version (`BaseScorerVersionDB`).
    pub version: ScorerVersion,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// Creator.
    #[serde(default)]
    pub created_by: Option<String>,
    /// The Python file of a code scorer's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// A trends dashboard of a log stream.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DashboardRecord {
    /// Id (uuid4).
    pub id: String,
    /// Project.
    pub project_id: String,
    /// Log stream.
    pub log_stream_id: String,
    /// Name.
    pub name: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether this is the log stream's default dashboard (one per log stream).
    #[serde(default)]
    pub is_default: bool,
    /// `project` or `user`.
    #[serde(default = "default_visibility")]
    pub visibility: String,
    /// Creator.
    #[serde(default)]
    pub created_by: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// Top-level widgets (in no section).
    #[serde(default)]
    pub widgets: Vec<Widget>,
    /// Sections, in order (at most 50).
    #[serde(default)]
    pub sections: Vec<Section>,
    /// Layout of the widgets as last sent: widget id to a list of integers.
    #[serde(default)]
    pub layout_map: BTreeMap<String, Vec<i64>>,
    /// Bucket width in minutes.
    #[serde(default = "default_interval")]
    pub interval_mins: i64,
    /// Start of the time range (epoch seconds).
    #[serde(default)]
    pub start_time: i64,
    /// End of the time range (epoch seconds).
    #[serde(default)]
    pub end_time: i64,
    /// Relative time range.
    #[serde(default)]
    pub relative_time: Option<String>,
    /// The column grouped by.
    #[serde(default)]
    pub group_by: Option<String>,
    /// The filter tree, as returned (every field of each leaf present).
    #[serde(default)]
    pub filter_tree: Option<serde_json::Value>,
}

fn default_visibility() -> String {
    "project".to_owned()
}

fn default_interval() -> i64 {
    60
}

/// A template of a project.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TemplateRecord<C> {
    /// The project holding it.
    pub project_id: String,
    /// The template as the service returns it.
    pub template: Template<C>,
}

/// An integration of a user. Holds no secret: only a fingerprint of the
/// secret fields as last sent, and when they were sent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IntegrationRecord {
    /// Id (uuid4).
    pub id: String,
    /// Owner.
    pub user_id: String,
    /// Provider.
    pub provider: IntegrationProvider,
    /// Name (the provider's name).
    pub name: String,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// The non-secret fields of the last create/update body, with the
    /// create schema's defaults filled in (sealed in the state file: see
    /// `persist::seal`).
    #[serde(default)]
    pub fields: serde_json::Map<String, serde_json::Value>,
    /// Salted fingerprint of the secret fields as last sent.
    pub secret_fingerprint: String,
    /// When the secret fields were last sent.
    pub secret_updated_at: String,
    /// Whether selected.
    #[serde(default)]
    pub is_selected: bool,
    /// Whether disabled.
    #[serde(default)]
    pub is_disabled: bool,
}

/// A favorite: the dashboard of a log stream that a user (or, with no user,
/// the whole project) favorited. At most one per log stream and user, and
/// one per log stream for the project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FavoriteRecord {
    /// Log stream.
    pub log_stream_id: String,
    /// Dashboard.
    pub dashboard_id: String,
    /// The user, or `None` for a project favorite.
    #[serde(default)]
    pub user_id: Option<String>,
}
