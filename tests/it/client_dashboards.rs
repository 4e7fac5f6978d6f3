//! The typed methods of dashboards, widgets, named custom integrations and
//! the API-key login, pinned to the outside: against a purpose-built server
//! answering raw JSON written from the reference (and checked against it),
//! what each method sends (method, path, query, body, byte for byte as
//! JSON) and how answers map; then end to end against the sandbox.

use crate::client_support;
use crate::sandbox_support;

use client_support::{Reply, TestServer};
use evalctl::api::{
    FilterExpression, IntegrationCreate, IntegrationProvider, LogRecordsFilterType,
    LogRecordsOperator, MetricAggregation, Secret, TrendsDashboardDuplicateRequest,
    TrendsDashboardUpdateRequest, Visibility, WidgetCreateRequest, WidgetType, WidgetUpdateRequest,
};
use evalctl::client::{ApiError, Client, ClientConfig, Credentials, Deleted};
use evalctl::sandbox::Sandbox;
use evalctl::sandbox::fixture::{DEMO_API_KEY, ids};
use sandbox_support::assert_schema;
use serde_json::{Value, json};

const WIDGET: &str = "0b0e4c6e-8b1d-4b71-9a57-4f0f3f6b2a10";
const SECTION: &str = "5d7c2b4a-1e3f-4a6b-8c9d-0e1f2a3b4c5d";
const DASHBOARD: &str = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d";
const USER: &str = "1f2e3d4c-5b6a-4978-8a7b-6c5d4e3f2a1b";
const LOG_STREAM: &str = "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d";
const PROJECT: &str = "3b4c5d6e-7f8a-4b9c-8d1e-2f3a4b5c6d7e";

/// A `WidgetResponse`, written from the reference.
fn widget_json() -> Value {
    json!({
        "id": WIDGET,
        "name": "Latency p95",
        "description": null,
        "type": "line_chart",
        "dataset": [{"metrics": ["latency_ms"]}],
        "metric": "latency_ms",
        "aggregation": "P95",
        "section_id": SECTION
    })
}

/// A `TrendsDashboardResponse`, written from the reference: a section with
/// the widget, a layout, a filter tree with every kind of node.
fn dashboard_json() -> Value {
    json!({
        "id": DASHBOARD,
        "name": "On-call",
        "description": "What on-call looks at",
        "is_default": false,
        "visibility": "user",
        "created_by": USER,
        "is_favorited": true,
        "log_stream_id": LOG_STREAM,
        "project_id": PROJECT,
        "widgets": [],
        "sections": [{"id": SECTION, "name": "Latency", "description": null, "color": "#FF7F0E",
                      "widgets": [widget_json()]}],
        "layout_map": {WIDGET: [0, 0, 6, 4]},
        "interval_mins": 15,
        "group_by": "model",
        "filter_tree": {"and": [
            {"filter": {"column_id": "input", "operator": "contains", "value": "refund",
                        "case_sensitive": false, "type": "text"}},
            {"not": {"filter": {"column_id": "has_error", "operator": "eq", "value": true, "type": "boolean"}}},
            {"or": [{"filter": {"column_id": "latency_ms", "operator": "between", "value": [0, 500], "type": "number"}}]}
        ]},
        "start_time": 1_735_603_200,
        "end_time": 1_736_208_000,
        "relative_time": "last_7_days"
    })
}

fn summary_json(id: &str, name: &str) -> Value {
    json!({
        "id": id, "name": name, "description": null, "is_default": false, "visibility": "project",
        "created_by": USER, "is_favorited": false,
        "created_at": "2025-01-01T00:00:00.000000Z", "updated_at": "2025-01-01T00:00:00.000000Z"
    })
}

fn integration_json(name: &str, provider: &str) -> Value {
    json!({
        "id": WIDGET, "permissions": [], "name": name, "provider": provider,
        "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-01-01T00:00:00Z",
        "created_by": USER, "is_selected": true, "is_disabled": false
    })
}

fn custom_body(key: &str) -> IntegrationCreate<Secret> {
    IntegrationCreate::Custom {
        endpoint: "https://eu.example.com/v1".into(),
        token: None,
        authentication_type: Some("api_key".into()),
        models: None,
        model_properties: None,
        default_model: None,
        authentication_scope: None,
        oauth2_token_url: None,
        api_key_header: Some("X-Key".into()),
        api_key_value: Some(Secret::new(key)),
        custom_llm_config: None,
        custom_header_mapping: None,
        headers: None,
        multi_modal_config: None,
    }
}

