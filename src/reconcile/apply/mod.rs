//! Executing a plan: stage by stage in dependency order (integrations, then
//! templates, metric settings, dashboards created or renamed, sections,
//! widgets, sections deleted, dashboard settings, favorites, dashboards
//! replaced or deleted), changes within a stage concurrently under a bound,
//! the operations of one change in order.
//!
//! A failure does not stop the run: every change that can still be made is
//! made, the report says what succeeded, failed and was skipped, and a second
//! apply completes the rest. Two things do stop new changes from starting:
//! a write the service refuses for the caller (401: credentials refused, 403:
//! the role may not write), since every later write would be refused alike;
//! and a [`Stop`] (the first SIGINT or SIGTERM), after which the changes in
//! flight get the stop's grace period to finish and the others are reported
//! as not started.
//!
//! Writes converge under faults without ever being sent blindly:
//! - an idempotent write (PUT, PATCH, DELETE, favorite) whose answer leaves
//!   open whether it was applied is settled by reading the object back, and
//!   sent again only when the read does not show it ([`settle`]);
//! - a create is preceded by a fresh read of its scope, settled by reading
//!   when its answer is lost (and sent again when the read shows it absent),
//!   and followed by a read that removes this run's own copy when another
//!   run created the same name at the same time ([`create`]).
//!
//! - [`create`]: creates without duplicates.
//! - [`settle`]: settling idempotent writes by re-reading.
//! - [`stop`]: the stop flag and the grace period of changes in flight.
//! - [`secrets`]: resolves `${ENV}` references of integration secrets at the last moment.
//! - [`resolve`]: finds, when an operation runs, the objects the same apply
//!   created that a plan could only name.

pub mod create;
pub mod resolve;
pub mod secrets;
pub mod settle;
pub mod stop;

use crate::plan::address::{SectionAddress, WidgetAddress};
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;

use create::{Created, Job, NameScope, create_in_scope};
use secrets::{MissingSecret, resolve_secrets};
pub use stop::Stop;

use super::read::ReadError;
use super::read::trends::find_dashboard_ids;
use crate::api::{TrendsDashboardDuplicateRequest, WidgetUpdateRequest};
use crate::client::{ApiError, Client};
use crate::plan::{
    Action, Address, AddressKey, AddressKind, ChangeOutcome, Changes, ChangesError, DashboardRef,
    Operation, OutcomeStatus, Plan, ResourceChange, RunKind,
};
use crate::reconcile::pending::Pending;
use crate::state::Catalog;
use resolve::LogStream;

/// Options of an apply run.
pub struct ApplyOptions<'a> {
    /// Changes applied at once within a stage.
    pub concurrency: usize,
    /// Reads environment variables (integration secrets).
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// Told each change's outcome as soon as it is known (for streaming output).
    pub on_outcome: &'a (dyn Fn(&ChangeOutcome) + Sync),
    /// The scorer catalog, to read metric settings back in the plan's
    /// comparable form when a write is settled.
    pub catalog: &'a Catalog,
    /// Asked to stop: no change starts after it.
    pub stop: &'a Stop,
}

