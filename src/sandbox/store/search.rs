//! Searching runs: POST `.../log_streams/search` (spec operation 2) and
//! POST `.../experiments/search` (reference), plus the comparison rules every
//! listing filter of the sandbox shares ([`match_str`], [`match_time`]).
//!
//! Filters all must match. String operators: `eq`, `ne`, `contains`,
//! `one_of`, `not_in`; a list value with `eq`/`ne` behaves as
//! `one_of`/`not_in`, a string value with `one_of`/`not_in` as a one-item
//! list, `contains` with a list matches when any item is contained.
//! `case_sensitive: false` compares lowercased. Date-time operators: `eq`,
//! `ne`, `gt`, `gte`, `lt`, `lte`, chronologically. Sorts: `name`,
//! `created_at`, `updated_at`, ascending or not, default `created_at`
//! descending; ties are broken by id so pages are stable.

use serde_json::{Map, Value, json};

use crate::api::{
    FilterValue, LocItem, LogStream, Operator, RunFilter, RunSearchRequest, RunSort,
    ValidationError,
};

use super::{ApiError, ExperimentRecord, LogStreamRecord, State, paginate, parse_time, to_json};

/// Whether `field` satisfies a string filter.
pub fn match_str(field: &str, op: &Operator, value: &FilterValue, case_sensitive: bool) -> bool {
    let norm = |s: &str| {
        if case_sensitive {
            s.to_owned()
        } else {
            s.to_lowercase()
        }
    };
    let field = norm(field);
    let values: Vec<String> = value.values().into_iter().map(norm).collect();
    match op {
        Operator::Eq | Operator::OneOf => values.contains(&field),
        Operator::Ne | Operator::NotIn => values.iter().all(|v| *v != field),
        Operator::Contains => values.iter().any(|v| field.contains(v.as_str())),
        _ => false,
    }
}

/// Whether the timestamp `field` satisfies a date-time filter against
/// `value` (both RFC 3339). `None` when either does not parse.
pub fn match_time(field: &str, op: &Operator, value: &str) -> Option<bool> {
    let f = parse_time(field)?;
    let v = parse_time(value)?;
    Some(match op {
        Operator::Eq => f == v,
        Operator::Ne => f != v,
        Operator::Gt => f > v,
        Operator::Gte => f >= v,
        Operator::Lt => f < v,
        Operator::Lte => f <= v,
        _ => false,
    })
}

/// The searchable attributes of a log stream or experiment.
struct RunView<'a> {
    id: &'a str,
    name: &'a str,
    created_by: Option<&'a str>,
    created_at: &'a str,
    updated_at: &'a str,
    group_id: Option<&'a str>,
    group_name: Option<&'a str>,
}

impl<'a> From<&'a LogStreamRecord> for RunView<'a> {
    fn from(l: &'a LogStreamRecord) -> Self {
        RunView {
            id: &l.id,
            name: &l.name,
            created_by: l.created_by.as_deref(),
            created_at: &l.created_at,
            updated_at: &l.updated_at,
            group_id: None,
            group_name: None,
        }
    }
}

impl<'a> From<&'a ExperimentRecord> for RunView<'a> {
    fn from(e: &'a ExperimentRecord) -> Self {
        RunView {
            id: &e.id,
            name: &e.name,
            created_by: e.created_by.as_deref(),
            created_at: &e.created_at,
            updated_at: &e.updated_at,
            group_id: e.experiment_group_id.as_deref(),
            group_name: e.experiment_group_name.as_deref(),
        }
    }
}