#[test]
fn the_fixtures_are_the_references_shapes() {
    assert_schema("WidgetResponse", &widget_json());
    assert_schema("TrendsDashboardResponse", &dashboard_json());
    assert_schema("TrendsDashboardSummary", &summary_json(DASHBOARD, "x"));
    assert_schema("IntegrationDB", &integration_json("eu-gateway", "custom"));
}

#[tokio::test]
async fn dashboard_and_widget_methods_send_the_reference_shapes() {
    let server = TestServer::start(|seen| match (seen.method.as_str(), seen.path.as_str()) {
        ("GET", p) if p.ends_with("/trends/dashboards") => Reply::ok(json!([
            summary_json(DASHBOARD, "On-call"),
            summary_json(SECTION, "Default"),
            summary_json(WIDGET, "On-call")
        ])),
        ("PUT" | "POST", p) if p.contains("/widgets") => Reply::ok(widget_json()),
        ("DELETE", p) if p.contains("/widgets/") && seen.nth > 0 => {
            Reply::detail(404, "Widget not found")
        }
        ("DELETE", _) => Reply::status(204),
        _ => Reply::ok(dashboard_json()),
    });
    let client = server.client(Credentials::api_key("k"));
    let tree: FilterExpression = serde_json::from_value(json!({"not": {"filter":
        {"type": "boolean", "column_id": "has_error", "value": true}}}))
    .unwrap();
    let dash = client
        .update_dashboard(
            "p",
            "l",
            Some("d1"),
            &TrendsDashboardUpdateRequest {
                interval_mins: Some(15),
                filter_tree: Some(Some(tree)),
                group_by: Some(None),
                relative_time: Some(Some("last_7_days".into())),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    // The answer, decoded.
    assert_eq!(
        dash.sections[0].widgets[0].widget_type,
        WidgetType::LineChart
    );
    assert_eq!(
        dash.sections[0].widgets[0].aggregation,
        MetricAggregation::P95
    );
    assert_eq!(dash.layout_map[WIDGET], json!([0, 0, 6, 4]));
    let Some(FilterExpression::And { and }) = &dash.filter_tree else {
        panic!("{:?}", dash.filter_tree)
    };
    let FilterExpression::Leaf { filter } = &and[0] else {
        panic!("{and:?}")
    };
    assert_eq!(filter.filter_type, LogRecordsFilterType::Text);
    assert_eq!(filter.operator, Some(LogRecordsOperator::Contains));
    assert_eq!(filter.case_sensitive, Some(false));
    assert!(matches!(and[1], FilterExpression::Not { .. }));
    assert!(matches!(and[2], FilterExpression::Or { .. }));

    let created = client
        .create_widget(
            "p",
            "l",
            None,
            &WidgetCreateRequest {
                name: "Latency p95".into(),
                description: None,
                widget_type: WidgetType::LineChart,
                dataset: None,
                metric: "latency_ms".into(),
                aggregation: MetricAggregation::P95,
                section_id: Some(SECTION.into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(created.id, WIDGET);
    assert_eq!(created.section_id.as_deref(), Some(SECTION));
    client
        .update_widget(
            "p",
            "l",
            WIDGET,
            Some("d1"),
            &WidgetUpdateRequest {
                section_id: Some(None),
                description: Some(None),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        client.delete_widget("p", "l", WIDGET, None).await.unwrap(),
        Deleted::Deleted
    );
    assert_eq!(
        client.delete_widget("p", "l", WIDGET, None).await.unwrap(),
        Deleted::AlreadyGone
    );
    let copy = client
        .duplicate_dashboard(
            "p",
            "l",
            "d0",
            &TrendsDashboardDuplicateRequest {
                name: "On-call".into(),
                description: None,
                visibility: Some(Visibility::User),
            },
        )
        .await
        .unwrap();
    assert_eq!(copy.visibility, "user");
    assert_eq!(
        client.delete_dashboard("p", "l", DASHBOARD).await.unwrap(),
        Deleted::Deleted
    );
    let found = client
        .find_dashboards_by_name("p", "l", "On-call")
        .await
        .unwrap();
    let found: Vec<&str> = found.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(found, [DASHBOARD, WIDGET], "every dashboard of that name");

    let seen = server.requests();
    let sent: Vec<(String, String, Option<String>)> = seen
        .iter()
        .map(|s| (s.method.clone(), s.path.clone(), s.query.clone()))
        .collect();
    let q = |s: &str| Some(s.to_owned());
    assert_eq!(
        sent,
        [
            (
                "PUT".into(),
                "/v2/projects/p/log_streams/l/trends".into(),
                q("trends_dashboard_id=d1")
            ),
            (
                "POST".into(),
                "/v2/projects/p/log_streams/l/trends/widgets".into(),
                None
            ),
            (
                "PUT".into(),
                format!("/v2/projects/p/log_streams/l/trends/widgets/{WIDGET}"),
                q("trends_dashboard_id=d1")
            ),
            (
                "DELETE".into(),
                format!("/v2/projects/p/log_streams/l/trends/widgets/{WIDGET}"),
                None
            ),
            (
                "DELETE".into(),
                format!("/v2/projects/p/log_streams/l/trends/widgets/{WIDGET}"),
                None
            ),
            (
                "POST".into(),
                "/v2/projects/p/log_streams/l/trends/dashboards/d0/duplicate".into(),
                None
            ),
            (
                "DELETE".into(),
                format!("/v2/projects/p/log_streams/l/trends/dashboards/{DASHBOARD}"),
                None
            ),
            (
                "GET".into(),
                "/v2/projects/p/log_streams/l/trends/dashboards".into(),
                None
            ),
        ]
    );
    assert_eq!(
        seen[0].json(),
        json!({"interval_mins": 15, "relative_time": "last_7_days",
               "filter_tree": {"not": {"filter": {"type": "boolean", "column_id": "has_error", "value": true}}},
               "group_by": null})
    );
    assert_eq!(
        seen[1].json(),
        json!({"name": "Latency p95", "type": "line_chart", "metric": "latency_ms", "aggregation": "P95",
               "section_id": SECTION})
    );
    assert_eq!(
        seen[2].json(),
        json!({"description": null, "section_id": null}),
        "null moves the widget to the top level; left-out fields are not sent"
    );
    assert_eq!(
        seen[5].json(),
        json!({"name": "On-call", "visibility": "user"})
    );
}

#[tokio::test]
async fn named_custom_integrations_and_the_api_key_login() {
    let server = TestServer::start(|seen| match (seen.method.as_str(), seen.path.as_str()) {
        ("PUT", _) => Reply::ok(integration_json("eu-gateway", "custom")),
        ("GET", "/integrations") => Reply::ok(json!([
            integration_json("custom", "custom"),
            integration_json("eu-gateway", "openai"),
            integration_json("eu-gateway", "custom")
        ])),
        ("POST", _) if seen.json()["api_key"] == "k-good" => {
            Reply::ok(json!({"access_token": "tok-1", "token_type": "bearer"}))
        }
        _ => Reply::detail(401, "Invalid API key"),
    });
    let client = server.client(Credentials::api_key("k"));
    let record = client
        .put_named_custom_integration("eu-gateway", &custom_body("s-key"))
        .await
        .unwrap();
    assert_eq!(record.name, "eu-gateway");
    assert_eq!(record.provider, IntegrationProvider::Custom);
    let err = client
        .put_named_custom_integration(
            "eu-gateway",
            &IntegrationCreate::Openai {
                token: Secret::new("s-openai"),
                organization_id: None,
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::InvalidArgument { .. }), "{err:?}");
    assert!(!err.to_string().contains("s-openai"));
    let found = client
        .find_named_custom_integration("eu-gateway")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.provider, IntegrationProvider::Custom);
    assert_eq!(
        client.find_named_custom_integration("us").await.unwrap(),
        None
    );

    let token = client
        .login_with_api_key(&Secret::new("k-good"))
        .await
        .unwrap();
    assert_eq!(token.access_token.expose(), "tok-1");
    assert!(!format!("{token:?}").contains("tok-1"));
    let err = client
        .login_with_api_key(&Secret::new("k-bad"))
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::Unauthorized { .. }), "{err:?}");
    assert!(!err.to_string().contains("k-bad"));

    let seen = server.requests();
    assert_eq!(seen.len(), 5, "the wrong provider's body is sent nowhere");
    assert_eq!(seen[0].path, "/v2/integrations/custom/eu-gateway");
    assert_eq!(
        seen[0].json(),
        json!({"endpoint": "https://eu.example.com/v1", "authentication_type": "api_key",
               "api_key_header": "X-Key", "api_key_value": "s-key"})
    );
    assert_eq!(seen[3].path, "/v2/login/api_key");
    assert_eq!(seen[3].json(), json!({"api_key": "k-good"}));
}

#[tokio::test]
async fn widgets_dashboards_and_named_integrations_end_to_end_on_the_sandbox() {
    let sb = Sandbox::builder().start().unwrap();
    let client = Client::new(ClientConfig::new(
        sb.base_url(),
        Credentials::api_key(DEMO_API_KEY),
    ))
    .unwrap();
    let pid = ids::project("demo-project");
    let lid = ids::log_stream("demo-project", "production");
    let quality = ids::section("production:quality");
    let latency = ids::section("production:latency");

    // A widget created in a section, moved to another: same id.
    let w = client
        .create_widget(
            &pid,
            &lid,
            None,
            &WidgetCreateRequest {
                name: "Cost".into(),
                description: Some("Spend per day".into()),
                widget_type: WidgetType::Table,
                dataset: None,
                metric: "cost".into(),
                aggregation: MetricAggregation::Sum,
                section_id: Some(quality.clone()),
            },
        )
        .await
        .unwrap();
    let moved = client
        .update_widget(
            &pid,
            &lid,
            &w.id,
            None,
            &WidgetUpdateRequest {
                section_id: Some(Some(latency.clone())),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (moved.id.as_str(), moved.section_id.as_deref()),
        (w.id.as_str(), Some(latency.as_str()))
    );
    let dash = client
        .update_dashboard(
            &pid,
            &lid,
            None,
            &TrendsDashboardUpdateRequest {
                group_by: Some(Some("model".into())),
                filter_tree: Some(Some(
                    serde_json::from_value(json!({"filter": {"type": "text", "column_id": "input",
                        "operator": "eq", "value": "hi"}}))
                    .unwrap(),
                )),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(dash.group_by.as_deref(), Some("model"));
    let Some(FilterExpression::Leaf { filter }) = &dash.filter_tree else {
        panic!("{:?}", dash.filter_tree)
    };
    assert_eq!(filter.case_sensitive, Some(true), "the service's default");
    assert_eq!(dash.sections[1].widgets.last().unwrap().name, "Cost");

    // A user dashboard: made by duplicating, found by name, deleted.
    let copy = client
        .duplicate_dashboard(
            &pid,
            &lid,
            &dash.id,
            &TrendsDashboardDuplicateRequest {
                name: "Mine".into(),
                description: None,
                visibility: Some(Visibility::User),
            },
        )
        .await
        .unwrap();
    let found = client
        .find_dashboards_by_name(&pid, &lid, "Mine")
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].id, copy.id);
    assert_eq!(
        client.delete_dashboard(&pid, &lid, &copy.id).await.unwrap(),
        Deleted::Deleted
    );
    assert_eq!(
        client.delete_dashboard(&pid, &lid, &copy.id).await.unwrap(),
        Deleted::AlreadyGone
    );
    assert_eq!(
        client.delete_widget(&pid, &lid, &w.id, None).await.unwrap(),
        Deleted::Deleted
    );
    let err = client
        .delete_dashboard(&pid, &lid, &dash.id)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("default dashboard"), "{err}");

    // A named custom integration, and a bearer token for the API key.
    let record = client
        .put_named_custom_integration("eu-gateway", &custom_body("s-eu"))
        .await
        .unwrap();
    assert_eq!(
        client
            .find_named_custom_integration("eu-gateway")
            .await
            .unwrap(),
        Some(record)
    );
    let token = client
        .login_with_api_key(&Secret::new(DEMO_API_KEY))
        .await
        .unwrap();
    let bearer = Client::new(ClientConfig::new(
        sb.base_url(),
        Credentials::access_token(token.access_token.expose()),
    ))
    .unwrap();
    assert_eq!(
        bearer.current_user().await.unwrap().email,
        "demo@example.com"
    );
}
