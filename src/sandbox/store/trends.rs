//! Trends dashboards of a log stream (spec operation 10, and the
//! reference's reads, settings update, duplicate and delete); their sections
//! and widgets are in [`super::sections`].
//!
//! Every log stream has a default dashboard (`is_default: true`), created
//! with it; operations that take an optional `trends_dashboard_id` use it
//! when none is given. The reference has no operation that creates a
//! dashboard from nothing: other dashboards are copies (POST
//! `.../dashboards/{id}/duplicate`, with a new name and maybe another
//! visibility), which copy the sections, widgets (new ids), layout and
//! settings. The default dashboard cannot be deleted (400). Dashboards with
//! `visibility: user` exist only for their creator (404 for anyone else).
//!
//! Settings (PUT `.../trends`): a field left out is kept; `null` clears a
//! field the response may hold as null (`description`, `group_by`,
//! `filter_tree`, `relative_time`) and keeps the others. The time range is
//! absolute (`start_time`, `end_time`) or relative (`relative_time`,
//! `last_<n>_<unit>`, at most five years), not both in one request (422); a
//! relative range sets `start_time`/`end_time` to the window ending now,
//! an absolute one clears `relative_time`. The layout map is stored as sent
//! and read back as is; deleting a widget drops its entry. A filter tree is
//! stored with the defaults of each leaf filled in, as pydantic writes it
//! back.
//!
//! Favorites: `visibility=user` favorites a dashboard for the calling user,
//! `project` for the whole project; each replaces the previous favorite of
//! that log stream for that user (or for the project). A dashboard's
//! `is_favorited` is true for a caller when either applies. Unfavoriting
//! (DELETE `.../dashboards/favorite`) clears the caller's favorite of the log
//! stream (`user`) or the project's (`project`). Deleting a dashboard drops
//! its favorites.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::api::{
    FilterExpression, LocItem, TrendsDashboardDuplicateRequest, TrendsDashboardSummary,
    TrendsDashboardUpdateRequest, ValidationError, Visibility,
};

use super::{
    ApiError, DashboardRecord, FavoriteRecord, LogStreamRecord, State, UserRecord, now, to_json,
};
use crate::sandbox::fingerprint::new_id;
use crate::sandbox::validation::component;

/// The longest relative time range: five years of 365 days.
pub const MAX_RELATIVE_SECS: u64 = 5 * 365 * 86_400;

/// A log stream's default dashboard, empty.
pub fn default_dashboard(
    id: &str,
    log_stream: &LogStreamRecord,
    created_by: Option<&str>,
    ts: &str,
) -> DashboardRecord {
    let end = super::parse_time(ts).map_or(0, |t| t.timestamp());
    DashboardRecord {
        id: id.to_owned(),
        project_id: log_stream.project_id.clone(),
        log_stream_id: log_stream.id.clone(),
        name: "Default".to_owned(),
        description: None,
        is_default: true,
        visibility: "project".to_owned(),
        created_by: created_by.map(str::to_owned),
        created_at: ts.to_owned(),
        updated_at: ts.to_owned(),
        widgets: Vec::new(),
        sections: Vec::new(),
        layout_map: BTreeMap::new(),
        interval_mins: 60,
        start_time: end - 7 * 24 * 3600,
        end_time: end,
        relative_time: Some("last_7_days".to_owned()),
        group_by: None,
        filter_tree: None,
    }
}

/// A 422 `value_error` at `loc` (under `body`).
pub fn body_error(loc: &[&str], message: &str) -> ApiError {
    let mut path = vec![LocItem::Key("body".into())];
    path.extend(loc.iter().map(|k| LocItem::Key((*k).to_owned())));
    ApiError::invalid(vec![ValidationError::value_error(path, None, message)])
}

/// The length in seconds of a relative time range `last_<n>_<unit>` (the
/// reference's pattern, already checked); `None` when `n` does not fit.
pub fn relative_secs(relative: &str) -> Option<u64> {
    let rest = relative.strip_prefix("last_")?;
    let (n, unit) = rest.split_once('_')?;
    let n: u64 = n.parse().ok()?;
    let unit = unit.strip_suffix('s').unwrap_or(unit);
    let secs = match unit {
        "second" => 1,
        "minute" => 60,
        "hour" => 3_600,
        "day" => 86_400,
        "week" => 7 * 86_400,
        "month" => 30 * 86_400,
        _ => return None,
    };
    n.checked_mul(secs)
}

