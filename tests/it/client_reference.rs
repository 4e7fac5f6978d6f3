//! Pins the client's operation catalog to the outside: every method and path
//! template exists in the public OpenAPI reference
//! (reference/service-openapi.json), the query parameters the client
//! sends are ones the reference declares, and HTTP Basic is used exactly where
//! the spec's table accepts it (the spec wins over the reference, which lists
//! Basic everywhere).

use evalctl::api::IntegrationProvider;
use evalctl::client::operation::{self, ALL};

fn reference() -> serde_json::Value {
    serde_json::from_str(evalctl::api::reference::SERVICE_REFERENCE).expect("valid JSON")
}

fn find<'a>(doc: &'a serde_json::Value, method: &str, path: &str) -> Option<&'a serde_json::Value> {
    doc["paths"].get(path)?.get(method.to_ascii_lowercase())
}

#[test]
fn every_operation_exists_in_the_reference() {
    let doc = reference();
    for op in ALL {
        if std::ptr::eq(*op, &operation::PUT_INTEGRATION) {
            for provider in IntegrationProvider::ALL {
                let path = format!("/v2/integrations/{}", provider.as_str());
                assert!(find(&doc, "PUT", &path).is_some(), "PUT {path}");
            }
            continue;
        }
        assert!(
            find(&doc, op.method.as_str(), op.path).is_some(),
            "{op} is not in the reference"
        );
    }
}

#[test]
fn query_parameters_sent_are_declared() {
    let doc = reference();
    let sent: &[(&operation::Operation, &[&str])] = &[
        (&operation::LIST_PROJECTS, &["starting_token", "limit"]),
        (&operation::LIST_SCORERS, &["starting_token", "limit"]),
        (
            &operation::LIST_SCORER_VERSIONS,
            &["starting_token", "limit"],
        ),
        (
            &operation::SCORER_VERSION_PROJECTS,
            &["starting_token", "limit"],
        ),
        (&operation::GET_TRENDS, &["trends_dashboard_id"]),
        (&operation::CREATE_SECTION, &["trends_dashboard_id"]),
        (&operation::UPDATE_SECTION, &["trends_dashboard_id"]),
        (
            &operation::DELETE_SECTION,
            &["trends_dashboard_id", "ungroup"],
        ),
        (&operation::UPDATE_TRENDS, &["trends_dashboard_id"]),
        (&operation::CREATE_WIDGET, &["trends_dashboard_id"]),
        (&operation::UPDATE_WIDGET, &["trends_dashboard_id"]),
        (&operation::DELETE_WIDGET, &["trends_dashboard_id"]),
        (&operation::FAVORITE_DASHBOARD, &["visibility"]),
        (&operation::UNFAVORITE_DASHBOARD, &["visibility"]),
    ];
    for (op, keys) in sent {
        let declared: Vec<&str> = find(&doc, op.method.as_str(), op.path)
            .and_then(|o| o["parameters"].as_array())
            .map(|ps| {
                ps.iter()
                    .filter(|p| p["in"] == "query")
                    .filter_map(|p| p["name"].as_str())
                    .collect()
            })
            .unwrap_or_default();
        for key in *keys {
            assert!(
                declared.contains(key),
                "{op}: query {key} not declared ({declared:?})"
            );
        }
    }
}

#[test]
fn basic_is_used_where_the_spec_accepts_it() {
    let doc = reference();
    // Spec operations 3, 6 and 10 do not accept Basic; the spec wins.
    let spec_no_basic = [
        &operation::CREATE_SECTION,
        &operation::SCORER_VERSION_PROJECTS,
        &operation::FAVORITE_DASHBOARD,
    ];
    for op in ALL {
        if std::ptr::eq(*op, &operation::LOGIN) || std::ptr::eq(*op, &operation::PUT_INTEGRATION) {
            continue;
        }
        let security = find(&doc, op.method.as_str(), op.path).unwrap()["security"].to_string();
        let reference_basic = security.contains("HTTPBasic");
        let expected = reference_basic && !spec_no_basic.iter().any(|o| std::ptr::eq(*o, *op));
        assert_eq!(op.basic_ok, expected, "{op}");
    }
}