/// Why one operation of a change failed.
#[derive(Debug, thiserror::Error)]
pub enum OperationError {
    /// The service answered with an error.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// An integration secret's variable is not set.
    #[error(transparent)]
    MissingSecret(#[from] MissingSecret),
    /// An idempotent write was sent again after each unclear answer, and no
    /// read showed it applied.
    #[error(
        "{source} (sent {sends} time(s); a re-read after each unclear answer did not show it applied)"
    )]
    NotApplied {
        /// How many times it was sent.
        sends: u32,
        /// The last answer.
        #[source]
        source: ApiError,
    },
    /// Every answer to a create was lost and a read after each showed it absent.
    #[error(
        "the service's answer was lost {sends} time(s) and a re-read after each did not find the {noun}, so it was most likely not created (a request the service processes late could still land); the next apply re-reads before creating it"
    )]
    LostCreate {
        /// `section`, `widget`, `dashboard` or `template`.
        noun: &'static str,
        /// How many times it was sent.
        sends: u32,
    },
    /// A create got no answer in time and a read did not find it; it was not
    /// sent again, because the first request may still land.
    #[error(
        "no answer ({cause}) and a re-read did not find the {noun}; it was not sent again, because the service may still be processing the request and a second one could make two; the next apply re-reads before creating it"
    )]
    MaybeLate {
        /// `section` or `template`.
        noun: &'static str,
        /// What happened.
        cause: String,
    },
    /// A code scorer's file did not pass the service's validation: no
    /// version was created.
    #[error("code scorer `{scorer}`: {message}; no version was created")]
    CodeNotValidated {
        /// The scorer's name.
        scorer: String,
        /// The service's message, or why the validation did not complete.
        message: String,
    },
    /// The service refused to delete a custom scorer it says is still in
    /// use (422 or 409), with the projects associated with it, as the
    /// service lists them (`GET /v2/scorers/{id}/projects`; `None`: that
    /// read failed too).
    #[error(
        "custom scorer `{scorer}` was not deleted: the service refuses while it is in use: {source}{}",
        associated(.projects)
    )]
    ScorerInUse {
        /// The scorer's name.
        scorer: String,
        /// The projects associated with it.
        projects: Option<Vec<String>>,
        /// The service's refusal.
        #[source]
        source: ApiError,
    },
    /// An object the plan names by name (the same apply created it) is not
    /// there, or is not the only one of that name.
    #[error("could not find what the plan names: {what}")]
    Unresolved {
        /// What was looked for, and what was found.
        what: String,
    },
    /// No code sends this kind of operation (a kind missing from
    /// `kinds::send_own` and from the core's own list): a bug.
    #[error("evalctl has no sender for a `{op}` operation: this is a bug, please report it")]
    NoSender {
        /// The operation's tag.
        op: String,
    },
    /// A create's answer was lost and the read that would settle it failed too.
    #[error(
        "the service's answer was lost and the re-read failed too ({source}); the next apply will re-read and create it only if missing"
    )]
    Unsettled {
        /// `section`, `widget`, `dashboard` or `template`.
        noun: &'static str,
        /// Why the read failed.
        #[source]
        source: ReadError,
    },
    /// The fresh read before a create failed, so it was not sent.
    #[error(
        "not created: the read that precedes every create failed ({source}); the next apply creates it"
    )]
    NotRead {
        /// `section` or `template`.
        noun: &'static str,
        /// Why the read failed.
        #[source]
        source: ReadError,
    },
    /// The apply was interrupted while this was in flight, and the grace
    /// period ran out before its answer.
    #[error(
        "interrupted ({cause}) while in flight, and no answer came within the {grace_secs}s allowed after it; whether it was applied is unknown until the next plan"
    )]
    Interrupted {
        /// The signal.
        cause: String,
        /// The grace period, in seconds.
        grace_secs: u64,
    },
    /// Another run created the same name at the same time, its copy is the
    /// one kept, and this run could not delete its own.
    #[error(
        "created, but another run created a {noun} of this name at the same time and its copy ({keeper}) is the one kept; deleting this run's copy ({id}) failed ({source}); the next plan deletes it"
    )]
    OwnCopyLeft {
        /// `section` or `template`.
        noun: &'static str,
        /// This run's copy.
        id: String,
        /// The copy kept.
        keeper: String,
        /// Why the delete failed.
        #[source]
        source: ApiError,
    },
}

fn associated(projects: &Option<Vec<String>>) -> String {
    match projects.as_deref() {
        Some([]) | None => String::new(),
        Some(names) => format!(
            "\n  projects associated with it (GET /v2/scorers/{{id}}/projects): {}; remove it from their metric settings first",
            names.join(", ")
        ),
    }
}

/// Why a change was not started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// The service refused an earlier write for these credentials.
    Refused,
    /// The apply was asked to stop.
    Interrupted,
}

/// Whether new changes may start: closed once the service refuses the
/// caller, or a stop is asked for.
pub struct Gate<'a> {
    /// The stop of this apply.
    pub stop: &'a Stop,
    refused: AtomicBool,
}

impl<'a> Gate<'a> {
    /// An open gate.
    pub fn new(stop: &'a Stop) -> Self {
        Gate {
            stop,
            refused: AtomicBool::new(false),
        }
    }

    /// Why no new change may start, if so.
    pub fn closed(&self) -> Option<Skip> {
        if self.refused.load(Ordering::SeqCst) {
            Some(Skip::Refused)
        } else if self.stop.is_requested() {
            Some(Skip::Interrupted)
        } else {
            None
        }
    }

