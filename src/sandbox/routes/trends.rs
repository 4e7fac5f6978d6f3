//! Trends dashboards: reads (GET `.../trends`, `.../trends/dashboards`),
//! settings (PUT `.../trends`), duplicate and delete, favorite (spec
//! operation 10, which does not accept HTTP Basic) and unfavorite. Sections
//! and widgets are in [`super::sections`].

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::response::Response;
use serde_json::{Value, json};

use super::{Ids, no_content, ok, read_body};
use crate::api::{TrendsDashboardDuplicateRequest, TrendsDashboardUpdateRequest, Visibility};
use crate::sandbox::app::App;
use crate::sandbox::auth::{Caller, CallerNoBasic};
use crate::sandbox::reply::ApiResult;
use crate::sandbox::store::trends::check_update;
use crate::sandbox::validation::{Checker, Query, deserialize};

fn visibility(c: &mut Checker, query: &Query) -> Visibility {
    let schema =
        json!({"$ref": "#/components/schemas/TrendsDashboardVisibility", "default": "user"});
    match c.query(query, "visibility", &schema) {
        Some(Value::String(v)) => Visibility::from(v.as_str()),
        _ => Visibility::User,
    }
}

/// The `project_id` then `log_stream_id` path segments (faults in that
/// order), canonicalized.
pub(super) fn log_stream_path(c: &mut Checker, ids: &Ids) -> (String, String) {
    let pid = c.path_uuid("project_id", ids.get("project_id"));
    let lid = c.path_uuid("log_stream_id", ids.get("log_stream_id"));
    (pid, lid)
}

/// GET `.../trends?trends_dashboard_id=` (default dashboard when absent).
pub async fn get_dashboard(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let did = c.query_uuid(&query, "trends_dashboard_id");
    c.finish()?;
    Ok(ok(app.read(|s| {
        s.get_dashboard(&pid, &lid, did.as_deref(), &caller.user)
    })?))
}

/// PUT `.../trends?trends_dashboard_id=`: the dashboard's settings.
pub async fn update_dashboard(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let did = c.query_uuid(&query, "trends_dashboard_id");
    let body = c.body(&bytes, "TrendsDashboardUpdateRequest");
    c.finish()?;
    let request: TrendsDashboardUpdateRequest = deserialize(body.unwrap_or_default())?;
    check_update(&request)?;
    caller.require_write()?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.update_dashboard(&pid, &lid, did.as_deref(), request, &user))
        .await?))
}

/// GET `.../trends/dashboards`.
pub async fn list_dashboards(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let (pid, lid) = log_stream_path(&mut c, &ids);
    c.finish()?;
    Ok(ok(
        app.read(|s| s.list_dashboards(&pid, &lid, &caller.user))?
    ))
}

/// POST `.../trends/dashboards/{trends_dashboard_id}/duplicate`.
pub async fn duplicate_dashboard(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let did = c.path_uuid("trends_dashboard_id", ids.get("trends_dashboard_id"));
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let body = c.body(&bytes, "TrendsDashboardDuplicateRequest");
    c.finish()?;
    caller.require_write()?;
    let request: TrendsDashboardDuplicateRequest = deserialize(body.unwrap_or_default())?;
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.duplicate_dashboard(&pid, &lid, &did, request, &user))
        .await?))
}

/// DELETE `.../trends/dashboards/{trends_dashboard_id}` (204).
pub async fn delete_dashboard(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let did = c.path_uuid("trends_dashboard_id", ids.get("trends_dashboard_id"));
    let (pid, lid) = log_stream_path(&mut c, &ids);
    c.finish()?;
    caller.require_write()?;
    let user = caller.user;
    app.write(move |s| s.delete_dashboard(&pid, &lid, &did, &user))
        .await?;
    Ok(no_content())
}

/// POST `.../dashboards/{id}/favorite?visibility=` (spec operation 10; no
/// HTTP Basic; 204).
pub async fn favorite(
    CallerNoBasic(caller): CallerNoBasic,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let did = c.path_uuid("trends_dashboard_id", ids.get("trends_dashboard_id"));
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let vis = visibility(&mut c, &query);
    c.finish()?;
    caller.require_write()?;
    let user = caller.user;
    app.write(move |s| s.favorite(&pid, &lid, &did, &vis, &user))
        .await?;
    Ok(no_content())
}

/// DELETE `.../dashboards/favorite?visibility=` (204).
pub async fn unfavorite(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let query = Query::parse(raw.as_deref());
    let mut c = Checker::new();
    let (pid, lid) = log_stream_path(&mut c, &ids);
    let vis = visibility(&mut c, &query);
    c.finish()?;
    caller.require_write()?;
    let user = caller.user;
    app.write(move |s| s.unfavorite(&pid, &lid, &vis, &user))
        .await?;
    Ok(no_content())
}
