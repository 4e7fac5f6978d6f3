//! The contents of a trends dashboard: sections (spec operation 3 and the
//! reference's update and delete) and widgets (the reference's create,
//! update and delete).
//!
//! A dashboard holds at most [`MAX_SECTIONS`] sections, and at most
//! [`MAX_WIDGETS`] widgets at its top level and in each section (the
//! reference's `maxItems`); one more is a 422. A widget lives at the top
//! level (`section_id: null`) or in one section of its dashboard; a
//! `section_id` that is not a section of that dashboard is a 404 `Section
//! not found`. Moving a widget is an update of its `section_id` (`null`
//! moves it to the top level): it keeps its id and goes last in its new
//! place. Deleting a section with `ungroup=true` moves its widgets to the
//! top level, otherwise deletes them (and their layout entries).
//!
//! Widget updates: a field left out is kept; `null` clears `description`,
//! `dataset` and `section_id` and keeps the others. Section updates keep the
//! stored value for `null` as well as for a field left out.

use crate::api::{
    MAX_SECTIONS, MAX_WIDGETS, Section, SectionCreateRequest, SectionUpdateRequest, Widget,
    WidgetCreateRequest, WidgetUpdateRequest,
};

use super::trends::body_error;
use super::{ApiError, DashboardRecord, State, UserRecord, now};
use crate::sandbox::fingerprint::new_id;

/// Where a widget is in its dashboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// At the top level, at this index.
    Top(usize),
    /// In the section at the first index, at the second.
    Section(usize, usize),
}

impl DashboardRecord {
    fn section_index(&self, section_id: &str) -> Result<usize, ApiError> {
        self.sections
            .iter()
            .position(|s| s.id == section_id)
            .ok_or_else(|| ApiError::not_found("Section"))
    }

    fn find_widget(&self, widget_id: &str) -> Option<Place> {
        if let Some(i) = self.widgets.iter().position(|w| w.id == widget_id) {
            return Some(Place::Top(i));
        }
        self.sections.iter().enumerate().find_map(|(s, section)| {
            section
                .widgets
                .iter()
                .position(|w| w.id == widget_id)
                .map(|i| Place::Section(s, i))
        })
    }

    /// The widgets of a place's list (the top level, or a section).
    fn list_len(&self, section: Option<usize>) -> usize {
        match section {
            None => self.widgets.len(),
            Some(s) => self.sections[s].widgets.len(),
        }
    }

    /// 422 when the top level (`None`) or the section is full.
    fn check_room(&self, section: Option<usize>) -> Result<(), ApiError> {
        if self.list_len(section) < MAX_WIDGETS {
            return Ok(());
        }
        let message = match section {
            None => format!("a dashboard holds at most {MAX_WIDGETS} widgets outside sections"),
            Some(_) => format!("a section holds at most {MAX_WIDGETS} widgets"),
        };
        Err(body_error(&[], &message))
    }

    fn push_widget(&mut self, section: Option<usize>, mut widget: Widget) {
        match section {
            None => {
                widget.section_id = None;
                self.widgets.push(widget);
            }
            Some(s) => {
                widget.section_id = Some(self.sections[s].id.clone());
                self.sections[s].widgets.push(widget);
            }
        }
    }

    fn take_widget(&mut self, place: Place) -> Widget {
        match place {
            Place::Top(i) => self.widgets.remove(i),
            Place::Section(s, i) => self.sections[s].widgets.remove(i),
        }
    }

    fn widget_mut(&mut self, place: Place) -> &mut Widget {
        match place {
            Place::Top(i) => &mut self.widgets[i],
            Place::Section(s, i) => &mut self.sections[s].widgets[i],
        }
    }
}

