//! The plan: a pure function of (desired, live) that says what must change.
//!
//! `plan(&ManifestSet, &State, &PlanOptions)` reads nothing and asks no
//! service (a large plan's changes wait in a temporary file: [`changes`]).
//! It normalizes the
//! manifests the way live state was normalized as it was read
//! ([`normalize`]), resolves references ([`resolve`]), and asks each
//! resource kind's planner for its changes ([`metric_settings`], [`trends`]:
//! dashboards, sections, widgets, settings and favorites; [`integrations`],
//! named custom integrations included; the kinds in `crate::kinds`). The result is ordered by address, so the
//! same inputs always give the same plan.
//!
//! Also here, as plain data: addresses and `--target`s ([`address`],
//! [`target`]; [`address_key`], an address as compact ordered bytes), a
//! plan's changes in order ([`changes`]), field differences ([`diff`]), the fingerprints a saved plan
//! checks ([`fingerprint`]), what an apply did ([`report`]), how a saved
//! plan's fields are confirmed after it ([`confirm`]) and, for three-way
//! plans, whose change each change is ([`attribution`]).

pub mod address;
pub mod address_key;
pub mod attribution;
pub mod changes;
pub mod confirm;
pub mod diff;
pub mod fingerprint;
pub mod forecast;
pub mod guard;
pub mod integrations;
pub mod json_text;
pub mod metric_settings;
pub mod normalize;
pub mod notes;
pub mod report;
pub mod resolve;
pub mod target;
pub mod trends;
pub mod types;

use crate::plan::address::MetricSettingsAddress;
use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Serialize;

pub use address::{Address, RunKind};
pub use address_key::{AddressKey, AddressKind};
pub use attribution::Attribution;
pub use changes::{Changes, ChangesError};
pub use forecast::Forecast;
pub use guard::{GuardLimits, MassChange};
pub use json_text::JsonText;
pub use report::*;
pub use target::{Segment, Target, Targets};
pub use types::*;

use crate::api::SharedTexts;
use crate::manifest::locate::FieldPath;
use crate::manifest::set::{ManifestSet, Origin};
use crate::manifest::types::ProjectSpec;
use crate::state::{ObjectKey, ProjectState, RunState, State};

/// Choices that change what a plan contains.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanOptions {
    /// Delete live objects of managed scopes that the manifests do not declare.
    pub prune: bool,
    /// Re-send every integration's secrets.
    pub rotate_secrets: bool,
    /// Only the objects these select (all when empty).
    pub targets: Targets,
    /// How much of a collection a plan may delete or replace before it is
    /// marked as a mass change.
    pub guard: GuardLimits,
    /// Delete (with `prune`) what destroys data: projects and log streams,
    /// with their traces (`--allow-destroy`).
    pub allow_destroy: bool,
}

impl PlanOptions {
    /// Whether the targets select `address` (every address when there are none).
    pub fn selects(&self, address: &Address) -> bool {
        self.targets.selects(address)
    }

    /// Whether the targets select anything in the scope `scope` (an address
    /// prefix such as `project[demo].log_stream[production]`).
    pub fn reaches(&self, scope: &Target) -> bool {
        self.targets.reaches(scope)
    }
}

/// A reference in the manifests that live state cannot satisfy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The document it comes from.
    pub origin: Option<Origin>,
    /// The field of that document that makes the reference (the name of an
    /// unknown project, run or scorer, a scorer's version), when known:
    /// [`crate::manifest::locate`] finds its line and column again.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_field"
    )]
    pub field: Option<FieldPath>,
    /// What is wrong, and the nearest existing names.
    pub message: String,
}

/// A field path as the text diagnostics write (`log_streams[0].name`).
fn serialize_field<S: serde::Serializer>(
    field: &Option<FieldPath>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match field {
        Some(path) => serializer.collect_str(path),
        None => serializer.serialize_none(),
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.origin, &self.field) {
            (Some(o), Some(field)) => write!(f, "{o}: {field}: {}", self.message),
            (Some(o), None) => write!(f, "{o}: {}", self.message),
            (None, _) => f.write_str(&self.message),
        }
    }
}

