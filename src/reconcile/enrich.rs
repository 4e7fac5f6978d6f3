//! What reviewers want beside a plan, read after planning as its own value
//! ([`Enrichment`]): who else uses the scorer versions a change touches
//! (spec operation 6, one listing per version) and who the people are whose
//! user ids the plan names (operation 9, once per person). Neither can fail
//! a plan: a lookup that fails is left out.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use futures::future::{join_all, try_join_all};

use crate::api::ScorerConfig;
use crate::client::{ApiError, Client};
use crate::plan::{
    AddressKind, BlastRadius, ChangesError, Enrichment, Operation, Plan, ResourceChange, RunKind,
};
use crate::state::{Catalog, ProjectState, RunState, State};

/// A scorer version a change touches.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Touched {
    scorer: String,
    version_id: String,
    version: i64,
}

/// A scorer in a config: its id, name, and the version it runs
/// (`(version id, number)`, the latest when not pinned).
struct InUse {
    id: String,
    name: String,
    pinned: Option<i64>,
    version: Option<(String, i64)>,
}

fn latest(catalog: &Catalog, id: &str) -> Option<(String, i64)> {
    catalog
        .by_id(id)
        .and_then(|s| s.latest_version.as_ref())
        .map(|v| (v.id.clone(), v.version))
}

/// The scorer versions a metric-settings change adds, removes or re-pins,
/// given the run it changes as read (`current`).
fn touched_versions(catalog: &Catalog, current: Option<&RunState>, op: &Operation) -> Vec<Touched> {
    let Operation::PatchMetricSettings { body, .. } = op else {
        return Vec::new();
    };
    let body = body.get();
    let Some(wanted) = &body.scorers else {
        return Vec::new();
    };
    let current: Vec<InUse> = current
        .and_then(|r| r.metric_settings.as_ref())
        .map(|s| {
            s.scorers
                .iter()
                .map(|(name, scorer)| InUse {
                    id: scorer.id.clone(),
                    name: name.clone(),
                    pinned: scorer.scorer_version,
                    version: match (&scorer.scorer_version_id.0, scorer.scorer_version) {
                        (Some(id), Some(n)) => Some((id.clone(), n)),
                        _ => latest(catalog, &scorer.id),
                    },
                })
                .collect()
        })
        .unwrap_or_default();
    let wanted: Vec<InUse> = wanted
        .iter()
        .map(|c: &ScorerConfig| InUse {
            id: c.id.clone(),
            name: catalog.scorer_key(&c.id, c.name.as_deref()),
            pinned: c.scorer_version.as_ref().map(|v| v.version),
            version: match &c.scorer_version {
                Some(v) => Some((v.id.clone(), v.version)),
                None => latest(catalog, &c.id),
            },
        })
        .collect();
    let key = |s: &InUse| (s.id.clone(), s.pinned);
    let before: BTreeSet<_> = current.iter().map(key).collect();
    let after: BTreeSet<_> = wanted.iter().map(key).collect();
    let mut out = BTreeSet::new();
    for (configs, other) in [(&current, &after), (&wanted, &before)] {
        for c in configs.iter().filter(|c| !other.contains(&key(c))) {
            if let Some((version_id, version)) = &c.version {
                out.insert(Touched {
                    scorer: c.name.clone(),
                    version_id: version_id.clone(),
                    version: *version,
                });
            }
        }
    }
    out.into_iter().collect()
}

/// The scorer versions each metric-settings change of a plan touches:
/// worked out from live state as each project is planned
/// ([`TouchedVersions::add`]), so that the metric settings read can be
/// released before blast radius is listed. Held compactly, as a plan of
/// 10,000 runs touches a few distinct versions thousands of times: each
/// version once, and per run the indices of the ones its change touches.
#[derive(Debug, Default)]
pub struct TouchedVersions {
    /// Each distinct version touched.
    versions: Vec<Touched>,
    /// Its index in `versions`.
    index: BTreeMap<Touched, u32>,
    /// By the run a metric-settings change patches (its kind and id): the
    /// indices in `versions` of what it touches.
    by_run: BTreeMap<RunKind, BTreeMap<String, Box<[u32]>>>,
}

impl TouchedVersions {
    /// Adds the versions that `changes`, planned against `project`, touch.
    pub fn add<'c>(
        &mut self,
        catalog: &Catalog,
        project: &ProjectState,
        changes: impl IntoIterator<Item = &'c ResourceChange>,
    ) {
        for change in changes {
            for op in &change.operations {
                let Operation::PatchMetricSettings { run, .. } = op else {
                    continue;
                };
                let touched = touched_versions(catalog, run_changed(project, op), op);
                if touched.is_empty() {
                    continue;
                }
                let indices = touched.into_iter().map(|t| self.intern(t)).collect();
                self.by_run
                    .entry(run.kind)
                    .or_default()
                    .insert(run.id.clone(), indices);
            }
        }
    }

    /// The index of `touched` in `versions`, added when new.
    fn intern(&mut self, touched: Touched) -> u32 {
        if let Some(&i) = self.index.get(&touched) {
            return i;
        }
        let i = u32::try_from(self.versions.len()).expect("fewer than 2^32 scorer versions");
        self.versions.push(touched.clone());
        self.index.insert(touched, i);
        i
    }

    /// The versions the metric-settings operation `op` touches (none for
    /// another operation).
    fn of(&self, op: &Operation) -> impl Iterator<Item = &Touched> {
        let indices = match op {
            Operation::PatchMetricSettings { run, .. } => self
                .by_run
                .get(&run.kind)
                .and_then(|runs| runs.get(&run.id))
                .map(|i| &i[..]),
            _ => None,
        };
        indices
            .unwrap_or_default()
            .iter()
            .map(|&i| &self.versions[i as usize])
    }

    /// The versions the changes of `plan` touch, against `live` read whole
    /// (a three-way plan, held in memory).
    pub fn of_state(live: &State, plan: &Plan) -> Result<Self, ChangesError> {
        let by_id: BTreeMap<&str, &ProjectState> =
            live.projects.values().map(|p| (p.id.as_str(), p)).collect();
        let mut touched = TouchedVersions::default();
        for change in metric_settings_changes(plan) {
            let change = change?;
            let project = change.operations.iter().find_map(|op| match op {
                Operation::PatchMetricSettings { project_id, .. } => by_id.get(project_id.as_str()),
                _ => None,
            });
            if let Some(project) = project {
                touched.add(&live.catalog, project, std::iter::once(&*change));
            }
        }
        Ok(touched)
    }
}

