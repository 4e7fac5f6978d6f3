//! The manifest types of the two repo-wide document kinds: `kind: Policy` (rules in CEL,
//! several documents per repo) and `kind: Settings` (one per repo: the mass-change
//! guard's thresholds). They derive `JsonSchema` like the Project and Integration types:
//! the manifest schema ([`crate::manifest::schema`]) and the loader read them from here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A `kind: Policy` document: rules the manifests must follow, written in CEL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    /// The policy's name, shown with each violation of its rules.
    #[schemars(length(min = 1, max = 255))]
    pub name: String,
    /// What the policy is for (not used by evalctl).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The rules, at least one; names unique within the policy.
    #[schemars(length(min = 1))]
    pub rules: Vec<RuleSpec>,
}

/// One rule: a CEL expression evaluated on each object of its target, which must be true.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// The rule's name, unique within its policy.
    #[schemars(length(min = 1, max = 255))]
    pub name: String,
    /// Which objects the rule is evaluated on; docs/policies.md lists the variables
    /// each target sees.
    pub target: Target,
    /// A CEL expression that is `true` for an object that follows the rule, e.g.
    /// `scorer.num_judges <= 3`. At most 4,096 characters, brackets nested at most 64 deep.
    #[schemars(length(min = 1, max = 4096))]
    pub expression: String,
    /// What a violation says, shown at the object that breaks the rule.
    #[schemars(length(min = 1))]
    pub message: String,
    /// `error` (default): a violation fails validate, plan, apply and drift (exit
    /// 65). `warning`: it is reported and nothing fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<RuleSeverity>,
}

impl RuleSpec {
    /// The rule's severity, `error` when left out.
    #[must_use]
    pub fn severity(&self) -> RuleSeverity {
        self.severity.unwrap_or(RuleSeverity::Error)
    }
}

/// The objects a rule is evaluated on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// Each `kind: Project` document (variable `project`).
    Projects,
    /// Each log stream of each project (`log_stream`, `project`).
    LogStreams,
    /// Each experiment of each project (`experiment`, `project`).
    Experiments,
    /// Each scorer entry of the metric settings of each log stream and experiment
    /// (`scorer`, `run`, `project`, and `log_stream` or `experiment`).
    Scorers,
    /// Each `kind: Integration` document (`integration`).
    Integrations,
    /// Each annotation and feedback template of each project (`template`, `project`).
    Templates,
    /// The whole repo's judge-call forecast (`forecast`), evaluated once per plan when
    /// the plan has a forecast; never by `validate`, which reads no traffic.
    Forecast,
}

impl Target {
    /// The name written in `target`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Projects => "projects",
            Target::LogStreams => "log_streams",
            Target::Experiments => "experiments",
            Target::Scorers => "scorers",
            Target::Integrations => "integrations",
            Target::Templates => "templates",
            Target::Forecast => "forecast",
        }
    }

    /// The variables an expression of this target may refer to.
    #[must_use]
    pub fn variables(self) -> &'static [&'static str] {
        match self {
            Target::Projects => &["project"],
            Target::LogStreams => &["log_stream", "project"],
            Target::Experiments => &["experiment", "project"],
            Target::Scorers => &["scorer", "run", "project", "log_stream", "experiment"],
            Target::Integrations => &["integration"],
            Target::Templates => &["template", "project"],
            Target::Forecast => &["forecast"],
        }
    }
}

/// How a rule's violations count.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RuleSeverity {
    /// Fails validate, plan, apply and drift (exit 65).
    Error,
    /// Reported; nothing fails.
    Warning,
}

/// A `kind: Settings` document: settings of the whole config repo. At most one per repo.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingsSpec {
    /// The mass-change guard's thresholds (docs/commands.md#mass-changes). Looser
    /// than the defaults (a larger `max_share`, a larger `min_objects`), plan warns,
    /// naming this file and the new limit, every time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<GuardSettings>,
    /// The projects this repo owns beyond those it declares: names, or patterns with `*`
    /// (`team-a-*`). A live project matching one that no `kind: Project` document
    /// declares is deleted, with its log streams, experiments and traces, by
    /// `--prune --allow-destroy` (docs/projects.md). Absent: no project is ever deleted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prune_projects: Vec<ProjectPattern>,
}

/// A project name, or a pattern where `*` stands for any characters; at least one
/// character is not `*` (a repo never owns every project of an organization).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct ProjectPattern(#[schemars(length(min = 1), regex(pattern = r"[^*]"))] pub String);

/// The mass-change guard's thresholds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GuardSettings {
    /// The largest share of a collection that a plan may delete or replace without
    /// `--allow-mass-changes`, from 0 to 1 (default 0.25). Held in whole percent:
    /// 0.255 is 25%.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub max_share: Option<f64>,
    /// Collections holding fewer objects are never guarded (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1_000_000))]
    pub min_objects: Option<u64>,
}