    /// Closes the gate when `error` says the service refuses the caller.
    pub fn saw(&self, error: &OperationError) {
        if matches!(
            error,
            OperationError::Api(ApiError::Unauthorized { .. } | ApiError::Forbidden { .. })
        ) {
            self.refused.store(true, Ordering::SeqCst);
        }
    }
}

/// The stage a change of `kind` and `action` belongs to; lower stages run
/// first. A dashboard is created before its contents change; sections are
/// created or renamed before widgets go into them, widgets deleted before
/// others are created (a full section has room), moved out of a section
/// before it is deleted (where no widget moves, a section is deleted before
/// others are created instead: [`EARLY_SECTION_DELETE`]); a dashboard is
/// replaced by its copy (or deleted) once its contents changed, so the copy
/// carries them.
fn stage(kind: AddressKind, action: Action) -> u8 {
    if let Some(stage) = kind.own_stage(action) {
        return stage;
    }
    let delete = action == Action::Delete;
    match kind {
        AddressKind::Integration | AddressKind::CustomIntegration => 0,
        AddressKind::MetricSettings => 20,
        AddressKind::Dashboard if matches!(action, Action::Create | Action::Update) => 30,
        AddressKind::Section if !delete => 40,
        AddressKind::Widget if delete => 50,
        AddressKind::Widget if action == Action::Update => 60,
        AddressKind::Widget => 70,
        AddressKind::Section => 80,
        AddressKind::Settings => 90,
        AddressKind::Favorite => 100,
        AddressKind::Dashboard => 110,
        // The kinds that say their own stage (`KindAddress::apply_stage`):
        // custom scorers 5; projects 1 and log streams 2 (deleted at 130
        // and 120); templates 10; prompt templates and Protect stages 15.
        _ => 0,
    }
}

/// A section deleted where no widget is created, changed or moved: deleted before the
/// sections of its dashboard are created (after the dashboard itself), so a dashboard at
/// its cap of 50 sections has room for the new ones. Elsewhere sections are deleted last,
/// once the widgets moving out of them have moved.
const EARLY_SECTION_DELETE: u8 = 35;

/// A dashboard, as `(project, log stream, dashboard name)`; `None`: the default one.
type DashboardKey = (String, String, Option<String>);

fn dashboard_of(address: &Address) -> Option<DashboardKey> {
    match address {
        Address::Section(SectionAddress {
            project,
            log_stream,
            dashboard,
            ..
        })
        | Address::Widget(WidgetAddress {
            project,
            log_stream,
            dashboard,
            ..
        }) => Some((project.clone(), log_stream.clone(), dashboard.clone())),
        _ => None,
    }
}

/// The stage of each change of `changes` ([`stage`], with sections deleted early where
/// no widget of their dashboard is created, changed or moved).
fn stages_of(changes: &Changes) -> Vec<u8> {
    let busy: std::collections::BTreeSet<DashboardKey> = (0..changes.len())
        .filter(|&i| changes.kind(i) == AddressKind::Widget && changes.action(i) != Action::Delete)
        .filter_map(|i| dashboard_of(&changes.address(i)))
        .collect();
    (0..changes.len())
        .map(|i| {
            let (kind, action) = (changes.kind(i), changes.action(i));
            let early = kind == AddressKind::Section
                && action == Action::Delete
                && dashboard_of(&changes.address(i)).is_some_and(|d| !busy.contains(&d));
            if early {
                EARLY_SECTION_DELETE
            } else {
                stage(kind, action)
            }
        })
        .collect()
}

/// What runs as one: a change, or the plain creates of one scope (they
/// share the reads that bracket them), or a change that could not be read
/// back from the plan's temporary file.
enum Unit {
    One(usize),
    Creates(NameScope, Vec<usize>),
    Unreadable(usize, ChangesError),
}

/// The scope of a change that is one create and nothing else.
fn plain_create(change: &ResourceChange) -> Option<NameScope> {
    match change.operations.as_slice() {
        [op] if change.action == Action::Create => NameScope::of(op),
        _ => None,
    }
}