/// The metric-settings changes of `plan`, each read back as it is reached
/// (the others are not read).
fn metric_settings_changes(
    plan: &Plan,
) -> impl Iterator<Item = Result<Cow<'_, ResourceChange>, ChangesError>> {
    let changes = &plan.changes;
    (0..changes.len())
        .filter(|&i| changes.kind(i) == AddressKind::MetricSettings)
        .map(|i| changes.get(i))
}

/// The run of `project` a metric-settings operation changes, as read.
fn run_changed<'p>(project: &'p ProjectState, op: &Operation) -> Option<&'p RunState> {
    let Operation::PatchMetricSettings { run, .. } = op else {
        return None;
    };
    let runs = match run.kind {
        RunKind::LogStream => &project.log_streams,
        RunKind::Experiment => &project.experiments,
    };
    runs.values().find(|r| r.id == run.id)
}

/// Why blast radius could not be listed.
#[derive(Debug, thiserror::Error)]
enum RadiusError {
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error(transparent)]
    Changes(#[from] ChangesError),
}

/// For each metric-settings change of `plan` that touches scorer versions
/// used by other projects, those projects. Each version is listed once.
async fn blast_radius(
    client: &Client,
    touched: &TouchedVersions,
    plan: &Plan,
) -> Result<BTreeMap<String, Vec<BlastRadius>>, RadiusError> {
    let ids: BTreeSet<&str> = touched
        .versions
        .iter()
        .map(|t| t.version_id.as_str())
        // A version this plan creates is used by no other project yet.
        .filter(|id| !crate::reconcile::pending::is_pending(id))
        .collect();
    if ids.is_empty() {
        return Ok(BTreeMap::new());
    }
    let listings = try_join_all(ids.into_iter().map(|id| async move {
        let projects = client.scorer_version_projects(id).await?;
        Ok::<_, ApiError>((id.to_owned(), projects))
    }))
    .await?;
    let by_version: BTreeMap<String, Vec<(String, String)>> = listings
        .into_iter()
        .map(|(id, projects)| (id, projects.into_iter().map(|p| (p.id, p.name)).collect()))
        .collect();
    let mut out = BTreeMap::new();
    for change in metric_settings_changes(plan) {
        let change = change?;
        let Some(op @ Operation::PatchMetricSettings { project_id, .. }) =
            change.operations.first()
        else {
            continue;
        };
        let mut radius = Vec::new();
        for t in touched.of(op) {
            let others: Vec<String> = by_version
                .get(&t.version_id)
                .into_iter()
                .flatten()
                .filter(|(id, _)| id != project_id)
                .map(|(_, name)| name.clone())
                .collect();
            if !others.is_empty() {
                radius.push(BlastRadius {
                    scorer: t.scorer.clone(),
                    scorer_version_id: t.version_id.clone(),
                    version: t.version,
                    total_count: i64::try_from(others.len()).unwrap_or(i64::MAX),
                    projects: others,
                });
            }
        }
        if !radius.is_empty() {
            out.insert(change.address.to_string(), radius);
        }
    }
    Ok(out)
}

/// The user ids the `created_by` fields of `plan` name.
fn named_people(plan: &Plan) -> BTreeSet<String> {
    plan.notes
        .iter()
        .filter_map(|n| n.created_by.as_deref())
        .chain(plan.changes.creators())
        .map(str::to_owned)
        .collect()
}

/// Looks up every person in `ids`: user id to `Name <email>`. A user that
/// cannot be looked up is left out.
async fn people(client: &Client, ids: BTreeSet<String>) -> BTreeMap<String, String> {
    let lookups = join_all(ids.into_iter().map(|id| async move {
        let person = match client.get_user(&id).await {
            Ok(Some(user)) => Some(user.display()),
            Ok(None) | Err(_) => None,
        };
        (id, person)
    }))
    .await;
    lookups
        .into_iter()
        .filter_map(|(id, person)| person.map(|p| (id, p)))
        .collect()
}

/// The people `plan` names, looked up: the enrichment of a saved plan, whose file
/// keeps user ids (its blast radius was shown when it was made).
pub async fn people_of(client: &Client, plan: &Plan) -> Enrichment {
    Enrichment {
        people: people(client, named_people(plan)).await,
        ..Enrichment::default()
    }
}

/// The enrichment of `plan` (both lookups at once), and a warning when the
/// blast radius could not be listed.
pub async fn enrich(
    client: &Client,
    touched: &TouchedVersions,
    plan: &Plan,
) -> (Enrichment, Option<String>) {
    let ids = named_people(plan);
    let (radius, people) = tokio::join!(blast_radius(client, touched, plan), people(client, ids));
    let (blast_radius, warning) = match radius {
        Ok(r) => (r, None),
        Err(e) => (
            BTreeMap::new(),
            Some(format!(
                "could not list the other projects using the affected scorer versions: {e}"
            )),
        ),
    };
    (
        Enrichment {
            blast_radius,
            people,
        },
        warning,
    )
}
