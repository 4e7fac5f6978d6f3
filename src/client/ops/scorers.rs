//! The scorer catalog: the listing (paging in the query), one scorer, its
//! versions, and the projects using a version (spec operation 6).

use futures::Stream;

use super::super::operation::{
    GET_SCORER, LIST_SCORER_VERSIONS, LIST_SCORERS, SCORER_VERSION_PROJECTS,
};
use super::super::paginate;
use super::super::transport::Call;
use super::super::{ApiError, Client};
use crate::api::{
    ListScorerVersionsResponse, ListScorersRequest, ListScorersResponse, ProjectItem,
    ProjectListing, Scorer, ScorerVersionRecord,
};

impl Client {
    /// One page of the scorer listing.
    pub async fn list_scorers_page(
        &self,
        request: &ListScorersRequest,
        starting_token: i64,
    ) -> Result<ListScorersResponse, ApiError> {
        self.fetch(
            Call::new(&LIST_SCORERS, &[])
                .query("starting_token", starting_token)
                .query("limit", self.page_size())
                .json(request)?,
        )
        .await
    }

    /// Every scorer matching `request` (name, id, type filters), all pages.
    pub async fn list_scorers(&self, request: ListScorersRequest) -> Result<Vec<Scorer>, ApiError> {
        self.list_scorers_reduced(request, |s| s).await
    }

    /// Every scorer matching `request`, all pages, each reduced by `reduce`
    /// as its page arrives (a page's full records are dropped before the
    /// next page is read).
    pub async fn list_scorers_reduced<T>(
        &self,
        request: ListScorersRequest,
        reduce: impl Fn(Scorer) -> T,
    ) -> Result<Vec<T>, ApiError> {
        let client = self.clone();
        let pages = paginate::pages(&LIST_SCORERS, 0, move |token| {
            let (client, request) = (client.clone(), request.clone());
            async move { client.list_scorers_page(&request, token).await }
        });
        paginate::collect(pages, |p| p.scorers.into_iter().map(&reduce).collect()).await
    }

    /// GET a scorer; `None` when it does not exist.
    pub async fn get_scorer(&self, scorer_id: &str) -> Result<Option<Scorer>, ApiError> {
        self.fetch_opt(Call::new(&GET_SCORER, &[scorer_id])).await
    }

    /// One page of a scorer's versions.
    pub async fn list_scorer_versions_page(
        &self,
        scorer_id: &str,
        starting_token: i64,
    ) -> Result<ListScorerVersionsResponse, ApiError> {
        self.fetch(
            Call::new(&LIST_SCORER_VERSIONS, &[scorer_id])
                .query("starting_token", starting_token)
                .query("limit", self.page_size()),
        )
        .await
    }

    /// Every version of a scorer, all pages.
    pub async fn list_scorer_versions(
        &self,
        scorer_id: &str,
    ) -> Result<Vec<ScorerVersionRecord>, ApiError> {
        let client = self.clone();
        let scorer_id = scorer_id.to_owned();
        let pages = paginate::pages(&LIST_SCORER_VERSIONS, 0, move |token| {
            let (client, scorer_id) = (client.clone(), scorer_id.clone());
            async move { client.list_scorer_versions_page(&scorer_id, token).await }
        });
        paginate::collect(pages, |p| p.versions).await
    }

    /// Spec operation 6, one page: projects where a scorer version is used.
    pub async fn scorer_version_projects_page(
        &self,
        scorer_version_id: &str,
        starting_token: i64,
    ) -> Result<ProjectListing, ApiError> {
        self.fetch(
            Call::new(&SCORER_VERSION_PROJECTS, &[scorer_version_id])
                .query("starting_token", starting_token)
                .query("limit", self.page_size()),
        )
        .await
    }

    /// Every page of spec operation 6.
    fn scorer_version_project_pages(
        &self,
        scorer_version_id: &str,
    ) -> impl Stream<Item = Result<ProjectListing, ApiError>> + Send + 'static {
        let client = self.clone();
        let id = scorer_version_id.to_owned();
        paginate::pages(&SCORER_VERSION_PROJECTS, 0, move |token| {
            let (client, id) = (client.clone(), id.clone());
            async move { client.scorer_version_projects_page(&id, token).await }
        })
    }

    /// Spec operation 6, all pages: every project using a scorer version.
    pub async fn scorer_version_projects(
        &self,
        scorer_version_id: &str,
    ) -> Result<Vec<ProjectItem>, ApiError> {
        paginate::collect(self.scorer_version_project_pages(scorer_version_id), |p| {
            p.projects
        })
        .await
    }
}
