//! The Plan: what would change, why, and the exact calls that make it so.
//!
//! A plan is a value: `plan()` computes it without asking the service
//! (past 1,024 changes they wait in a temporary file: [`Changes`]), renderers show it,
//! `--out` saves it (as JSON, format [`PLAN_FORMAT_VERSION`]) and `apply`
//! executes it. It never holds a secret: integration secrets appear only as
//! `${ENV}` references, read at apply time.

use serde::{Deserialize, Serialize};

use super::address::{Address, RunKind};
use super::attribution::Attribution;
use super::changes::Changes;
use super::json_text::JsonText;
use crate::api::{
    Compact, IntegrationCreate, MetricSettingsRequest, SectionCreateRequest, SectionUpdateRequest,
    SharedTexts, TrendsDashboardDuplicateRequest, TrendsDashboardUpdateRequest, Visibility,
    WidgetCreateRequest, WidgetUpdateRequest,
};
use crate::manifest::types::EnvRef;

/// Version of the saved-plan / `-o json` format. Bumped on any incompatible change.
/// 2: changes hold field-level differences only (no whole before/after
/// objects); blast radius and people are carried beside the plan.
pub const PLAN_FORMAT_VERSION: u32 = 2;

/// A computed plan.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// [`PLAN_FORMAT_VERSION`].
    pub format_version: u32,
    /// The changes, ordered by address (held in memory while few, in a
    /// temporary file once many: [`Changes`]).
    pub changes: Changes,
    /// Things worth knowing that are not changes (unmanaged objects, ...), ordered.
    pub notes: Vec<Note>,
    /// The collections it deletes or replaces more of than the guard allows
    /// ([`super::guard`]): `apply` refuses the plan unless told
    /// `--allow-mass-changes`. Ordered; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mass_changes: Vec<super::MassChange>,
    /// The judge-call forecast of the runs whose metric settings change
    /// ([`super::forecast`]; versioned on its own); absent when none do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<super::Forecast>,
}

impl Plan {
    /// An empty plan.
    pub fn empty() -> Self {
        Plan {
            format_version: PLAN_FORMAT_VERSION,
            changes: Changes::new(),
            notes: Vec::new(),
            mass_changes: Vec::new(),
            forecast: None,
        }
    }

    /// Whether the plan changes nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Drops what only the printed plan shows: its notes, its judge-call
    /// forecast (one entry per run whose metric settings change: the
    /// largest part of a plan that grows with the organization), and of
    /// each change held in memory its field differences, reason, live
    /// fingerprint, warnings and creator. Once the plan is printed, what is
    /// left to do with it (apply it, confirm it against the manifests,
    /// report outcomes) needs its changes' addresses and operations only.
    pub fn release_printed(&mut self) {
        self.changes.release_printed();
        self.notes = Vec::new();
        self.forecast = None;
    }

    /// Drops the changes, once applied, for a report that shows the
    /// outcomes only (a text report); the notes stay.
    pub fn release_changes(&mut self) {
        self.changes = Changes::new();
    }

    /// How many changes of each action.
    pub fn summary(&self) -> Summary {
        self.changes.summary()
    }
}

/// Counts of changes by action.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Summary {
    /// Objects to create.
    pub create: usize,
    /// Objects to update in place.
    pub update: usize,
    /// Objects to delete and create again.
    pub replace: usize,
    /// Objects to delete.
    pub delete: usize,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} to create, {} to update, {} to replace, {} to delete",
            self.create, self.update, self.replace, self.delete
        )
    }
}

/// What happens to an object.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// It does not exist and will be created (`+`).
    Create,
    /// It exists and will be changed in place (`~`).
    Update,
    /// It will be deleted and created again (`-/+`): the service cannot change it in place.
    Replace,
    /// It will be deleted (`-`); only with `--prune`.
    Delete,
}

impl Action {
    /// The symbol shown in text plans.
    pub fn symbol(self) -> &'static str {
        match self {
            Action::Create => "+",
            Action::Update => "~",
            Action::Replace => "-/+",
            Action::Delete => "-",
        }
    }

    /// The verb shown in text plans.
    pub fn verb(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Replace => "replace",
            Action::Delete => "delete",
        }
    }
}

