//! Resource kinds, one module each: a kind's wire types, live state, reader,
//! planner, operations and export live in its folder, and the generic core
//! (addresses, targets, plans, apply, confirmation, renderers) reaches a kind
//! only through this registry.
//!
//! The registry is where a kind is one line: [`Address`] (and with it
//! [`AddressKind`], the dispatch to each kind's [`KindAddress`] and to its
//! key fields) is generated from the list below by `addresses!`; the
//! operations kinds send themselves are dispatched in [`send_own`].

pub mod json;
pub mod projects;
pub mod prompt_templates;
pub mod protect_stages;
pub mod scorers;
pub mod templates;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::client::Client;
use crate::manifest::set::{Located, Origin};
use crate::manifest::types::ProjectSpec;
use crate::plan::address::{
    CustomIntegrationAddress, DashboardAddress, FavoriteAddress, IntegrationAddress, KindAddress,
    MetricSettingsAddress, SectionAddress, SettingsAddress, WidgetAddress,
};
use crate::plan::address_key::{KeyFields, KeyReader, KeyWriter};
use crate::plan::target::Target;
use crate::plan::{Action, Operation, Planner, RunKind};
use crate::reconcile::apply::OperationError;
use crate::reconcile::read::ReadError;
use crate::reconcile::read::projects::FoundProject;
use crate::reconcile::read::runs::FoundRun;
use crate::reconcile::read::selection::{ProjectSelection, RunSelection};
use crate::state::{MissingObject, ObjectKey, ProjectState};
use SegmentKind as Kind;

