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

use serde::{Deserialize, Serialize};

use crate::client::Client;
use crate::manifest::set::Origin;
use crate::manifest::types::ProjectSpec;
use crate::plan::address::{
    CustomIntegrationAddress, DashboardAddress, FavoriteAddress, IntegrationAddress, KindAddress,
    MetricSettingsAddress, SectionAddress, SettingsAddress, WidgetAddress,
};
use crate::plan::address_key::{KeyFields, KeyReader, KeyWriter};
use crate::plan::target::Target;
use crate::plan::{Action, Operation, Planner};
use crate::reconcile::apply::OperationError;
use crate::reconcile::read::ReadError;
use crate::reconcile::read::selection::ProjectSelection;
use crate::state::ProjectState;
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
        Operation::Template(op) => op.send_idempotent(client).await.map_err(Into::into),
        Operation::PromptTemplate(op) => op.send(client).await,
        Operation::ProtectStage(op) => op.send(client, env).await,
        _ => return None,
    })
}

/// Plans the kinds a project holds (its templates, prompt templates and
/// Protect stages), one line each, in this order.
pub(crate) fn plan_project_parts(
    planner: &mut Planner<'_>,
    origin: &Origin,
    project: &str,
    spec: &ProjectSpec,
    live: &ProjectState,
) {
    templates::plan::plan_project(planner, project, spec, live);
    prompt_templates::plan::plan_project(planner, origin, project, spec, live);
    protect_stages::plan::plan_project(planner, project, spec, live);
}

/// Fills in the kinds a project holds of its exported `spec` from `live`,
/// one line each, in this order (which is the order of their warnings).
pub(crate) fn export_project_parts(
    live: &ProjectState,
    spec: &mut ProjectSpec,
    warnings: &mut Vec<String>,
) {
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
    templates::read::select(project, spec, options, wanted);
    prompt_templates::read::select(project, spec, options, wanted);
    protect_stages::read::select(project, spec, options, wanted);
}

/// The live state of the kinds a project holds that keep it here, one line
/// each: [`ProjectState::parts`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectParts {
    /// Annotation templates, when read.
    pub annotation_templates:
        Option<Vec<templates::TemplateState<templates::AnnotationConstraints>>>,
    /// Feedback templates, when read.
    pub feedback_templates: Option<Vec<templates::TemplateState<templates::FeedbackConstraints>>>,
    /// Protect stages (those declared or recorded), when read.
    pub protect_stages: Option<Vec<protect_stages::ProtectStageState>>,
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
pub(crate) async fn read_project_parts(
    client: &Client,
    wanted: &ProjectSelection,
    project_id: &str,
    project_name: &str,
    pending: bool,
) -> Result<ProjectParts, ReadError> {
    let ((annotation_templates, feedback_templates), protect_stages) = tokio::try_join!(
        templates::read::read_selected(client, wanted, project_id, project_name, pending),
        protect_stages::read::read_selected(client, wanted, project_id, project_name, pending),
    )?;
    Ok(ProjectParts {
        annotation_templates,
        feedback_templates,
        protect_stages,
    })
}

/// Reads all of the kinds a project holds, for an export, one line each.
pub(crate) async fn read_all_project_parts(
    client: &Client,
    project_id: &str,
    project_name: &str,
) -> Result<ProjectParts, ReadError> {
    let ((annotation, feedback), protect_stages) = tokio::try_join!(
        templates::read::read_all(client, project_id, project_name),
        protect_stages::read::read_all(client, project_id, project_name),
    )?;
    Ok(ProjectParts {
        annotation_templates: Some(annotation),
        feedback_templates: Some(feedback),
        protect_stages: Some(protect_stages),
    })
}

/// What a saved plan's check (`reconcile::read::touched`) reads for a change
/// of a kind that reads and observes its own objects: one line per kind.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum OwnRead {
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
            Operation::Template(op) => {
                templates::scope::TemplateScope::of_create(op).map(OwnScope::Templates)
            }
            _ => None,
        }
    }

    /// The scope `op` deletes an object of, and the object's id, when it is
    /// a delete of such an object.
    pub(crate) fn of_delete(op: &Operation) -> Option<(OwnScope, &str)> {
        match op {
            Operation::Template(op) => templates::scope::TemplateScope::of_delete(op)
                .map(|(scope, id)| (OwnScope::Templates(scope), id)),
            _ => None,
        }
    }

    /// The name the create `op` gives its object.
    pub(crate) fn created_name(op: &Operation) -> Option<&str> {
        match op {
            Operation::Template(op) => op.created_name(),
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
            (OwnScope::Templates(scope), Operation::Template(op)) => scope.create(client, op).await,
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
        Operation::Template(op) => op.template_id(),
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