/// The units of stage `current`, each change read back to see whether it
/// is a plain create (and let go: it is read again when it runs).
fn units(changes: &Changes, stages: &[u8], current: u8) -> Vec<Unit> {
    // Scopes in the order of their first create (a plan's order is stable).
    let mut creates: Vec<(NameScope, Vec<usize>)> = Vec::new();
    let mut out = Vec::new();
    for (i, _) in stages.iter().enumerate().filter(|(_, s)| **s == current) {
        let scope = match changes.get(i) {
            Ok(change) => plain_create(&change),
            Err(error) => {
                out.push(Unit::Unreadable(i, error));
                continue;
            }
        };
        match scope {
            Some(scope) => match creates.iter_mut().find(|(s, _)| *s == scope) {
                Some((_, indices)) => indices.push(i),
                None => creates.push((scope, vec![i])),
            },
            None => out.push(Unit::One(i)),
        }
    }
    out.extend(creates.into_iter().map(|(s, c)| Unit::Creates(s, c)));
    out
}

/// Applies every change of `plan`; one outcome per change, in plan order.
/// A change is read (from the plan's temporary file, when it spilled) when
/// it is about to run, and let go once it ran.
pub async fn apply(plan: &Plan, client: &Client, options: &ApplyOptions<'_>) -> Vec<ChangeOutcome> {
    // Every change belongs to one stage, and every stage runs to the end:
    // each change gets exactly one outcome (skipped once the gate closed).
    let gate = Gate::new(options.stop);
    let gate = &gate;
    let changes = &plan.changes;
    let mut outcomes: Vec<(usize, ChangeOutcome)> = Vec::with_capacity(changes.len());
    let of_change = stages_of(changes);
    // Ids of what this plan creates (projects, log streams, custom
    // scorers) are resolved when the operations inside or using them run.
    let creates = (0..changes.len())
        .any(|i| changes.kind(i).makes_pending_ids() && changes.action(i) == Action::Create);
    let pending = &Pending::new(creates);
    let mut stages = of_change.clone();
    stages.sort_unstable();
    stages.dedup();
    for current in stages {
        let work = units(changes, &of_change, current)
            .into_iter()
            .map(|unit| run_unit(client, changes, unit, options, gate, pending));
        let results = futures::stream::iter(work).buffer_unordered(options.concurrency.max(1));
        results
            .for_each(|done| {
                outcomes.extend(done);
                std::future::ready(())
            })
            .await;
    }
    outcomes.sort_unstable_by_key(|(i, _)| *i);
    outcomes.into_iter().map(|(_, o)| o).collect()
}

async fn run_unit(
    client: &Client,
    changes: &Changes,
    unit: Unit,
    options: &ApplyOptions<'_>,
    gate: &Gate<'_>,
    pending: &Pending,
) -> Vec<(usize, ChangeOutcome)> {
    let unreadable = |i: usize, error: &ChangesError| {
        let outcome = ChangeOutcome {
            address: AddressKey::of(&changes.address(i)),
            action: changes.action(i),
            status: OutcomeStatus::Failed,
            detail: Some(format!("not attempted: {error}")),
            transient: false,
            invalid_input: false,
        };
        (options.on_outcome)(&outcome);
        (i, outcome)
    };
    match unit {
        Unit::One(i) => {
            let outcome = match changes.get(i) {
                Ok(change) => match pending.resolve_change(client, change).await {
                    (change, None) => apply_change(client, &change, options, gate).await,
                    (change, Some(error)) => failed(&change, &error, 0),
                },
                Err(error) => return vec![unreadable(i, &error)],
            };
            (options.on_outcome)(&outcome);
            vec![(i, outcome)]
        }
        Unit::Unreadable(i, error) => vec![unreadable(i, &error)],
        Unit::Creates(scope, indices) => {
            // The scope's changes, read back for as long as they run.
            let mut read = Vec::with_capacity(indices.len());
            let mut out = Vec::new();
            for i in indices {
                match changes.get(i) {
                    Ok(change) => match pending.resolve_change(client, change).await {
                        (change, None) => read.push((i, change)),
                        (change, Some(error)) => {
                            let outcome = failed(&change, &error, 0);
                            (options.on_outcome)(&outcome);
                            out.push((i, outcome));
                        }
                    },
                    Err(error) => out.push(unreadable(i, &error)),
                }
            }
            // The scope as resolved (a project this apply created).
            let scope = read
                .first()
                .and_then(|(_, c)| NameScope::of(&c.operations[0]))
                .unwrap_or(scope);
            let jobs = read
                .iter()
                .enumerate()
                .map(|(job, (_, change))| Job {
                    index: job,
                    op: &change.operations[0],
                    stoppable: true,
                })
                .collect();
            let finish = |job: usize, created: Created| {
                let change = &read[job].1;
                let outcome = match created {
                    Created::Done(note) => succeeded(change, note),
                    Created::Failed(e) => failed(change, &e, 0),
                    Created::NotStarted(skip) => skipped(change, skip, gate),
                    Created::Abandoned => abandoned(change, gate),
                };
                (options.on_outcome)(&outcome);
                outcome
            };
            let created =
                create_in_scope(client, &scope, jobs, options.concurrency, gate, &finish).await;
            out.extend(
                created
                    .into_iter()
                    .map(|(job, outcome)| (read[job].0, outcome)),
            );
            out
        }
    }
}