/// Generates, from one line per kind of address (its doc, its variant and
/// its type, which implements [`KindAddress`] and [`KeyFields`]):
/// [`Address`], [`AddressKind`] (the same variants without their fields, in
/// the same order) and the dispatch from an address to its kind's code.
macro_rules! addresses {
    ($( $(#[$doc:meta])* $variant:ident($ty:ty), )*) => {
        /// The address of an object a plan can touch: one variant per kind of
        /// address, each a type of its own that implements [`KindAddress`]. Written
        /// as the kind's fields with a `type` tag; ordered by kind (in this order),
        /// then by the kind's fields.
        #[derive(
            Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
            schemars::JsonSchema,
        )]
        #[serde(tag = "type", rename_all = "snake_case")]
        pub enum Address {
            $( $(#[$doc])* $variant($ty), )*
        }

        /// The kind of object a change is to, as [`Address`]'s variants (what a
        /// spilled change says of itself without being read back).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub enum AddressKind {
            $( #[doc = concat!("[`Address::", stringify!($variant), "`].")] $variant, )*
        }

        impl AddressKind {
            /// In the order of [`Address`]'s variants, which is the order addresses sort in.
            pub(crate) const ALL: &[AddressKind] = &[$(AddressKind::$variant,)*];

            /// The apply stage of a change of this kind and `action`, when the
            /// kind says its own ([`KindAddress::apply_stage`]).
            pub(crate) fn own_stage(self, action: Action) -> Option<u8> {
                match self {
                    $( AddressKind::$variant => <$ty as KindAddress>::apply_stage(action), )*
                }
            }

            /// The kind of `address`.
            pub fn of(address: &Address) -> Self {
                match address {
                    $( Address::$variant(_) => AddressKind::$variant, )*
                }
            }
        }

        impl Address {
            /// The address as its kind sees it.
            pub(crate) fn of_kind(&self) -> &dyn KindAddress {
                match self {
                    $( Address::$variant(a) => a, )*
                }
            }

            /// Writes the address's fields (not its kind) to a key.
            pub(crate) fn write_key(&self, w: &mut KeyWriter<'_>) {
                match self {
                    $( Address::$variant(a) => KeyFields::write_key(a, w), )*
                }
            }

            /// The address of kind `kind` whose fields [`Address::write_key`] wrote.
            pub(crate) fn read_key(kind: AddressKind, r: &mut KeyReader<'_>) -> Self {
                match kind {
                    $( AddressKind::$variant => Address::$variant(<$ty as KeyFields>::read_key(r)), )*
                }
            }
        }
    };
}

addresses! {
    /// The calling user's integration with a provider.
    Integration(IntegrationAddress),
    /// A named custom integration of the calling user.
    CustomIntegration(CustomIntegrationAddress),
    /// A custom scorer, or one of its versions.
    CustomScorer(scorers::CustomScorerAddress),
    /// A template of a project.
    Template(templates::address::TemplateAddress),
    /// Metric settings of a log stream or experiment.
    MetricSettings(MetricSettingsAddress),
    /// A dashboard of a log stream other than its default one.
    Dashboard(DashboardAddress),
    /// A section of a dashboard of a log stream.
    Section(SectionAddress),
    /// The favorite state of a log stream's default dashboard.
    Favorite(FavoriteAddress),
    /// A widget of a dashboard, in a section or at its top level.
    Widget(WidgetAddress),
    /// The settings of a dashboard (interval, time range, group-by).
    Settings(SettingsAddress),
    /// A project's prompt template, or one of its versions.
    PromptTemplate(prompt_templates::PromptTemplateAddress),
    /// A project's Protect stage.
    ProtectStage(protect_stages::ProtectStageAddress),
    /// A project itself.
    Project(projects::ProjectAddress),
    /// A log stream itself.
    LogStream(projects::LogStreamAddress),
}

/// Generates, from one line per kind that sends its own operations (its
/// doc, its variant and its operation type): [`KindOp`], held by
/// [`Operation::Kind`], and the conversion of each operation type into an
/// [`Operation`].
macro_rules! kind_operations {
    ($( $(#[$doc:meta])* $variant:ident($ty:ty), )*) => {
        /// An operation of a kind that sends its own ([`send_own`]): one variant
        /// per kind, each written as its own fields beside `op` (the variants are
        /// untagged, so a plan file reads and writes as it did when each was a
        /// variant of [`Operation`]).
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(untagged)]
        pub enum KindOp {
            $( $(#[$doc])* $variant($ty), )*
        }

        $(
            impl From<$ty> for Operation {
                fn from(op: $ty) -> Self {
                    Operation::Kind(KindOp::$variant(op))
                }
            }
        )*
    };
}

kind_operations! {
    /// An annotation or feedback template's operation (`create_template`,
    /// `patch_template`, `delete_template`).
    Template(templates::TemplateOp),
    /// A prompt template's operation (`create_prompt_template`,
    /// `create_prompt_version`, `select_prompt_version`,
    /// `delete_prompt_template`).
    PromptTemplate(prompt_templates::PromptTemplateOp),
    /// An operation on a Protect stage (`create_stage`,
    /// `replace_stage_rulesets`, `pause_stage`).
    ProtectStage(protect_stages::ProtectStageOp),
    /// A custom scorer's operation (`create_custom_scorer`,
    /// `create_scorer_version`, `update_custom_scorer`, `set_scorer_scope`,
    /// `pin_scorer_version`, `delete_custom_scorer`).
    CustomScorer(scorers::CustomScorerOp),
    /// A project's or log stream's operation (`create_project`,
    /// `update_project`, `delete_project`, `create_log_stream`,
    /// `rename_log_stream`, `delete_log_stream`).
    Project(projects::ProjectOp),
}

impl KindOp {
    /// The environment variables the webhook URLs it sends are read from
    /// (a Protect stage's), at apply time; one line per kind that has them.
    pub fn webhook_variables(&self) -> Vec<String> {
        match self {
            KindOp::ProtectStage(op) => op.variables(),
            _ => Vec::new(),
        }
    }
}

/// The kinds' own bindings of manifest fields to the service schemas their
/// limits come from (`crate::manifest::limits`), one line per kind.
pub(crate) const LIMIT_BINDINGS: &[&[crate::manifest::limits::Binding]] = &[
    templates::spec::LIMITS,
    prompt_templates::spec::LIMITS,
    protect_stages::spec::LIMITS,
    scorers::spec::LIMITS,
];

impl AddressKind {
    /// Whether the operations of this kind read secrets from the
    /// environment when they are sent (an integration's values, a Protect
    /// stage's webhook URLs): what `apply` checks are set before any write.
    pub fn reads_environment(self) -> bool {
        matches!(
            self,
            AddressKind::Integration | AddressKind::CustomIntegration | AddressKind::ProtectStage
        )
    }
}

/// Sends `op` as its kind does, when its kind sends its own operations;
/// `None`: the core sends it (`reconcile::apply`).
/// `env` is where secrets are read at the last moment (a Protect stage's
/// webhook URLs).
pub(crate) async fn send_own(
    op: &Operation,
    client: &Client,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<Result<Option<String>, OperationError>> {
    Some(match op {
        Operation::Kind(KindOp::Template(op)) => {
            op.send_idempotent(client).await.map_err(Into::into)
        }
        Operation::Kind(KindOp::PromptTemplate(op)) => op.send(client).await,
        Operation::Kind(KindOp::CustomScorer(op)) => op.send(client).await,
        Operation::Kind(KindOp::ProtectStage(op)) => op.send(client, env).await,
        Operation::Kind(KindOp::Project(op)) => op.send(client).await,
        _ => return None,
    })
}

impl AddressKind {
    /// Whether the objects of this kind a plan creates have pending ids
    /// other changes name them by (`crate::reconcile::pending`), resolved
    /// by [`resolve_pending`].
    pub(crate) fn makes_pending_ids(self) -> bool {
        matches!(
            self,
            AddressKind::Project | AddressKind::LogStream | AddressKind::CustomScorer
        )
    }
}

/// The id the pending id `id` stands for (in the project `project_id`,
/// resolved, when the operation is in one), from the kind that made it, one
/// line per kind; `None`: no kind knows it.
pub(crate) async fn resolve_pending(
    pending: &crate::reconcile::pending::Pending,
    client: &Client,
    id: &str,
    project_id: Option<&str>,
) -> Result<Option<String>, OperationError> {
    if let Some(found) = projects::pending::resolve(pending, client, id, project_id).await? {
        return Ok(Some(found));
    }
    let key = ("pending:".to_owned(), id.to_owned());
    pending
        .remember_found(key, scorers::pending::resolve(client, id))
        .await
}

/// Whether `op` destroys data (deletes what cannot be made again: a project
/// or a log stream, with their traces), which a saved plan may only do when
/// it was made with `--allow-destroy`; one line per kind that can.
pub(crate) fn destroys(op: &Operation) -> bool {
    match op {
        Operation::Kind(KindOp::Project(op)) => op.destroys(),
        _ => false,
    }
}

/// Plans the kinds a project holds (the project itself and its log
/// streams, its templates, prompt templates and Protect stages), one line
/// each, in this order.
pub(crate) fn plan_project_parts(
    planner: &mut Planner<'_>,
    origin: &Origin,
    project: &str,
    spec: &ProjectSpec,
    live: &ProjectState,
) {
    projects::plan::plan_project(planner, project, spec, live);
    templates::plan::plan_project(planner, project, spec, live);
    prompt_templates::plan::plan_project(planner, origin, project, spec, live);
    protect_stages::plan::plan_project(planner, project, spec, live);
}

/// Fills in the kinds a project holds of its exported `spec` from `live`
/// (and the project's own description and labels), one line each, in this
/// order (which is the order of their warnings).
pub(crate) fn export_project_parts(
    live: &ProjectState,
    spec: &mut ProjectSpec,
    warnings: &mut Vec<String>,
) {
    projects::export::export_project(live, spec, warnings);
    templates::export::export_project(live, spec, warnings);
    prompt_templates::export::export_project(live, spec, warnings);
    protect_stages::export::export_project(live, spec, warnings);
}

/// The targets of what the kinds a project holds declare in its `spec`,
/// one line each.
pub(crate) fn declared_project_parts(project: &str, spec: &ProjectSpec, out: &mut Vec<Target>) {
    templates::plan::declared(project, spec, out);
    prompt_templates::plan::declared(project, spec, out);
    protect_stages::plan::declared(project, spec, out);
}

/// Selects what is read of the kinds a project holds, as its `spec`
/// declares them and `options` reach them, one line each.
pub(crate) fn select_project_parts(
    project: &str,
    spec: &ProjectSpec,
    options: &crate::plan::PlanOptions,
    wanted: &mut crate::reconcile::read::selection::ProjectSelection,
) {
    projects::read::select(project, spec, options, wanted);
    templates::read::select(project, spec, options, wanted);
    prompt_templates::read::select(project, spec, options, wanted);
    protect_stages::read::select(project, spec, options, wanted);
}

/// The live state of the kinds a project holds that keep it here, one line
/// each: [`ProjectState::parts`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectParts {
    /// Prompt templates, when read.
    pub prompt_templates: Option<Vec<prompt_templates::PromptTemplateState>>,
    /// The project's own: its description and labels, and the log streams
    /// the manifests do not declare, when read.
    pub project: projects::read::ProjectOwn,
    /// Annotation templates, when read.
    pub annotation_templates:
        Option<Vec<templates::TemplateState<templates::AnnotationConstraints>>>,
    /// Feedback templates, when read.
    pub feedback_templates: Option<Vec<templates::TemplateState<templates::FeedbackConstraints>>>,
    /// Protect stages (those declared or recorded), when read.
    pub protect_stages: Option<Vec<protect_stages::ProtectStageState>>,
}

impl ProjectParts {
    /// Drops what planning compares of the kinds a project holds, and keeps
    /// the project's own ([`crate::state::ProjectState::release_compared`]).
    pub fn release_compared(&mut self) {
        *self = ProjectParts {
            project: std::mem::take(&mut self.project),
            ..ProjectParts::default()
        };
    }
}

/// The kinds a project holds as the service returns them, in a state
/// written as JSON (`crate::state::wire`, beside the project's own fields),
/// one field per kind.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct WireProjectParts {
    /// Annotation templates, when read.
    #[serde(default)]
    pub annotation_templates: Option<Vec<templates::Template<templates::AnnotationConstraints>>>,
    /// Feedback templates, when read.
    #[serde(default)]
    pub feedback_templates: Option<Vec<templates::Template<templates::FeedbackConstraints>>>,
}

impl WireProjectParts {
    /// Reduced as the readers reduce each response, one line per kind.
    pub(crate) fn normalize(self) -> ProjectParts {
        ProjectParts {
            annotation_templates: templates::live::normalized(self.annotation_templates),
            feedback_templates: templates::live::normalized(self.feedback_templates),
            ..ProjectParts::default()
        }
    }
}

/// Reads what `wanted` selects of the kinds a project holds (`pending`: the
/// plan creates the project, so it holds none), one line each.
/// `declared_log_streams`: the ids of the log streams the manifests declare
/// that were found.
pub(crate) async fn read_project_parts(
    client: &Client,
    wanted: &ProjectSelection,
    project: &FoundProject,
    declared_log_streams: &[String],
    pending: bool,
) -> Result<ProjectParts, ReadError> {
    // Boxed: the reads of every project in flight are held in one future,
    // and a debug build's test threads have 2 MiB of stack.
    let (own, (annotation_templates, feedback_templates), prompt_templates, protect_stages) = tokio::try_join!(
        Box::pin(projects::read::read_selected(
            client,
            wanted,
            project,
            declared_log_streams,
            pending
        )),
        templates::read::read_selected(client, wanted, &project.id, &project.name, pending),
        prompt_templates::read::read_selected(client, wanted, &project.id, &project.name, pending),
        protect_stages::read::read_selected(client, wanted, &project.id, &project.name, pending),
    )?;
    Ok(ProjectParts {
        project: own,
        annotation_templates,
        feedback_templates,
        prompt_templates,
        protect_stages,
    })
}

/// Reads all of the kinds a project holds, for an export, one line each.
pub(crate) async fn read_all_project_parts(
    client: &Client,
    project: &crate::api::ProjectItem,
) -> Result<ProjectParts, ReadError> {
    let ((annotation, feedback), prompt_templates, protect_stages) = tokio::try_join!(
        templates::read::read_all(client, &project.id, &project.name),
        prompt_templates::read::read_all(client, &project.id, &project.name),
        protect_stages::read::read_all(client, &project.id, &project.name),
    )?;
    Ok(ProjectParts {
        project: projects::read::ProjectOwn::of_item(project),
        annotation_templates: Some(annotation),
        feedback_templates: Some(feedback),
        prompt_templates: Some(prompt_templates),
        protect_stages: Some(protect_stages),
    })
}

/// What reading makes of the projects `wanted` names that no read found
/// (`missing`): a kind that creates or renames projects accounts for them
/// (moves them to `found`), one line per kind.
pub(crate) async fn missing_projects(
    client: &Client,
    wanted: &[ProjectSelection],
    found: &mut BTreeMap<ObjectKey, FoundProject>,
    missing: &mut Vec<MissingObject>,
) -> Result<(), ReadError> {
    projects::read::missing_projects(client, wanted, found, missing).await
}

/// What reading makes of the runs of `kind` of `project` that `wanted`
/// names and no read found (`missing`): a kind that creates or renames them
/// accounts for them (moves them to `found`), one line per kind.
pub(crate) async fn missing_runs(
    client: &Client,
    project: &FoundProject,
    kind: RunKind,
    wanted: &[RunSelection],
    found: &mut BTreeMap<ObjectKey, FoundRun>,
    missing: &mut Vec<MissingObject>,
) -> Result<(), ReadError> {
    projects::read::missing_runs(client, project, kind, wanted, found, missing).await
}

/// The runs `keys` of `kind` of a project a plan creates (`project` has a
/// pending id), as the kind that creates it says it holds them (no read).
pub(crate) fn runs_of_pending_project(
    project: &FoundProject,
    kind: RunKind,
    keys: &[ObjectKey],
) -> (BTreeMap<ObjectKey, FoundRun>, Vec<MissingObject>) {
    projects::read::runs_of_pending_project(project, kind, keys)
}

/// A run a plan creates (`run` has a pending id), as the kind that creates
/// it says the service makes it (no read).
pub(crate) fn pending_run(
    catalog: &crate::state::Catalog,
    run: &FoundRun,
    parts: crate::reconcile::read::RunParts,
) -> crate::state::RunState {
    projects::read::pending_run(catalog, run, parts)
}

/// What a saved plan's check (`reconcile::read::touched`) reads for a change
/// of a kind that reads and observes its own objects: one line per kind.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum OwnRead {
    /// A project or log stream itself.
    Projects(projects::confirm::Key),
    /// A project's templates of one kind.
    Templates {
        /// The project's id.
        project_id: String,
        /// Annotation or feedback.
        kind: templates::TemplateKind,
    },
    /// The custom scorers.
    CustomScorers,
    /// A project's prompt templates, or the global ones (`None`).
    PromptTemplates {
        /// The project's id.
        project_id: Option<String>,
    },
    /// A project's Protect stage, by its project's id and its name.
    ProtectStage {
        /// The project's id.
        project_id: String,
        /// The stage's name.
        name: String,
    },
}

/// What an [`OwnRead`] found.
pub(crate) enum OwnFetched {
    /// The project or log stream, if it exists.
    Projects(Option<projects::confirm::Seen>),
    /// A project's templates of one kind.
    Templates(templates::confirm::Listed),
    /// The custom scorers.
    CustomScorers(Vec<scorers::CustomScorerState>),
    /// The prompt templates of a project, or the global ones.
    PromptTemplates(Vec<prompt_templates::PromptTemplateState>),
    /// The stage, if there is one of that name.
    ProtectStage(Option<protect_stages::live::ProtectStageState>),
}

/// The read that holds a change's object, when its kind reads its own.
pub(crate) fn own_read_of(change: &crate::plan::ResourceChange) -> Option<OwnRead> {
    if let Some(key) = projects::confirm::key(change) {
        return Some(OwnRead::Projects(key));
    }
    if let Some((project_id, kind)) = templates::confirm::read_of(change) {
        return Some(OwnRead::Templates {
            project_id: project_id.to_owned(),
            kind,
        });
    }
    if scorers::confirm::is_custom_scorer(change) {
        return Some(OwnRead::CustomScorers);
    }
    if let Some(project_id) = prompt_templates::confirm::project_id(change) {
        return Some(OwnRead::PromptTemplates {
            project_id: project_id.map(str::to_owned),
        });
    }
    if let Some((project_id, name)) = protect_stages::confirm::read_of(change) {
        return Some(OwnRead::ProtectStage {
            project_id: project_id.to_owned(),
            name: name.to_owned(),
        });
    }
    None
}

/// Makes an [`OwnRead`].
pub(crate) async fn own_fetch(
    client: &Client,
    key: &OwnRead,
) -> Result<OwnFetched, crate::client::ApiError> {
    Ok(match key {
        OwnRead::Projects(key) => {
            OwnFetched::Projects(projects::confirm::fetch(client, key).await?)
        }
        OwnRead::Templates { project_id, kind } => {
            OwnFetched::Templates(templates::confirm::read(client, project_id, *kind).await?)
        }
        OwnRead::CustomScorers => {
            OwnFetched::CustomScorers(scorers::read::read_custom_scorers(client).await?)
        }
        OwnRead::PromptTemplates { project_id } => OwnFetched::PromptTemplates(
            prompt_templates::read::read_prompt_templates(client, project_id.as_deref()).await?,
        ),
        OwnRead::ProtectStage { project_id, name } => OwnFetched::ProtectStage(
            protect_stages::read::read_stage(client, project_id, name).await?,
        ),
    })
}

/// What a change's object looks like now (at `moment`), from what its
/// [`OwnRead`] found: its fingerprint and comparable form.
pub(crate) fn own_observe(
    change: &crate::plan::ResourceChange,
    found: &OwnFetched,
    moment: crate::reconcile::read::touched::Moment,
) -> (String, Option<serde_json::Value>) {
    match found {
        OwnFetched::Projects(seen) => projects::confirm::observe(change, seen.as_ref()),
        OwnFetched::Templates(listed) => templates::confirm::observe(change, listed, moment),
        OwnFetched::CustomScorers(all) => scorers::confirm::observe(change, all),
        OwnFetched::PromptTemplates(all) => prompt_templates::confirm::observe(change, all),
        OwnFetched::ProtectStage(stage) => protect_stages::confirm::observe(change, stage.as_ref()),
    }
}

/// Where the name of an object must be unique, for the kinds whose creates
/// go through apply's create machinery (`reconcile::apply::create`: a read
/// of the scope before each create and one after, the first copy of a name
/// kept), one line per kind in each of its functions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnScope {
    /// A project's templates of one kind.
    Templates(templates::scope::TemplateScope),
}

impl OwnScope {
    /// The scope `op` creates an object in, when it is such a create.
    pub(crate) fn of_create(op: &Operation) -> Option<OwnScope> {
        match op {
            Operation::Kind(KindOp::Template(op)) => {
                templates::scope::TemplateScope::of_create(op).map(OwnScope::Templates)
            }
            _ => None,
        }
    }

    /// The scope `op` deletes an object of, and the object's id, when it is
    /// a delete of such an object.
    pub(crate) fn of_delete(op: &Operation) -> Option<(OwnScope, &str)> {
        match op {
            Operation::Kind(KindOp::Template(op)) => templates::scope::TemplateScope::of_delete(op)
                .map(|(scope, id)| (OwnScope::Templates(scope), id)),
            _ => None,
        }
    }

    /// The name the create `op` gives its object.
    pub(crate) fn created_name(op: &Operation) -> Option<&str> {
        match op {
            Operation::Kind(KindOp::Template(op)) => op.created_name(),
            _ => None,
        }
    }

    /// What an object of the scope is called.
    pub(crate) fn noun(&self) -> &'static str {
        match self {
            OwnScope::Templates(_) => "template",
        }
    }

    /// What the scope is, for an error.
    pub(crate) fn describe(&self) -> String {
        match self {
            OwnScope::Templates(scope) => scope.describe(),
        }
    }

    /// The objects of the scope as `(name, id)`, the one every process
    /// keeps first of its name.
    pub(crate) async fn members(
        &self,
        client: &Client,
    ) -> Result<Vec<(String, String)>, crate::client::ApiError> {
        match self {
            OwnScope::Templates(scope) => scope.members(client).await,
        }
    }

    /// Sends the create `op` into the scope (`None`: `op` is not a create
    /// of its kind); the new object's id.
    pub(crate) async fn create(
        &self,
        client: &Client,
        op: &Operation,
    ) -> Option<Result<String, crate::client::ApiError>> {
        match (self, op) {
            (OwnScope::Templates(scope), Operation::Kind(KindOp::Template(op))) => {
                scope.create(client, op).await
            }
            _ => None,
        }
    }

    /// Deletes the object `id` of the scope.
    pub(crate) async fn delete(
        &self,
        client: &Client,
        id: &str,
    ) -> Result<(), crate::client::ApiError> {
        match self {
            OwnScope::Templates(scope) => scope.delete(client, id).await,
        }
    }
}

/// The id of the existing object `op` names, when its kind's objects may
/// carry one name twice (a copy another run made an instant ago, which the
/// confirmation after an apply leaves to that run), one line per kind.
pub(crate) fn copy_object_id(op: &Operation) -> Option<&str> {
    match op {
        Operation::Kind(KindOp::Template(op)) => op.template_id(),
        _ => None,
    }
}

/// The kinds of address segments: the grammar of addresses and `--target`s
/// (`crate::plan::target`, where it is `Kind`), one line per kind in each list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SegmentKind {
    /// `integration[PROVIDER]`.
    Integration,
    /// `project[NAME]`.
    Project,
    /// `log_stream[NAME]`.
    LogStream,
    /// `experiment[NAME]`.
    Experiment,
    /// `metric_settings`.
    MetricSettings,
    /// `trends`.
    Trends,
    /// `section[NAME]`.
    Section,
    /// `favorite`.
    Favorite,
    /// `dashboard[NAME]`.
    Dashboard,
    /// `widget[NAME]`.
    Widget,
    /// `settings`.
    Settings,
    /// `custom_integration[NAME]`.
    CustomIntegration,
    /// `annotation_template[NAME]`.
    AnnotationTemplate,
    /// `feedback_template[NAME]`.
    FeedbackTemplate,
    /// `prompt_template[NAME]`.
    PromptTemplate,
    /// `version[N]` (of a prompt template or a custom scorer).
    PromptVersion,
    /// `protect_stage[NAME]`.
    ProtectStage,
    /// `scorer[NAME]` (a custom scorer).
    Scorer,
}

