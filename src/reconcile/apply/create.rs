//! Creating sections, widgets and templates without leaving two of one
//! name, even when two applies race or an answer is lost.
//!
//! A name is unique within a scope (a dashboard's sections, the widgets of
//! one place of a dashboard: its top level or one section, a project's
//! templates of one kind), and the service does not enforce it for sections
//! and widgets. So every create is bracketed by reads of its scope, through
//! the same readers as a plan:
//!
//! 1. A fresh read just before sending: a name someone created since the
//!    plan was read is not created again.
//! 2. A create whose answer was lost (5xx, a dropped connection, a timeout:
//!    the service may or may not have made it), or that was refused as a
//!    duplicate (409), is settled by reading the scope: present, it was
//!    made once; absent, it is sent again (at most [`MAX_SENDS`] in all),
//!    unless the request may still be in the service (the client timed
//!    out): it could land after the new one and make two, so it is
//!    reported as failed and the next apply re-reads.
//! 3. After each create, one more read: where two objects now carry a name
//!    this run created, every process keeps the same one (the keeper: the
//!    first section in the dashboard's order, the first widget of its place
//!    in the dashboard's order, the first-created template, see
//!    `crate::state`), and this run deletes only its own copy, and only if
//!    it is not the keeper. A copy made an instant ago holds nothing to lose
//!    (no widget, no rating).
//!
//! A scope a plan could only name (a dashboard or section the same apply
//! creates) is resolved once, before the read that precedes its creates
//! (`super::resolve`). The creates of one scope share that read; each has
//! its own read after it, so its outcome is known (and streamed) when it is
//! done.

use futures::StreamExt;

use super::resolve::LogStream;
use super::{Gate, OperationError, Skip};
use crate::api::WidgetCreateRequest;
use crate::client::{ApiError, Client};
use crate::kinds::OwnScope;
use crate::plan::{DashboardRef, Operation, Placement};
use crate::reconcile::read::ReadError;
use crate::reconcile::read::trends::read_dashboard;
use crate::state::TrendsParts;

/// The most times one create is sent within an apply (the first included):
/// each time after a read showed the previous one did not land, so sending
/// again is safe; the bound only ends a run against a service that fails
/// every time.
pub const MAX_SENDS: u32 = 5;

/// Where the name of a created object must be unique, as a plan writes it
/// (a dashboard or section possibly by name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameScope {
    /// The sections of a dashboard.
    Sections {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// The dashboard.
        dashboard: DashboardRef,
    },
    /// The widgets of one place of a dashboard (its top level, a section).
    Widgets {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// The dashboard.
        dashboard: DashboardRef,
        /// The place.
        placement: Placement,
    },
    /// A scope of a kind's own (`kinds::OwnScope`).
    Own(OwnScope),
}

impl NameScope {
    /// The scope of a create operation (`None` for any other operation,
    /// and for a dashboard's copy: see `super::duplicate_settled`).
    pub fn of(op: &Operation) -> Option<NameScope> {
        match op {
            Operation::CreateSection {
                project_id,
                log_stream_id,
                dashboard_id,
                ..
            } => Some(NameScope::Sections {
                project_id: project_id.clone(),
                log_stream_id: log_stream_id.clone(),
                dashboard: dashboard_id.clone(),
            }),
            Operation::CreateWidget {
                project_id,
                log_stream_id,
                dashboard_id,
                placement,
                ..
            } => Some(NameScope::Widgets {
                project_id: project_id.clone(),
                log_stream_id: log_stream_id.clone(),
                dashboard: dashboard_id.clone(),
                placement: placement.clone(),
            }),
            op => OwnScope::of_create(op).map(NameScope::Own),
        }
    }

    fn noun(&self) -> &'static str {
        match self {
            NameScope::Sections { .. } => "section",
            NameScope::Widgets { .. } => "widget",
            NameScope::Own(scope) => scope.noun(),
        }
    }

    /// The ids this scope names, looked up now.
    pub async fn resolve(&self, client: &Client) -> Result<Scope, OperationError> {
        Ok(match self {
            NameScope::Sections {
                project_id,
                log_stream_id,
                dashboard,
            } => {
                let stream = LogStream {
                    project_id,
                    log_stream_id,
                };
                Scope::Sections {
                    project_id: project_id.clone(),
                    log_stream_id: log_stream_id.clone(),
                    dashboard_id: stream.dashboard(client, dashboard).await?,
                }
            }
            NameScope::Widgets {
                project_id,
                log_stream_id,
                dashboard,
                placement,
            } => {
                let stream = LogStream {
                    project_id,
                    log_stream_id,
                };
                let dashboard_id = stream.dashboard(client, dashboard).await?;
                let section_id = stream.placement(client, &dashboard_id, placement).await?;
                Scope::Widgets {
                    project_id: project_id.clone(),
                    log_stream_id: log_stream_id.clone(),
                    dashboard_id,
                    section_id,
                }
            }
            NameScope::Own(scope) => Scope::Own(scope.clone()),
        })
    }
}