fn matches(filter: &RunFilter, run: &RunView<'_>) -> bool {
    match filter {
        RunFilter::Id { operator, value } => match_str(
            run.id,
            operator.as_ref().unwrap_or(&Operator::Eq),
            value,
            true,
        ),
        RunFilter::Name {
            operator,
            value,
            case_sensitive,
        } => match_str(run.name, operator, value, case_sensitive.unwrap_or(true)),
        RunFilter::CreatedBy { operator, value } => match_str(
            run.created_by.unwrap_or(""),
            operator.as_ref().unwrap_or(&Operator::Eq),
            value,
            true,
        ),
        RunFilter::CreatedAt { operator, value } => {
            match_time(run.created_at, operator, value).unwrap_or(false)
        }
        RunFilter::UpdatedAt { operator, value } => {
            match_time(run.updated_at, operator, value).unwrap_or(false)
        }
        RunFilter::ExperimentGroupId { value } => run.group_id == Some(value.as_str()),
        RunFilter::ExperimentGroupName {
            operator,
            value,
            case_sensitive,
        } => run
            .group_name
            .is_some_and(|g| match_str(g, operator, value, case_sensitive.unwrap_or(true))),
    }
}

/// 422s for date-time filter values that do not parse (the schema's
/// `format: date-time` should have caught them; this keeps the search total).
fn check_times(filters: &[RunFilter]) -> Result<(), ApiError> {
    let errors: Vec<ValidationError> = filters
        .iter()
        .enumerate()
        .filter_map(|(i, f)| match f {
            RunFilter::CreatedAt { value, .. } | RunFilter::UpdatedAt { value, .. }
                if parse_time(value).is_none() =>
            {
                Some(ValidationError {
                    loc: vec![
                        LocItem::Key("body".into()),
                        LocItem::Key("filters".into()),
                        LocItem::Index(i as i64),
                        LocItem::Key("value".into()),
                    ],
                    msg: "Input should be a valid datetime".into(),
                    kind: "datetime_from_date_parsing".into(),
                    input: Some(json!(value)),
                    ctx: None,
                })
            }
            _ => None,
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(errors))
    }
}

/// Sorts runs by the request's sort (default `created_at` descending).
fn sort_runs<T>(runs: &mut [&T], sort: Option<&RunSort>, view: impl Fn(&T) -> RunView<'_>) {
    let (column, ascending) = match sort {
        Some(s) => (s.name.as_str(), s.ascending),
        None => ("created_at", false),
    };
    runs.sort_by(|a, b| {
        let (a, b) = (view(a), view(b));
        let ord = match column {
            "name" => a.name.cmp(b.name),
            "updated_at" => super::cmp_time(a.updated_at, b.updated_at),
            _ => super::cmp_time(a.created_at, b.created_at),
        };
        let ord = if ascending { ord } else { ord.reverse() };
        ord.then_with(|| a.id.cmp(b.id))
    });
}

impl State {
    /// The `LogStreamResponse` of a log stream; counts only when asked for,
    /// as they stand now ([`super::traffic`]).
    pub fn log_stream_json(&self, l: &LogStreamRecord, include_counts: bool) -> Value {
        let now = chrono::Utc::now();
        let shape = LogStream {
            id: l.id.clone(),
            created_at: l.created_at.clone(),
            updated_at: l.updated_at.clone(),
            name: l.name.clone(),
            project_id: l.project_id.clone(),
            created_by: l.created_by.clone(),
            created_by_user: self.user_info(l.created_by.as_deref()),
            num_spans: Some(super::traffic::served_count(
                l.num_spans,
                &l.created_at,
                now,
            )),
            num_traces: Some(super::traffic::served_count(
                l.num_traces,
                &l.created_at,
                now,
            )),
            has_user_created_sessions: l.has_user_created_sessions,
        };
        let mut v = to_json(&shape).unwrap_or(Value::Null);
        if !include_counts && let Some(obj) = v.as_object_mut() {
            obj.remove("num_spans");
            obj.remove("num_traces");
        }
        v
    }