pub(crate) const SEGMENT_KINDS: [Kind; 18] = [
    Kind::Integration,
    Kind::CustomIntegration,
    Kind::Scorer,
    Kind::Dashboard,
    Kind::Widget,
    Kind::Settings,
    Kind::Project,
    Kind::LogStream,
    Kind::Experiment,
    Kind::MetricSettings,
    Kind::Trends,
    Kind::Section,
    Kind::Favorite,
    Kind::AnnotationTemplate,
    Kind::FeedbackTemplate,
    Kind::PromptTemplate,
    Kind::PromptVersion,
    Kind::ProtectStage,
];

impl SegmentKind {
    /// `version[N]`, the segment of a version of any kind that has them.
    pub const VERSION: Kind = Kind::PromptVersion;

    /// The kind as written in addresses.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Integration => "integration",
            Kind::Project => "project",
            Kind::LogStream => "log_stream",
            Kind::Experiment => "experiment",
            Kind::MetricSettings => "metric_settings",
            Kind::Trends => "trends",
            Kind::Section => "section",
            Kind::Favorite => "favorite",
            Kind::Dashboard => "dashboard",
            Kind::Widget => "widget",
            Kind::Settings => "settings",
            Kind::CustomIntegration => "custom_integration",
            Kind::AnnotationTemplate => "annotation_template",
            Kind::FeedbackTemplate => "feedback_template",
            Kind::PromptTemplate => "prompt_template",
            Kind::PromptVersion => "version",
            Kind::ProtectStage => "protect_stage",
            Kind::Scorer => "scorer",
        }
    }

    /// Whether the kind takes a name in brackets.
    pub fn is_named(self) -> bool {
        !matches!(
            self,
            Kind::MetricSettings | Kind::Trends | Kind::Favorite | Kind::Settings
        )
    }

    /// The kinds that may follow this one (the first segment: `None`).
    pub(crate) fn children(parent: Option<Kind>) -> &'static [Kind] {
        match parent {
            None => &[
                Kind::Project,
                Kind::Integration,
                Kind::CustomIntegration,
                Kind::Scorer,
                Kind::PromptTemplate,
            ],
            Some(Kind::Project) => &[
                Kind::LogStream,
                Kind::Experiment,
                Kind::AnnotationTemplate,
                Kind::FeedbackTemplate,
                Kind::PromptTemplate,
                Kind::ProtectStage,
            ],
            Some(Kind::PromptTemplate | Kind::Scorer) => &[Kind::PromptVersion],
            Some(Kind::LogStream) => &[Kind::MetricSettings, Kind::Trends, Kind::Dashboard],
            Some(Kind::Experiment) => &[Kind::MetricSettings],
            Some(Kind::Trends) => &[Kind::Section, Kind::Widget, Kind::Settings, Kind::Favorite],
            Some(Kind::Dashboard) => &[Kind::Section, Kind::Widget, Kind::Settings],
            Some(Kind::Section) => &[Kind::Widget],
            Some(_) => &[],
        }
    }
}

