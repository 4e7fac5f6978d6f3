//! The forecast of runs built from literals: scorers, sampling rules,
//! traffic and prices in, figures out.

use std::path::PathBuf;

use super::*;
use crate::api::{ModelType, ScorerType};
use crate::manifest::pricing::Price;
use crate::manifest::set::Origin;
use crate::manifest::types::TrafficSpec;
use crate::state::CatalogScorer;
use crate::state::metric_settings::{NormFilter, NormSegmentFilter, NormValue, NotCompared};
use crate::state::metric_settings::{NormMetricSettings, NormScorer};
use crate::state::{Catalog, Traffic};

/// [`super::finish`] of runs given as a list.
fn finish(runs: Vec<RunForecast>, pricing: Option<&Located<PricingSpec>>) -> Option<Forecast> {
    let mut builder = Builder::default();
    for run in &runs {
        builder.push(run);
    }
    super::finish(builder, pricing)
}

fn catalog_scorer(id: &str, scorer_type: ScorerType, model: Option<ModelType>) -> CatalogScorer {
    CatalogScorer {
        id: id.to_owned(),
        name: id.to_owned(),
        scorer_type,
        latest_version: None,
        model_type: model,
        output_type: None,
        input_type: None,
        roll_up_method: None,
        num_judges: None,
        model_name: None,
        scoreable_node_types: Vec::new(),
        multimodal: false,
    }
}

/// A catalog: `trace_judge` (preset on a large model, traces, 3 judges by
/// default, gpt-4o), `span_judge` (llm scorer, llm spans), `code_check`
/// (code), `luna_check` (preset on a small model), `vision` (multimodal).
pub(crate) fn catalog() -> Catalog {
    let mut trace_judge = catalog_scorer("trace_judge", ScorerType::Preset, Some(ModelType::Llm));
    trace_judge.num_judges = Some(3);
    trace_judge.model_name = Some("gpt-4o".to_owned());
    trace_judge.scoreable_node_types = vec!["trace".to_owned()];
    let mut span_judge = catalog_scorer("span_judge", ScorerType::Llm, None);
    span_judge.scoreable_node_types = vec!["llm".to_owned()];
    let code_check = catalog_scorer("code_check", ScorerType::Code, Some(ModelType::Code));
    let luna_check = catalog_scorer("luna_check", ScorerType::Preset, Some(ModelType::Slm));
    let mut vision = catalog_scorer("vision", ScorerType::Preset, Some(ModelType::Llm));
    vision.multimodal = true;
    Catalog {
        scorers: vec![trace_judge, span_judge, code_check, luna_check, vision],
        versions: Default::default(),
    }
}

pub(crate) fn scorer(catalog: &Catalog, id: &str) -> NormScorer {
    let entry = catalog.by_id(id);
    NormScorer {
        id: id.to_owned(),
        scorer_type: entry.map_or(ScorerType::Llm, |e| e.scorer_type.clone()),
        scorer_version: None,
        scorer_version_id: NotCompared(None),
        model_name: None,
        num_judges: None,
        filters: Vec::new(),
        scoreable_node_types: Vec::new(),
        cot_enabled: None,
        output_type: None,
        input_type: None,
        model_type: entry.and_then(|e| e.model_type.clone()),
        multimodal_capabilities: Vec::new(),
        roll_up_method: None,
        score_type: None,
    }
}

pub(crate) fn settings(
    scorers: Vec<NormScorer>,
    rules: Vec<NormSegmentFilter>,
) -> NormMetricSettings {
    NormMetricSettings {
        scorers: scorers.into_iter().map(|s| (s.id.clone(), s)).collect(),
        segment_filters: rules,
    }
}

fn rule(sample_rate: f64, filtered: bool, llm_scorers: bool) -> NormSegmentFilter {
    NormSegmentFilter {
        sample_rate,
        filter: filtered.then(|| NormFilter::NodeName {
            operator: crate::api::Operator::Eq,
            value: NormValue::One("llm".to_owned()),
            case_sensitive: true,
        }),
        llm_scorers,
        multimodal_scorers: false,
    }
}

