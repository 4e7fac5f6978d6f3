//! Log streams and experiments: search (spec operation 2 and the experiment
//! search), one page or every page, get by id, find by exact name, and create
//! a log stream.

use std::borrow::Cow;

use futures::Stream;
use serde::de::DeserializeOwned;

use super::super::operation::{
    CREATE_LOG_STREAM, GET_EXPERIMENT, GET_LOG_STREAM, Operation, SEARCH_EXPERIMENTS,
    SEARCH_LOG_STREAMS,
};
use super::super::paginate::{self, Paged};
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
        self.run_search_page(&SEARCH_LOG_STREAMS, project_id, request)
            .await
    }

    /// Every page of a log stream search, from the request's `starting_token`.
    pub fn log_stream_pages(
        &self,
        project_id: &str,
        request: RunSearchRequest,
    ) -> impl Stream<Item = Result<LogStreamPage, ApiError>> + Send + 'static {
        self.run_search_pages(&SEARCH_LOG_STREAMS, project_id, request)
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
        let found = self
            .search_log_streams_all(project_id, name_search(name))
            .await?;
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
        self.run_search_page(&SEARCH_EXPERIMENTS, project_id, request)
            .await
    }

    /// Every experiment matching a search, all pages.
    pub async fn search_experiments_all(
        &self,
        project_id: &str,
        request: RunSearchRequest,
    ) -> Result<Vec<Experiment>, ApiError> {
        let pages = self.run_search_pages(&SEARCH_EXPERIMENTS, project_id, request);
        paginate::collect(pages, |p: ExperimentPage| p.experiments).await
    }

    /// The experiment of a project with exactly this name (case-sensitive), if any.
    pub async fn find_experiment_by_name(
        &self,
        project_id: &str,
        name: &str,
    ) -> Result<Option<Experiment>, ApiError> {
        let found = self
            .search_experiments_all(project_id, name_search(name))
            .await?;
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

    /// One page of a run search (`op` is the log stream or the experiment
    /// search); `limit` defaults to the client's page size.
    async fn run_search_page<P: DeserializeOwned>(
        &self,
        op: &'static Operation,
        project_id: &str,
        request: &RunSearchRequest,
    ) -> Result<P, ApiError> {
        let request = if request.limit.is_some() {
            Cow::Borrowed(request)
        } else {
            let mut with_limit = request.clone();
            with_limit.limit = Some(self.page_size());
            Cow::Owned(with_limit)
        };
        self.fetch(Call::new(op, &[project_id]).json(&*request)?)
            .await
    }

    /// Every page of a run search, from the request's `starting_token`. The
    /// limit is set once; each page clones the request once, for its token.
    fn run_search_pages<P>(
        &self,
        op: &'static Operation,
        project_id: &str,
        mut request: RunSearchRequest,
    ) -> impl Stream<Item = Result<P, ApiError>> + Send + 'static
    where
        P: Paged + DeserializeOwned + Send + 'static,
    {
        request.limit.get_or_insert(self.page_size());
        let client = self.clone();
        let project_id = project_id.to_owned();
        let first = request.starting_token.unwrap_or(0);
        paginate::pages(op, first, move |token| {
            let (client, project_id) = (client.clone(), project_id.clone());
            let mut request = request.clone();
            request.starting_token = Some(token);
            async move { client.run_search_page(op, &project_id, &request).await }
        })
    }
}

/// A search for runs named exactly `name` (the service's match is then
/// checked again, case-sensitively, by the caller).
fn name_search(name: &str) -> RunSearchRequest {
    RunSearchRequest {
        filters: vec![RunFilter::name_eq(name)],
        ..RunSearchRequest::default()
    }
}
