//! The records of the sandbox's [`State`], as they are stored (and written to
//! fixture and `--state` files). Wire shapes are built from them by the
//! resource modules; where a record is exactly a wire type of `crate::api`,
//! that type is used.
//!
//! Optional fields default when absent, so a hand-written fixture file only
//! needs what it cares about.

use serde::{Deserialize, Serialize};

use super::super::fingerprint::{constant_time_eq, fingerprint, new_id};
use crate::api::{
    AnnotationConstraints, AuthMethod, FeedbackConstraints, InputType, IntegrationProvider,
    MetricSettingsResponse, ModelType, MultimodalCapability, OutputType, ProjectType, RollUpMethod,
    ScorerDefaults, ScorerType, ScorerVersion, Secret, Section, Template, UserInfo, UserRole,
    Widget,
};

/// Everything the sandbox holds. See the module docs of `store`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// Salt of every fingerprint in this state (credentials, tokens).
    #[serde(default = "new_id")]
    pub salt: String,
    /// The organization every user belongs to.
    pub organization: Organization,
    /// Users, with their (sealed) credentials.
    #[serde(default)]
    pub users: Vec<UserRecord>,
    /// Projects.
    #[serde(default)]
    pub projects: Vec<ProjectRecord>,
    /// Log streams of all projects.
    #[serde(default)]
    pub log_streams: Vec<LogStreamRecord>,
    /// Experiments of all projects.
    #[serde(default)]
    pub experiments: Vec<ExperimentRecord>,
    /// The scorer catalog: presets and custom scorers, with their versions.
    #[serde(default)]
    pub scorers: Vec<ScorerRecord>,
    /// Trends dashboards of all log streams.
    #[serde(default)]
    pub dashboards: Vec<DashboardRecord>,
    /// Annotation templates of all projects.
    #[serde(default)]
    pub annotation_templates: Vec<TemplateRecord<AnnotationConstraints>>,
    /// Feedback templates of all projects.
    #[serde(default)]
    pub feedback_templates: Vec<TemplateRecord<FeedbackConstraints>>,
    /// Integrations of all users (no secret values).
    #[serde(default)]
    pub integrations: Vec<IntegrationRecord>,
    /// Favorited dashboards.
    #[serde(default)]
    pub favorites: Vec<FavoriteRecord>,
}

/// The organization.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Organization {
    /// Id (uuid4).
    pub id: String,
    /// Name.
    pub name: String,
}

/// A credential of a user (password or API key): a plain value only as read
/// from a hand-written fixture, sealed into a salted fingerprint as soon as
/// the state is loaded. A plain credential refuses to serialize, so no file
/// the sandbox writes can hold one.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// As written in a fixture file (`"password": "demo-password"`).
    Plain(Secret),
    /// `{"sha256": "<hex>"}`: the salted fingerprint.
    Sealed(String),
}

impl Credential {
    /// Replaces a plain value by its fingerprint under `salt`.
    pub fn seal(&mut self, salt: &str) {
        if let Credential::Plain(secret) = self {
            *self = Credential::Sealed(fingerprint(salt, secret.expose()));
        }
    }

    /// Whether `presented` is this credential.
    pub fn matches(&self, salt: &str, presented: &str) -> bool {
        match self {
            Credential::Plain(secret) => constant_time_eq(secret.expose(), presented),
            Credential::Sealed(fp) => constant_time_eq(fp, &fingerprint(salt, presented)),
        }
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credential::Plain(_) => f.write_str("Credential(plain, redacted)"),
            Credential::Sealed(_) => f.write_str("Credential(sealed)"),
        }
    }
}

