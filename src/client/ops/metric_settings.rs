//! Metric settings of log streams (spec operation 1 and its GET) and of
//! experiments (spec operation 5 and its GET).

use super::super::operation::{
    GET_EXPERIMENT_METRIC_SETTINGS, GET_LOG_STREAM_METRIC_SETTINGS,
    PATCH_EXPERIMENT_METRIC_SETTINGS, PATCH_LOG_STREAM_METRIC_SETTINGS,
};
use super::super::transport::Call;
use super::super::{ApiError, Client};
use crate::api::{MetricSettingsRequest, MetricSettingsResponse, Shaped};

impl Client {
    /// GET the metric settings of a log stream; `None` when the log stream (or
    /// its project) does not exist.
    pub async fn get_log_stream_metric_settings(
        &self,
        project_id: &str,
        log_stream_id: &str,
    ) -> Result<Option<MetricSettingsResponse>, ApiError> {
        self.fetch_opt(Call::new(
            &GET_LOG_STREAM_METRIC_SETTINGS,
            &[project_id, log_stream_id],
        ))
        .await
    }

    /// Spec operation 1: PATCH the metric settings of a log stream. A `None`
    /// field of the request keeps the stored value. Returns the stored settings.
    pub async fn update_log_stream_metric_settings(
        &self,
        project_id: &str,
        log_stream_id: &str,
        request: &impl Shaped<MetricSettingsRequest>,
    ) -> Result<MetricSettingsResponse, ApiError> {
        self.fetch(
            Call::new(
                &PATCH_LOG_STREAM_METRIC_SETTINGS,
                &[project_id, log_stream_id],
            )
            .json(request)?,
        )
        .await
    }

    /// GET the metric settings of an experiment; `None` when it does not exist.
    pub async fn get_experiment_metric_settings(
        &self,
        project_id: &str,
        experiment_id: &str,
    ) -> Result<Option<MetricSettingsResponse>, ApiError> {
        self.fetch_opt(Call::new(
            &GET_EXPERIMENT_METRIC_SETTINGS,
            &[project_id, experiment_id],
        ))
        .await
    }

    /// Spec operation 5: PATCH the metric settings of an experiment.
    pub async fn update_experiment_metric_settings(
        &self,
        project_id: &str,
        experiment_id: &str,
        request: &impl Shaped<MetricSettingsRequest>,
    ) -> Result<MetricSettingsResponse, ApiError> {
        self.fetch(
            Call::new(
                &PATCH_EXPERIMENT_METRIC_SETTINGS,
                &[project_id, experiment_id],
            )
            .json(request)?,
        )
        .await
    }
}