/// One object's change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResourceChange {
    /// Which object.
    pub address: Address,
    /// What happens to it.
    pub action: Action,
    /// Why, in a sentence.
    pub reason: String,
    /// Field-level differences, in a stable order: the whole object (path
    /// `""`) for a create or a delete.
    pub fields: Vec<FieldChange>,
    /// Fingerprint of the live object as it was read (`absent` when it did
    /// not exist): `apply --plan` refuses when live moved since.
    pub live_fingerprint: String,
    /// The calls that make the change, in order.
    pub operations: Vec<Operation>,
    /// Warnings a reviewer must see (e.g. a replaced template loses its ratings).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Who created the live object: a user id as the service reports it
    /// (renderers show the person, when [`Enrichment::people`] knows them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// With `--base` (a three-way plan): whose change this is, the most
    /// pressing of its fields' attributions (conflict, then drift, then
    /// pending, then proposed). Absent from a two-way plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
}

impl ResourceChange {
    /// Holds its JSON texts (field values, metric-settings bodies) once
    /// with equal ones `texts` has: a plan of 10,000 runs given the same
    /// scorers and filters repeats the same few texts thousands of times.
    pub fn share_texts(&mut self, texts: &mut SharedTexts) {
        for field in &mut self.fields {
            for text in [&mut field.before, &mut field.after].into_iter().flatten() {
                text.share(texts);
            }
        }
        for operation in &mut self.operations {
            if let Operation::PatchMetricSettings { body, .. } = operation {
                body.share(texts);
            }
        }
    }
}

/// One field's difference. Paths look like `scorers[correctness].num_judges`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FieldChange {
    /// Path within the object.
    pub path: String,
    // Both values are held as compact JSON text (a plan holds tens of
    // thousands); they serialize as the values.
    /// Value before (`None`: absent).
    pub before: Option<JsonText>,
    /// Value after (`None`: absent).
    pub after: Option<JsonText>,
    /// With `--base`: whose change this field is. Absent from a two-way plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    /// For a [`Attribution::Conflict`]: the base's value of the field
    /// (`null` when the base does not have it). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<serde_json::Value>,
}

impl FieldChange {
    /// A difference at `path`, not attributed.
    pub fn new(
        path: impl Into<String>,
        before: Option<serde_json::Value>,
        after: Option<serde_json::Value>,
    ) -> Self {
        FieldChange::of_refs(path, before.as_ref(), after.as_ref())
    }

    /// Like [`FieldChange::new`], from borrowed values.
    pub fn of_refs(
        path: impl Into<String>,
        before: Option<&serde_json::Value>,
        after: Option<&serde_json::Value>,
    ) -> Self {
        FieldChange {
            path: path.into(),
            before: before.map(JsonText::new),
            after: after.map(JsonText::new),
            attribution: None,
            base: None,
        }
    }

    /// The value before, parsed.
    pub fn before_value(&self) -> Option<serde_json::Value> {
        self.before.as_ref().map(JsonText::value)
    }

    /// The value after, parsed.
    pub fn after_value(&self) -> Option<serde_json::Value> {
        self.after.as_ref().map(JsonText::value)
    }
}

/// What reviewers want beside the changes, read after planning as its own
/// value (a plan is never changed after it is made): who else uses the
/// scorer versions a change touches, and who the people named in it are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Enrichment {
    /// Per change address, the other projects using an affected scorer version.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub blast_radius: std::collections::BTreeMap<String, Vec<BlastRadius>>,
    /// User id to `Name <email>`, for `created_by` fields.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub people: std::collections::BTreeMap<String, String>,
}