    /// The `ExperimentResponse` of an experiment.
    pub fn experiment_json(&self, e: &ExperimentRecord, include_counts: bool) -> Value {
        let mut obj = Map::new();
        obj.insert("id".into(), json!(e.id));
        obj.insert("created_at".into(), json!(e.created_at));
        obj.insert("updated_at".into(), json!(e.updated_at));
        obj.insert("name".into(), json!(e.name));
        obj.insert("project_id".into(), json!(e.project_id));
        obj.insert("created_by".into(), json!(e.created_by));
        obj.insert(
            "created_by_user".into(),
            to_json(&self.user_info(e.created_by.as_deref())).unwrap_or(Value::Null),
        );
        if include_counts {
            obj.insert("num_spans".into(), json!(e.num_spans));
            obj.insert("num_traces".into(), json!(e.num_traces));
        }
        obj.insert("task_type".into(), json!(e.task_type));
        obj.insert("aggregate_metrics".into(), json!({}));
        obj.insert("tags".into(), json!({}));
        obj.insert("experiment_group_id".into(), json!(e.experiment_group_id));
        obj.insert(
            "experiment_group_name".into(),
            json!(e.experiment_group_name),
        );
        Value::Object(obj)
    }

    /// POST `.../log_streams/search` (`ListLogStreamResponse`).
    pub fn search_log_streams(
        &self,
        project_id: &str,
        request: &RunSearchRequest,
    ) -> Result<Value, ApiError> {
        self.require_project(project_id)?;
        check_times(&request.filters)?;
        let runs = self
            .log_streams
            .iter()
            .filter(|l| l.project_id == project_id);
        Ok(search_runs(runs, request, "log_streams", |l, counts| {
            self.log_stream_json(l, counts)
        }))
    }

    /// POST `.../experiments/search` (`ListExperimentResponse`).
    pub fn search_experiments(
        &self,
        project_id: &str,
        request: &RunSearchRequest,
    ) -> Result<Value, ApiError> {
        self.require_project(project_id)?;
        check_times(&request.filters)?;
        let runs = self
            .experiments
            .iter()
            .filter(|e| e.project_id == project_id);
        Ok(search_runs(runs, request, "experiments", |e, counts| {
            self.experiment_json(e, counts)
        }))
    }
}

/// One page of a run search: `runs` filtered and sorted as `request` asks,
/// the page under `list_key` beside the pagination fields.
fn search_runs<'a, T: 'a>(
    runs: impl Iterator<Item = &'a T>,
    request: &RunSearchRequest,
    list_key: &str,
    to_json: impl Fn(&T, bool) -> Value,
) -> Value
where
    for<'b> &'b T: Into<RunView<'b>>,
{
    let mut runs: Vec<&T> = runs
        .filter(|r| request.filters.iter().all(|f| matches(f, &(*r).into())))
        .collect();
    sort_runs(&mut runs, request.sort.as_ref(), |r| r.into());
    let include_counts = request.include_counts.unwrap_or(false);
    let (page, fields) = paginate(
        &runs,
        request.starting_token.unwrap_or(0),
        request.limit.unwrap_or(crate::api::DEFAULT_PAGE_LIMIT),
    );
    let runs = page.iter().map(|r| to_json(r, include_counts)).collect();
    Value::Object(fields.with_items(list_key, runs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_operators() {
        let one = |s: &str| FilterValue::One(s.into());
        let many = |v: &[&str]| FilterValue::Many(v.iter().map(|s| (*s).to_owned()).collect());
        assert!(match_str("Prod", &Operator::Eq, &one("prod"), false));
        assert!(!match_str("Prod", &Operator::Eq, &one("prod"), true));
        assert!(match_str(
            "production",
            &Operator::Contains,
            &one("duct"),
            true
        ));
        assert!(match_str("a", &Operator::OneOf, &many(&["a", "b"]), true));
        assert!(match_str("c", &Operator::NotIn, &many(&["a", "b"]), true));
        assert!(match_str("a", &Operator::Ne, &one("b"), true));
        assert!(!match_str("a", &Operator::Gt, &one("b"), true));
    }

    #[test]
    fn time_operators() {
        let t = "2025-01-02T00:00:00Z";
        assert_eq!(
            match_time(t, &Operator::Gt, "2025-01-01T00:00:00+00:00"),
            Some(true)
        );
        assert_eq!(
            match_time(t, &Operator::Eq, "2025-01-02T01:00:00+01:00"),
            Some(true)
        );
        assert_eq!(match_time(t, &Operator::Lte, "nope"), None);
    }
}