/// Where the name of a created object must be unique, by id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The sections of a dashboard.
    Sections {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// Dashboard id.
        dashboard_id: String,
    },
    /// The widgets of one place of a dashboard.
    Widgets {
        /// Project id.
        project_id: String,
        /// Log stream id.
        log_stream_id: String,
        /// Dashboard id.
        dashboard_id: String,
        /// The section's id (`None`: the top level).
        section_id: Option<String>,
    },
    /// A scope of a kind's own (`kinds::OwnScope`).
    Own(OwnScope),
}

impl Scope {
    fn noun(&self) -> &'static str {
        match self {
            Scope::Sections { .. } => "section",
            Scope::Widgets { .. } => "widget",
            Scope::Own(scope) => scope.noun(),
        }
    }

    fn describe(&self) -> String {
        match self {
            Scope::Sections { dashboard_id, .. } => {
                format!("the sections of dashboard {dashboard_id}")
            }
            Scope::Widgets {
                dashboard_id,
                section_id: None,
                ..
            } => format!("the top-level widgets of dashboard {dashboard_id}"),
            Scope::Widgets {
                dashboard_id,
                section_id: Some(section),
                ..
            } => format!("the widgets of section {section} of dashboard {dashboard_id}"),
            Scope::Own(scope) => scope.describe(),
        }
    }
}

/// The objects of a scope as read: `(name, id)` in keeper order, so the
/// first of a name is the one every process keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Members(Vec<(String, String)>);

impl Members {
    /// Whether an object carries `name`.
    pub fn has_name(&self, name: &str) -> bool {
        self.0.iter().any(|(n, _)| n == name)
    }

    /// Whether the object `id` exists.
    pub fn has_id(&self, id: &str) -> bool {
        self.0.iter().any(|(_, i)| i == id)
    }

    /// The id of the object of `name` that is kept.
    pub fn keeper(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, id)| id.as_str())
    }
}

/// Reads the members of `scope` (a dashboard or section that is gone has
/// none).
pub async fn read_members(client: &Client, scope: &Scope) -> Result<Members, ApiError> {
    Ok(match scope {
        Scope::Sections {
            project_id,
            log_stream_id,
            dashboard_id,
        } => {
            let dashboard = read_dashboard(
                client,
                project_id,
                log_stream_id,
                Some(dashboard_id),
                TrendsParts::default(),
            )
            .await?;
            // The dashboard's order is the keeper order of sections.
            Members(
                dashboard
                    .map(|d| d.sections.into_iter().map(|s| (s.name, s.id)).collect())
                    .unwrap_or_default(),
            )
        }
        Scope::Widgets {
            project_id,
            log_stream_id,
            dashboard_id,
            section_id,
        } => {
            let dashboard = client
                .get_dashboard(project_id, log_stream_id, Some(dashboard_id))
                .await?;
            // The place's order is the keeper order of its widgets (the
            // service appends a new one at the end), the one a plan pairs.
            let widgets = dashboard.map_or_else(Vec::new, |d| match section_id {
                None => d.widgets,
                Some(id) => d
                    .sections
                    .into_iter()
                    .find(|s| &s.id == id)
                    .map(|s| s.widgets)
                    .unwrap_or_default(),
            });
            Members(widgets.into_iter().map(|w| (w.name, w.id)).collect())
        }
        Scope::Own(scope) => Members(scope.members(client).await?),
    })
}

/// The name a create operation gives its object.
fn created_name(op: &Operation) -> &str {
    match op {
        Operation::CreateSection { body, .. } => &body.name,
        Operation::CreateWidget { body, .. } => &body.name,
        op => OwnScope::created_name(op).unwrap_or_default(),
    }
}