/// The checks of a settings update that need no stored state (pydantic's
/// model validators): not both kinds of time range, a relative one of at
/// most five years.
pub fn check_update(request: &TrendsDashboardUpdateRequest) -> Result<(), ApiError> {
    let absolute = request.start_time.is_some() || request.end_time.is_some();
    if let Some(Some(relative)) = &request.relative_time {
        if absolute {
            return Err(body_error(
                &[],
                "provide either start_time and end_time, or relative_time, not both",
            ));
        }
        if relative_secs(relative).is_none_or(|s| s > MAX_RELATIVE_SECS) {
            return Err(body_error(
                &["relative_time"],
                "relative_time must be at most 5 years",
            ));
        }
    }
    Ok(())
}

/// The reference schema of each kind of log-records filter.
fn filter_schema(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "id" => "LogRecordsIDFilter",
        "date" => "LogRecordsDateFilter",
        "number" => "LogRecordsNumberFilter",
        "boolean" => "LogRecordsBooleanFilter",
        "collection" => "LogRecordsCollectionFilter",
        "text" => "LogRecordsTextFilter",
        "fully_annotated" => "LogRecordsFullyAnnotatedFilter",
        _ => return None,
    })
}

/// A filter tree as the service stores and returns it: every field of each
/// leaf's model present (its default, or null).
pub fn stored_filter_tree(tree: &FilterExpression) -> Result<Value, ApiError> {
    fn fill(node: &mut Value) {
        let Some(obj) = node.as_object_mut() else {
            return;
        };
        for key in ["and", "or"] {
            if let Some(Value::Array(items)) = obj.get_mut(key) {
                items.iter_mut().for_each(fill);
            }
        }
        if let Some(inner) = obj.get_mut("not") {
            fill(inner);
        }
        let Some(Value::Object(filter)) = obj.get_mut("filter") else {
            return;
        };
        let props = filter
            .get("type")
            .and_then(Value::as_str)
            .and_then(filter_schema)
            .and_then(component)
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        for (name, schema) in props.into_iter().flatten() {
            if !filter.contains_key(name) {
                let value = schema.get("default").cloned().unwrap_or(Value::Null);
                filter.insert(name.clone(), value);
            }
        }
    }
    let mut value = to_json(tree)?;
    fill(&mut value);
    Ok(value)
}

impl State {
    pub(super) fn visible(&self, d: &DashboardRecord, caller: &UserRecord) -> bool {
        d.visibility != "user" || d.created_by.as_deref() == Some(caller.id.as_str())
    }

    fn is_favorited(&self, d: &DashboardRecord, caller: &UserRecord) -> bool {
        self.favorites.iter().any(|f| {
            f.dashboard_id == d.id && f.user_id.as_deref().is_none_or(|u| u == caller.id.as_str())
        })
    }

    /// The dashboard a request addresses: the given one (404 when it is not
    /// a dashboard of that log stream the caller sees) or the log stream's
    /// default.
    pub(super) fn dashboard_index(
        &self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        caller: &UserRecord,
    ) -> Result<usize, ApiError> {
        self.require_log_stream(project_id, log_stream_id)?;
        self.dashboards
            .iter()
            .position(|d| {
                d.log_stream_id == log_stream_id
                    && match dashboard_id {
                        Some(id) => d.id == id && self.visible(d, caller),
                        None => d.is_default,
                    }
            })
            .ok_or_else(|| ApiError::not_found("Trends dashboard"))
    }

    /// GET `.../trends/dashboards` (`TrendsDashboardSummary[]`).
    pub fn list_dashboards(
        &self,
        project_id: &str,
        log_stream_id: &str,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        self.require_log_stream(project_id, log_stream_id)?;
        let list: Vec<TrendsDashboardSummary> = self
            .dashboards
            .iter()
            .filter(|d| d.log_stream_id == log_stream_id && self.visible(d, caller))
            .map(|d| TrendsDashboardSummary {
                id: d.id.clone(),
                name: d.name.clone(),
                description: d.description.clone(),
                is_default: d.is_default,
                visibility: d.visibility.clone(),
                created_by: d.created_by.clone(),
                is_favorited: self.is_favorited(d, caller),
                created_at: d.created_at.clone(),
                updated_at: d.updated_at.clone(),
            })
            .collect();
        to_json(&list)
    }