fn outcome(
    change: &ResourceChange,
    status: OutcomeStatus,
    detail: Option<String>,
) -> ChangeOutcome {
    ChangeOutcome {
        address: AddressKey::of(&change.address),
        action: change.action,
        status,
        detail,
        transient: false,
        invalid_input: false,
    }
}

impl OperationError {
    /// Whether the cause passes, so that a second apply (which plans afresh
    /// from live state) is expected to complete the change: the service was
    /// unavailable, slow or throttling, the answer was lost, the run was
    /// interrupted, or another writer raced this one (404, 409). A refusal
    /// of the request or of the credentials, or a missing variable, stays.
    pub fn is_transient(&self) -> bool {
        match self {
            OperationError::Api(error) => matches!(
                error,
                ApiError::RateLimited { .. }
                    | ApiError::Server { .. }
                    | ApiError::Ambiguous { .. }
                    | ApiError::Timeout { .. }
                    | ApiError::Transport { .. }
                    | ApiError::NotFound { .. }
                    | ApiError::Conflict { .. }
            ),
            OperationError::MissingSecret(_)
            | OperationError::CodeNotValidated { .. }
            | OperationError::ScorerInUse { .. }
            | OperationError::NoSender { .. } => false,
            _ => true,
        }
    }
}

fn succeeded(change: &ResourceChange, note: Option<String>) -> ChangeOutcome {
    outcome(change, OutcomeStatus::Succeeded, note)
}

fn failed(change: &ResourceChange, error: &OperationError, done: usize) -> ChangeOutcome {
    let steps = if done > 0 {
        format!(
            " (after {done} of {} steps succeeded)",
            change.operations.len()
        )
    } else {
        String::new()
    };
    ChangeOutcome {
        transient: error.is_transient(),
        invalid_input: matches!(error, OperationError::CodeNotValidated { .. }),
        ..outcome(
            change,
            OutcomeStatus::Failed,
            Some(format!("{error}{steps}")),
        )
    }
}

fn skipped(change: &ResourceChange, skip: Skip, gate: &Gate<'_>) -> ChangeOutcome {
    let detail = match skip {
        Skip::Refused => {
            "not attempted: the service refused an earlier write for these credentials".to_owned()
        }
        Skip::Interrupted => format!(
            "not started: the apply was interrupted ({}); the next apply makes it",
            gate.stop.cause().unwrap_or("stopped")
        ),
    };
    ChangeOutcome {
        transient: skip == Skip::Interrupted,
        ..outcome(change, OutcomeStatus::Skipped, Some(detail))
    }
}

fn abandoned(change: &ResourceChange, gate: &Gate<'_>) -> ChangeOutcome {
    let error = OperationError::Interrupted {
        cause: gate.stop.cause().unwrap_or("stopped").to_owned(),
        grace_secs: gate.stop.grace().as_secs(),
    };
    ChangeOutcome {
        transient: true,
        ..outcome(change, OutcomeStatus::Failed, Some(error.to_string()))
    }
}

/// Applies one change's operations in order, unless the gate is closed. A
/// change in flight when a stop is asked for runs on, within the grace period.
async fn apply_change(
    client: &Client,
    change: &ResourceChange,
    options: &ApplyOptions<'_>,
    gate: &Gate<'_>,
) -> ChangeOutcome {
    if let Some(skip) = gate.closed() {
        return skipped(change, skip, gate);
    }
    let work = async {
        let mut notes = Vec::new();
        for (index, op) in change.operations.iter().enumerate() {
            match run_operation(client, change, index, op, options, gate).await {
                Ok(note) => notes.extend(note),
                Err(error) => {
                    gate.saw(&error);
                    return failed(change, &error, index);
                }
            }
        }
        succeeded(change, (!notes.is_empty()).then(|| notes.join("; ")))
    };
    match gate.stop.bounded(work).await {
        Some(outcome) => outcome,
        None => abandoned(change, gate),
    }
}