/// Sends one create into `scope` (its ids resolved); the new object's id.
async fn send(client: &Client, scope: &Scope, op: &Operation) -> Result<String, ApiError> {
    match (op, scope) {
        (
            Operation::CreateSection { body, .. },
            Scope::Sections {
                project_id,
                log_stream_id,
                dashboard_id,
            },
        ) => client
            .create_section(project_id, log_stream_id, Some(dashboard_id), body)
            .await
            .map(|s| s.id),
        (
            Operation::CreateWidget { body, .. },
            Scope::Widgets {
                project_id,
                log_stream_id,
                dashboard_id,
                section_id,
            },
        ) => {
            let body = WidgetCreateRequest {
                section_id: section_id.clone(),
                ..(**body).clone()
            };
            client
                .create_widget(project_id, log_stream_id, Some(dashboard_id), &body)
                .await
                .map(|w| w.id)
        }
        (op, Scope::Own(scope)) => match scope.create(client, op).await {
            Some(sent) => sent,
            None => Err(not_of_scope()),
        },
        // Jobs are made of create operations of their scope only (`NameScope::of`).
        _ => Err(not_of_scope()),
    }
}

fn not_of_scope() -> ApiError {
    ApiError::InvalidArgument {
        operation: &crate::client::operation::CREATE_SECTION,
        message: "not a create operation of this scope".to_owned(),
    }
}

/// Deletes this run's own copy `id` in `scope`.
async fn delete_own(client: &Client, scope: &Scope, id: &str) -> Result<(), ApiError> {
    match scope {
        Scope::Sections {
            project_id,
            log_stream_id,
            dashboard_id,
        } => client
            .delete_section(project_id, log_stream_id, id, Some(dashboard_id), false)
            .await
            .map(drop),
        Scope::Widgets {
            project_id,
            log_stream_id,
            dashboard_id,
            ..
        } => client
            .delete_widget(project_id, log_stream_id, id, Some(dashboard_id))
            .await
            .map(drop),
        Scope::Own(scope) => scope.delete(client, id).await,
    }
}

/// What became of one create.
#[derive(Debug)]
pub enum Created {
    /// It exists once: made by this run or found; a note when worth saying.
    Done(Option<String>),
    /// It failed.
    Failed(OperationError),
    /// Not started: the gate closed first.
    NotStarted(Skip),
    /// Still in flight when the grace period after a stop ran out.
    Abandoned,
}

/// A create that was sent and answered: the id, when this run knows it.
struct Sent {
    id: Option<String>,
    note: Option<String>,
}

fn cause(error: &ApiError) -> String {
    match error {
        ApiError::Ambiguous { cause, .. } => cause.clone(),
        ApiError::Conflict { .. } => "409: the name is taken".to_owned(),
        other => other
            .status()
            .map_or_else(|| "no answer".to_owned(), |s| format!("status {s}")),
    }
}

/// Whether a request whose answer was lost this way may still be processed
/// by the service later: the client gave up waiting (`timed out`), so the
/// request may still be on its way or in the service. Any other lost answer
/// was ended on the service's side (a 5xx, a closed connection), so a read
/// that does not find the object settles that it was not made. (A gateway
/// that answers 504 while the service behind it goes on could still land a
/// late create; its copy is then a duplicate that the next plan reports and
/// apply deletes, keeping the first.) Reads the causes the client gives
/// `ApiError::Ambiguous` (documented there: `502 Bad Gateway`, `timed out`,
/// `connection closed`, ...).
pub fn may_still_land(cause: &str) -> bool {
    cause.contains("timed out")
}

/// Sends a create until it is known to exist: after a lost answer or a 409,
/// the scope is read; present is done, absent is sent again, unless the
/// lost request may still land (then sending again could make two).
async fn send_settled(
    client: &Client,
    scope: &Scope,
    op: &Operation,
) -> Result<Sent, OperationError> {
    let name = created_name(op);
    let noun = scope.noun();
    let mut lost: Vec<String> = Vec::new();
    for _ in 0..MAX_SENDS {
        let error = match send(client, scope, op).await {
            Ok(id) => {
                let note = (!lost.is_empty()).then(|| {
                    format!(
                        "the answer to {} earlier request(s) was lost ({}) and a re-read did not find the {noun}, so it was sent again",
                        lost.len(),
                        lost.join(", ")
                    )
                });
                return Ok(Sent { id: Some(id), note });
            }
            Err(e @ (ApiError::Ambiguous { .. } | ApiError::Conflict { .. })) => e,
            Err(e) => return Err(e.into()),
        };
        match read_members(client, scope).await {
            Ok(members) if members.has_name(name) => {
                let note = if matches!(error, ApiError::Conflict { .. }) {
                    format!(
                        "the service answered that the name is taken, and a re-read found the {noun}: another run created it, so it exists once"
                    )
                } else {
                    format!(
                        "the service's answer was lost ({}); a re-read found the {noun}, so it was created once",
                        cause(&error)
                    )
                };
                return Ok(Sent {
                    id: None,
                    note: Some(note),
                });
            }
            // Refused as a duplicate but not there: not a lost answer.
            Ok(_) if matches!(error, ApiError::Conflict { .. }) => return Err(error.into()),
            Ok(_) if may_still_land(&cause(&error)) => {
                return Err(OperationError::MaybeLate {
                    noun,
                    cause: cause(&error),
                });
            }
            Ok(_) => lost.push(cause(&error)),
            Err(source) => {
                return Err(OperationError::Unsettled {
                    noun,
                    source: ReadError::new(scope.describe(), source),
                });
            }
        }
    }
    Err(OperationError::LostCreate {
        noun,
        sends: MAX_SENDS,
    })
}