fn log_stream<'a>(counted: Traffic, declared: Option<&'a TrafficSpec>) -> RunInput<'a> {
    RunInput {
        project: "demo",
        run_kind: RunKind::LogStream,
        run: "production",
        counted,
        declared,
    }
}

fn pricing(spec: PricingSpec) -> Located<PricingSpec> {
    Located {
        origin: Origin {
            file: PathBuf::from("pricing.yaml"),
            line: 1,
        },
        spec,
    }
}

/// The issue's example: 1,400 traces and 6,200 spans a day (declared); a
/// trace judge with 3 judges (4,200 calls a day) gains a span judge with 2
/// judges (12,400 more), priced $0.10 per 1,000 calls: $37.20 more a month.
pub(crate) fn issue_example() -> Forecast {
    let catalog = catalog();
    let declared = TrafficSpec {
        traces_per_day: 1400,
        spans_per_day: Some(6200),
    };
    let before = settings(vec![scorer(&catalog, "trace_judge")], Vec::new());
    let mut span_judge = scorer(&catalog, "span_judge");
    span_judge.num_judges = Some(2);
    let after = settings(
        vec![scorer(&catalog, "trace_judge"), span_judge],
        Vec::new(),
    );
    let run = run_forecast(
        &log_stream(Traffic::default(), Some(&declared)),
        &catalog,
        &before,
        &after,
    );
    let prices = pricing(PricingSpec {
        currency: None,
        default: Some(Price::Per1000Calls(0.1)),
        models: Default::default(),
    });
    finish(vec![run], Some(&prices)).unwrap_or_else(|| unreachable!())
}

#[test]
fn the_issue_example_adds_12_400_calls_a_day_and_37_a_month() {
    let forecast = issue_example();
    let t = &forecast.totals;
    assert_eq!(
        t.llm_judge_calls_per_day,
        Calls {
            before: 4200,
            after: 16_600
        }
    );
    assert_eq!(t.other_evaluations_per_day, Calls::default());
    assert_eq!(
        t.cost_per_month,
        Some(Cost {
            before: 12.6,
            after: 49.8
        })
    );
    assert_eq!(t.cost_per_month.map(|c| c.change()), Some(37.2));
    assert_eq!(forecast.currency.as_deref(), Some("USD"));
    let run = &forecast.runs.get(0).unwrap_or_else(|| unreachable!());
    assert_eq!(run.traffic.source, TrafficSource::Declared);
    assert_eq!((run.traffic.traces, run.traffic.spans), (1400, 6200));
    assert!(!run.upper_bound);
    let span = run.scorers.iter().find(|s| &*s.scorer == "span_judge");
    let span = span.and_then(|s| s.after.as_ref());
    assert_eq!(
        span.map(|s| (s.unit, s.evaluations, s.llm_judge_calls)),
        Some((Unit::Span, 6200, 12_400))
    );
    assert_eq!(span.and_then(|s| s.judges), Some(2));
}

#[test]
fn counted_traffic_is_spread_over_the_age_and_sampled_by_the_rules() {
    let catalog = catalog();
    // 30 days old: 42,000 traces and 294,000 spans, 1,400 and 9,800 a day.
    let counted = Traffic {
        num_traces: Some(42_000),
        num_spans: Some(294_000),
        age_seconds: Some(30 * 86_400),
    };
    let before = settings(
        vec![
            scorer(&catalog, "span_judge"),
            scorer(&catalog, "code_check"),
        ],
        vec![rule(0.5, false, false)],
    );
    // Judges drop to 10% (a rule for llm scorers); others stay at 50%.
    let after = settings(
        vec![
            scorer(&catalog, "span_judge"),
            scorer(&catalog, "code_check"),
        ],
        vec![rule(0.5, false, false), rule(0.1, false, true)],
    );
    let run = run_forecast(&log_stream(counted, None), &catalog, &before, &after);
    assert_eq!(run.traffic.source, TrafficSource::Counted);
    assert_eq!(run.traffic.age_days, Some(30));
    assert_eq!((run.traffic.traces, run.traffic.spans), (1400, 9800));
    // span_judge (1 judge, llm spans): 4,900 → 980; code_check (llm spans): 4,900 both.
    assert_eq!(
        run.figures.judge_calls(),
        Calls {
            before: 4900,
            after: 980
        }
    );
    assert_eq!(
        run.figures.others(),
        Calls {
            before: 4900,
            after: 4900
        }
    );
    assert!(!run.upper_bound);
}

