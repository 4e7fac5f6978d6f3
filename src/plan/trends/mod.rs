//! Planning a log stream's trends dashboards: the default dashboard's
//! sections, widgets, settings and favorite state, and the log stream's
//! other dashboards (`trends.dashboards`) with their own sections, widgets
//! and settings.
//!
//! Each part is its own planner: [`sections`] (a set keyed by name),
//! [`widgets`] (sets keyed by name per section and at the top level; a
//! widget found in another managed place is moved), [`settings`] (the
//! declared fields only), [`dashboards`] (the other dashboards, keyed by
//! name; created by copying, replaced when their visibility changes). They
//! share the dashboard being planned ([`Board`]): where its addresses are,
//! and how its operations name it and its parts.
//!
//! The service reports whether a dashboard is favorited, not for whom; so
//! `favorite: user` and `favorite: project` both compare as "favorited", and
//! the plan notes that the declared audience cannot be checked.

pub mod dashboards;
pub mod sections;
pub mod settings;
pub mod widgets;

pub use dashboards::NormDashboard;
pub use settings::NormSettings;
pub use widgets::NormWidget;

use super::address::Address;
use super::fingerprint::{self, FavoriteState};
use super::types::{Action, DashboardRef, NoteKind, Operation, SectionRef, WidgetRef};
use super::{Draft, Planner};
use crate::api::Visibility;
use crate::manifest::FieldPath;
use crate::manifest::set::Origin;
use crate::manifest::types::{DashboardSpec, FavoriteSpec, SectionSpec, TrendsSpec, WidgetSpec};
use crate::plan::address::{FavoriteAddress, SectionAddress, SettingsAddress, WidgetAddress};
use crate::state::{
    DashboardState, ObjectKey, ProjectState, RunState, SectionState, TrendsParts, WidgetState,
};

/// What a manifest declares of one dashboard's contents: the default
/// dashboard's (from `trends`) or another's (from `trends.dashboards`).
#[derive(Debug, Clone, Copy, Default)]
pub struct DashboardContents<'a> {
    /// Sections, when managed.
    pub sections: Option<&'a [SectionSpec]>,
    /// Top-level widgets, when managed.
    pub widgets: Option<&'a [WidgetSpec]>,
    /// Bucket width, when managed.
    pub interval_mins: Option<i64>,
    /// Relative time range, when managed.
    pub relative_time: Option<&'a str>,
    /// Group-by column (`""`: none), when managed.
    pub group_by: Option<&'a str>,
}

impl<'a> DashboardContents<'a> {
    /// The default dashboard's contents.
    pub fn of_trends(spec: &'a TrendsSpec) -> Self {
        DashboardContents {
            sections: spec.sections.as_deref(),
            widgets: spec.widgets.as_deref(),
            interval_mins: spec.interval_mins,
            relative_time: spec.relative_time.as_deref(),
            group_by: spec.group_by.as_deref(),
        }
    }

    /// Another dashboard's contents.
    pub fn of_dashboard(spec: &'a DashboardSpec) -> Self {
        DashboardContents {
            sections: spec.sections.as_deref(),
            widgets: spec.widgets.as_deref(),
            interval_mins: spec.interval_mins,
            relative_time: spec.relative_time.as_deref(),
            group_by: spec.group_by.as_deref(),
        }
    }

    /// Whether any setting is managed.
    pub fn declares_settings(&self) -> bool {
        self.interval_mins.is_some() || self.relative_time.is_some() || self.group_by.is_some()
    }

    /// Whether any widget list is managed (at the top level or in a section).
    pub fn declares_widgets(&self) -> bool {
        self.widgets.is_some()
            || self
                .sections
                .into_iter()
                .flatten()
                .any(|s| s.widgets.is_some())
    }

    /// The parts of the live dashboard that planning these contents compares.
    pub fn parts(&self) -> TrendsParts {
        TrendsParts {
            widgets: self.declares_widgets(),
            settings: self.declares_settings(),
        }
    }
}

