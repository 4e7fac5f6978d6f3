//! Trends dashboards of a log stream (spec operations 3 and 10, and the
//! reference's reads and writes).
//!
//! Every log stream has a default dashboard (`is_default: true`), created
//! with it; operations that take an optional `trends_dashboard_id` use it
//! when none is given. Sections belong to a dashboard, at most
//! [`MAX_SECTIONS`] of them (the reference's `maxItems`; one more is a 422).
//! Widgets are server-owned: fixtures put them at the dashboard's top level
//! or in sections; deleting a section with `ungroup=true` moves its widgets
//! to the top level, otherwise deletes them.
//!
//! Favorites: `visibility=user` favorites a dashboard for the calling user,
//! `project` for the whole project; each replaces the previous favorite of
//! that log stream for that user (or for the project). A dashboard's
//! `is_favorited` is true for a caller when either applies. Unfavoriting
//! (DELETE `.../dashboards/favorite`) clears the caller's favorite of the log
//! stream (`user`) or the project's (`project`). Dashboards with
//! `visibility: user` are listed only to their creator.

use serde_json::{Value, json};

use crate::api::{
    LocItem, Section, SectionCreateRequest, SectionUpdateRequest, TrendsDashboardSummary,
    ValidationError, Visibility,
};

use super::{
    ApiError, DashboardRecord, FavoriteRecord, LogStreamRecord, State, UserRecord, now, to_json,
};
use crate::sandbox::fingerprint::new_id;

/// The most sections a dashboard holds.
pub const MAX_SECTIONS: usize = 50;

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
        interval_mins: 60,
        start_time: end - 7 * 24 * 3600,
        end_time: end,
        relative_time: Some("last_7_days".to_owned()),
    }
}

impl State {
    fn visible(&self, d: &DashboardRecord, caller: &UserRecord) -> bool {
        d.visibility != "user" || d.created_by.as_deref() == Some(caller.id.as_str())
    }

    fn is_favorited(&self, d: &DashboardRecord, caller: &UserRecord) -> bool {
        self.favorites.iter().any(|f| {
            f.dashboard_id == d.id && f.user_id.as_deref().is_none_or(|u| u == caller.id.as_str())
        })
    }

    /// The dashboard a request addresses: the given one (404 when it is not
    /// a dashboard of that log stream) or the log stream's default.
    fn dashboard_index(
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

    /// GET `.../trends` (`TrendsDashboardResponse`).
    pub fn get_dashboard(
        &self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.dashboard_index(project_id, log_stream_id, dashboard_id, caller)?;
        let d = &self.dashboards[i];
        let layout: serde_json::Map<String, Value> = d
            .widgets
            .iter()
            .chain(d.sections.iter().flat_map(|s| s.widgets.iter()))
            .enumerate()
            .map(|(n, w)| (w.id.clone(), json!({ "x": 0, "y": n, "w": 6, "h": 4 })))
            .collect();
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
            "layout_map": layout,
            "interval_mins": d.interval_mins,
            "group_by": null,
            "filter_tree": null,
            "start_time": d.start_time,
            "end_time": d.end_time,
            "relative_time": d.relative_time,
        }))
    }

    /// POST `.../trends/sections` (spec operation 3): a new, empty section at
    /// the end of the dashboard.
    pub fn create_section(
        &mut self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        request: SectionCreateRequest,
        caller: &UserRecord,
    ) -> Result<Section, ApiError> {
        let i = self.dashboard_index(project_id, log_stream_id, dashboard_id, caller)?;
        let dashboard = &mut self.dashboards[i];
        if dashboard.sections.len() >= MAX_SECTIONS {
            let message = format!("a dashboard holds at most {MAX_SECTIONS} sections");
            return Err(ApiError::invalid(vec![ValidationError::value_error(
                vec![LocItem::Key("body".into())],
                None,
                &message,
            )]));
        }
        let section = Section {
            id: new_id(),
            name: request.name,
            description: request.description,
            color: request.color,
            widgets: Vec::new(),
        };
        dashboard.sections.push(section.clone());
        dashboard.updated_at = now();
        Ok(section)
    }

    /// PUT `.../trends/sections/{section_id}`: changes the fields given
    /// (null or absent keeps the stored value).
    pub fn update_section(
        &mut self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        section_id: &str,
        request: SectionUpdateRequest,
        caller: &UserRecord,
    ) -> Result<Section, ApiError> {
        let i = self.dashboard_index(project_id, log_stream_id, dashboard_id, caller)?;
        let dashboard = &mut self.dashboards[i];
        let section = dashboard
            .sections
            .iter_mut()
            .find(|s| s.id == section_id)
            .ok_or_else(|| ApiError::not_found("Section"))?;
        if let Some(name) = request.name {
            section.name = name;
        }
        if let Some(description) = request.description {
            section.description = Some(description);
        }
        if let Some(color) = request.color {
            section.color = Some(color);
        }
        let out = section.clone();
        dashboard.updated_at = now();
        Ok(out)
    }

    /// DELETE `.../trends/sections/{section_id}`: `ungroup` moves the
    /// section's widgets to the dashboard's top level, otherwise they are
    /// deleted with it.
    pub fn delete_section(
        &mut self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        section_id: &str,
        ungroup: bool,
        caller: &UserRecord,
    ) -> Result<(), ApiError> {
        let i = self.dashboard_index(project_id, log_stream_id, dashboard_id, caller)?;
        let dashboard = &mut self.dashboards[i];
        let at = dashboard
            .sections
            .iter()
            .position(|s| s.id == section_id)
            .ok_or_else(|| ApiError::not_found("Section"))?;
        let section = dashboard.sections.remove(at);
        if ungroup {
            dashboard
                .widgets
                .extend(section.widgets.into_iter().map(|mut w| {
                    w.section_id = None;
                    w
                }));
        }
        dashboard.updated_at = now();
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