/// The manifests refer to things that do not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render_problems(.problems))]
pub struct PlanError {
    /// Every problem found, in manifest order.
    pub problems: Vec<Problem>,
}

fn render_problems(problems: &[Problem]) -> String {
    let lines: Vec<String> = problems.iter().map(|p| format!("  - {p}")).collect();
    format!(
        "the manifests refer to objects that do not exist:\n{}",
        lines.join("\n")
    )
}

/// Accumulates the changes, notes and problems of one planning run.
pub(crate) struct Planner<'a> {
    pub(crate) live: &'a State,
    /// The scorer catalog metric settings resolve against: live's, with the
    /// custom scorers and versions the plan creates
    /// (`crate::kinds::planned_catalog`).
    pub(crate) catalog: &'a crate::state::Catalog,
    pub(crate) options: &'a PlanOptions,
    pub(crate) changes: Vec<ResourceChange>,
    pub(crate) notes: Vec<Note>,
    pub(crate) problems: Vec<Problem>,
    /// The judge-call forecasts of the runs whose metric settings change.
    pub(crate) forecast: Vec<forecast::RunForecast>,
}

impl Planner<'_> {
    pub(crate) fn problem(&mut self, origin: &Origin, message: impl Into<String>) {
        self.problems.push(Problem {
            origin: Some(origin.clone()),
            field: None,
            message: message.into(),
        });
    }

    /// A problem with the field `field` of the document at `origin`.
    pub(crate) fn problem_at(
        &mut self,
        origin: &Origin,
        field: FieldPath,
        message: impl Into<String>,
    ) {
        self.problems.push(Problem {
            origin: Some(origin.clone()),
            field: Some(field),
            message: message.into(),
        });
    }

    pub(crate) fn note(
        &mut self,
        address: Option<Address>,
        kind: NoteKind,
        message: impl Into<String>,
    ) {
        self.note_by(None, address, kind, message);
    }

    pub(crate) fn note_by(
        &mut self,
        created_by: Option<String>,
        address: Option<Address>,
        kind: NoteKind,
        message: impl Into<String>,
    ) {
        self.notes.push(Note {
            address,
            kind,
            message: message.into(),
            created_by,
        });
    }
}

/// What a change is, before its fields are computed.
pub(crate) struct Draft {
    pub(crate) address: Address,
    pub(crate) action: Action,
    pub(crate) reason: String,
    /// The fingerprint of the live object ([`fingerprint`]).
    pub(crate) live_fingerprint: String,
    pub(crate) operations: Vec<Operation>,
}

impl Draft {
    /// The change, with its field differences between the normalized
    /// `before` and `after` objects (the objects themselves are not kept).
    pub(crate) fn change<B: Serialize, A: Serialize>(
        self,
        before: Option<&B>,
        after: Option<&A>,
    ) -> ResourceChange {
        let to_json =
            |v: serde_json::Result<serde_json::Value>| v.unwrap_or(serde_json::Value::Null);
        let before = before.map(|b| to_json(serde_json::to_value(b)));
        let after = after.map(|a| to_json(serde_json::to_value(a)));
        let fields =
            diff::object_changes(before.as_ref(), after.as_ref(), self.address.keyed_sets());
        ResourceChange {
            address: self.address,
            action: self.action,
            reason: self.reason,
            fields,
            live_fingerprint: self.live_fingerprint,
            operations: self.operations,
            warnings: Vec::new(),
            created_by: None,
            attribution: None,
        }
    }
}