/// A top-level document of a kind held here (not a Project, an
/// Integration, a Policy, Settings or Pricing, which the manifest module
/// keeps): what `crate::manifest::check` types a document as and
/// `crate::export::write` writes, one variant per kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Document {
    /// `kind: Scorer`: a custom scorer.
    Scorer(Box<scorers::CustomScorerSpec>),
    /// `kind: PromptTemplate`: a global prompt template.
    PromptTemplate(Box<prompt_templates::PromptTemplateSpec>),
}

impl Document {
    /// The values of `kind` of the documents held here.
    pub(crate) const KINDS: &[&str] = &["Scorer", "PromptTemplate"];

    /// The document of kind `kind` (one of [`Document::KINDS`]) with the
    /// fields `value` (without `kind` and `api_version`).
    pub(crate) fn parse(kind: &str, value: serde_json::Value) -> serde_json::Result<Document> {
        use serde::de::Error as _;
        match kind {
            "Scorer" => serde_json::from_value(value).map(|s| Document::Scorer(Box::new(s))),
            "PromptTemplate" => {
                serde_json::from_value(value).map(|s| Document::PromptTemplate(Box::new(s)))
            }
            _ => Err(serde_json::Error::custom(format!(
                "`{kind}` is not a kind of the registry"
            ))),
        }
    }

