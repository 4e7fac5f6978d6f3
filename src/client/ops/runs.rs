//! Log streams and experiments: search (spec operation 2 and the experiment
//! search), one page or every page, get by id, find by exact name, and create
//! a log stream.

use futures::Stream;

use super::super::operation::{
    CREATE_LOG_STREAM, GET_EXPERIMENT, GET_LOG_STREAM, SEARCH_EXPERIMENTS, SEARCH_LOG_STREAMS,
};
use super::super::paginate;
use super::super::transport::Call;
use super::super::{ApiError, Client};
use crate::api::{
    Experiment, ExperimentPage, LogStream, LogStreamPage, RunFilter, RunSearchRequest,
};

impl Client {
    /// Spec operation 2: one page of a log stream search. The request's
    /// `starting_token` and `limit` select the page (`limit` defaults to the
    /// client's page size).
    pub async fn search_log_streams(
        &self,
        project_id: &str,
        request: &RunSearchRequest,
    ) -> Result<LogStreamPage, ApiError> {
        let mut request = request.clone();
        request.limit.get_or_insert(self.page_size());
        self.fetch(Call::new(&SEARCH_LOG_STREAMS, &[project_id]).json(&request)?)
            .await
    }

    /// Every page of a log stream search, from the request's `starting_token`.
    pub fn log_stream_pages(
        &self,
        project_id: &str,
        request: RunSearchRequest,
    ) -> impl Stream<Item = Result<LogStreamPage, ApiError>> + Send + 'static {
        let client = self.clone();
        let project_id = project_id.to_owned();
        let first = request.starting_token.unwrap_or(0);
        paginate::pages(&SEARCH_LOG_STREAMS, first, move |token| {
            let (client, project_id) = (client.clone(), project_id.clone());
            let mut request = request.clone();
            request.starting_token = Some(token);
            async move { client.search_log_streams(&project_id, &request).await }
        })
    }

    /// Every log stream matching a search, all pages.
    pub async fn search_log_streams_all(
        &self,
        project_id: &str,
        request: RunSearchRequest,
    ) -> Result<Vec<LogStream>, ApiError> {
        paginate::collect(self.log_stream_pages(project_id, request), |p| {
            p.log_streams
        })
        .await
    }

    /// The log stream of a project with exactly this name (case-sensitive), if any.
    pub async fn find_log_stream_by_name(
        &self,
        project_id: &str,
        name: &str,
    ) -> Result<Option<LogStream>, ApiError> {
        let request = RunSearchRequest {
            filters: vec![RunFilter::name_eq(name)],
            ..RunSearchRequest::default()
        };
        let found = self.search_log_streams_all(project_id, request).await?;
        Ok(found.into_iter().find(|ls| ls.name == name))
    }

    /// GET a log stream; `None` when it (or its project) does not exist.
    pub async fn get_log_stream(
        &self,
        project_id: &str,
        log_stream_id: &str,
    ) -> Result<Option<LogStream>, ApiError> {
        self.fetch_opt(Call::new(&GET_LOG_STREAM, &[project_id, log_stream_id]))
            .await
    }

    /// Creates a log stream. Not retried blindly: an uncertain outcome is
    /// [`ApiError::Ambiguous`].
    pub async fn create_log_stream(
        &self,
        project_id: &str,
        name: &str,
    ) -> Result<LogStream, ApiError> {
        let body = serde_json::json!({ "name": name });
        self.fetch(Call::new(&CREATE_LOG_STREAM, &[project_id]).json(&body)?)
            .await
    }

    /// One page of an experiment search (same request shape as log streams,
    /// plus the experiment-group filters).
    pub async fn search_experiments(
        &self,
        project_id: &str,
        request: &RunSearchRequest,
    ) -> Result<ExperimentPage, ApiError> {
        let mut request = request.clone();
        request.limit.get_or_insert(self.page_size());
        self.fetch(Call::new(&SEARCH_EXPERIMENTS, &[project_id]).json(&request)?)
            .await
    }

    /// Every page of an experiment search.
    pub fn experiment_pages(
        &self,
        project_id: &str,
        request: RunSearchRequest,
    ) -> impl Stream<Item = Result<ExperimentPage, ApiError>> + Send + 'static {
        let client = self.clone();
        let project_id = project_id.to_owned();
        let first = request.starting_token.unwrap_or(0);
        paginate::pages(&SEARCH_EXPERIMENTS, first, move |token| {
            let (client, project_id) = (client.clone(), project_id.clone());
            let mut request = request.clone();
            request.starting_token = Some(token);
            async move { client.search_experiments(&project_id, &request).await }
        })
    }

    /// Every experiment matching a search, all pages.
    pub async fn search_experiments_all(
        &self,
        project_id: &str,
        request: RunSearchRequest,
    ) -> Result<Vec<Experiment>, ApiError> {
        paginate::collect(self.experiment_pages(project_id, request), |p| {
            p.experiments
        })
        .await
    }

    /// The experiment of a project with exactly this name (case-sensitive), if any.
    pub async fn find_experiment_by_name(
        &self,
        project_id: &str,
        name: &str,
    ) -> Result<Option<Experiment>, ApiError> {
        let request = RunSearchRequest {
            filters: vec![RunFilter::name_eq(name)],
            ..RunSearchRequest::default()
        };
        let found = self.search_experiments_all(project_id, request).await?;
        Ok(found.into_iter().find(|e| e.name == name))
    }

    /// GET an experiment; `None` when it (or its project) does not exist.
    pub async fn get_experiment(
        &self,
        project_id: &str,
        experiment_id: &str,
    ) -> Result<Option<Experiment>, ApiError> {
        self.fetch_opt(Call::new(&GET_EXPERIMENT, &[project_id, experiment_id]))
            .await
    }
}