/// The index of the first live object not yet `used` named `name`, else of
/// the first named one of `renamed_from` (tried in order).
pub(crate) fn find_by_name<T>(
    live: &[T],
    used: &[bool],
    name_of: impl Fn(&T) -> &str,
    name: &str,
    renamed_from: &[String],
) -> Option<usize> {
    let by = |wanted: &str| {
        live.iter()
            .enumerate()
            .position(|(i, t)| !used[i] && name_of(t) == wanted)
    };
    by(name).or_else(|| renamed_from.iter().find_map(|old| by(old)))
}

/// Computes the plan that makes live state match the manifests.
///
/// Returns an error listing every reference that cannot be resolved (missing
/// projects, runs, scorers or versions, with the nearest existing names).
pub fn plan(desired: &ManifestSet, live: &State, options: &PlanOptions) -> Result<Plan, PlanError> {
    let mut planning = Planning::new(desired, live, options);
    for (key, project) in &live.projects {
        planning.project(key, project);
    }
    planning.finish(&live.projects)
}

/// A plan computed project by project, as each project's live state
/// arrives: what lets a reader plan a project and release it before the
/// next ones are read (`crate::state::ProjectState::release_compared`), so
/// that memory holds the projects being read, not every project. [`plan`] is this over
/// a state read whole; both give the same plan.
pub struct Planning<'a> {
    /// The manifests: borrowed, they are left as they are; owned
    /// ([`Planning::releasing`]), each project's compared parts are dropped
    /// once it is planned ([`ProjectSpec::release_planned`]).
    desired: Cow<'a, ManifestSet>,
    /// Live state but its projects: the catalog, integrations, and the
    /// objects found missing.
    live: &'a State,
    options: &'a PlanOptions,
    /// The desired projects the options reach, by key: their indices.
    wanted: BTreeMap<ObjectKey, Vec<usize>>,
    /// The changes planned so far, of every project, in the order the
    /// projects came in (spilled to a temporary file once many: [`Changes`]).
    changes: Changes,
    /// The changes of the project planned last, which [`Planning::project`]
    /// returns: stored with the others when the next one is planned.
    last: Vec<ResourceChange>,
    /// The notes planned so far, likewise.
    notes: Vec<Note>,
    /// Each desired project's problems, by index, once it is planned.
    problems: Vec<Option<Vec<Problem>>>,
    /// The JSON texts of the changes held so far, each held once (until
    /// they are spilled).
    texts: SharedTexts,
    /// The collections planned so far that the plan deletes or replaces
    /// too much of.
    mass_changes: Vec<MassChange>,
    /// The judge-call forecasts of the runs planned so far whose metric
    /// settings change.
    forecast: forecast::Builder,
    /// What planning the global kinds gathers from the manifests (before
    /// the projects are planned and released).
    global: crate::kinds::GlobalPlanning,
    /// Live's scorer catalog with the custom scorers and versions the plan
    /// creates ([`crate::kinds::planned_catalog`]).
    catalog: Cow<'a, crate::state::Catalog>,
}

impl<'a> Planning<'a> {
    /// Starts a plan of `desired` against `live`, whose projects are
    /// given one by one ([`Planning::project`]); `live.projects` is not read.
    pub fn new(desired: &'a ManifestSet, live: &'a State, options: &'a PlanOptions) -> Self {
        Planning::of(Cow::Borrowed(desired), live, options)
    }

    /// Like [`Planning::new`], taking the manifests: once a desired project
    /// is planned, what it declares for comparison (metric settings,
    /// dashboards, templates) is dropped and its names and ids kept, so
    /// memory holds the projects not yet planned and the plan, not both
    /// whole. For a command that does not plan the same manifests again
    /// (`plan`, `drift`; `apply` confirms against them).
    pub fn releasing(desired: ManifestSet, live: &'a State, options: &'a PlanOptions) -> Self {
        Planning::of(Cow::Owned(desired), live, options)
    }