    /// Its `kind`, as written.
    pub fn kind(&self) -> &'static str {
        match self {
            Document::Scorer(_) => "Scorer",
            Document::PromptTemplate(_) => "PromptTemplate",
        }
    }

    /// Its fields (without `kind` and `api_version`), for writing it.
    pub(crate) fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        match self {
            Document::Scorer(spec) => serde_json::to_value(spec),
            Document::PromptTemplate(spec) => serde_json::to_value(spec),
        }
    }
}

/// The documents of the kinds held here a [`crate::manifest::set::ManifestSet`]
/// holds (`ManifestSet::global`), one field per kind, in deterministic order
/// (file path, then position in the file).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GlobalDocuments {
    /// `kind: Scorer` documents, one per custom scorer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scorers: Vec<Located<scorers::CustomScorerSpec>>,
    /// `kind: PromptTemplate` documents: the global prompt templates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prompt_templates: Vec<Located<prompt_templates::PromptTemplateSpec>>,
}

impl GlobalDocuments {
    /// Adds a loaded document.
    pub(crate) fn push(&mut self, origin: Origin, document: Document) {
        match document {
            Document::Scorer(spec) => self.scorers.push(Located {
                origin,
                spec: *spec,
            }),
            Document::PromptTemplate(spec) => self.prompt_templates.push(Located {
                origin,
                spec: *spec,
            }),
        }
    }
}