impl State {
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
            return Err(body_error(&[], &message));
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
        let s = dashboard.section_index(section_id)?;
        let section = &mut dashboard.sections[s];
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
    /// section's widgets to the dashboard's top level (422, and nothing
    /// changes, when they do not fit there), otherwise they are deleted with
    /// it.
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
        let at = dashboard.section_index(section_id)?;
        if ungroup && dashboard.widgets.len() + dashboard.sections[at].widgets.len() > MAX_WIDGETS {
            let message =
                format!("a dashboard holds at most {MAX_WIDGETS} widgets outside sections");
            return Err(body_error(&[], &message));
        }
        let section = dashboard.sections.remove(at);
        for widget in section.widgets {
            if ungroup {
                dashboard.push_widget(None, widget);
            } else {
                dashboard.layout_map.remove(&widget.id);
            }
        }
        dashboard.updated_at = now();
        Ok(())
    }

    /// POST `.../trends/widgets`: a new widget, last in its section or at the
    /// top level.
    pub fn create_widget(
        &mut self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        request: WidgetCreateRequest,
        caller: &UserRecord,
    ) -> Result<Widget, ApiError> {
        let i = self.dashboard_index(project_id, log_stream_id, dashboard_id, caller)?;
        let dashboard = &mut self.dashboards[i];
        let section = request
            .section_id
            .as_deref()
            .map(|id| dashboard.section_index(id))
            .transpose()?;
        dashboard.check_room(section)?;
        let widget = Widget {
            id: new_id(),
            name: request.name,
            description: request.description,
            widget_type: request.widget_type,
            dataset: request.dataset,
            metric: request.metric,
            aggregation: request.aggregation,
            section_id: None,
        };
        dashboard.push_widget(section, widget);
        dashboard.updated_at = now();
        let place = dashboard.list_len(section) - 1;
        Ok(match section {
            None => dashboard.widgets[place].clone(),
            Some(s) => dashboard.sections[s].widgets[place].clone(),
        })
    }

    /// PUT `.../trends/widgets/{widget_id}`: changes the fields given (see
    /// the module docs); a new `section_id` moves the widget.
    pub fn update_widget(
        &mut self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        widget_id: &str,
        request: WidgetUpdateRequest,
        caller: &UserRecord,
    ) -> Result<Widget, ApiError> {
        let i = self.dashboard_index(project_id, log_stream_id, dashboard_id, caller)?;
        let dashboard = &mut self.dashboards[i];
        let mut place = dashboard
            .find_widget(widget_id)
            .ok_or_else(|| ApiError::not_found("Widget"))?;
        if let Some(target) = &request.section_id {
            let to = target
                .as_deref()
                .map(|id| dashboard.section_index(id))
                .transpose()?;
            let from = match place {
                Place::Top(_) => None,
                Place::Section(s, _) => Some(s),
            };
            if to != from {
                dashboard.check_room(to)?;
                let widget = dashboard.take_widget(place);
                // Removing a widget shifts no section index.
                dashboard.push_widget(to, widget);
                let at = dashboard.list_len(to) - 1;
                place = match to {
                    None => Place::Top(at),
                    Some(s) => Place::Section(s, at),
                };
            }
        }
        let widget = dashboard.widget_mut(place);
        if let Some(name) = request.name {
            widget.name = name;
        }
        if let Some(description) = request.description {
            widget.description = description;
        }
        if let Some(widget_type) = request.widget_type {
            widget.widget_type = widget_type;
        }
        if let Some(dataset) = request.dataset {
            widget.dataset = dataset;
        }
        if let Some(metric) = request.metric {
            widget.metric = metric;
        }
        if let Some(aggregation) = request.aggregation {
            widget.aggregation = aggregation;
        }
        let out = widget.clone();
        dashboard.updated_at = now();
        Ok(out)
    }

    /// DELETE `.../trends/widgets/{widget_id}`: the widget and its layout
    /// entry.
    pub fn delete_widget(
        &mut self,
        project_id: &str,
        log_stream_id: &str,
        dashboard_id: Option<&str>,
        widget_id: &str,
        caller: &UserRecord,
    ) -> Result<(), ApiError> {
        let i = self.dashboard_index(project_id, log_stream_id, dashboard_id, caller)?;
        let dashboard = &mut self.dashboards[i];
        let place = dashboard
            .find_widget(widget_id)
            .ok_or_else(|| ApiError::not_found("Widget"))?;
        dashboard.take_widget(place);
        dashboard.layout_map.remove(widget_id);
        dashboard.updated_at = now();
        Ok(())
    }
}
