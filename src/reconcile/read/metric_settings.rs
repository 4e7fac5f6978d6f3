//! Reading a run's metric settings, normalized as they arrive
//! (`crate::state::metric_settings`).

use crate::client::{ApiError, Client};
use crate::plan::RunKind;
use crate::state::{Catalog, NormMetricSettings, metric_settings::metric_settings_from_wire};

/// The metric settings of a run; `None` when the run does not exist (any more).
pub async fn read_metric_settings(
    client: &Client,
    catalog: &Catalog,
    project_id: &str,
    kind: RunKind,
    run_id: &str,
) -> Result<Option<NormMetricSettings>, ApiError> {
    let read = match kind {
        RunKind::LogStream => {
            client
                .get_log_stream_metric_settings(project_id, run_id)
                .await?
        }
        RunKind::Experiment => {
            client
                .get_experiment_metric_settings(project_id, run_id)
                .await?
        }
    };
    Ok(read.map(|settings| metric_settings_from_wire(catalog, &settings)))
}