/// Reads into a document of kind `kind` (after interpolation, as JSON) the
/// files its fields name, relative to the manifest `manifest` (a prompt
/// template's `template_file`, a custom scorer's prompt and code files):
/// the problems found, as (JSON pointer, message), one line per kind that
/// names files.
pub(crate) fn resolve_files(
    kind: &str,
    manifest: &std::path::Path,
    document: &mut serde_json::Value,
) -> Vec<(String, String)> {
    match kind {
        "Project" => prompt_templates::files::resolve(manifest, document)
            .into_iter()
            .map(|i| (i.pointer, i.message))
            .collect(),
        "Scorer" => scorers::files::resolve(manifest, document)
            .into_iter()
            .map(|i| (i.pointer, i.message))
            .collect(),
        "PromptTemplate" => prompt_templates::files::resolve_document(manifest, document)
            .into_iter()
            .map(|i| (i.pointer, i.message))
            .collect(),
        _ => Vec::new(),
    }
}

/// How the manifest schema holds a document kind of [`Document`].
pub(crate) struct DocumentSchema {
    /// Its `kind`.
    pub kind: &'static str,
    /// The schema of its spec (a reference into the definitions).
    pub spec: schemars::Schema,
    /// Whether the spec's definition stays one of its own (a Project refers
    /// to it), the document's a copy of it.
    pub shared: bool,
}