/// Runs step `index` of `change`. `Ok(Some(note))` when it succeeded in a
/// way worth saying.
async fn run_operation(
    client: &Client,
    change: &ResourceChange,
    index: usize,
    op: &Operation,
    options: &ApplyOptions<'_>,
    gate: &Gate<'_>,
) -> Result<Option<String>, OperationError> {
    if let Some(scope) = NameScope::of(op) {
        // A create inside a change (a replace): in flight, so not stoppable.
        let job = Job {
            index: 0,
            op,
            stoppable: false,
        };
        let created = create_in_scope(client, &scope, vec![job], 1, gate, &|_, c| c).await;
        return match created.into_iter().next().map(|(_, c)| c) {
            Some(Created::Done(note)) => Ok(note),
            Some(Created::Failed(e)) => Err(e),
            _ => Err(OperationError::Interrupted {
                cause: gate.stop.cause().unwrap_or("stopped").to_owned(),
                grace_secs: gate.stop.grace().as_secs(),
            }),
        };
    }
    if let Operation::DuplicateDashboard {
        project_id,
        log_stream_id,
        source,
        body,
    } = op
    {
        let stream = LogStream {
            project_id,
            log_stream_id,
        };
        return duplicate_settled(client, &stream, source, body).await;
    }
    let mut lost: Vec<String> = Vec::new();
    // One budget, `--max-retries`, for the client's retries and the re-sends here.
    let budget = client.config().retry.max_attempts.max(1);
    let mut sent = 0;
    let mut rounds = 0;
    loop {
        rounds += 1;
        let left = budget.saturating_sub(sent).max(1);
        let error = match crate::client::with_attempts(left, send_idempotent(client, op, options))
            .await
        {
            Ok(note) => {
                let resent = (!lost.is_empty()).then(|| {
                    format!(
                        "the answer was unclear ({}) and a re-read did not show it applied, so it was sent again",
                        lost.join(", ")
                    )
                });
                return Ok(match (resent, note) {
                    (Some(a), Some(b)) => Some(format!("{a}; {b}")),
                    (a, b) => a.or(b),
                });
            }
            Err(OperationError::Api(e)) if settle::maybe_applied(&e) => e,
            Err(e) => return Err(e),
        };
        sent += error.attempts().unwrap_or(1);
        if settle::applied(client, options.catalog, change, index).await == Some(true) {
            return Ok(Some(format!(
                "the answer was unclear ({}); a re-read shows it applied",
                settle::short_cause(&error)
            )));
        }
        if sent >= budget || rounds >= settle::MAX_SENDS {
            return Err(OperationError::NotApplied {
                sends: sent,
                source: error,
            });
        }
        lost.push(settle::short_cause(&error));
    }
}