impl Enrichment {
    /// The blast radius of the change at `address`.
    pub fn blast_radius_of(&self, address: &Address) -> &[BlastRadius] {
        self.blast_radius
            .get(&address.to_string())
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The person behind a user id, else the id itself.
    pub fn person<'a>(&'a self, user_id: &'a str) -> &'a str {
        self.people.get(user_id).map_or(user_id, String::as_str)
    }
}

/// Projects affected by a change to a scorer version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BlastRadius {
    /// Scorer name.
    pub scorer: String,
    /// Scorer version id.
    pub scorer_version_id: String,
    /// Version number.
    pub version: i64,
    /// Names of the other projects using that version.
    pub projects: Vec<String>,
    /// Total count reported by the service.
    pub total_count: i64,
}

/// A run (log stream or experiment) by id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRef {
    /// Log stream or experiment.
    pub kind: RunKind,
    /// Its id.
    pub id: String,
}

/// The dashboard an operation is about: by id, or — for a dashboard this
/// apply creates, whose id a plan cannot know — by name, looked up when the
/// operation runs. Written as the id itself, or `{"named": NAME}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DashboardRef {
    /// By id.
    Id(String),
    /// The one dashboard of this name other than the default one.
    Named {
        /// Its name.
        named: String,
    },
}

/// An id.
impl From<&str> for DashboardRef {
    fn from(id: &str) -> Self {
        DashboardRef::Id(id.to_owned())
    }
}

/// An id.
impl From<&str> for SectionRef {
    fn from(id: &str) -> Self {
        SectionRef::Id(id.to_owned())
    }
}

/// The section an operation is about: by id, or — for a section this apply
/// creates, or one of a dashboard it creates — by name (the first section of
/// that name, the one a plan pairs with it), looked up when the operation
/// runs. Written as the id itself, or `{"named": NAME}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SectionRef {
    /// By id.
    Id(String),
    /// By name.
    Named {
        /// Its name.
        named: String,
    },
}

/// The widget an operation is about: by id, or — for a widget of a
/// dashboard this apply creates — by name within its section (or the top
/// level), looked up when the operation runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WidgetRef {
    /// By id.
    Id(String),
    /// By name.
    Named {
        /// Its name.
        named: String,
        /// The name of its section; `None`: the top level.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        section: Option<String>,
    },
}

/// Where a widget goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// The dashboard's top level.
    Top,
    /// A section.
    Section(SectionRef),
}