/// The parts of the live dashboards that planning `spec` compares: the
/// default dashboard's (which also holds what a new dashboard copies), and
/// the other dashboards' (`None` when they are not managed).
pub fn trends_parts(spec: &TrendsSpec) -> (TrendsParts, Option<TrendsParts>) {
    // The other dashboards are read whole (they are few): a description is
    // read with the settings, and a deletion or a copy counts the widgets.
    let others = spec.dashboards.as_ref().map(|_| TrendsParts::ALL);
    let default = DashboardContents::of_trends(spec).parts();
    (default.union(others.unwrap_or_default()), others)
}

/// The dashboard being planned: where its addresses are and how operations
/// name it. A dashboard this plan creates does not exist yet: its contents
/// are planned against the copy it will start as, and operations name it
/// and its parts by name ([`DashboardRef::Named`]).
pub(crate) struct Board<'a> {
    pub(crate) project_id: &'a str,
    pub(crate) log_stream_id: &'a str,
    /// The project, as addresses name it.
    pub(crate) project: &'a str,
    /// The log stream, as addresses name it.
    pub(crate) log_stream: String,
    /// The dashboard's name in addresses; `None`: the default dashboard.
    pub(crate) dashboard: Option<String>,
    /// How operations name the dashboard.
    pub(crate) reference: DashboardRef,
    /// Whether the dashboard exists (its ids can be used).
    pub(crate) exists: bool,
}

impl Board<'_> {
    fn section_address(&self, name: &str) -> Address {
        Address::Section(SectionAddress {
            project: self.project.to_owned(),
            log_stream: self.log_stream.clone(),
            dashboard: self.dashboard.clone(),
            name: name.to_owned(),
        })
    }

    fn widget_address(&self, section: Option<&str>, name: &str) -> Address {
        Address::Widget(WidgetAddress {
            project: self.project.to_owned(),
            log_stream: self.log_stream.clone(),
            dashboard: self.dashboard.clone(),
            section: section.map(str::to_owned),
            name: name.to_owned(),
        })
    }

    fn settings_address(&self) -> Address {
        Address::Settings(SettingsAddress {
            project: self.project.to_owned(),
            log_stream: self.log_stream.clone(),
            dashboard: self.dashboard.clone(),
        })
    }

    /// A live section as operations that run before sections change name it.
    fn section_now(&self, live: &SectionState) -> SectionRef {
        if self.exists {
            SectionRef::Id(live.id.clone())
        } else {
            SectionRef::Named {
                named: live.name.clone(),
            }
        }
    }

    /// A live section as operations that run after sections changed name it
    /// (`declared`: the name it is declared under, if it is).
    fn section_after(&self, live: &SectionState, declared: Option<&str>) -> SectionRef {
        if self.exists {
            SectionRef::Id(live.id.clone())
        } else {
            SectionRef::Named {
                named: declared.unwrap_or(&live.name).to_owned(),
            }
        }
    }

    /// A live widget, in a section named `section` once sections changed.
    fn widget_ref(&self, live: &WidgetState, section: Option<&str>) -> WidgetRef {
        if self.exists {
            WidgetRef::Id(live.id.clone())
        } else {
            WidgetRef::Named {
                named: live.name.clone(),
                section: section.map(str::to_owned),
            }
        }
    }

    /// The fingerprint of a live object of the dashboard: `absent` for
    /// everything of a dashboard that does not exist yet.
    fn fingerprint(&self, of: impl FnOnce() -> String) -> String {
        if self.exists {
            of()
        } else {
            fingerprint::fingerprint(None)
        }
    }
}

/// Plans one dashboard's contents against `live` (the dashboard, or the
/// copy a new one starts as).
pub(crate) fn plan_contents(
    planner: &mut Planner<'_>,
    origin: &Origin,
    board: &Board<'_>,
    live: &DashboardState,
    contents: &DashboardContents<'_>,
) {
    let pairing = contents
        .sections
        .map(|wanted| sections::pair(&live.sections, wanted))
        .unwrap_or_default();
    if let Some(wanted) = contents.sections {
        sections::plan_sections(planner, board, live, wanted, &pairing);
    }
    if contents.declares_widgets() {
        widgets::plan_widgets(planner, origin, board, live, contents, &pairing);
    }
    if contents.declares_settings() {
        settings::plan_settings(planner, origin, board, live, contents);
    }
}

