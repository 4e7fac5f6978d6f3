//! Contract tests of trends widgets (the reference's POST/PUT/DELETE
//! `.../trends/widgets`): raw JSON requests, responses checked field by field
//! and against the reference; the four chart types, validation as pydantic
//! words it, the 50-widget limits, moving a widget between sections (an
//! update that keeps its id), and widgets of another dashboard.

use crate::sandbox_support;

use evalctl::sandbox::fixture::ids;
use sandbox_support::*;
use serde_json::{Value, json};

fn quality() -> String {
    ids::section("production:quality")
}

fn latency() -> String {
    ids::section("production:latency")
}

/// The names of the widgets of the default dashboard, top level first.
async fn layout_of(cx: &Ctx) -> (Vec<String>, Vec<Vec<String>>) {
    let dash = cx.get(&format!("{}/trends", production())).await.body;
    assert_schema("TrendsDashboardResponse", &dash);
    let names = |ws: &Value| -> Vec<String> {
        ws.as_array()
            .expect("widgets")
            .iter()
            .map(|w| w["name"].as_str().expect("a name").to_owned())
            .collect()
    };
    let top = names(&dash["widgets"]);
    let sections = dash["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .map(|s| names(&s["widgets"]))
        .collect();
    (top, sections)
}

#[tokio::test]
async fn widgets_of_every_type_are_created_at_the_top_level_or_in_a_section() {
    let cx = Ctx::new();
    let url = format!("{}/trends/widgets", production());
    for (name, kind, aggregation, section) in [
        ("Bars", "bar_chart", "Count", None),
        ("Lines", "line_chart", "P99", Some(quality())),
        ("Big number", "number", "Average", None),
        ("Table", "table", "PercentageFalse", Some(latency())),
    ] {
        let mut body = json!({
            "name": name, "type": kind, "metric": "latency_ms", "aggregation": aggregation,
            "description": format!("{name} of latency"),
            "dataset": [{"metrics": ["latency_ms"], "filters": []}]
        });
        if let Some(s) = &section {
            body["section_id"] = json!(s);
        }
        let r = cx.post(&url, body).await;
        assert_eq!(r.status, 200, "{name}: {}", r.body);
        assert_schema("WidgetResponse", &r.body);
        assert_eq!(r.body["name"], name);
        assert_eq!(r.body["type"], kind);
        assert_eq!(r.body["aggregation"], aggregation);
        assert_eq!(r.body["metric"], "latency_ms");
        assert_eq!(r.body["description"], format!("{name} of latency"));
        assert_eq!(
            r.body["dataset"],
            json!([{"metrics": ["latency_ms"], "filters": []}])
        );
        assert_eq!(r.body["section_id"], json!(section));
    }
    let (top, sections) = layout_of(&cx).await;
    assert_eq!(
        top,
        ["Traces", "Bars", "Big number"],
        "last at the top level"
    );
    assert_eq!(
        sections,
        [
            vec!["Correctness", "Context adherence", "Lines"],
            vec!["Latency p95", "Table"]
        ]
    );
    // A section id in another spelling of the same UUID is that section.
    let r = cx
        .post(
            &url,
            json!({"name": "Upper", "type": "number", "metric": "m", "aggregation": "Max",
                   "section_id": quality().to_uppercase()}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["section_id"], quality());
}

#[tokio::test]
async fn widget_requests_are_validated_as_pydantic_words_them() {
    let cx = Ctx::new();
    let url = format!("{}/trends/widgets", production());
    let r = cx.post(&url, json!({})).await;
    assert_422(&r);
    assert_eq!(
        locs(&r.body),
        [
            r#"["body","name"]"#,
            r#"["body","type"]"#,
            r#"["body","metric"]"#,
            r#"["body","aggregation"]"#
        ]
    );
    assert!(
        r.body["detail"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["type"] == "missing")
    );
    let r = cx
        .post(
            &url,
            json!({"name": "x".repeat(101), "type": "pie_chart", "metric": "", "aggregation": "Median",
                   "description": "d".repeat(501), "dataset": vec![json!({"m": ["a"]}); 51],
                   "section_id": "not-a-uuid"}),
        )
        .await;
    assert_422(&r);
    let kinds: Vec<(String, String)> = r.body["detail"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["loc"].to_string(), d["type"].as_str().unwrap().to_owned()))
        .collect();
    for (loc, kind) in [
        (r#"["body","name"]"#, "string_too_long"),
        (r#"["body","description"]"#, "string_too_long"),
        (r#"["body","type"]"#, "enum"),
        (r#"["body","dataset"]"#, "too_long"),
        (r#"["body","metric"]"#, "string_too_short"),
        (r#"["body","aggregation"]"#, "enum"),
        (r#"["body","section_id"]"#, "uuid_parsing"),
    ] {
        assert!(
            kinds.contains(&(loc.to_owned(), kind.to_owned())),
            "{loc} {kind} in {kinds:?}"
        );
    }
    // An update is checked the same way; nothing is stored by a 422.
    let traces = ids::widget("production:top:traces");
    let r = cx
        .put(
            &format!("{url}/{traces}"),
            json!({"type": "gauge", "name": ""}),
        )
        .await;
    assert_422(&r);
    assert_eq!(layout_of(&cx).await.0, ["Traces"]);
    // Malformed path ids are 422s too, path first.
    let r = cx.delete(&format!("{url}/nope")).await;
    assert_422(&r);
    assert_eq!(locs(&r.body), [r#"["path","widget_id"]"#]);
}

#[tokio::test]
async fn the_fiftieth_widget_fits_and_the_fifty_first_does_not() {
    let cx = Ctx::new();
    let url = format!("{}/trends/widgets", production());
    let widget = |section: Option<String>| json!({"name": "w", "type": "number", "metric": "m", "aggregation": "Count", "section_id": section});
    // The top level holds one (Traces); 49 more fit.
    for _ in 0..49 {
        assert_eq!(cx.post(&url, widget(None)).await.status, 200);
    }
    let r = cx.post(&url, widget(None)).await;
    assert_422(&r);
    assert_eq!(r.body["detail"][0]["type"], "value_error");
    assert_eq!(
        r.body["detail"][0]["msg"],
        "Value error, a dashboard holds at most 50 widgets outside sections"
    );
    // Sections count on their own (Quality holds two).
    for _ in 0..48 {
        assert_eq!(cx.post(&url, widget(Some(quality()))).await.status, 200);
    }
    let r = cx.post(&url, widget(Some(quality()))).await;
    assert_422(&r);
    assert_eq!(
        r.body["detail"][0]["msg"],
        "Value error, a section holds at most 50 widgets"
    );
    // Moving a widget into a full place is refused too, and nothing moves.
    let latency_p95 = ids::widget("production:latency:Latency p95");
    let r = cx
        .put(
            &format!("{url}/{latency_p95}"),
            json!({"section_id": quality()}),
        )
        .await;
    assert_422(&r);
    // Ungrouping a section whose widgets do not fit at the top level: 422.
    let r = cx
        .delete(&format!(
            "{}/trends/sections/{}?ungroup=true",
            production(),
            latency()
        ))
        .await;
    assert_422(&r);
    let dash = cx.get(&format!("{}/trends", production())).await.body;
    assert_schema("TrendsDashboardResponse", &dash);
    assert_eq!(dash["widgets"].as_array().unwrap().len(), 50);
    assert_eq!(dash["sections"][0]["widgets"].as_array().unwrap().len(), 50);
    assert_eq!(dash["sections"][1]["widgets"][0]["id"], latency_p95);
}

#[tokio::test]
async fn moving_a_widget_is_an_update_that_keeps_its_id() {
    let cx = Ctx::new();
    let url = format!("{}/trends/widgets", production());
    let correctness = ids::widget("production:quality:Correctness");
    let r = cx
        .put(
            &format!("{url}/{correctness}"),
            json!({"section_id": latency(), "name": "Correctness (moved)"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("WidgetResponse", &r.body);
    assert_eq!(r.body["id"], correctness);
    assert_eq!(r.body["section_id"], latency());
    assert_eq!(r.body["type"], "bar_chart", "fields left out are kept");
    let (top, sections) = layout_of(&cx).await;
    assert_eq!(top, ["Traces"]);
    assert_eq!(
        sections,
        [
            vec!["Context adherence"],
            vec!["Latency p95", "Correctness (moved)"]
        ]
    );
    // `null` moves it to the top level and clears the description; a null
    // name is kept.
    let r = cx
        .put(
            &format!("{url}/{correctness}"),
            json!({"section_id": null, "description": null, "name": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["section_id"], Value::Null);
    assert_eq!(r.body["description"], Value::Null);
    assert_eq!(r.body["name"], "Correctness (moved)");
    assert_eq!(layout_of(&cx).await.0, ["Traces", "Correctness (moved)"]);
    // Every field at once.
    let r = cx
        .put(
            &format!("{url}/{correctness}"),
            json!({"type": "table", "metric": "correctness", "aggregation": "PercentageTrue",
                   "dataset": [{"metrics": ["correctness"]}], "section_id": quality()}),
        )
        .await;
    assert_eq!(r.body["type"], "table");
    assert_eq!(r.body["aggregation"], "PercentageTrue");
    assert_eq!(r.body["section_id"], quality());
    // A section of no dashboard, or of another one, is a 404.
    let r = cx
        .put(
            &format!("{url}/{correctness}"),
            json!({"section_id": "6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60"}),
        )
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body, json!({"detail": "Section not found"}));
    let r = cx
        .post(
            &url,
            json!({"name": "w", "type": "number", "metric": "m", "aggregation": "Count",
                   "section_id": "6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60"}),
        )
        .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn deleting_widgets_and_widgets_of_other_dashboards() {
    let cx = Ctx::new();
    let prod = production();
    let url = format!("{prod}/trends/widgets");
    let traces = ids::widget("production:top:traces");
    let before = cx.get(&format!("{prod}/trends")).await.body;
    assert!(before["layout_map"].get(&traces).is_some());
    let r = cx.delete(&format!("{url}/{traces}")).await;
    assert_eq!(r.status, 204);
    let after = cx.get(&format!("{prod}/trends")).await.body;
    assert_eq!(after["widgets"], json!([]));
    assert!(
        after["layout_map"].get(&traces).is_none(),
        "its layout entry goes with it"
    );
    let again = cx.delete(&format!("{url}/{traces}")).await;
    assert_eq!(again.status, 404);
    assert_eq!(again.body, json!({"detail": "Widget not found"}));

    // The On-call dashboard's widget is addressed with its dashboard id.
    let on_call = ids::dashboard(&log_stream("demo-project", "production"), "on-call");
    let errors = ids::widget("production:on-call:errors");
    let r = cx
        .put(&format!("{url}/{errors}"), json!({"name": "Errors"}))
        .await;
    assert_eq!(r.status, 404, "not a widget of the default dashboard");
    let r = cx
        .put(
            &format!("{url}/{errors}?trends_dashboard_id={on_call}"),
            json!({"name": "Error count"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["type"], "table");
    let r = cx
        .post(
            &format!("{url}?trends_dashboard_id={on_call}"),
            json!({"name": "Retries", "type": "line_chart", "metric": "retries", "aggregation": "Sum"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let dash = cx
        .get(&format!("{prod}/trends?trends_dashboard_id={on_call}"))
        .await
        .body;
    let names: Vec<&str> = dash["widgets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Error count", "Retries"]);

    // Writes need a role that may write; reads of widgets go through the
    // dashboard.
    let r = cx
        .call(
            "DELETE",
            &format!("{url}/{errors}?trends_dashboard_id={on_call}"),
            &Auth::Key(VIEWER_KEY.into()),
            None,
        )
        .await;
    assert_eq!(r.status, 403);
    let r = cx
        .call(
            "POST",
            &url,
            &Auth::None,
            Some(json!({"name": "w", "type": "number", "metric": "m", "aggregation": "Count"})),
        )
        .await;
    assert_eq!(r.status, 401);
}