/// Copies a dashboard (how a dashboard is created) without leaving two of
/// one name, the way `create` makes sections and widgets: a fresh read of
/// the log stream's dashboards of that name first (one made since the plan
/// was read, by another run, is not made again); a lost answer settled by
/// reading (made when a dashboard of that name other than the source
/// exists; absent, sent again, at most `create::MAX_SENDS` times in all,
/// unless the lost request may still land: the client timed out); then one
/// more read: when another run copied the same name at the same time, the
/// first listed is the one kept (the one a plan pairs and `resolve` finds),
/// and this run deletes its own copy, made an instant ago, if it is not
/// that one.
async fn duplicate_settled(
    client: &Client,
    stream: &LogStream<'_>,
    source: &DashboardRef,
    body: &TrendsDashboardDuplicateRequest,
) -> Result<Option<String>, OperationError> {
    let noun = "dashboard";
    let source_id = stream.dashboard(client, source).await?;
    let copies = || async {
        find_dashboard_ids(client, stream.project_id, stream.log_stream_id, &body.name)
            .await
            .map(|ids| {
                ids.into_iter()
                    .filter(|id| id != &source_id)
                    .collect::<Vec<_>>()
            })
    };
    let describe = || format!("the dashboards named `{}`", body.name);
    match copies().await {
        Ok(ids) if !ids.is_empty() => {
            return Ok(Some(format!(
                "the {noun} exists already (created since the plan was read, by another run); not created again"
            )));
        }
        Ok(_) => {}
        Err(e) => {
            return Err(OperationError::NotRead {
                noun,
                source: ReadError::new(describe(), e),
            });
        }
    }
    let mut lost: Vec<String> = Vec::new();
    let mut made: Option<String> = None;
    for _ in 0..create::MAX_SENDS {
        let error = match client
            .duplicate_dashboard(stream.project_id, stream.log_stream_id, &source_id, body)
            .await
        {
            Ok(copy) => {
                made = Some(copy.id);
                break;
            }
            Err(e @ ApiError::Ambiguous { .. }) => e,
            Err(e) => return Err(e.into()),
        };
        let cause = settle::short_cause(&error);
        match copies().await {
            Ok(ids) if !ids.is_empty() => {
                return Ok(Some(format!(
                    "the service's answer was lost ({cause}); a re-read found the {noun}, so it was created once"
                )));
            }
            Ok(_) if create::may_still_land(&cause) => {
                return Err(OperationError::MaybeLate { noun, cause });
            }
            Ok(_) => lost.push(cause),
            Err(e) => {
                return Err(OperationError::Unsettled {
                    noun,
                    source: ReadError::new(describe(), e),
                });
            }
        }
    }
    let Some(id) = made else {
        return Err(OperationError::LostCreate {
            noun,
            sends: create::MAX_SENDS,
        });
    };
    let mut notes: Vec<String> = Vec::new();
    if !lost.is_empty() {
        notes.push(format!(
            "the answer to {} earlier request(s) was lost ({}) and a re-read did not find the {noun}, so it was sent again",
            lost.len(),
            lost.join(", ")
        ));
    }
    match copies().await {
        Ok(ids) => match ids.first() {
            Some(keeper) if *keeper != id && ids.contains(&id) => {
                let keeper = keeper.clone();
                match client
                    .delete_dashboard(stream.project_id, stream.log_stream_id, &id)
                    .await
                {
                    Ok(_) => notes.push(format!(
                        "another run created a {noun} of this name at the same time; its copy ({keeper}) is the one kept, so this run deleted its own ({id})"
                    )),
                    Err(source) => {
                        return Err(OperationError::OwnCopyLeft {
                            noun,
                            id,
                            keeper,
                            source,
                        });
                    }
                }
            }
            _ => {}
        },
        Err(e) => notes.push(format!(
            "created; whether another run created one at the same time could not be checked ({e}); the next plan shows it"
        )),
    }
    Ok((!notes.is_empty()).then(|| notes.join("; ")))
}