#[test]
fn a_filtered_rule_makes_an_upper_bound() {
    let catalog = catalog();
    let declared = TrafficSpec {
        traces_per_day: 1000,
        spans_per_day: None,
    };
    let before = settings(Vec::new(), Vec::new());
    let after = settings(
        vec![scorer(&catalog, "trace_judge")],
        vec![rule(0.25, true, false), rule(0.25, true, false)],
    );
    let run = run_forecast(
        &log_stream(Traffic::default(), Some(&declared)),
        &catalog,
        &before,
        &after,
    );
    // 1,000 traces, at most 50% of them, 3 judges: at most 1,500 calls.
    assert_eq!(
        run.figures.judge_calls(),
        Calls {
            before: 0,
            after: 1500
        }
    );
    assert!(run.upper_bound);
    // Declared traces without spans: one span a trace.
    assert_eq!(run.traffic.spans, 1000);
    let forecast = finish(vec![run], None).unwrap_or_else(|| unreachable!());
    assert!(
        forecast
            .assumptions
            .iter()
            .any(|a| a.contains("upper bounds"))
    );
    assert!(forecast.currency.is_none());
    assert!(forecast.totals.cost_per_month.is_none());
}

#[test]
fn luna_code_and_small_model_presets_are_other_evaluations() {
    let catalog = catalog();
    let declared = TrafficSpec {
        traces_per_day: 100,
        spans_per_day: Some(300),
    };
    let after = settings(
        vec![
            scorer(&catalog, "code_check"),
            scorer(&catalog, "luna_check"),
        ],
        Vec::new(),
    );
    let run = run_forecast(
        &log_stream(Traffic::default(), Some(&declared)),
        &catalog,
        &NormMetricSettings::default(),
        &after,
    );
    assert_eq!(run.figures.judge_calls(), Calls::default());
    // Both score llm spans by default: 300 each.
    assert_eq!(
        run.figures.others(),
        Calls {
            before: 0,
            after: 600
        }
    );
}

#[test]
fn a_multimodal_rule_samples_multimodal_scorers_only() {
    let catalog = catalog();
    let declared = TrafficSpec {
        traces_per_day: 100,
        spans_per_day: Some(100),
    };
    let rules = vec![NormSegmentFilter {
        sample_rate: 0.2,
        filter: None,
        llm_scorers: false,
        multimodal_scorers: true,
    }];
    let after = settings(
        vec![scorer(&catalog, "vision"), scorer(&catalog, "span_judge")],
        rules,
    );
    let run = run_forecast(
        &log_stream(Traffic::default(), Some(&declared)),
        &catalog,
        &NormMetricSettings::default(),
        &after,
    );
    // vision: 20 evaluations (1 judge); span_judge: 100, unsampled.
    assert_eq!(
        run.figures.judge_calls(),
        Calls {
            before: 0,
            after: 120
        }
    );
}

