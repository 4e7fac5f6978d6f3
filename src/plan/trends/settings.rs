//! A dashboard's settings: the bucket width (`interval_mins`), the rolling
//! time range (`relative_time`) and the group-by column (`group_by`, `""`
//! for none). Only the declared fields are compared and sent; the service's
//! own (an absolute time range, the layout, the filter tree) are left as
//! they are.

use serde::Serialize;

use super::super::types::{Action, Operation};
use super::super::{Draft, Planner, fingerprint};
use super::{Board, DashboardContents};
use crate::api::TrendsDashboardUpdateRequest;
use crate::manifest::set::Origin;
use crate::state::{DashboardState, SettingsState};

/// A dashboard's comparable settings: the declared fields (`None`: not
/// compared, or none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NormSettings {
    /// Bucket width in minutes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval_mins: Option<i64>,
    /// Relative time range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_time: Option<String>,
    /// Group-by column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group_by: Option<String>,
}

impl NormSettings {
    /// Every compared field of live settings.
    pub fn from_state(s: &SettingsState) -> Self {
        NormSettings {
            interval_mins: Some(s.interval_mins),
            relative_time: s.relative_time.clone(),
            group_by: s.group_by.clone(),
        }
    }

    /// The fields of live settings that `contents` declares.
    fn declared(s: &SettingsState, contents: &DashboardContents<'_>) -> Self {
        NormSettings {
            interval_mins: contents.interval_mins.map(|_| s.interval_mins),
            relative_time: contents.relative_time.and_then(|_| s.relative_time.clone()),
            group_by: contents.group_by.and_then(|_| s.group_by.clone()),
        }
    }

    /// What `contents` declares.
    fn wanted(contents: &DashboardContents<'_>) -> Self {
        NormSettings {
            interval_mins: contents.interval_mins,
            relative_time: contents.relative_time.map(str::to_owned),
            group_by: contents
                .group_by
                .filter(|g| !g.is_empty())
                .map(str::to_owned),
        }
    }
}

pub(super) fn plan_settings(
    planner: &mut Planner<'_>,
    origin: &Origin,
    board: &Board<'_>,
    dashboard: &DashboardState,
    contents: &DashboardContents<'_>,
) {
    let Some(live) = &dashboard.settings else {
        planner.problem(
            origin,
            format!(
                "the settings of the dashboard of log stream `{}` were not read",
                board.log_stream
            ),
        );
        return;
    };
    let before = NormSettings::declared(live, contents);
    let after = NormSettings::wanted(contents);
    if before == after {
        return;
    }
    let body = TrendsDashboardUpdateRequest {
        interval_mins: (before.interval_mins != after.interval_mins)
            .then_some(after.interval_mins)
            .flatten(),
        relative_time: (before.relative_time != after.relative_time)
            .then(|| after.relative_time.clone()),
        group_by: (before.group_by != after.group_by).then(|| after.group_by.clone()),
        ..TrendsDashboardUpdateRequest::default()
    };
    let draft = Draft {
        address: board.settings_address(),
        action: Action::Update,
        reason: "fields differ".to_owned(),
        live_fingerprint: board.fingerprint(|| fingerprint::settings(Some(live))),
        operations: vec![Operation::UpdateDashboard {
            project_id: board.project_id.to_owned(),
            log_stream_id: board.log_stream_id.to_owned(),
            dashboard_id: board.reference.clone(),
            body: Box::new(body),
        }],
    };
    planner
        .changes
        .push(draft.change(Some(&before), Some(&after)));
}
