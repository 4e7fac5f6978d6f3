//! Projects and their runs: POST `/v2/projects/paginated` (filters `name`,
//! `creator`, `bookmark`, `created_at`, `updated_at`, `num_logstreams`,
//! `num_experiments`; sorts by those columns, default `created_at`
//! descending; `include_logstreams`), GET `/v2/projects/{id}` (`ProjectDB`
//! with its runs), the `ProjectItem` shape shared with spec operation 6,
//! creating a log stream (with its default dashboard) and reading one log
//! stream or experiment.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::{FilterValue, LogStreamInfo, Operator, ProjectItem};

use super::search::{match_str, match_time};
use super::users::permissions;
use super::{ApiError, LogStreamRecord, ProjectRecord, State, UserRecord, now, paginate, to_json};
use crate::sandbox::fingerprint::new_id;

/// The project actions listed in a project's `permissions`.
const PROJECT_ACTIONS: &[&str] = &["update", "delete", "create_run", "set_metric"];

/// A filter of the project listing (`ProjectCollectionParams.filters[]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum ProjectListFilter {
    /// By name.
    Name {
        /// Operator.
        operator: Operator,
        /// Value(s).
        value: FilterValue,
        /// Case sensitivity (default true).
        #[serde(default)]
        case_sensitive: Option<bool>,
    },
    /// By creator id (operator default `eq`).
    Creator {
        /// Operator.
        #[serde(default)]
        operator: Option<Operator>,
        /// Value(s).
        value: FilterValue,
    },
    /// By creation time.
    CreatedAt {
        /// Operator.
        operator: Operator,
        /// RFC 3339 date-time.
        value: String,
    },
    /// By update time.
    UpdatedAt {
        /// Operator.
        operator: Operator,
        /// RFC 3339 date-time.
        value: String,
    },
    /// By number of log streams.
    NumLogstreams {
        /// Operator (`between` takes `[low, high]`).
        operator: Operator,
        /// A number or a pair.
        value: Value,
    },
    /// By number of experiments.
    NumExperiments {
        /// Operator (`between` takes `[low, high]`).
        operator: Operator,
        /// A number or a pair.
        value: Value,
    },
    /// By whether the caller bookmarked it.
    Bookmark {
        /// Bookmarked or not.
        value: bool,
    },
}

/// A sort of the project listing.
#[derive(Debug, Clone, Deserialize)]
pub struct ProjectListSort {
    /// Column: `name`, `created_at`, `updated_at`, `num_logstreams`, `num_experiments`.
    pub name: String,
    /// Ascending (default true).
    #[serde(default = "yes")]
    pub ascending: bool,
}

fn yes() -> bool {
    true
}

/// Body of POST `/v2/projects/paginated`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ProjectListRequest {
    /// Filters, all of which must match.
    #[serde(default)]
    pub filters: Vec<ProjectListFilter>,
    /// Sort (default `created_at` descending).
    #[serde(default)]
    pub sort: Option<ProjectListSort>,
}

fn match_count(count: i64, op: &Operator, value: &Value) -> bool {
    let as_f = |v: &Value| v.as_f64();
    let c = count as f64;
    match (op, value) {
        (Operator::Between, Value::Array(pair)) if pair.len() == 2 => {
            match (as_f(&pair[0]), as_f(&pair[1])) {
                (Some(lo), Some(hi)) => lo <= c && c <= hi,
                _ => false,
            }
        }
        (_, v) => match as_f(v) {
            Some(x) => match op {
                Operator::Eq => c == x,
                Operator::Ne => c != x,
                Operator::Gt => c > x,
                Operator::Gte => c >= x,
                Operator::Lt => c < x,
                Operator::Lte => c <= x,
                _ => false,
            },
            None => false,
        },
    }
}

