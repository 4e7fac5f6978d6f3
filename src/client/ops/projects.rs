//! Projects: the paginated listing (POST `/v2/projects/paginated`, paging in
//! the query), find by exact name, and GET by id.

use futures::Stream;

use super::super::operation::{GET_PROJECT, LIST_PROJECTS};
use super::super::paginate;
use super::super::transport::Call;
use super::super::{ApiError, Client};
use crate::api::{
    FilterValue, Operator, Project, ProjectCollectionParams, ProjectFilter, ProjectItem,
    ProjectListing,
};

impl Client {
    /// One page of the project listing.
    pub async fn list_projects_page(
        &self,
        params: &ProjectCollectionParams,
        starting_token: i64,
    ) -> Result<ProjectListing, ApiError> {
        self.fetch(
            Call::new(&LIST_PROJECTS, &[])
                .query("starting_token", starting_token)
                .query("limit", self.page_size())
                .json(params)?,
        )
        .await
    }

    /// Every page of the project listing.
    fn project_pages(
        &self,
        params: ProjectCollectionParams,
    ) -> impl Stream<Item = Result<ProjectListing, ApiError>> + Send + 'static {
        let client = self.clone();
        paginate::pages(&LIST_PROJECTS, 0, move |token| {
            let (client, params) = (client.clone(), params.clone());
            async move { client.list_projects_page(&params, token).await }
        })
    }

    /// Every project matching `params`, all pages.
    pub async fn list_projects(
        &self,
        params: ProjectCollectionParams,
    ) -> Result<Vec<ProjectItem>, ApiError> {
        paginate::collect(self.project_pages(params), |p| p.projects).await
    }

    /// The project with exactly this name (case-sensitive), if any.
    pub async fn find_project_by_name(&self, name: &str) -> Result<Option<ProjectItem>, ApiError> {
        let params = ProjectCollectionParams {
            filters: vec![ProjectFilter::Name {
                operator: Operator::Eq,
                value: FilterValue::One(name.to_owned()),
                case_sensitive: Some(true),
            }],
            sort: None,
        };
        let found = self.list_projects(params).await?;
        Ok(found.into_iter().find(|p| p.name == name))
    }

    /// GET a project; `None` when it does not exist.
    pub async fn get_project(&self, project_id: &str) -> Result<Option<Project>, ApiError> {
        self.fetch_opt(Call::new(&GET_PROJECT, &[project_id])).await
    }
}
