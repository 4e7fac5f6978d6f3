//! The HTTP surface: every operation of the reference (under `/v2`, plus
//! `/login` and the two unversioned integration paths), one submodule per
//! resource, and the helpers handlers share.
//!
//! A handler authenticates first (401), then validates path, query and
//! body together (one 422 listing every fault), then checks the caller's
//! role for writes (403), then calls the store (404/409/422 on
//! references). Unknown paths answer 404 `{"detail":"Not Found"}`, known
//! paths with another method 405 `{"detail":"Method Not Allowed"}`.

mod integrations;
mod runs;
mod scorers;
mod sections;
mod trends;
mod users;

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{FromRequestParts, Path};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use futures::StreamExt;
use serde_json::Value;

use super::app::{App, fault_layer};
use super::kinds;
use super::reply::{ApiError, ApiResult};
use super::validation::BODY_LIMIT;

/// The path parameters of a request, by name.
#[derive(Debug)]
pub struct Ids(HashMap<String, String>);

impl Ids {
    /// The raw (percent-decoded) value of a path parameter.
    pub fn get(&self, name: &str) -> &str {
        self.0.get(name).map_or("", String::as_str)
    }
}

impl FromRequestParts<Arc<App>> for Ids {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &Arc<App>) -> Result<Self, ApiError> {
        Path::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|Path(map)| Ids(map))
            .map_err(|_| ApiError::NoRoute)
    }
}

/// Reads a request body, at most [`BODY_LIMIT`] bytes (more is a 413).
pub async fn read_body(body: Body) -> ApiResult<Vec<u8>> {
    let mut stream = body.into_data_stream();
    let mut out = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk
            .map_err(|_| ApiError::BadRequest("There was an error reading the body".into()))?;
        if out.len() + chunk.len() > BODY_LIMIT {
            return Err(ApiError::PayloadTooLarge { limit: BODY_LIMIT });
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// A 200 with a JSON body.
pub fn ok(value: Value) -> Response {
    (StatusCode::OK, axum::Json(value)).into_response()
}

/// A 204 with no body.
pub fn no_content() -> Response {
    StatusCode::NO_CONTENT.into_response()
}

const PROJECT: &str = "/v2/projects/{project_id}";
const LOG_STREAM: &str = "/v2/projects/{project_id}/log_streams/{log_stream_id}";
const EXPERIMENT: &str = "/v2/projects/{project_id}/experiments/{experiment_id}";

/// The router of a sandbox over `app`, with the fault layer outermost.
pub fn router(app: Arc<App>) -> Router {
    let p = |suffix: &str| format!("{PROJECT}{suffix}");
    let ls = |suffix: &str| format!("{LOG_STREAM}{suffix}");
    let ex = |suffix: &str| format!("{EXPERIMENT}{suffix}");
    Router::new()
        .route("/login", post(users::login))
        .route("/v2/login", post(users::login))
        .route("/v2/login/api_key", post(users::login_api_key))
        .route("/v2/current_user", get(users::current_user))
        .route("/v2/users/{user_id}", get(users::get_user))
        .route("/v2/projects/paginated", post(runs::list_projects))
        .route(PROJECT, get(runs::get_project))
        .route(
            &p("/log_streams"),
            get(runs::list_log_streams).post(runs::create_log_stream),
        )
        .route(&p("/log_streams/search"), post(runs::search_log_streams))
        .route(&p("/log_streams/paginated"), get(runs::page_log_streams))
        .route(LOG_STREAM, get(runs::get_log_stream))
        .route(
            &ls("/metric_settings"),
            get(runs::get_log_stream_settings).patch(runs::patch_log_stream_settings),
        )
        .route(&p("/experiments/search"), post(runs::search_experiments))
        .route(EXPERIMENT, get(runs::get_experiment))
        .route(
            &ex("/metric_settings"),
            get(runs::get_experiment_settings).patch(runs::patch_experiment_settings),
        )
        .route(
            &ls("/trends"),
            get(trends::get_dashboard).put(trends::update_dashboard),
        )
        .route(&ls("/trends/dashboards"), get(trends::list_dashboards))
        .route(&ls("/trends/sections"), post(sections::create_section))
        .route(
            &ls("/trends/sections/{section_id}"),
            put(sections::update_section).delete(sections::delete_section),
        )
        .route(&ls("/trends/widgets"), post(sections::create_widget))
        .route(
            &ls("/trends/widgets/{widget_id}"),
            put(sections::update_widget).delete(sections::delete_widget),
        )
        .route(
            &ls("/trends/dashboards/{trends_dashboard_id}"),
            delete(trends::delete_dashboard),
        )
        .route(
            &ls("/trends/dashboards/{trends_dashboard_id}/duplicate"),
            post(trends::duplicate_dashboard),
        )
        .route(
            &ls("/trends/dashboards/{trends_dashboard_id}/favorite"),
            post(trends::favorite),
        )
        .route(
            &ls("/trends/dashboards/favorite"),
            delete(trends::unfavorite),
        )
        .route(
            "/v2/integrations/available",
            get(integrations::available_integrations),
        )
        .route(
            "/v2/integrations/{name}",
            get(integrations::get_integration).put(integrations::put_integration),
        )
        .route(
            "/v2/integrations/custom/{name}",
            put(integrations::put_named_custom),
        )
        .route(
            "/v2/integrations/databricks/unity-catalog/sql",
            put(integrations::put_unity_catalog),
        )
        .route("/integrations", get(integrations::list_integrations))
        .route(
            "/integrations/{name}",
            delete(integrations::delete_integration),
        )
        .route("/v2/scorers/list", post(scorers::list_scorers))
        .route("/v2/scorers/{scorer_id}", get(scorers::get_scorer))
        .route(
            "/v2/scorers/{scorer_id}/versions",
            get(scorers::list_versions),
        )
        .route("/v2/scorers/{scorer_id}/version", get(scorers::get_version))
        .route(
            "/v2/scorers/versions/{scorer_version_id}/projects",
            get(scorers::version_projects),
        )
        .merge(kinds::router())
        .fallback(|| async { ApiError::NoRoute })
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed })
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&app),
            fault_layer,
        ))
        .with_state(app)
}
