//! Search semantics: every filter kind and operator, every sort, counts,
//! and pagination through several pages (log stream and experiment search,
//! project listing, scorer-version projects, scorer listing).

use crate::sandbox_support;

use evalctl::sandbox::{Fixture, Scale};
use sandbox_support::*;
use serde_json::{Value, json};

fn scaled() -> Ctx {
    Ctx::fixture(Fixture::scaled_with(Scale {
        projects: 4,
        log_streams_per_project: 25,
        experiments_per_project: 7,
        sections_per_dashboard: 1,
        templates_per_project: 2,
        scorers_per_log_stream: 1,
    }))
}

fn bench_project(n: usize) -> String {
    project(&format!("bench-project-{n:03}"))
}

fn names(body: &Value, key: &str) -> Vec<String> {
    body[key]
        .as_array()
        .expect("a list")
        .iter()
        .map(|l| l["name"].as_str().expect("a name").to_owned())
        .collect()
}

async fn search(cx: &Ctx, body: Value) -> Vec<String> {
    let r = cx
        .post(
            &format!("/v2/projects/{}/log_streams/search", bench_project(0)),
            body,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("ListLogStreamResponse", &r.body);
    names(&r.body, "log_streams")
}

#[tokio::test]
async fn log_stream_search_pages_through_all_results() {
    let cx = scaled();
    let path = format!("/v2/projects/{}/log_streams/search", bench_project(1));
    let mut seen = Vec::new();
    let mut token = 0;
    let mut pages = 0;
    loop {
        let r = cx
            .post(&path, json!({"starting_token": token, "limit": 10, "sort": {"name": "name", "ascending": true, "sort_type": "column"}}))
            .await;
        assert_schema("ListLogStreamResponse", &r.body);
        pages += 1;
        assert_eq!(r.body["starting_token"], token);
        assert_eq!(r.body["limit"], 10);
        seen.extend(names(&r.body, "log_streams"));
        if r.body["paginated"] == true {
            let next = r.body["next_starting_token"].as_i64().unwrap();
            assert_eq!(next, token + 10);
            token = next;
        } else {
            assert!(r.body["next_starting_token"].is_null());
            break;
        }
    }
    assert_eq!(pages, 3);
    let expected: Vec<String> = (0..25).map(|i| format!("ls-{i:03}")).collect();
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn name_filters_every_operator_and_case() {
    let cx = scaled();
    let f = |op: &str, value: Value| json!({"filters": [{"name": "name", "operator": op, "value": value}], "sort": {"name": "name"}});
    assert_eq!(search(&cx, f("eq", json!("ls-003"))).await, ["ls-003"]);
    assert_eq!(
        search(&cx, f("eq", json!("LS-003"))).await,
        Vec::<String>::new()
    );
    let insensitive = json!({"filters": [{"name": "name", "operator": "eq", "value": "LS-003", "case_sensitive": false}]});
    assert_eq!(search(&cx, insensitive).await, ["ls-003"]);
    assert_eq!(search(&cx, f("ne", json!("ls-003"))).await.len(), 24);
    assert_eq!(search(&cx, f("contains", json!("-01"))).await.len(), 10);
    assert_eq!(
        search(&cx, f("one_of", json!(["ls-001", "ls-002", "zzz"]))).await,
        ["ls-001", "ls-002"]
    );
    assert_eq!(
        search(&cx, f("not_in", json!(["ls-001", "ls-002"])))
            .await
            .len(),
        23
    );
}

#[tokio::test]
async fn id_created_by_and_time_filters() {
    let cx = scaled();
    let all = cx
        .post(
            &format!("/v2/projects/{}/log_streams/search", bench_project(0)),
            json!({"sort": {"name": "name"}}),
        )
        .await
        .body;
    let streams = all["log_streams"].as_array().unwrap();
    let id = |i: usize| streams[i]["id"].as_str().unwrap().to_owned();
    let by_id = |op: &str, v: Value| json!({"filters": [{"name": "id", "operator": op, "value": v}], "sort": {"name": "name"}});
    assert_eq!(search(&cx, by_id("eq", json!(id(4)))).await, ["ls-004"]);
    assert_eq!(
        search(&cx, json!({"filters": [{"name": "id", "value": id(4)}]})).await,
        ["ls-004"],
        "operator defaults to eq"
    );
    assert_eq!(search(&cx, by_id("ne", json!(id(4)))).await.len(), 24);
    assert_eq!(
        search(&cx, by_id("one_of", json!([id(1), id(2)]))).await,
        ["ls-001", "ls-002"]
    );
    assert_eq!(
        search(&cx, by_id("not_in", json!([id(1), id(2)])))
            .await
            .len(),
        23
    );
    assert_eq!(
        search(&cx, by_id("contains", json!(&id(7)[..8]))).await,
        ["ls-007"]
    );

    let creator = streams[0]["created_by"].as_str().unwrap().to_owned();
    let mine = search(
        &cx,
        json!({"filters": [{"name": "created_by", "value": creator}]}),
    )
    .await;
    let theirs = search(
        &cx,
        json!({"filters": [{"name": "created_by", "operator": "ne", "value": creator}]}),
    )
    .await;
    assert!(!mine.is_empty() && !theirs.is_empty());
    assert_eq!(mine.len() + theirs.len(), 25);

    // Log stream ls-00N of bench project 0 was created at 2025-01-01T00:00Z + N hours.
    let t = |op: &str, field: &str, v: &str| json!({"filters": [{"name": field, "operator": op, "value": v}], "sort": {"name": "name"}});
    let at5 = "2025-01-01T05:00:00Z";
    assert_eq!(search(&cx, t("eq", "created_at", at5)).await, ["ls-005"]);
    assert_eq!(
        search(&cx, t("eq", "created_at", "2025-01-01T06:00:00+01:00")).await,
        ["ls-005"],
        "offsets compare by instant"
    );
    assert_eq!(search(&cx, t("ne", "created_at", at5)).await.len(), 24);
    assert_eq!(search(&cx, t("lt", "created_at", at5)).await.len(), 5);
    assert_eq!(search(&cx, t("lte", "created_at", at5)).await.len(), 6);
    assert_eq!(search(&cx, t("gt", "created_at", at5)).await.len(), 19);
    assert_eq!(search(&cx, t("gte", "created_at", at5)).await.len(), 20);
    // updated_at is an hour after created_at.
    assert_eq!(
        search(&cx, t("eq", "updated_at", "2025-01-01T06:00:00Z")).await,
        ["ls-005"]
    );
    let both = json!({"filters": [
        {"name": "created_at", "operator": "gte", "value": "2025-01-01T02:00:00Z"},
        {"name": "updated_at", "operator": "lt", "value": "2025-01-01T05:00:00Z"}
    ], "sort": {"name": "name"}});
    assert_eq!(
        search(&cx, both).await,
        ["ls-002", "ls-003"],
        "all filters must match"
    );
}

#[tokio::test]
async fn every_sort() {
    let cx = scaled();
    let sorted = |name: &str, ascending: bool| json!({"limit": 3, "sort": {"name": name, "ascending": ascending, "sort_type": "column"}});
    assert_eq!(
        search(&cx, sorted("name", true)).await,
        ["ls-000", "ls-001", "ls-002"]
    );
    assert_eq!(
        search(&cx, sorted("name", false)).await,
        ["ls-024", "ls-023", "ls-022"]
    );
    assert_eq!(
        search(&cx, sorted("created_at", true)).await,
        ["ls-000", "ls-001", "ls-002"]
    );
    assert_eq!(
        search(&cx, sorted("updated_at", false)).await,
        ["ls-024", "ls-023", "ls-022"]
    );
    assert_eq!(
        search(&cx, json!({"limit": 2})).await,
        ["ls-024", "ls-023"],
        "default: created_at descending"
    );
    // The reference's sort default is `ascending: true` when only the name is given.
    assert_eq!(
        search(&cx, json!({"limit": 1, "sort": {"name": "updated_at"}})).await,
        ["ls-000"]
    );
}

#[tokio::test]
async fn experiment_search_with_group_filters_and_pages() {
    let cx = Ctx::new();
    let path = format!(
        "/v2/projects/{}/experiments/search",
        project("demo-project")
    );
    let r = cx
        .post(&path, json!({"filters": [{"name": "experiment_group_name", "operator": "eq", "value": "NIGHTLY", "case_sensitive": false}]}))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("ListExperimentResponse", &r.body);
    assert_eq!(names(&r.body, "experiments"), ["candidate-eval"]);
    let group = r.body["experiments"][0]["experiment_group_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = cx
        .post(
            &path,
            json!({"filters": [{"name": "experiment_group_id", "value": group}]}),
        )
        .await;
    assert_eq!(names(&r.body, "experiments"), ["candidate-eval"]);
    let r = cx.post(&path, json!({"filters": [{"name": "name", "operator": "eq", "value": "baseline-eval"}], "include_counts": true})).await;
    assert_schema("ListExperimentResponse", &r.body);
    assert!(r.body["experiments"][0]["num_spans"].is_i64());

    let cx = scaled();
    let path = format!("/v2/projects/{}/experiments/search", bench_project(2));
    let mut all = Vec::new();
    let mut token = 0;
    let mut pages = 0;
    while pages < 10 {
        let r = cx
            .post(
                &path,
                json!({"starting_token": token, "limit": 3, "sort": {"name": "name"}}),
            )
            .await;
        assert_schema("ListExperimentResponse", &r.body);
        all.extend(names(&r.body, "experiments"));
        pages += 1;
        match r.body["next_starting_token"].as_i64() {
            Some(next) if r.body["paginated"] == true => token = next,
            _ => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(all.len(), 7);
}

#[tokio::test]
async fn project_listing_pages_and_filters() {
    let cx = scaled();
    let mut seen = Vec::new();
    let mut token = 0;
    for page in 0..3 {
        let r = cx
            .post(
                &format!("/v2/projects/paginated?starting_token={token}&limit=2"),
                json!({"sort": {"name": "name", "ascending": true}}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_schema(
            "api__schemas__project_v2__GetProjectsPaginatedResponse",
            &r.body,
        );
        assert_eq!(r.body["total_count"], 4);
        seen.extend(names(&r.body, "projects"));
        if page < 1 {
            token = r.body["next_starting_token"].as_i64().unwrap();
        } else {
            assert_eq!(r.body["paginated"], false, "page {page}");
            token = 4;
        }
    }
    assert_eq!(
        seen,
        [
            "bench-project-000",
            "bench-project-001",
            "bench-project-002",
            "bench-project-003"
        ]
    );
    let r = cx
        .post("/v2/projects/paginated", json!({"filters": [{"name": "name", "operator": "contains", "value": "-00"}, {"name": "name", "operator": "ne", "value": "bench-project-001"}]}))
        .await;
    assert_eq!(r.body["total_count"], 3);
    let r = cx
        .post(
            "/v2/projects/paginated",
            json!({"filters": [{"name": "bookmark", "value": true}]}),
        )
        .await;
    assert_eq!(r.body["total_count"], 0);
    let r = cx
        .post("/v2/projects/paginated", json!({"filters": [{"name": "num_logstreams", "operator": "between", "value": [20, 30]}]}))
        .await;
    assert_eq!(r.body["total_count"], 4);
}

#[tokio::test]
async fn scorer_version_projects_page_with_total_count() {
    // Every log stream of the scaled fixture uses the first preset, unpinned:
    // its latest version is used by all four projects.
    let cx = scaled();
    let first = cx.post("/v2/scorers/list", json!({"filters": [{"name": "name", "operator": "eq", "value": "action_completion_luna"}]})).await;
    let latest = first.body["scorers"][0]["latest_version"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut seen = Vec::new();
    let mut token = 0i64;
    let mut pages = 0;
    loop {
        let r = cx
            .get(&format!(
                "/v2/scorers/versions/{latest}/projects?starting_token={token}&limit=1"
            ))
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_schema(
            "api__schemas__project_v2__GetProjectsPaginatedResponse",
            &r.body,
        );
        assert_eq!(r.body["total_count"], 4);
        seen.extend(names(&r.body, "projects"));
        pages += 1;
        match r.body["next_starting_token"].as_i64() {
            Some(next) => token = next,
            None => break,
        }
    }
    assert_eq!(pages, 4);
    seen.dedup();
    assert_eq!(seen.len(), 4);
}

#[tokio::test]
async fn scorer_listing_pages() {
    let cx = Ctx::new();
    let mut total = 0;
    let mut token = 0;
    let mut pages = 0;
    loop {
        let r = cx
            .post(
                &format!("/v2/scorers/list?starting_token={token}&limit=30"),
                json!({}),
            )
            .await;
        assert_schema("ListScorersResponse", &r.body);
        total += r.body["scorers"].as_array().unwrap().len();
        pages += 1;
        match r.body["next_starting_token"].as_i64() {
            Some(next) => token = next,
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(total, 66);
    let versions = cx
        .get(&format!(
            "/v2/scorers/{}/versions?limit=1",
            scorer("helpfulness-judge")
        ))
        .await;
    assert_eq!(versions.body["paginated"], true);
    assert_eq!(versions.body["versions"][0]["version"], 2, "newest first");
}