    fn of(desired: Cow<'a, ManifestSet>, live: &'a State, options: &'a PlanOptions) -> Self {
        let mut wanted: BTreeMap<ObjectKey, Vec<usize>> = BTreeMap::new();
        for (index, project) in desired.projects.iter().enumerate() {
            if let Some(key) =
                ObjectKey::from_parts(project.spec.name.as_deref(), project.spec.id.as_deref())
                && options.reaches(&Target::project(&key.to_string()))
            {
                wanted.entry(key).or_default().push(index);
            }
        }
        let problems = desired.projects.iter().map(|_| None).collect();
        let global = crate::kinds::GlobalPlanning::of(&desired);
        let catalog = crate::kinds::planned_catalog(&desired.global, &live.catalog, &live.global);
        Planning {
            desired,
            live,
            options,
            wanted,
            changes: Changes::new(),
            last: Vec::new(),
            notes: Vec::new(),
            problems,
            texts: SharedTexts::default(),
            mass_changes: Vec::new(),
            forecast: forecast::Builder::default(),
            global,
            catalog,
        }
    }

    /// Plans the desired projects that refer to `key`, against
    /// `live_project`, its live state; returns the changes they add (those
    /// the options select).
    pub fn project(&mut self, key: &ObjectKey, live_project: &ProjectState) -> &[ResourceChange] {
        self.store_last();
        let Some(indices) = self.wanted.get(key) else {
            return &[];
        };
        for &index in indices {
            let project = &self.desired.projects[index];
            let mut planner = Planner {
                live: self.live,
                catalog: &self.catalog,
                options: self.options,
                changes: Vec::new(),
                notes: std::mem::take(&mut self.notes),
                problems: Vec::new(),
                forecast: Vec::new(),
            };
            plan_project(
                &mut planner,
                &project.origin,
                key,
                &project.spec,
                live_project,
            );
            self.last.append(&mut planner.changes);
            for run in planner.forecast.drain(..) {
                self.forecast.push(&run);
            }
            self.notes = planner.notes;
            self.problems[index] = Some(planner.problems);
            if let Cow::Owned(desired) = &mut self.desired {
                desired.projects[index].spec.release_planned();
            }
        }
        let options = self.options;
        self.last.retain(|c| options.selects(&c.address));
        self.mass_changes
            .extend(guard::churn_of(&self.last, live_project, options.guard));
        &self.last
    }

    /// Stores the changes of the project planned last with the others.
    fn store_last(&mut self) {
        for mut change in self.last.drain(..) {
            if self.changes.is_spilled() {
                self.texts = SharedTexts::default();
            } else {
                change.share_texts(&mut self.texts);
            }
            self.changes.push(change);
        }
    }