/// Sends the create of a kind's object (`send`) until it is known to exist,
/// as the module says: `find` reads whether it does (its error made a
/// [`ReadError`] by `unread`): present before sending, it is not sent;
/// after a lost answer or a 409, present is done, absent is sent again
/// unless the lost request may still land. `Ok(Some(note))` when settling
/// did something worth saying. The kinds in `src/kinds/` send their
/// creates through it.
pub async fn settle_create<F, FF, E, S, SF>(
    noun: &'static str,
    find: F,
    unread: impl Fn(E) -> ReadError,
    send: S,
) -> Result<Option<String>, OperationError>
where
    F: Fn() -> FF,
    FF: std::future::Future<Output = Result<bool, E>>,
    S: Fn() -> SF,
    SF: std::future::Future<Output = Result<(), ApiError>>,
{
    match find().await {
        Ok(true) => {
            return Ok(Some(format!(
                "the {noun} exists already (created since the plan was read, by another run); not created again"
            )));
        }
        Ok(false) => {}
        Err(e) => {
            return Err(OperationError::NotRead {
                noun,
                source: unread(e),
            });
        }
    }
    let mut lost: Vec<String> = Vec::new();
    for _ in 0..MAX_SENDS {
        let error = match send().await {
            Ok(()) => {
                return Ok((!lost.is_empty()).then(|| {
                    format!(
                        "the answer to {} earlier request(s) was lost ({}) and a re-read did not find the {noun}, so it was sent again",
                        lost.len(),
                        lost.join(", ")
                    )
                }));
            }
            Err(e @ ApiError::Ambiguous { .. }) => e,
            // Refused as a duplicate: another run made it since the read above.
            Err(e @ ApiError::Conflict { .. }) => {
                return match find().await {
                    Ok(true) => Ok(Some(format!(
                        "another run created the {noun} at the same time; not created again"
                    ))),
                    _ => Err(e.into()),
                };
            }
            Err(e) => return Err(e.into()),
        };
        let cause = cause(&error);
        match find().await {
            Ok(true) => {
                return Ok(Some(format!(
                    "the service's answer was lost ({cause}); a re-read found the {noun}, so it was created once"
                )));
            }
            Ok(false) if may_still_land(&cause) => {
                return Err(OperationError::MaybeLate { noun, cause });
            }
            Ok(false) => lost.push(cause),
            Err(e) => {
                return Err(OperationError::Unsettled {
                    noun,
                    source: unread(e),
                });
            }
        }
    }
    Err(OperationError::LostCreate {
        noun,
        sends: MAX_SENDS,
    })
}

/// [`settle_create`] for a `find` that fails as the client does, its read
/// described by `describe` (`the prompt templates of project P`).
pub async fn settle_described<F, FF, S, SF>(
    noun: &'static str,
    find: F,
    describe: impl Fn() -> String,
    send: S,
) -> Result<Option<String>, OperationError>
where
    F: Fn() -> FF,
    FF: std::future::Future<Output = Result<bool, ApiError>>,
    S: Fn() -> SF,
    SF: std::future::Future<Output = Result<(), ApiError>>,
{
    settle_create(noun, find, |e| ReadError::new(describe(), e), send).await
}

/// One create to make in a scope.
pub struct Job<'a> {
    /// Its index in the caller's list (outcomes are returned with it).
    pub index: usize,
    /// The create operation.
    pub op: &'a Operation,
    /// Whether a stop asked before it is sent keeps it from starting (the
    /// create of a change already in flight, such as a replace, is not).
    pub stoppable: bool,
}