impl State {
    /// Each project's number of log streams and experiments, counted in one
    /// pass over the runs (a project without runs is absent: `(0, 0)`).
    pub fn run_counts(&self) -> RunCounts<'_> {
        let mut counts = RunCounts::new();
        for l in &self.log_streams {
            let c = counts.entry(l.project_id.as_str()).or_default();
            c.0 = c.0.saturating_add(1);
        }
        for e in &self.experiments {
            let c = counts.entry(e.project_id.as_str()).or_default();
            c.1 = c.1.saturating_add(1);
        }
        counts
    }

    /// The `ProjectItem` of a project, as listings return it.
    pub fn project_item(
        &self,
        p: &ProjectRecord,
        caller: &UserRecord,
        include_logstreams: bool,
        counts: &RunCounts<'_>,
    ) -> ProjectItem {
        let (num_logstreams, num_experiments) = runs_of(counts, &p.id);
        ProjectItem {
            id: p.id.clone(),
            permissions: permissions(caller, PROJECT_ACTIONS),
            name: p.name.clone(),
            created_at: p.created_at.clone(),
            updated_at: p.updated_at.clone(),
            bookmark: p.bookmarked_by.contains(&caller.id),
            num_logstreams: Some(num_logstreams),
            num_experiments: Some(num_experiments),
            created_by_user: self.user_info(Some(&p.created_by)),
            description: p.description.clone(),
            labels: p.labels.clone(),
            log_streams: include_logstreams.then(|| {
                self.log_streams
                    .iter()
                    .filter(|l| l.project_id == p.id)
                    .map(|l| LogStreamInfo {
                        id: l.id.clone(),
                        name: l.name.clone(),
                    })
                    .collect()
            }),
        }
    }

    /// POST `/v2/projects/paginated` (`GetProjectsPaginatedResponse`).
    pub fn list_projects(
        &self,
        request: &ProjectListRequest,
        caller: &UserRecord,
        include_logstreams: bool,
        starting_token: i64,
        limit: i64,
    ) -> Result<Value, ApiError> {
        let counts = self.run_counts();
        let matches = |p: &ProjectRecord, f: &ProjectListFilter| -> bool {
            let (ls, ex) = runs_of(&counts, &p.id);
            match f {
                ProjectListFilter::Name {
                    operator,
                    value,
                    case_sensitive,
                } => match_str(&p.name, operator, value, case_sensitive.unwrap_or(true)),
                ProjectListFilter::Creator { operator, value } => match_str(
                    &p.created_by,
                    operator.as_ref().unwrap_or(&Operator::Eq),
                    value,
                    true,
                ),
                ProjectListFilter::CreatedAt { operator, value } => {
                    match_time(&p.created_at, operator, value).unwrap_or(false)
                }
                ProjectListFilter::UpdatedAt { operator, value } => {
                    match_time(&p.updated_at, operator, value).unwrap_or(false)
                }
                ProjectListFilter::NumLogstreams { operator, value } => {
                    match_count(ls, operator, value)
                }
                ProjectListFilter::NumExperiments { operator, value } => {
                    match_count(ex, operator, value)
                }
                ProjectListFilter::Bookmark { value } => {
                    p.bookmarked_by.contains(&caller.id) == *value
                }
            }
        };
        let mut projects: Vec<&ProjectRecord> = self
            .projects
            .iter()
            .filter(|p| request.filters.iter().all(|f| matches(p, f)))
            .collect();
        let (column, ascending) = match &request.sort {
            Some(s) => (s.name.as_str(), s.ascending),
            None => ("created_at", false),
        };
        projects.sort_by(|a, b| {
            let ord = match column {
                "name" => a.name.cmp(&b.name),
                "updated_at" => super::cmp_time(&a.updated_at, &b.updated_at),
                "num_logstreams" => runs_of(&counts, &a.id).0.cmp(&runs_of(&counts, &b.id).0),
                "num_experiments" => runs_of(&counts, &a.id).1.cmp(&runs_of(&counts, &b.id).1),
                _ => super::cmp_time(&a.created_at, &b.created_at),
            };
            let ord = if ascending { ord } else { ord.reverse() };
            ord.then_with(|| a.id.cmp(&b.id))
        });
        let total = projects.len();
        let (page, fields) = paginate(&projects, starting_token, limit);
        let items = page
            .iter()
            .map(|p| to_json(&self.project_item(p, caller, include_logstreams, &counts)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(listing(items, total, &fields))
    }

    /// GET `/v2/projects/{project_id}` (`ProjectDB`, with its runs as `RunDB`).
    pub fn get_project(&self, project_id: &str, caller: &UserRecord) -> Result<Value, ApiError> {
        let p = self.require_project(project_id)?;
        let run = |id: &str,
                   name: &str,
                   created_by: Option<&str>,
                   created_at: &str,
                   updated_at: &str,
                   task_type: i64|
         -> Result<Value, ApiError> {
            let by = created_by.unwrap_or(&p.created_by);
            let creator = self
                .user(by)
                .map(|u| to_json(&self.current_user(u)))
                .transpose()?
                .unwrap_or(Value::Null);
            Ok(json!({
                "id": id, "name": name, "project_id": p.id, "created_by": by,
                "num_samples": 0, "winner": false, "created_at": created_at,
                "updated_at": updated_at, "task_type": task_type, "last_updated_by": by,
                "run_tags": [], "creator": creator, "logged_splits": [],
                "logged_inference_names": [],
            }))
        };
        let mut runs = Vec::new();
        for l in self.log_streams.iter().filter(|l| l.project_id == p.id) {
            runs.push(run(
                &l.id,
                &l.name,
                l.created_by.as_deref(),
                &l.created_at,
                &l.updated_at,
                15,
            )?);
        }
        for e in self.experiments.iter().filter(|e| e.project_id == p.id) {
            runs.push(run(
                &e.id,
                &e.name,
                e.created_by.as_deref(),
                &e.created_at,
                &e.updated_at,
                e.task_type,
            )?);
        }
        Ok(json!({
            "id": p.id,
            "permissions": to_json(&permissions(caller, PROJECT_ACTIONS))?,
            "name": p.name,
            "created_by": p.created_by,
            "type": p.project_type.as_str(),
            "created_by_user": to_json(&self.user_info(Some(&p.created_by)))?,
            "runs": runs,
            "created_at": p.created_at,
            "updated_at": p.updated_at,
            "bookmark": p.bookmarked_by.contains(&caller.id),
            "description": p.description,
            "labels": p.labels,
        }))
    }

    /// GET a log stream (`LogStreamResponse`).
    pub fn get_log_stream(&self, project_id: &str, id: &str) -> Result<Value, ApiError> {
        let l = self.require_log_stream(project_id, id)?;
        Ok(self.log_stream_json(l, false))
    }

    /// GET an experiment (`ExperimentResponse`).
    pub fn get_experiment(&self, project_id: &str, id: &str) -> Result<Value, ApiError> {
        let e = self.require_experiment(project_id, id)?;
        Ok(self.experiment_json(e, false))
    }

    /// GET `/v2/projects/{id}/log_streams`: every log stream of the project.
    pub fn list_log_streams(
        &self,
        project_id: &str,
        include_counts: bool,
    ) -> Result<Value, ApiError> {
        self.require_project(project_id)?;
        Ok(Value::Array(
            self.log_streams
                .iter()
                .filter(|l| l.project_id == project_id)
                .map(|l| self.log_stream_json(l, include_counts))
                .collect(),
        ))
    }

    /// POST `/v2/projects/{id}/log_streams`: creates a log stream and its
    /// default dashboard. A name already used in the project is a 409.
    pub fn create_log_stream(
        &mut self,
        project_id: &str,
        name: &str,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        self.require_project(project_id)?;
        if self
            .log_streams
            .iter()
            .any(|l| l.project_id == project_id && l.name == name)
        {
            return Err(ApiError::Conflict(format!(
                "A log stream named {name} already exists in this project"
            )));
        }
        let ts = now();
        let record = LogStreamRecord {
            id: new_id(),
            project_id: project_id.to_owned(),
            name: name.to_owned(),
            created_by: Some(caller.id.clone()),
            created_at: ts.clone(),
            updated_at: ts.clone(),
            num_spans: 0,
            num_traces: 0,
            has_user_created_sessions: false,
            metric_settings: Default::default(),
        };
        self.dashboards.push(super::trends::default_dashboard(
            &new_id(),
            &record,
            Some(&caller.id),
            &ts,
        ));
        let shape = self.log_stream_json(&record, false);
        self.log_streams.push(record);
        Ok(shape)
    }
}

/// Per project id, its number of log streams and experiments
/// ([`State::run_counts`]).
pub type RunCounts<'a> = HashMap<&'a str, (i64, i64)>;

/// A project's `(log streams, experiments)` from [`State::run_counts`].
pub fn runs_of(counts: &RunCounts<'_>, project_id: &str) -> (i64, i64) {
    counts.get(project_id).copied().unwrap_or_default()
}

/// A project listing response (`GetProjectsPaginatedResponse`).
pub fn listing(items: Vec<Value>, total: usize, fields: &super::PageFields) -> Value {
    let mut obj = fields.with_items("projects", items);
    obj.insert(
        "total_count".into(),
        json!(i64::try_from(total).unwrap_or(i64::MAX)),
    );
    Value::Object(obj)
}