/// The schemas of the document kinds of [`Document`], in its order, one
/// line per kind.
pub(crate) fn document_schemas(generator: &mut schemars::SchemaGenerator) -> Vec<DocumentSchema> {
    vec![
        DocumentSchema {
            kind: "Scorer",
            spec: generator.subschema_for::<scorers::CustomScorerSpec>(),
            shared: false,
        },
        DocumentSchema {
            kind: "PromptTemplate",
            spec: generator.subschema_for::<prompt_templates::PromptTemplateSpec>(),
            shared: true,
        },
    ]
}

/// The live state of the kinds held here that are global (not a
/// project's), one field per kind: `State::global` and `Snapshot::global`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GlobalParts {
    /// The custom scorers, when read (the manifests declare any, or an
    /// export).
    pub custom_scorers: Option<Vec<scorers::CustomScorerState>>,
    /// The global prompt templates, when read (a `kind: PromptTemplate`
    /// document, or an export).
    pub prompt_templates: Option<Vec<prompt_templates::PromptTemplateState>>,
    /// The live projects the repo owns (`prune_projects`) and does not
    /// declare, when read (`--prune`).
    pub undeclared_projects: Option<Vec<projects::prune::LiveProject>>,
}

/// What is read of the global kinds, one field per kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GlobalSelection {
    /// Whether the custom scorers are read (the manifests declare some).
    pub custom_scorers: bool,
    /// Whether the global prompt templates are read (a `kind:
    /// PromptTemplate` document in reach).
    pub prompt_templates: bool,
    /// The projects the repo owns without declaring them, read with
    /// `--prune` (`projects::prune`).
    pub undeclared_projects: Option<projects::prune::ProjectPrune>,
}

impl GlobalSelection {
    /// What an export reads of the global kinds: the custom scorers with
    /// the integrations (an export of the whole organization), the global
    /// prompt templates when selected.
    pub(crate) fn of_export(selection: &crate::state::snapshot::Selection) -> Self {
        GlobalSelection {
            custom_scorers: selection.integrations,
            prompt_templates: selection.prompt_templates,
            undeclared_projects: None,
        }
    }

    /// Whether what is read may have changed the scorer catalog since an
    /// earlier read (an apply that made custom scorers): the catalog is
    /// read again then.
    pub(crate) fn may_change_catalog(&self) -> bool {
        self.custom_scorers
    }

    /// What either selection reads.
    #[must_use]
    pub fn union(self, other: GlobalSelection) -> GlobalSelection {
        GlobalSelection {
            custom_scorers: self.custom_scorers || other.custom_scorers,
            prompt_templates: self.prompt_templates || other.prompt_templates,
            undeclared_projects: projects::prune::ProjectPrune::union(
                self.undeclared_projects,
                other.undeclared_projects,
            ),
        }
    }
}

/// Selects what is read of the global kinds, as `desired` declares them and
/// `options` reach them, one line per kind.
pub(crate) fn select_global_parts(
    desired: &crate::manifest::set::ManifestSet,
    options: &crate::plan::PlanOptions,
) -> GlobalSelection {
    let documents = &desired.global;
    GlobalSelection {
        custom_scorers: scorers::read::select(&documents.scorers, options),
        prompt_templates: prompt_templates::read::select_global(
            &documents.prompt_templates,
            options,
        ),
        undeclared_projects: projects::prune::ProjectPrune::of(desired, options),
    }
}

