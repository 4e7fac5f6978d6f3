//! Compiling and evaluating rules on literal manifests.

use super::*;
use crate::manifest::types::ProjectSpec;

fn origin(file: &str, line: usize) -> Origin {
    Origin {
        file: file.into(),
        line,
    }
}

fn project(yaml: serde_json::Value) -> Located<ProjectSpec> {
    Located {
        origin: origin("p.yaml", 1),
        spec: serde_json::from_value(yaml).expect("project"),
    }
}

fn policy(target: Target, expression: &str, severity: Option<RuleSeverity>) -> Located<PolicySpec> {
    Located {
        origin: origin("policy.yaml", 1),
        spec: PolicySpec {
            name: "team".into(),
            description: None,
            rules: vec![RuleSpec {
                name: "r".into(),
                target,
                expression: expression.into(),
                message: "broken".into(),
                severity,
            }],
        },
    }
}

fn demo() -> Located<ProjectSpec> {
    project(serde_json::json!({
        "name": "demo",
        "log_streams": [
            {"name": "production", "metric_settings": {
                "scorers": [{"name": "toxicity", "num_judges": 5}, {"name": "correctness"}],
                "segment_filters": [{"sample_rate": 0.05}]
            }},
            {"name": "staging"}
        ],
        "experiments": [{"name": "exp", "metric_settings": {"scorers": [{"name": "pii", "num_judges": 9}]}}],
        "annotation_templates": [{"name": "quality", "constraints": {"annotation_type": "like_dislike"}}]
    }))
}

fn fields(set: &ManifestSet) -> Vec<String> {
    evaluate(set)
        .iter()
        .map(|v| format!("{:?} {} {}", v.severity, v.field, v.message))
        .collect()
}

#[test]
fn each_target_sees_its_objects_and_reports_at_them() {
    let cases: [(Target, &str, &[&str]); 5] = [
        (
            Target::Projects,
            "project.log_streams.exists(l, l.name == 'canary')",
            &["Error  project `demo`: broken"],
        ),
        (
            Target::LogStreams,
            "log_stream.name != 'production' || log_stream.metric_settings.segment_filters.all(f, f.sample_rate >= 0.1)",
            &["Error log_streams[0] log stream `production` of project `demo`: broken"],
        ),
        (
            Target::Scorers,
            "!has(scorer.num_judges) || scorer.num_judges <= 3 || run.kind == 'experiment'",
            &[
                "Error log_streams[0].metric_settings.scorers[0] scorer `toxicity` of log stream `production` of project `demo`: broken",
            ],
        ),
        (
            Target::Experiments,
            "experiment.name == 'other' && project.name == 'demo'",
            &["Error experiments[0] experiment `exp` of project `demo`: broken"],
        ),
        (
            Target::Templates,
            "template.kind == 'feedback'",
            &[
                "Error annotation_templates[0] annotation template `quality` of project `demo`: broken",
            ],
        ),
    ];
    for (target, expression, expected) in cases {
        let set = ManifestSet {
            projects: vec![demo()],
            policies: vec![policy(target, expression, None)],
            ..ManifestSet::default()
        };
        assert_eq!(fields(&set), expected.to_vec(), "{expression}");
    }
}

#[test]
fn warnings_non_bools_and_evaluation_errors_are_reported() {
    let mut set = ManifestSet {
        projects: vec![demo()],
        policies: vec![policy(
            Target::LogStreams,
            "log_stream.metric_settings.scorers.size() > 0",
            Some(RuleSeverity::Warning),
        )],
        ..ManifestSet::default()
    };
    let found = evaluate(&set);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].severity, RuleSeverity::Warning);
    assert!(found[0].message.contains("`staging`"), "{found:?}");
    assert!(
        found[0]
            .message
            .contains("cannot be evaluated: no field `metric_settings` here")
    );
    set.policies = vec![policy(Target::Projects, "project.name", None)];
    assert!(
        evaluate(&set)[0]
            .message
            .contains("gives a string, not true or false")
    );
}

#[test]
fn forecast_rules_run_only_on_figures() {
    let set = ManifestSet {
        projects: vec![demo()],
        policies: vec![policy(
            Target::Forecast,
            "forecast.llm_judge_calls_per_day < 10000.0",
            None,
        )],
        ..ManifestSet::default()
    };
    assert!(evaluate(&set).is_empty(), "validate has no figures");
    let mut figures = ForecastFigures {
        llm_judge_calls_per_day: 9000.0,
        ..ForecastFigures::default()
    };
    assert!(evaluate_forecast(&set.policies, &figures).is_empty());
    figures.llm_judge_calls_per_day = 16_600.0;
    let found = evaluate_forecast(&set.policies, &figures);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].field.to_string(), "rules[0]");
    assert_eq!(
        found[0].origin.file,
        std::path::PathBuf::from("policy.yaml")
    );
}

#[test]
fn compile_errors_say_where() {
    let error = compile("scorer.num_judges <= ", Target::Scorers).expect_err("parse error");
    assert!(error.position.is_some(), "{error:?}");
    let error = compile("scorr.num_judges <= 3", Target::Scorers).expect_err("unknown variable");
    assert_eq!(error.position, Some((1, 1)));
    assert!(error.message.contains("`scorr`"), "{error:?}");
    compile("project.log_streams.all(l, l.name != '')", Target::Projects).expect("bound variable");
    let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
    assert!(compile(&deep, Target::Projects).is_err());
}

#[test]
fn parse_error_positions_are_within_the_expression() {
    let error = compile("scorer.num_judges <= )", Target::Scorers).expect_err("parse error");
    assert_eq!(error.position, Some((1, 22)), "{error:?}");
}
