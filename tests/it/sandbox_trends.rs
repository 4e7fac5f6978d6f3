//! Contract tests of trends dashboards (spec operations 3 and 10, and the
//! reference's reads, section update/delete and unfavorite): raw JSON
//! requests, responses checked field by field and against the reference.

use crate::sandbox_support;

use sandbox_support::*;
use serde_json::{Value, json};

#[tokio::test]
async fn op3_create_section_and_op10_favorite() {
    let cx = Ctx::new();
    let prod = production();
    let r = cx
        .post(
            &format!("{prod}/trends/sections"),
            json!({"name": "Costs", "description": "Spend per day", "color": "#00AA55"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("SectionResponse", &r.body);
    assert_eq!(r.body["name"], "Costs");
    assert_eq!(r.body["description"], "Spend per day");
    assert_eq!(r.body["color"], "#00AA55");
    assert_eq!(r.body["widgets"], json!([]));
    let section_id = r.body["id"].as_str().unwrap().to_owned();

    // It is the last section of the default dashboard.
    let dash = cx.get(&format!("{prod}/trends")).await;
    assert_eq!(dash.status, 200);
    assert_schema("TrendsDashboardResponse", &dash.body);
    assert_eq!(dash.body["is_default"], true);
    let sections = dash.body["sections"].as_array().unwrap();
    assert_eq!(sections.last().unwrap()["id"], section_id.as_str());
    assert_eq!(sections[0]["name"], "Quality");
    assert_eq!(sections[0]["widgets"][0]["type"], "bar_chart");
    assert_eq!(sections[0]["widgets"][0]["aggregation"], "Count");

    let dashboard = default_dashboard(&log_stream("demo-project", "production"));
    let fav = cx
        .call(
            "POST",
            &format!("{prod}/trends/dashboards/{dashboard}/favorite?visibility=project"),
            &Auth::demo(),
            None,
        )
        .await;
    assert_eq!(fav.status, 204);
    let list = cx.get(&format!("{prod}/trends/dashboards")).await;
    assert_schema_array("TrendsDashboardSummary", &list.body);
    let favorited: Vec<&Value> = list
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["is_favorited"] == true)
        .collect();
    assert_eq!(favorited.len(), 1);
    assert_eq!(favorited[0]["id"], dashboard.as_str());
    // A project favorite shows for other users too.
    let alice = cx
        .call(
            "GET",
            &format!("{prod}/trends"),
            &Auth::Key("alice-api-key".into()),
            None,
        )
        .await;
    assert_eq!(alice.body["is_favorited"], true);
    // Unfavoriting the user's favorite leaves the project's.
    let un = cx
        .call(
            "DELETE",
            &format!("{prod}/trends/dashboards/favorite?visibility=user"),
            &Auth::demo(),
            None,
        )
        .await;
    assert_eq!(un.status, 204);
    assert_eq!(
        cx.get(&format!("{prod}/trends")).await.body["is_favorited"],
        true
    );
    let un = cx
        .call(
            "DELETE",
            &format!("{prod}/trends/dashboards/favorite?visibility=project"),
            &Auth::demo(),
            None,
        )
        .await;
    assert_eq!(un.status, 204);
    assert_eq!(
        cx.get(&format!("{prod}/trends")).await.body["is_favorited"],
        false
    );
}

#[tokio::test]
async fn sections_update_and_delete_with_and_without_ungroup() {
    let cx = Ctx::new();
    let prod = production();
    let dash = cx.get(&format!("{prod}/trends")).await.body;
    let quality = dash["sections"][0]["id"].as_str().unwrap().to_owned();
    let latency = dash["sections"][1]["id"].as_str().unwrap().to_owned();
    let top_before = dash["widgets"].as_array().unwrap().len();

    let r = cx
        .put(
            &format!("{prod}/trends/sections/{quality}"),
            json!({"name": "Answer quality", "color": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("SectionResponse", &r.body);
    assert_eq!(r.body["name"], "Answer quality");
    assert_eq!(r.body["color"], "#1F77B4", "null keeps the colour");

    let r = cx
        .delete(&format!("{prod}/trends/sections/{quality}?ungroup=true"))
        .await;
    assert_eq!(r.status, 204);
    let r = cx
        .delete(&format!("{prod}/trends/sections/{latency}"))
        .await;
    assert_eq!(r.status, 204);
    let dash = cx.get(&format!("{prod}/trends")).await.body;
    assert_eq!(dash["sections"], json!([]));
    let top = dash["widgets"].as_array().unwrap();
    assert_eq!(
        top.len(),
        top_before + 2,
        "the ungrouped section's two widgets moved up"
    );
    assert!(top.iter().all(|w| w["section_id"].is_null()));
    let again = cx
        .delete(&format!("{prod}/trends/sections/{latency}"))
        .await;
    assert_eq!(again.status, 404);
    assert_eq!(again.body, json!({"detail": "Section not found"}));
}