impl Serialize for Credential {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Credential::Sealed(fp) => {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry("sha256", fp)?;
                map.end()
            }
            Credential::Plain(_) => Err(serde::ser::Error::custom(
                "refusing to write an unsealed credential",
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Credential {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Plain(String),
            Sealed { sha256: String },
        }
        Ok(match Wire::deserialize(d)? {
            Wire::Plain(s) => Credential::Plain(Secret::new(s)),
            Wire::Sealed { sha256 } => Credential::Sealed(sha256),
        })
    }
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
    /// create schema's defaults filled in.
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

impl State {
    /// Seals every plain credential into a fingerprint. Called on every
    /// state the sandbox loads, before anything can be written.
    pub fn seal(&mut self) {
        let salt = self.salt.clone();
        for user in &mut self.users {
            if let Some(p) = &mut user.password {
                p.seal(&salt);
            }
            for k in &mut user.api_keys {
                k.seal(&salt);
            }
        }
    }

    /// A user by id.
    pub fn user(&self, id: &str) -> Option<&UserRecord> {
        self.users.iter().find(|u| u.id == id)
    }

    /// The `created_by_user` summary of a user id, if the user exists.
    pub fn user_info(&self, id: Option<&str>) -> Option<UserInfo> {
        id.and_then(|id| self.user(id)).map(UserRecord::info)
    }

    /// A project by id.
    pub fn project(&self, id: &str) -> Option<&ProjectRecord> {
        self.projects.iter().find(|p| p.id == id)
    }

    /// The project, or 404 `Project not found`.
    pub fn require_project(&self, id: &str) -> Result<&ProjectRecord, super::ApiError> {
        self.project(id)
            .ok_or_else(|| super::ApiError::not_found("Project"))
    }

    /// A log stream of a project.
    pub fn log_stream(&self, project_id: &str, id: &str) -> Option<&LogStreamRecord> {
        self.log_streams
            .iter()
            .find(|l| l.id == id && l.project_id == project_id)
    }

    /// The log stream (after its project), or 404.
    pub fn require_log_stream(
        &self,
        project_id: &str,
        id: &str,
    ) -> Result<&LogStreamRecord, super::ApiError> {
        self.require_project(project_id)?;
        self.log_stream(project_id, id)
            .ok_or_else(|| super::ApiError::not_found("Log stream"))
    }

    /// An experiment of a project.
    pub fn experiment(&self, project_id: &str, id: &str) -> Option<&ExperimentRecord> {
        self.experiments
            .iter()
            .find(|e| e.id == id && e.project_id == project_id)
    }

    /// The experiment (after its project), or 404.
    pub fn require_experiment(
        &self,
        project_id: &str,
        id: &str,
    ) -> Result<&ExperimentRecord, super::ApiError> {
        self.require_project(project_id)?;
        self.experiment(project_id, id)
            .ok_or_else(|| super::ApiError::not_found("Experiment"))
    }

    /// A scorer of the catalog.
    pub fn scorer(&self, id: &str) -> Option<&ScorerRecord> {
        self.scorers.iter().find(|s| s.id == id)
    }

    /// Adds a user (for tests and fixtures) and returns its id. The
    /// credentials are sealed at once.
    pub fn add_user(
        &mut self,
        email: &str,
        role: UserRole,
        password: Option<&str>,
        api_key: Option<&str>,
    ) -> String {
        let id = new_id();
        let now = super::now();
        let salt = self.salt.clone();
        let seal = |s: &str| Credential::Sealed(fingerprint(&salt, s));
        self.users.push(UserRecord {
            id: id.clone(),
            email: email.to_owned(),
            first_name: String::new(),
            last_name: String::new(),
            role,
            auth_method: AuthMethod::Email,
            email_is_verified: true,
            created_at: now.clone(),
            updated_at: now,
            password: password.map(seal),
            api_keys: api_key.map(seal).into_iter().collect(),
        });
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_seal_and_never_serialize_plain() {
        let mut c: Credential = serde_json::from_str("\"hunter2\"").unwrap();
        assert!(serde_json::to_string(&c).is_err());
        assert!(!format!("{c:?}").contains("hunter2"));
        assert!(c.matches("salt", "hunter2"));
        c.seal("salt");
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.starts_with("{\"sha256\":\"") && !json.contains("hunter2"));
        assert!(c.matches("salt", "hunter2"));
        assert!(!c.matches("salt", "hunter3"));
        let back: Credential = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
    }
}