/// One API call of a change. Ids are resolved, except those of objects the
/// same apply creates (a [`DashboardRef`], [`SectionRef`] or [`WidgetRef`]
/// by name, looked up when the call is made); bodies are exactly what is
/// sent, except integration secrets, which are `${ENV}` references resolved
/// at apply, and a widget's `section_id`, filled from its placement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Operation {
    /// PATCH metric settings of a log stream (spec operation 1) or experiment (5).
    PatchMetricSettings {
        /// Project id.
        project_id: String,
        /// The run.
        run: RunRef,
        /// The body, held compact until it is sent.
        body: Compact<MetricSettingsRequest>,
    },
    /// POST a section (spec operation 3).
    CreateSection {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// The dashboard.
        dashboard_id: DashboardRef,
        /// The body.
        body: SectionCreateRequest,
    },
    /// PUT a section.
    UpdateSection {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// The dashboard.
        dashboard_id: DashboardRef,
        /// The section.
        section_id: SectionRef,
        /// The body.
        body: SectionUpdateRequest,
    },
    /// DELETE a section (and its widgets).
    DeleteSection {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// The dashboard.
        dashboard_id: DashboardRef,
        /// The section.
        section_id: SectionRef,
    },
    /// POST a widget.
    CreateWidget {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// The dashboard.
        dashboard_id: DashboardRef,
        /// Where it goes (its `section_id`).
        placement: Placement,
        /// The body, `section_id` left out (boxed, as every body larger
        /// than a section's: a plan holds tens of thousands of operations,
        /// each the size of the largest variant).
        body: Box<WidgetCreateRequest>,
    },
    /// PUT a widget; a new placement moves it (it keeps its id).
    UpdateWidget {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// The dashboard.
        dashboard_id: DashboardRef,
        /// The widget.
        widget: WidgetRef,
        /// Where it moves (`section_id`); `None`: it stays.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        move_to: Option<Placement>,
        /// The body, `section_id` left out (boxed).
        body: Box<WidgetUpdateRequest>,
    },
    /// DELETE a widget.
    DeleteWidget {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// The dashboard.
        dashboard_id: DashboardRef,
        /// The widget.
        widget: WidgetRef,
    },
    /// PUT a dashboard's settings, name or description (`.../trends`).
    UpdateDashboard {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// The dashboard.
        dashboard_id: DashboardRef,
        /// The body (boxed).
        body: Box<TrendsDashboardUpdateRequest>,
    },
    /// POST a copy of a dashboard: how a dashboard is created (the service
    /// has no other way), and half of changing its visibility.
    DuplicateDashboard {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// The dashboard copied.
        source: DashboardRef,
        /// The body.
        body: TrendsDashboardDuplicateRequest,
    },
    /// DELETE a dashboard with its sections and widgets.
    DeleteDashboard {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// The dashboard.
        dashboard_id: DashboardRef,
    },
    /// POST favorite (spec operation 10).
    Favorite {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// Dashboard id.
        dashboard_id: String,
        /// For the user or the project.
        visibility: Visibility,
    },
    /// DELETE favorite.
    Unfavorite {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// Which favorite to clear.
        visibility: Visibility,
    },
    /// PUT the calling user's integration (spec operation 4).
    PutIntegration {
        /// The body, secrets as `${ENV}` references (boxed: it is the largest variant).
        body: Box<IntegrationCreate<EnvRef>>,
    },
    /// PUT a named custom integration (`/v2/integrations/custom/{name}`).
    PutCustomIntegration {
        /// Its name.
        name: String,
        /// The custom provider's body, secrets as `${ENV}` references.
        body: Box<IntegrationCreate<EnvRef>>,
    },
    /// An operation of a kind that sends its own (`crate::kinds::KindOp`,
    /// one variant per kind): written as its own fields beside `op`.
    #[serde(untagged)]
    Kind(crate::kinds::KindOp),
}

impl Operation {
    /// The integration body the operation sends, if it sends one (its
    /// secrets as `${ENV}` references): what apply resolves and checks, and
    /// what renderers show as references.
    pub fn integration_body(&self) -> Option<&IntegrationCreate<EnvRef>> {
        match self {
            Operation::PutIntegration { body } | Operation::PutCustomIntegration { body, .. } => {
                Some(body)
            }
            _ => None,
        }
    }

    /// The environment variables the webhook URLs it sends are read from
    /// (a Protect stage's), at apply time.
    pub fn webhook_variables(&self) -> Vec<String> {
        match self {
            Operation::Kind(op) => op.webhook_variables(),
            _ => Vec::new(),
        }
    }
}

/// Something a reviewer should know that is not a change.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Note {
    /// The object it is about, if one.
    pub address: Option<Address>,
    /// What kind of note.
    pub kind: NoteKind,
    /// The note.
    pub message: String,
    /// Who created the object the note is about (see [`ResourceChange::created_by`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// Kinds of notes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum NoteKind {
    /// A live object in a managed scope that the manifests do not declare
    /// (deleted only with `--prune`).
    Unmanaged,
    /// A value evalctl cannot compare (e.g. a secret, or a field the service
    /// does not return).
    Unverifiable,
    /// Anything else worth a look.
    Info,
    /// Information nobody can act on (how the service was read, what it
    /// cannot say): in `-o json` and logged at `-v`, not shown in text,
    /// markdown or annotations, so pull-request comments carry what matters.
    Detail,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_printed_plan_lets_its_forecast_go() {
        let mut plan = Plan::empty();
        plan.forecast = Some(crate::plan::Forecast {
            format_version: crate::plan::forecast::FORECAST_FORMAT_VERSION,
            runs: crate::plan::forecast::Runs::default(),
            totals: crate::plan::forecast::Totals::default(),
            currency: None,
            assumptions: vec!["an assumption".to_owned()],
        });
        plan.release_printed();
        assert_eq!(plan.forecast, None);
        assert!(plan.notes.is_empty());
    }
}