    /// The plan, once every live project was given: `projects` are the
    /// live projects (released or not: only their names are read here).
    pub fn finish(
        mut self,
        projects: &BTreeMap<ObjectKey, ProjectState>,
    ) -> Result<Plan, PlanError> {
        let (live, options) = (self.live, self.options);
        let catalog = std::mem::take(&mut self.catalog);
        let desired = &*self.desired;
        let mut planner = Planner {
            live,
            catalog: &catalog,
            options,
            changes: Vec::new(),
            notes: Vec::new(),
            problems: Vec::new(),
            forecast: Vec::new(),
        };
        for missing in &live.missing {
            let (origin, field) = match declared_at(desired, projects, missing) {
                Some((origin, field)) => (Some(origin.clone()), Some(field)),
                None => (None, None),
            };
            planner.problems.push(Problem {
                origin,
                field,
                message: missing.to_string(),
            });
        }
        for (index, project) in desired.projects.iter().enumerate() {
            let Some(key) =
                ObjectKey::from_parts(project.spec.name.as_deref(), project.spec.id.as_deref())
            else {
                planner.problem(&project.origin, "a project needs a `name` or an `id`");
                continue;
            };
            if !options.reaches(&Target::project(&key.to_string())) {
                continue;
            }
            match self.problems[index].take() {
                Some(problems) => planner.problems.extend(problems),
                None => {
                    if !live
                        .missing
                        .iter()
                        .any(|m| m.kind == "project" && m.key == key)
                    {
                        planner.problem(&project.origin, format!("project `{key}` was not loaded"));
                    }
                }
            }
        }
        for integration in &desired.integrations {
            let address = target::integration_address(&integration.spec);
            if !options.selects(&address) {
                continue;
            }
            match &integration.spec.name {
                Some(name) => integrations::plan_custom_integration(
                    &mut planner,
                    &integration.origin,
                    name,
                    &integration.spec,
                ),
                None => integrations::plan_integration(
                    &mut planner,
                    &integration.origin,
                    &integration.spec,
                ),
            }
        }
        crate::kinds::plan_global_parts(&mut planner, desired, &live.global, &self.global);
        if !planner.problems.is_empty() {
            return Err(PlanError {
                problems: planner.problems,
            });
        }
        self.store_last();
        let global_churn = crate::kinds::global_mass_changes(
            planner
                .changes
                .iter()
                .filter(|c| options.selects(&c.address)),
            &live.global,
            options.guard,
        );
        let mut changes = std::mem::take(&mut self.changes);
        for change in planner.changes.drain(..) {
            if options.selects(&change.address) {
                changes.push(change);
            }
        }
        changes.sort();
        let mut notes = std::mem::take(&mut self.notes);
        notes.append(&mut planner.notes);
        notes.retain(|n| n.address.as_ref().is_none_or(|a| options.selects(a)));
        notes.sort();
        notes.dedup();
        let notes = notes::group_per_project(notes);
        let mut mass_changes = std::mem::take(&mut self.mass_changes);
        mass_changes.extend(global_churn);
        mass_changes.sort();
        let forecast = forecast::finish(
            std::mem::take(&mut self.forecast),
            self.desired.pricing.as_ref(),
        );
        Ok(Plan {
            format_version: PLAN_FORMAT_VERSION,
            changes,
            notes,
            mass_changes,
            forecast,
        })
    }
}

/// The manifest field that names an object reading found missing: a
/// project's `name` (or `id`), or a run's within the project that declares it.
fn declared_at<'d>(
    desired: &'d ManifestSet,
    live_projects: &BTreeMap<ObjectKey, ProjectState>,
    missing: &crate::state::MissingObject,
) -> Option<(&'d Origin, FieldPath)> {
    let key_field = |key: &ObjectKey| match key {
        ObjectKey::Name(_) => "name",
        ObjectKey::Id(_) => "id",
    };
    let key_of =
        |spec: &ProjectSpec| ObjectKey::from_parts(spec.name.as_deref(), spec.id.as_deref());
    if missing.kind == "project" {
        let project = desired
            .projects
            .iter()
            .find(|p| key_of(&p.spec).as_ref() == Some(&missing.key))?;
        return Some((
            &project.origin,
            FieldPath::root().key(key_field(&missing.key)),
        ));
    }
    // A run: in the declared project whose live name is the one it was looked for in.
    desired.projects.iter().find_map(|p| {
        let key = key_of(&p.spec)?;
        let live_project = live_projects.get(&key)?;
        if missing.project.as_deref() != Some(live_project.name.as_str()) {
            return None;
        }
        let keys: Vec<Option<ObjectKey>> = match missing.kind.as_str() {
            "log stream" => p
                .spec
                .log_streams
                .iter()
                .map(|r| ObjectKey::from_parts(r.name.as_deref(), r.id.as_deref()))
                .collect(),
            "experiment" => p
                .spec
                .experiments
                .iter()
                .map(|r| ObjectKey::from_parts(r.name.as_deref(), r.id.as_deref()))
                .collect(),
            _ => return None,
        };
        let list = if missing.kind == "log stream" {
            "log_streams"
        } else {
            "experiments"
        };
        let index = keys.iter().position(|k| k.as_ref() == Some(&missing.key))?;
        Some((
            &p.origin,
            FieldPath::root()
                .key(list)
                .index(index)
                .key(key_field(&missing.key)),
        ))
    })
}