#[test]
fn an_experiment_counts_its_records_once_and_unknown_traffic_is_zero() {
    let catalog = catalog();
    let after = settings(vec![scorer(&catalog, "trace_judge")], Vec::new());
    let experiment = RunInput {
        project: "demo",
        run_kind: RunKind::Experiment,
        run: "baseline",
        counted: Traffic {
            num_traces: Some(40),
            num_spans: Some(200),
            age_seconds: Some(90 * 86_400),
        },
        declared: None,
    };
    let run = run_forecast(
        &experiment,
        &catalog,
        &NormMetricSettings::default(),
        &after,
    );
    assert!(matches!(run.figures, Figures::PerRun { .. }));
    // 40 traces, 3 judges: 120 calls, once (the age does not matter).
    assert_eq!(
        run.figures.judge_calls(),
        Calls {
            before: 0,
            after: 120
        }
    );
    let unknown = run_forecast(
        &log_stream(Traffic::default(), None),
        &catalog,
        &NormMetricSettings::default(),
        &after,
    );
    assert_eq!(unknown.traffic.source, TrafficSource::Unknown);
    assert_eq!(unknown.figures.judge_calls(), Calls::default());
    let prices = pricing(PricingSpec {
        currency: Some("EUR".to_owned()),
        default: None,
        models: [("gpt-4o".to_owned(), Price::PerCall(0.01))]
            .into_iter()
            .collect(),
    });
    let forecast = finish(vec![unknown, run], Some(&prices)).unwrap_or_else(|| unreachable!());
    // Ordered by project, kind (log streams first), name.
    assert_eq!(
        forecast.runs.get(0).map(|r| r.run_kind),
        Some(RunKind::LogStream)
    );
    assert_eq!(forecast.totals.experiment_llm_judge_calls.after, 120);
    assert_eq!(
        forecast.totals.experiment_cost,
        Some(Cost {
            before: 0.0,
            after: 1.2
        })
    );
    assert_eq!(
        (forecast.totals.log_streams, forecast.totals.experiments),
        (1, 1)
    );
    assert!(
        forecast
            .assumptions
            .iter()
            .any(|a| a.contains("counted no traffic for 1 run (demo/production)"))
    );
    assert!(
        forecast
            .assumptions
            .iter()
            .any(|a| a.contains("gpt-4o €0.01 per call"))
    );
}

#[test]
fn calls_of_a_model_without_a_price_are_left_out_of_the_cost_and_said() {
    let catalog = catalog();
    let declared = TrafficSpec {
        traces_per_day: 10,
        spans_per_day: Some(10),
    };
    let after = settings(
        vec![
            scorer(&catalog, "trace_judge"),
            scorer(&catalog, "span_judge"),
        ],
        Vec::new(),
    );
    let run = run_forecast(
        &log_stream(Traffic::default(), Some(&declared)),
        &catalog,
        &NormMetricSettings::default(),
        &after,
    );
    let prices = pricing(PricingSpec {
        currency: None,
        default: None,
        models: [("gpt-4o".to_owned(), Price::Per1000Calls(1.0))]
            .into_iter()
            .collect(),
    });
    let forecast = finish(vec![run], Some(&prices)).unwrap_or_else(|| unreachable!());
    // trace_judge: 30 calls a day at $0.001: $0.90 a month; span_judge unpriced.
    assert_eq!(
        forecast.totals.cost_per_month,
        Some(Cost {
            before: 0.0,
            after: 0.9
        })
    );
    assert!(
        forecast
            .assumptions
            .iter()
            .any(|a| a.starts_with("Calls to (no model) have no price"))
    );
}

#[test]
fn no_run_no_forecast_and_the_value_round_trips() {
    assert_eq!(finish(Vec::new(), None), None);
    let forecast = issue_example();
    let json = serde_json::to_value(&forecast).unwrap_or_default();
    assert_eq!(json["format_version"], 1);
    assert_eq!(json["runs"][0]["llm_judge_calls_per_day"]["after"], 16_600);
    assert_eq!(json["runs"][0]["cost_per_month"]["after"], 49.8);
    assert_eq!(json["totals"]["llm_judge_calls_per_day"]["before"], 4200);
    let back: Forecast = serde_json::from_value(json).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, forecast);
}