    /// The `TrendsDashboardResponse` of a dashboard, for `caller`.
    fn dashboard_json(&self, d: &DashboardRecord, caller: &UserRecord) -> Result<Value, ApiError> {
        Ok(json!({
            "id": d.id,
            "name": d.name,
            "description": d.description,
            "is_default": d.is_default,
            "visibility": d.visibility,
            "created_by": d.created_by,
            "is_favorited": self.is_favorited(d, caller),
            "log_stream_id": d.log_stream_id,
            "project_id": d.project_id,
            "widgets": to_json(&d.widgets)?,
            "sections": to_json(&d.sections)?,
            "layout_map": to_json(&d.layout_map)?,
            "interval_mins": d.interval_mins,
            "group_by": d.group_by,
            "filter_tree": d.filter_tree,
            "start_time": d.start_time,
            "end_time": d.end_time,
            "relative_time": d.relative_time,
        }))
    }

    /// GET `.../trends` (`TrendsDashboardResponse`).
    pub fn get_dashboard(
        &self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.dashboard_index(project_id, log_stream_id, dashboard_id, caller)?;
        self.dashboard_json(&self.dashboards[i], caller)
    }

    /// PUT `.../trends`: changes the settings given (see the module docs);
    /// answers the whole dashboard. `request` passed [`check_update`].
    pub fn update_dashboard(
        &mut self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        request: TrendsDashboardUpdateRequest,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.dashboard_index(project_id, log_stream_id, dashboard_id, caller)?;
        let filter_tree = match &request.filter_tree {
            Some(Some(tree)) => Some(Some(stored_filter_tree(tree)?)),
            Some(None) => Some(None),
            None => None,
        };
        let d = &self.dashboards[i];
        let start = request.start_time.unwrap_or(d.start_time);
        let end = request.end_time.unwrap_or(d.end_time);
        if start > end {
            return Err(body_error(&[], "start_time must not be after end_time"));
        }
        let ts = now();
        let d = &mut self.dashboards[i];
        if let Some(name) = request.name {
            d.name = name;
        }
        if let Some(description) = request.description {
            d.description = description;
        }
        if let Some(interval) = request.interval_mins {
            d.interval_mins = interval;
        }
        if let Some(layout) = request.layout_map {
            d.layout_map = layout;
        }
        match request.relative_time {
            Some(Some(relative)) => {
                let window = relative_secs(&relative)
                    .and_then(|s| i64::try_from(s).ok())
                    .unwrap_or(0);
                let end = super::parse_time(&ts).map_or(0, |t| t.timestamp());
                d.start_time = end - window;
                d.end_time = end;
                d.relative_time = Some(relative);
            }
            Some(None) => d.relative_time = None,
            None => {}
        }
        if request.start_time.is_some() || request.end_time.is_some() {
            d.start_time = start;
            d.end_time = end;
            d.relative_time = None;
        }
        if let Some(tree) = filter_tree {
            d.filter_tree = tree;
        }
        if let Some(group_by) = request.group_by {
            d.group_by = group_by;
        }
        d.updated_at = ts;
        let d = &self.dashboards[i];
        self.dashboard_json(d, caller)
    }

    /// POST `.../dashboards/{id}/duplicate`: a copy of the dashboard (not
    /// default, created by the caller) with new ids for its sections and
    /// widgets, and the layout following them.
    pub fn duplicate_dashboard(
        &mut self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: &str,
        request: TrendsDashboardDuplicateRequest,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.dashboard_index(project_id, log_stream_id, Some(dashboard_id), caller)?;
        let source = &self.dashboards[i];
        let mut new_ids: BTreeMap<String, String> = BTreeMap::new();
        let mut copy = source.clone();
        copy.id = new_id();
        copy.name = request.name;
        copy.description = request.description.or(copy.description);
        copy.is_default = false;
        if let Some(v) = request.visibility {
            copy.visibility = v.as_str().to_owned();
        }
        copy.created_by = Some(caller.id.clone());
        let ts = now();
        copy.created_at = ts.clone();
        copy.updated_at = ts;
        for w in &mut copy.widgets {
            let id = new_id();
            new_ids.insert(std::mem::replace(&mut w.id, id.clone()), id);
        }
        for s in &mut copy.sections {
            s.id = new_id();
            for w in &mut s.widgets {
                let id = new_id();
                new_ids.insert(std::mem::replace(&mut w.id, id.clone()), id);
                w.section_id = Some(s.id.clone());
            }
        }
        copy.layout_map = std::mem::take(&mut copy.layout_map)
            .into_iter()
            .map(|(k, v)| (new_ids.get(&k).cloned().unwrap_or(k), v))
            .collect();
        let out = self.dashboard_json(&copy, caller)?;
        self.dashboards.push(copy);
        Ok(out)
    }