fn plan_project(
    planner: &mut Planner<'_>,
    origin: &Origin,
    key: &ObjectKey,
    spec: &crate::manifest::types::ProjectSpec,
    live: &ProjectState,
) {
    // Addresses name a project or run by the manifest's key.
    let project = key.to_string();
    let runs = spec
        .log_streams
        .iter()
        .enumerate()
        .map(|(i, ls)| {
            let key = ObjectKey::from_parts(ls.name.as_deref(), ls.id.as_deref());
            (
                RunKind::LogStream,
                key,
                FieldPath::root().key("log_streams").index(i),
                ls.metric_settings.as_ref(),
                ls.trends.as_deref(),
                ls.forecast.as_ref(),
            )
        })
        .chain(spec.experiments.iter().enumerate().map(|(i, e)| {
            let key = ObjectKey::from_parts(e.name.as_deref(), e.id.as_deref());
            (
                RunKind::Experiment,
                key,
                FieldPath::root().key("experiments").index(i),
                e.metric_settings.as_ref(),
                None,
                None,
            )
        }));
    for (run_kind, run_key, run_field, metric_settings_spec, trends_spec, declared) in runs {
        if let Some(k) = &run_key
            && !planner
                .options
                .reaches(&Target::run(&project, run_kind, &k.to_string()))
        {
            continue;
        }
        let found = live_run(
            planner,
            (origin, &run_field),
            &project,
            live,
            run_kind,
            run_key,
        );
        let Some((run_key, run)) = found else {
            continue;
        };
        if let Some(ms) = metric_settings_spec {
            let address = Address::MetricSettings(MetricSettingsAddress {
                project: project.clone(),
                run_kind,
                run: run_key.to_string(),
            });
            if planner.options.selects(&address) {
                let field = run_field.clone().key("metric_settings");
                metric_settings::plan_metric_settings(
                    planner,
                    (origin, &field),
                    live,
                    address,
                    (run, declared),
                    ms,
                );
            }
        }
        if let Some(trends_spec) = trends_spec {
            let log_stream = run_key.to_string();
            let scope = Target::trends(&project, &log_stream);
            let others = Target::dashboard(&project, &log_stream, None);
            if planner.options.reaches(&scope) || planner.options.reaches(&others) {
                let field = run_field.clone().key("trends");
                trends::plan_trends(
                    planner,
                    origin,
                    &field,
                    &project,
                    live,
                    &run_key,
                    run,
                    trends_spec,
                );
            }
        }
    }
    crate::kinds::plan_project_parts(planner, origin, &project, spec, live);
}

/// The live run of `kind` that `key` names in `live`, with its key. `None`
/// after recording a problem: the spec names no run, or the run was not
/// loaded (unless reading already reported it missing from this project).
fn live_run<'l>(
    planner: &mut Planner<'_>,
    (origin, run_field): (&Origin, &FieldPath),
    project: &str,
    live: &'l ProjectState,
    kind: RunKind,
    key: Option<ObjectKey>,
) -> Option<(ObjectKey, &'l RunState)> {
    let (article, noun, runs) = match kind {
        RunKind::LogStream => ("a", "log stream", &live.log_streams),
        RunKind::Experiment => ("an", "experiment", &live.experiments),
    };
    let Some(key) = key else {
        planner.problem(
            origin,
            format!("{article} {noun} of project `{project}` needs a `name` or an `id`"),
        );
        return None;
    };
    if let Some(run) = runs.get(&key) {
        return Some((key, run));
    }
    let reported = planner.live.missing.iter().any(|m| {
        m.kind == noun && m.project.as_deref() == Some(live.name.as_str()) && m.key == key
    });
    if !reported {
        let field = run_field.clone().key(match key {
            ObjectKey::Name(_) => "name",
            ObjectKey::Id(_) => "id",
        });
        planner.problem_at(origin, field, format!("{noun} `{key}` was not loaded"));
    }
    None
}