/// Makes the creates of one scope (see the module doc): one fresh read of
/// the scope before them, then `concurrency` at a time, each followed by its
/// own read of the scope. `finish` turns each job's end into the caller's
/// outcome as soon as it is known (outcomes stream); the outcomes are also
/// returned, with the jobs' indices.
pub async fn create_in_scope<T>(
    client: &Client,
    scope: &NameScope,
    jobs: Vec<Job<'_>>,
    concurrency: usize,
    gate: &Gate<'_>,
    finish: &(dyn Fn(usize, Created) -> T + Sync),
) -> Vec<(usize, T)> {
    let stop = gate.stop;
    let mut out: Vec<(usize, T)> = Vec::with_capacity(jobs.len());
    let mut end = |index: usize, created: Created| out.push((index, finish(index, created)));
    let mut jobs = jobs;
    if let Some(skip) = gate.closed() {
        let (kept, not_started): (Vec<Job<'_>>, Vec<Job<'_>>) =
            jobs.into_iter().partition(|j| !j.stoppable);
        for j in not_started {
            end(j.index, Created::NotStarted(skip));
        }
        jobs = kept;
    }
    if jobs.is_empty() {
        return out;
    }
    let noun = scope.noun();
    // The ids of a scope the plan names (created by this apply).
    let scope = match stop.bounded(scope.resolve(client)).await {
        Some(Ok(scope)) => scope,
        Some(Err(error)) => {
            gate.saw(&error);
            let what = match error {
                OperationError::Unresolved { what } => what,
                other => other.to_string(),
            };
            for j in jobs {
                let error = OperationError::Unresolved { what: what.clone() };
                end(j.index, Created::Failed(error));
            }
            return out;
        }
        None => {
            for j in jobs {
                end(j.index, Created::Abandoned);
            }
            return out;
        }
    };
    let scope = &scope;
    // 1. A fresh read: what exists now is not created again.
    let before = match stop.bounded(read_members(client, scope)).await {
        Some(Ok(members)) => members,
        Some(Err(source)) => {
            let source = ReadError::new(scope.describe(), source);
            for j in jobs {
                let error = OperationError::NotRead {
                    noun,
                    source: source.clone(),
                };
                end(j.index, Created::Failed(error));
            }
            return out;
        }
        None => {
            for j in jobs {
                end(j.index, Created::Abandoned);
            }
            return out;
        }
    };
    let mut to_send = Vec::new();
    for job in jobs {
        if before.has_name(created_name(job.op)) {
            let note = format!(
                "the {noun} exists already (created since the plan was read, by another run); not created again"
            );
            end(job.index, Created::Done(Some(note)));
        } else {
            to_send.push(job);
        }
    }
    // 2. and 3. Each create, settled when its answer is lost, then checked.
    let creates = to_send.into_iter().map(|job| async move {
        let created = create_one(client, scope, &job, gate).await;
        if let Created::Failed(e) = &created {
            gate.saw(e);
        }
        (job.index, finish(job.index, created))
    });
    out.extend(
        futures::stream::iter(creates)
            .buffer_unordered(concurrency.max(1))
            .collect::<Vec<_>>()
            .await,
    );
    out
}

/// Sends one create (unless the gate closed first), settles it, and reads
/// the scope after it: a copy of this run's that is not the keeper goes.
async fn create_one(client: &Client, scope: &Scope, job: &Job<'_>, gate: &Gate<'_>) -> Created {
    let stop = gate.stop;
    let noun = scope.noun();
    if job.stoppable
        && let Some(skip) = gate.closed()
    {
        return Created::NotStarted(skip);
    }
    let Sent { id, note } = match stop.bounded(send_settled(client, scope, job.op)).await {
        Some(Ok(sent)) => sent,
        Some(Err(e)) => return Created::Failed(e),
        None => return Created::Abandoned,
    };
    // Found rather than made (its id unknown): nothing of this run's to check.
    let Some(id) = id else {
        return Created::Done(note);
    };
    let after = match stop.bounded(read_members(client, scope)).await {
        Some(Ok(members)) => members,
        failed => {
            let why = match failed {
                Some(Err(e)) => e.to_string(),
                _ => "interrupted".to_owned(),
            };
            let unchecked = format!(
                "created; whether another run created one at the same time could not be checked ({why}); the next plan shows it"
            );
            return Created::Done(Some(join(note, unchecked)));
        }
    };
    let keeper = after.keeper(created_name(job.op)).map(str::to_owned);
    let Some(keeper) = keeper.filter(|k| *k != id && after.has_id(&id)) else {
        return Created::Done(note);
    };
    match stop.bounded(delete_own(client, scope, &id)).await {
        Some(Ok(())) => Created::Done(Some(join(
            note,
            format!(
                "another run created a {noun} of this name at the same time; its copy ({keeper}) is the one kept, so this run deleted its own ({id})"
            ),
        ))),
        Some(Err(source)) => Created::Failed(OperationError::OwnCopyLeft {
            noun,
            id,
            keeper,
            source,
        }),
        None => Created::Abandoned,
    }
}

fn join(first: Option<String>, second: String) -> String {
    match first {
        Some(first) => format!("{first}; {second}"),
        None => second,
    }
}