    /// DELETE `.../dashboards/{id}`: the dashboard with its sections,
    /// widgets and favorites; the default dashboard cannot be deleted (400).
    pub fn delete_dashboard(
        &mut self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: &str,
        caller: &UserRecord,
    ) -> Result<(), ApiError> {
        let i = self.dashboard_index(project_id, log_stream_id, Some(dashboard_id), caller)?;
        if self.dashboards[i].is_default {
            return Err(ApiError::BadRequest(
                "The default dashboard cannot be deleted".into(),
            ));
        }
        let gone = self.dashboards.remove(i);
        self.favorites.retain(|f| f.dashboard_id != gone.id);
        Ok(())
    }

    /// POST `.../dashboards/{id}/favorite?visibility=` (spec operation 10).
    pub fn favorite(
        &mut self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: &str,
        visibility: &Visibility,
        caller: &UserRecord,
    ) -> Result<(), ApiError> {
        self.dashboard_index(project_id, log_stream_id, Some(dashboard_id), caller)?;
        let user_id = match visibility {
            Visibility::Project => None,
            _ => Some(caller.id.clone()),
        };
        self.favorites
            .retain(|f| !(f.log_stream_id == log_stream_id && f.user_id == user_id));
        self.favorites.push(FavoriteRecord {
            log_stream_id: log_stream_id.to_owned(),
            dashboard_id: dashboard_id.to_owned(),
            user_id,
        });
        Ok(())
    }

    /// DELETE `.../dashboards/favorite?visibility=`: clears the caller's
    /// (or the project's) favorite of the log stream; nothing to clear is
    /// fine.
    pub fn unfavorite(
        &mut self,
        project_id: &str,
        log_stream_id: &str,
        visibility: &Visibility,
        caller: &UserRecord,
    ) -> Result<(), ApiError> {
        self.require_log_stream(project_id, log_stream_id)?;
        let user_id = match visibility {
            Visibility::Project => None,
            _ => Some(caller.id.clone()),
        };
        self.favorites
            .retain(|f| !(f.log_stream_id == log_stream_id && f.user_id == user_id));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_ranges_are_measured_and_capped_at_five_years() {
        assert_eq!(relative_secs("last_7_days"), Some(7 * 86_400));
        assert_eq!(relative_secs("last_1_hour"), Some(3_600));
        assert_eq!(relative_secs("last_60_months"), Some(60 * 30 * 86_400));
        assert_eq!(relative_secs("last_99999999999999999999_days"), None);
        let over = TrendsDashboardUpdateRequest {
            relative_time: Some(Some("last_261_weeks".into())),
            ..Default::default()
        };
        assert!(check_update(&over).is_err());
        let both = TrendsDashboardUpdateRequest {
            relative_time: Some(Some("last_2_days".into())),
            end_time: Some(5),
            ..Default::default()
        };
        assert!(check_update(&both).is_err());
        let cleared = TrendsDashboardUpdateRequest {
            relative_time: Some(None),
            end_time: Some(5),
            ..Default::default()
        };
        assert!(check_update(&cleared).is_ok());
    }

    #[test]
    fn stored_filter_trees_carry_every_field_of_each_leaf() {
        let tree: FilterExpression = serde_json::from_value(json!({"not": {"and": [
            {"filter": {"type": "boolean", "column_id": "has_error", "value": true}},
            {"filter": {"type": "text", "column_id": "input", "operator": "contains", "value": "x"}}
        ]}}))
        .unwrap();
        let stored = stored_filter_tree(&tree).unwrap();
        let leaves = &stored["not"]["and"];
        assert_eq!(leaves[0]["filter"]["operator"], "eq");
        assert_eq!(leaves[1]["filter"]["case_sensitive"], true);
        assert_eq!(leaves[1]["filter"]["value"], "x");
    }

    #[test]
    fn body_errors_are_value_errors_under_body() {
        let ApiError::Validation(d) = body_error(&["relative_time"], "too long") else {
            panic!()
        };
        assert_eq!(d[0]["loc"], json!(["body", "relative_time"]));
        assert_eq!(d[0]["type"], "value_error");
    }
}