/// Plans one log stream's trends.
#[allow(clippy::too_many_arguments)]
pub(crate) fn plan_trends(
    planner: &mut Planner<'_>,
    origin: &Origin,
    field: &FieldPath,
    project: &str,
    live_project: &ProjectState,
    run_key: &ObjectKey,
    run: &RunState,
    spec: &TrendsSpec,
) {
    let Some(dashboard) = &run.dashboard else {
        planner.problem(
            origin,
            format!(
                "log stream `{run_key}` of project `{project}` has no default trends dashboard"
            ),
        );
        return;
    };
    let board = Board {
        project_id: &live_project.id,
        log_stream_id: &run.id,
        project,
        log_stream: run_key.to_string(),
        dashboard: None,
        reference: DashboardRef::Id(dashboard.id.clone()),
        exists: true,
    };
    let scope = super::Target::trends(project, &board.log_stream);
    if planner.options.reaches(&scope) {
        plan_contents(
            planner,
            origin,
            &board,
            dashboard,
            &DashboardContents::of_trends(spec),
        );
        if let Some(favorite) = spec.favorite {
            plan_favorite(planner, &board, dashboard, favorite);
        }
    }
    if let Some(wanted) = &spec.dashboards {
        let others = run.dashboards.as_deref().unwrap_or_default();
        let field = field.clone().key("dashboards");
        dashboards::plan_dashboards(planner, origin, &field, &board, dashboard, others, wanted);
    }
}

fn plan_favorite(
    planner: &mut Planner<'_>,
    board: &Board<'_>,
    dashboard: &DashboardState,
    wanted: FavoriteSpec,
) {
    let address = Address::Favorite(FavoriteAddress {
        project: board.project.to_owned(),
        log_stream: board.log_stream.clone(),
    });
    let before = FavoriteState::of(dashboard);
    let (after, operations, reason) = match wanted {
        FavoriteSpec::User | FavoriteSpec::Project if !dashboard.is_favorited => {
            let visibility = if wanted == FavoriteSpec::User {
                Visibility::User
            } else {
                Visibility::Project
            };
            let reason = format!("favorite for the {visibility}");
            let op = Operation::Favorite {
                project_id: board.project_id.to_owned(),
                log_stream_id: board.log_stream_id.to_owned(),
                dashboard_id: dashboard.id.clone(),
                visibility,
            };
            (FavoriteState { favorited: true }, vec![op], reason)
        }
        FavoriteSpec::User | FavoriteSpec::Project => {
            let audience = if wanted == FavoriteSpec::User {
                "the calling user"
            } else {
                "the whole project"
            };
            // `user` is what export writes for any favorited dashboard (all
            // the service says): nothing to act on, so a detail.
            let kind = if wanted == FavoriteSpec::User {
                NoteKind::Detail
            } else {
                NoteKind::Unverifiable
            };
            planner.note(
                Some(address),
                kind,
                format!(
                    "the dashboard is favorited, but the service does not say for whom: that it is favorited for {audience} (`favorite: {}`) cannot be checked",
                    if wanted == FavoriteSpec::User { "user" } else { "project" }
                ),
            );
            return;
        }
        FavoriteSpec::None if dashboard.is_favorited => {
            let ops = [Visibility::User, Visibility::Project]
                .into_iter()
                .map(|visibility| Operation::Unfavorite {
                    project_id: board.project_id.to_owned(),
                    log_stream_id: board.log_stream_id.to_owned(),
                    visibility,
                })
                .collect();
            (
                FavoriteState { favorited: false },
                ops,
                "declared `favorite: none`".to_owned(),
            )
        }
        FavoriteSpec::None => return,
    };
    let draft = Draft {
        address,
        action: Action::Update,
        reason,
        live_fingerprint: fingerprint::favorite(dashboard),
        operations,
    };
    planner
        .changes
        .push(draft.change(Some(&before), Some(&after)));
}