/// Sends one idempotent operation once (the client retries it as its
/// policy allows). `Ok(Some(note))` when it succeeded in a way worth saying.
async fn send_idempotent(
    client: &Client,
    op: &Operation,
    options: &ApplyOptions<'_>,
) -> Result<Option<String>, OperationError> {
    if let Some(sent) = crate::kinds::send_own(op, client, options.env).await {
        return sent;
    }
    let note = match op {
        Operation::PatchMetricSettings {
            project_id,
            run,
            body,
        } => {
            match run.kind {
                RunKind::LogStream => client
                    .update_log_stream_metric_settings(project_id, &run.id, body)
                    .await
                    .map(drop)?,
                RunKind::Experiment => client
                    .update_experiment_metric_settings(project_id, &run.id, body)
                    .await
                    .map(drop)?,
            };
            None
        }
        Operation::UpdateSection {
            project_id,
            log_stream_id,
            dashboard_id,
            section_id,
            body,
        } => {
            let scope = LogStream {
                project_id,
                log_stream_id,
            };
            let dashboard_id = scope.dashboard(client, dashboard_id).await?;
            let section_id = scope.section(client, &dashboard_id, section_id).await?;
            client
                .update_section(
                    project_id,
                    log_stream_id,
                    &section_id,
                    Some(&dashboard_id),
                    body,
                )
                .await?;
            None
        }
        Operation::DeleteSection {
            project_id,
            log_stream_id,
            dashboard_id,
            section_id,
        } => {
            let scope = LogStream {
                project_id,
                log_stream_id,
            };
            let dashboard_id = scope.dashboard(client, dashboard_id).await?;
            let section_id = scope.section(client, &dashboard_id, section_id).await?;
            (client
                .delete_section(
                    project_id,
                    log_stream_id,
                    &section_id,
                    Some(&dashboard_id),
                    false,
                )
                .await?)
                .note()
        }
        Operation::UpdateWidget {
            project_id,
            log_stream_id,
            dashboard_id,
            widget,
            move_to,
            body,
        } => {
            let scope = LogStream {
                project_id,
                log_stream_id,
            };
            let dashboard_id = scope.dashboard(client, dashboard_id).await?;
            let widget_id = scope.widget(client, &dashboard_id, widget).await?;
            let section_id = match move_to {
                Some(to) => Some(scope.placement(client, &dashboard_id, to).await?),
                None => None,
            };
            let body = WidgetUpdateRequest {
                section_id,
                ..(**body).clone()
            };
            client
                .update_widget(
                    project_id,
                    log_stream_id,
                    &widget_id,
                    Some(&dashboard_id),
                    &body,
                )
                .await?;
            None
        }
        Operation::DeleteWidget {
            project_id,
            log_stream_id,
            dashboard_id,
            widget,
        } => {
            let scope = LogStream {
                project_id,
                log_stream_id,
            };
            let dashboard_id = scope.dashboard(client, dashboard_id).await?;
            let widget_id = scope.widget(client, &dashboard_id, widget).await?;
            (client
                .delete_widget(project_id, log_stream_id, &widget_id, Some(&dashboard_id))
                .await?)
                .note()
        }
        Operation::UpdateDashboard {
            project_id,
            log_stream_id,
            dashboard_id,
            body,
        } => {
            let scope = LogStream {
                project_id,
                log_stream_id,
            };
            let dashboard_id = scope.dashboard(client, dashboard_id).await?;
            client
                .update_dashboard(project_id, log_stream_id, Some(&dashboard_id), body)
                .await?;
            None
        }
        Operation::DeleteDashboard {
            project_id,
            log_stream_id,
            dashboard_id,
        } => {
            let dashboard_id = match dashboard_id {
                DashboardRef::Id(id) => id.clone(),
                named => {
                    LogStream {
                        project_id,
                        log_stream_id,
                    }
                    .dashboard(client, named)
                    .await?
                }
            };
            (client
                .delete_dashboard(project_id, log_stream_id, &dashboard_id)
                .await?)
                .note()
        }
        Operation::Favorite {
            project_id,
            log_stream_id,
            dashboard_id,
            visibility,
        } => {
            client
                .favorite_dashboard(project_id, log_stream_id, dashboard_id, visibility)
                .await?;
            None
        }
        Operation::Unfavorite {
            project_id,
            log_stream_id,
            visibility,
        } => {
            client
                .unfavorite_dashboard(project_id, log_stream_id, visibility)
                .await?;
            None
        }
        Operation::PutIntegration { body } => {
            let body = resolve_secrets(body, options.env)?;
            client.put_integration(&body).await?;
            None
        }
        Operation::PutCustomIntegration { name, body } => {
            let body = resolve_secrets(body, options.env)?;
            client.put_named_custom_integration(name, &body).await?;
            None
        }
        // Creates go through `create` and `duplicate_settled` (run_operation
        // sends them there).
        Operation::CreateSection { .. }
        | Operation::CreateWidget { .. }
        | Operation::DuplicateDashboard { .. } => None,
        // The kinds that send their own operations were sent above
        // (`kinds::send_own`); one that reaches here has no sender, and
        // saying so beats reporting a write that was never made.
        _ => {
            let tag = serde_json::to_value(op)
                .ok()
                .and_then(|v| v.get("op").and_then(|t| t.as_str()).map(str::to_owned))
                .unwrap_or_default();
            return Err(OperationError::NoSender { op: tag });
        }
    };
    Ok(note)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `stage` ends in a catch-all for the kinds that say their own stage:
    /// a kind added to the registry without either would be applied first,
    /// with the integrations. Only integrations are at stage 0.
    #[test]
    fn every_kind_has_its_stage_and_only_integrations_go_first() {
        for &kind in AddressKind::ALL {
            for action in [
                Action::Create,
                Action::Update,
                Action::Replace,
                Action::Delete,
            ] {
                let at = stage(kind, action);
                let first = matches!(
                    kind,
                    AddressKind::Integration | AddressKind::CustomIntegration
                );
                assert_eq!(at == 0, first, "{kind:?} {action:?} is at stage {at}");
            }
        }
    }
}