/// Reads what `wanted` selects of the global kinds, one line per kind.
pub(crate) async fn read_global_parts(
    client: &Client,
    wanted: &GlobalSelection,
) -> Result<GlobalParts, ReadError> {
    let (custom_scorers, prompt_templates, undeclared_projects) = tokio::try_join!(
        scorers::read::read_if(client, wanted.custom_scorers),
        prompt_templates::read::read_global_if(client, wanted.prompt_templates),
        projects::prune::read_undeclared(client, wanted.undeclared_projects.as_ref()),
    )?;
    Ok(GlobalParts {
        custom_scorers,
        prompt_templates,
        undeclared_projects,
    })
}

/// The targets of what `desired` declares of the global kinds, one line
/// per kind.
pub(crate) fn declared_global_parts(desired: &GlobalDocuments, out: &mut Vec<Target>) {
    scorers::plan::declared_global(&desired.scorers, out);
    prompt_templates::plan::declared_global(&desired.prompt_templates, out);
}

/// What planning the global kinds gathers from the manifests before their
/// projects are planned (and released), one field per kind that needs it.
pub(crate) struct GlobalPlanning {
    /// Which declared metric settings use each declared custom scorer.
    scorer_uses: scorers::uses::Uses,
}

impl GlobalPlanning {
    /// Gathers it from `desired`, before any project is planned.
    pub(crate) fn of(desired: &crate::manifest::set::ManifestSet) -> Self {
        GlobalPlanning {
            scorer_uses: scorers::uses::declared_uses(desired),
        }
    }
}

/// Live's scorer catalog with what the plan creates in it (the custom
/// scorers and versions `desired` declares and live lacks).
pub(crate) fn planned_catalog<'c>(
    desired: &GlobalDocuments,
    live_catalog: &'c crate::state::Catalog,
    live: &GlobalParts,
) -> std::borrow::Cow<'c, crate::state::Catalog> {
    scorers::pending::planned_catalog(
        live_catalog,
        &desired.scorers,
        live.custom_scorers.as_deref(),
    )
}

/// Plans the global kinds, one line each, in this order.
pub(crate) fn plan_global_parts(
    planner: &mut Planner<'_>,
    desired: &crate::manifest::set::ManifestSet,
    live: &GlobalParts,
    gathered: &GlobalPlanning,
) {
    let documents = &desired.global;
    scorers::plan::plan_global(
        planner,
        &documents.scorers,
        live.custom_scorers.as_deref(),
        &gathered.scorer_uses,
    );
    prompt_templates::plan::plan_global(
        planner,
        &documents.prompt_templates,
        live.prompt_templates.as_deref(),
    );
    if let Some(undeclared) = &live.undeclared_projects {
        projects::prune::plan_undeclared_projects(planner, desired, undeclared);
    }
}

/// The collections of the global kinds that `changes` (the plan's, as
/// selected) delete too much of, one line per kind that guards its own.
pub(crate) fn global_mass_changes<'a>(
    changes: impl IntoIterator<Item = &'a crate::plan::ResourceChange>,
    live: &GlobalParts,
    limits: crate::plan::GuardLimits,
) -> Option<crate::plan::MassChange> {
    live.prompt_templates
        .as_ref()
        .and_then(|all| prompt_templates::plan::global_churn(changes, all, limits))
}

/// Writes the files of the global kinds of an export, from `live`, one line
/// per kind, in this order (the order of the files and of the warnings).
pub(crate) fn export_global_parts(
    live: &GlobalParts,
    provenance: &crate::export::Provenance,
    out: &mut Vec<crate::export::ExportedFile>,
    warnings: &mut Vec<String>,
) {
    scorers::export::export_global(live.custom_scorers.as_deref(), provenance, out);
    prompt_templates::export::export_global(
        live.prompt_templates.as_deref(),
        provenance,
        out,
        warnings,
    );
}

#[cfg(test)]
mod tests {
    use super::{Document, document_schemas};

    #[test]
    fn every_document_kind_has_a_schema_and_parses() {
        let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
        let schemas: Vec<&str> = document_schemas(&mut generator)
            .iter()
            .map(|d| d.kind)
            .collect();
        assert_eq!(schemas, Document::KINDS);
        for kind in Document::KINDS {
            // Refused for its fields (none given), not for its kind.
            let refused = Document::parse(kind, serde_json::json!({}))
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(!refused.contains("not a kind"), "{kind}: {refused}");
        }
        let unknown = Document::parse("Project", serde_json::json!({}));
        assert!(unknown.is_err_and(|e| e.to_string().contains("not a kind")));
    }

    #[test]
    fn a_parsed_document_says_its_kind_and_writes_its_fields() {
        let value = serde_json::json!({"name": "greeting", "template": "Hello {name}"});
        let document = Document::parse("PromptTemplate", value.clone()).expect("parsed");
        assert_eq!(document.kind(), "PromptTemplate");
        let written = document.to_value().expect("written");
        assert_eq!(written["name"], value["name"]);
        assert_eq!(written["template"], value["template"]);
    }
}
