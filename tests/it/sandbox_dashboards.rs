//! Contract tests of trends dashboards beyond sections: settings (PUT
//! `.../trends`: interval, time range, group-by, filter tree, layout, name),
//! user dashboards made by duplicating one (with their visibility), and
//! deleting them. Raw JSON requests; responses checked field by field and
//! against the reference.

use crate::sandbox_support;

use evalctl::sandbox::fixture::ids;
use sandbox_support::*;
use serde_json::{Value, json};

fn on_call() -> String {
    ids::dashboard(&log_stream("demo-project", "production"), "on-call")
}

#[tokio::test]
async fn settings_are_updated_field_by_field_and_read_back() {
    let cx = Ctx::new();
    let url = format!("{}/trends", production());
    let before = cx.get(&url).await.body;
    assert_schema("TrendsDashboardResponse", &before);
    assert_eq!(before["relative_time"], "last_7_days");
    assert_eq!(before["interval_mins"], 60);
    let traces = ids::widget("production:top:traces");
    assert_eq!(before["layout_map"][&traces], json!([0, 0, 6, 4]));

    let body = json!({
        "name": "Production overview",
        "description": "What on-call looks at first",
        "interval_mins": 15,
        "group_by": "model",
        "layout_map": {traces.clone(): [0, 0, 12, 3]},
        "filter_tree": {"and": [
            {"filter": {"type": "text", "column_id": "input", "operator": "contains", "value": "refund"}},
            {"not": {"filter": {"type": "boolean", "column_id": "has_error", "value": true}}},
            {"or": [
                {"filter": {"type": "number", "column_id": "latency_ms", "operator": "between", "value": [0, 500]}},
                {"filter": {"type": "id", "column_id": "trace_id", "value": "6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60"}}
            ]}
        ]}
    });
    let r = cx.put(&url, body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("TrendsDashboardResponse", &r.body);
    assert_eq!(r.body["name"], "Production overview");
    assert_eq!(r.body["description"], "What on-call looks at first");
    assert_eq!(r.body["interval_mins"], 15);
    assert_eq!(r.body["group_by"], "model");
    assert_eq!(r.body["layout_map"], json!({traces.clone(): [0, 0, 12, 3]}));
    // The filter tree comes back as pydantic writes it: every field of each
    // leaf, defaults filled.
    let tree = &r.body["filter_tree"];
    assert_eq!(
        tree["and"][0]["filter"],
        json!({"type": "text", "column_id": "input", "operator": "contains", "value": "refund", "case_sensitive": true})
    );
    assert_eq!(tree["and"][1]["not"]["filter"]["operator"], "eq");
    assert_eq!(tree["and"][2]["or"][1]["filter"]["operator"], "eq");
    // Untouched: the sections, the time range.
    assert_eq!(r.body["sections"], before["sections"]);
    assert_eq!(r.body["relative_time"], "last_7_days");
    assert_eq!(
        cx.get(&url).await.body,
        r.body,
        "a read gives what the PUT answered"
    );

    // Left out is kept, null clears what may be null and keeps the rest.
    let r = cx
        .put(
            &url,
            json!({"group_by": null, "filter_tree": null, "description": null, "name": null, "interval_mins": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["group_by"], Value::Null);
    assert_eq!(r.body["filter_tree"], Value::Null);
    assert_eq!(r.body["description"], Value::Null);
    assert_eq!(r.body["name"], "Production overview");
    assert_eq!(r.body["interval_mins"], 15);
    assert_eq!(r.body["layout_map"], json!({traces: [0, 0, 12, 3]}));
    // An empty body changes nothing but the update time.
    let r2 = cx.put(&url, json!({})).await;
    assert_eq!(r2.body, r.body);
}

#[tokio::test]
async fn the_time_range_is_absolute_or_relative() {
    let cx = Ctx::new();
    let url = format!("{}/trends", production());
    let r = cx
        .put(
            &url,
            json!({"start_time": 1_700_000_000, "end_time": 1_700_086_400}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["start_time"], 1_700_000_000);
    assert_eq!(r.body["end_time"], 1_700_086_400);
    assert_eq!(
        r.body["relative_time"],
        Value::Null,
        "absolute clears relative"
    );

    let r = cx
        .put(&url, json!({"relative_time": "last_12_hours"}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["relative_time"], "last_12_hours");
    let (start, end) = (
        r.body["start_time"].as_i64().unwrap(),
        r.body["end_time"].as_i64().unwrap(),
    );
    assert_eq!(end - start, 12 * 3600, "the window ends now");
    assert!(end > 1_700_086_400);

    // Both kinds at once, a window over five years, a malformed window, an
    // end before the start: 422, nothing changes.
    let both = cx
        .put(
            &url,
            json!({"relative_time": "last_2_days", "start_time": 1, "end_time": 2}),
        )
        .await;
    assert_422(&both);
    assert_eq!(both.body["detail"][0]["type"], "value_error");
    let long = cx.put(&url, json!({"relative_time": "last_6_years"})).await;
    assert_422(&long);
    let long = cx
        .put(&url, json!({"relative_time": "last_61_months"}))
        .await;
    assert_422(&long);
    assert_eq!(locs(&long.body), [r#"["body","relative_time"]"#]);
    let five = cx
        .put(&url, json!({"relative_time": "last_60_months"}))
        .await;
    assert_eq!(five.status, 200, "{}", five.body);
    let bad = cx.put(&url, json!({"relative_time": "yesterday"})).await;
    assert_422(&bad);
    assert_eq!(bad.body["detail"][0]["type"], "string_pattern_mismatch");
    let backwards = cx.put(&url, json!({"start_time": 10, "end_time": 5})).await;
    assert_422(&backwards);
    let after = cx.get(&url).await.body;
    assert_eq!(after["relative_time"], "last_60_months");

    // A filter tree the reference refuses: an unknown filter kind, a text
    // filter without an operator.
    let r = cx
        .put(
            &url,
            json!({"filter_tree": {"and": [{"filter": {"type": "color", "column_id": "x", "value": "red"}}]}}),
        )
        .await;
    assert_422(&r);
    let r = cx
        .put(
            &url,
            json!({"filter_tree": {"filter": {"type": "text", "column_id": "x", "value": "y"}}}),
        )
        .await;
    assert_422(&r);
    let r = cx
        .put(&url, json!({"layout_map": {"w": [0, "a"]}, "name": ""}))
        .await;
    assert_422(&r);
    assert_eq!(r.body["detail"].as_array().unwrap().len(), 2, "{}", r.body);
}

#[tokio::test]
async fn user_dashboards_are_duplicates_with_their_own_visibility() {
    let cx = Ctx::new();
    let prod = production();
    let default = default_dashboard(&log_stream("demo-project", "production"));
    let source = cx.get(&format!("{prod}/trends")).await.body;
    let r = cx
        .post(
            &format!("{prod}/trends/dashboards/{default}/duplicate"),
            json!({"name": "My view", "visibility": "user", "description": "mine"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("TrendsDashboardResponse", &r.body);
    let copy = r.body;
    let copy_id = copy["id"].as_str().unwrap().to_owned();
    assert_ne!(copy_id, default);
    assert_eq!(copy["name"], "My view");
    assert_eq!(copy["description"], "mine");
    assert_eq!(copy["visibility"], "user");
    assert_eq!(copy["is_default"], false);
    assert_eq!(copy["created_by"], user("demo@example.com"));
    assert_eq!(copy["interval_mins"], source["interval_mins"]);
    // Same sections and widgets under new ids; the layout follows them.
    let names = |d: &Value| -> Vec<String> {
        d["sections"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| {
                std::iter::once(s["name"].as_str().unwrap().to_owned()).chain(
                    s["widgets"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|w| w["name"].as_str().unwrap().to_owned()),
                )
            })
            .collect()
    };
    assert_eq!(names(&copy), names(&source));
    let section = &copy["sections"][0];
    assert_ne!(section["id"], source["sections"][0]["id"]);
    assert_eq!(section["widgets"][0]["section_id"], section["id"]);
    let top = copy["widgets"][0]["id"].as_str().unwrap();
    assert_ne!(top, source["widgets"][0]["id"].as_str().unwrap());
    assert_eq!(copy["layout_map"][top], json!([0, 0, 6, 4]));
    assert_eq!(copy["layout_map"].as_object().unwrap().len(), 4);

    // Listed for its creator, by name; invisible to anyone else.
    let list = cx.get(&format!("{prod}/trends/dashboards")).await.body;
    assert_schema_array("TrendsDashboardSummary", &list);
    let listed: Vec<(&str, &str)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap(),
                d["visibility"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("Default", "project"),
            ("On-call", "project"),
            ("My view", "user")
        ]
    );
    let alice = Auth::Key("alice-api-key".into());
    let theirs = cx
        .call("GET", &format!("{prod}/trends/dashboards"), &alice, None)
        .await;
    assert_eq!(theirs.body.as_array().unwrap().len(), 2);
    let r = cx
        .call(
            "GET",
            &format!("{prod}/trends?trends_dashboard_id={copy_id}"),
            &alice,
            None,
        )
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body, json!({"detail": "Trends dashboard not found"}));

    // Visibility defaults to the source's; the description too.
    let r = cx
        .post(
            &format!("{prod}/trends/dashboards/{}/duplicate", on_call()),
            json!({"name": "On-call (EU)"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["visibility"], "project");
    assert_eq!(r.body["widgets"][0]["name"], "Errors");
    // Its copy of a widget is its own.
    let wid = r.body["widgets"][0]["id"].as_str().unwrap();
    let eu = r.body["id"].as_str().unwrap();
    let renamed = cx
        .put(
            &format!("{prod}/trends/widgets/{wid}?trends_dashboard_id={eu}"),
            json!({"name": "EU errors"}),
        )
        .await;
    assert_eq!(renamed.status, 200);
    let original = cx
        .get(&format!("{prod}/trends?trends_dashboard_id={}", on_call()))
        .await;
    assert_eq!(original.body["widgets"][0]["name"], "Errors");

    // Validation of the request.
    let dup = format!("{prod}/trends/dashboards/{default}/duplicate");
    let r = cx.post(&dup, json!({})).await;
    assert_422(&r);
    assert_eq!(locs(&r.body), [r#"["body","name"]"#]);
    let r = cx
        .post(
            &dup,
            json!({"name": "x".repeat(256), "visibility": "team", "description": "d".repeat(1001)}),
        )
        .await;
    assert_422(&r);
    assert_eq!(r.body["detail"].as_array().unwrap().len(), 3, "{}", r.body);
    let r = cx
        .post(
            &format!("{prod}/trends/dashboards/6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60/duplicate"),
            json!({"name": "n"}),
        )
        .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn dashboards_are_deleted_with_their_favorites_but_not_the_default() {
    let cx = Ctx::new();
    let prod = production();
    let default = default_dashboard(&log_stream("demo-project", "production"));
    let fav = cx
        .call(
            "POST",
            &format!(
                "{prod}/trends/dashboards/{}/favorite?visibility=project",
                on_call()
            ),
            &Auth::demo(),
            None,
        )
        .await;
    assert_eq!(fav.status, 204);
    let r = cx
        .call(
            "DELETE",
            &format!("{prod}/trends/dashboards/{}", on_call()),
            &Auth::Key(VIEWER_KEY.into()),
            None,
        )
        .await;
    assert_eq!(r.status, 403);
    let r = cx
        .delete(&format!("{prod}/trends/dashboards/{}", on_call()))
        .await;
    assert_eq!(r.status, 204);
    let list = cx.get(&format!("{prod}/trends/dashboards")).await.body;
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["is_favorited"], false);
    assert!(
        cx.sb.read_state(|s| s.favorites.is_empty()),
        "the favorite went with it"
    );
    let again = cx
        .delete(&format!("{prod}/trends/dashboards/{}", on_call()))
        .await;
    assert_eq!(again.status, 404);
    let r = cx
        .delete(&format!("{prod}/trends/dashboards/{default}"))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!({"detail": "The default dashboard cannot be deleted"})
    );
    let r = cx.delete(&format!("{prod}/trends/dashboards/nope")).await;
    assert_422(&r);
    assert_eq!(locs(&r.body), [r#"["path","trends_dashboard_id"]"#]);
}
