//! Unit tests of [`super`]: the minimal spec of each live shape.

use super::*;
use crate::export::tests::{catalog, project};
use crate::manifest::types::{ExperimentSpec, LogStreamSpec};

fn spec() -> (ProjectSpec, BTreeMap<String, String>, Vec<String>) {
    let mut warnings = Vec::new();
    let doc = project_document(&project(), &catalog(), true, &mut warnings);
    let Body::Project(spec) = doc.body else {
        panic!("a project")
    };
    (*spec, doc.comments, warnings)
}

fn log_stream<'s>(spec: &'s ProjectSpec, name: &str) -> &'s LogStreamSpec {
    spec.log_streams
        .iter()
        .find(|l| l.name.as_deref() == Some(name))
        .unwrap()
}

#[test]
fn scorers_keep_only_what_differs_from_the_catalog() {
    let (spec, comments, warnings) = spec();
    let scorers = log_stream(&spec, "production")
        .metric_settings
        .as_ref()
        .unwrap()
        .scorers
        .clone()
        .unwrap();
    // Sorted by the name they are shown under: correctness, dup, gone.
    assert_eq!(scorers[0].name.as_deref(), Some("correctness"));
    assert_eq!(scorers[0].scorer_version, Some(1));
    assert_eq!(scorers[0].output_type, None, "the catalog's own");
    assert_eq!(scorers[0].model_type, Some(crate::api::ModelType::Slm));
    assert_eq!(scorers[0].cot_enabled, Some(false), "live has it: written");
    assert_eq!(
        scorers[0].scoreable_node_types,
        Some(vec!["chat".to_owned(), "llm".to_owned()])
    );
    assert_eq!(
        scorers[1].id.as_deref(),
        Some("dddd0002-0000-4000-8000-000000000000")
    );
    assert_eq!(scorers[1].name, None);
    assert_eq!(
        scorers[2].id.as_deref(),
        Some("eeee0000-0000-4000-8000-000000000000")
    );
    assert!(comments.contains_key("/log_streams/0/metric_settings/scorers/1/id"));
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("eeee0000-0000-4000-8000-000000000000"))
    );
}

#[test]
fn runs_are_sorted_and_twins_are_written_by_id() {
    let (spec, comments, _) = spec();
    let identities: Vec<(Option<&str>, Option<&str>)> = spec
        .log_streams
        .iter()
        .map(|l| (l.name.as_deref(), l.id.as_deref()))
        .collect();
    assert_eq!(
        identities,
        [
            (Some("production"), None),
            (None, Some("bbbb0002-0000-4000-8000-000000000000")),
            (None, Some("bbbb0003-0000-4000-8000-000000000000"))
        ]
    );
    assert!(comments["/log_streams/1/id"].contains("twin"));
    let twin = &spec.log_streams[1];
    assert_eq!(
        twin.trends,
        Some(std::sync::Arc::new(TrendsSpec {
            sections: Some(Vec::new()),
            widgets: Some(Vec::new()),
            favorite: None,
            interval_mins: Some(60),
            ..TrendsSpec::default()
        })),
        "not favorited: favorite left out (unmanaged); no other dashboards: `dashboards` left out; an absolute time range and no group-by left out"
    );
    assert_eq!(spec.log_streams[2].trends, None, "no dashboard");
    let settings = twin.metric_settings.as_ref().unwrap();
    assert_eq!(settings.scorers, Some(Vec::new()));
    assert_eq!(settings.segment_filters, Some(Vec::new()));
    let ExperimentSpec {
        metric_settings, ..
    } = &spec.experiments[0];
    let filters = metric_settings.as_ref().unwrap().scorers.as_ref().unwrap()[0]
        .filters
        .clone()
        .unwrap();
    assert_eq!(
        filters,
        [FilterSpec::Modality {
            operator: crate::api::Operator::OneOf,
            value: ModalityValueSpec::Many(vec![ContentModality::Audio, ContentModality::Image]),
        }]
    );
}

#[test]
fn sections_are_sorted() {
    let (spec, _, _) = spec();
    let production = log_stream(&spec, "production");
    let sections = production
        .trends
        .as_ref()
        .unwrap()
        .sections
        .clone()
        .unwrap();
    let names: Vec<&str> = sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["Odd", "Quality"]);
    assert_eq!(sections[0].color, None);
    assert_eq!(sections[0].description, None);
    assert_eq!(
        sections[1].color.as_deref(),
        Some("#1F77B4"),
        "the first listed"
    );
    assert_eq!(
        production.trends.as_ref().unwrap().favorite,
        Some(FavoriteSpec::User)
    );
}
