//! A run's forecast, computed: its traffic (counted or declared), and for
//! each scorer before and after, whether it is an LLM judge, what it scores,
//! the share its sampling rules give it, its judges and model, and the
//! evaluations and calls that make.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::arithmetic::{self, Rule, Share};
use super::{
    Calls, Figures, RunForecast, ScorerForecast, ScorerSide, TrafficSource, TrafficUsed, Unit,
};
use crate::api::{ModelType, ScorerType};
use crate::manifest::types::TrafficSpec;
use crate::plan::address::RunKind;
use crate::state::metric_settings::{NormMetricSettings, NormScorer};
use crate::state::{Catalog, Traffic};

/// The node types a scorer scores once per trace (a session scorer is
/// counted per trace: an upper bound). Every other node type is a span's.
const TRACE_NODE_TYPES: [&str; 2] = ["session", "trace"];

/// The node type a scorer scores when neither its configuration nor the
/// catalog says (the service's default: the llm/chat node type).
const DEFAULT_NODE_TYPE: &str = "llm";

/// What the forecast of a run is computed from.
pub struct RunInput<'a> {
    /// The project, as the manifests name it.
    pub project: &'a str,
    /// Log stream or experiment.
    pub run_kind: RunKind,
    /// The run, as the manifests name it.
    pub run: &'a str,
    /// What the run search counted.
    pub counted: Traffic,
    /// The manifest's `forecast` (log streams).
    pub declared: Option<&'a TrafficSpec>,
}

/// The forecast of a run whose metric settings go from `before` to `after`
/// (its cost is added once the prices are known: [`super::finish`]).
pub fn run_forecast(
    input: &RunInput<'_>,
    catalog: &Catalog,
    before: &NormMetricSettings,
    after: &NormMetricSettings,
) -> RunForecast {
    let traffic = traffic_used(input);
    let (traces, spans) = traffic.1;
    let sides = |settings: &NormMetricSettings| {
        let rules: Vec<Rule> = settings
            .segment_filters
            .iter()
            .map(|f| Rule {
                sample_rate: f.sample_rate,
                filtered: f.filter.is_some(),
                llm_scorers: f.llm_scorers,
                multimodal_scorers: f.multimodal_scorers,
            })
            .collect();
        settings
            .scorers
            .iter()
            .map(|(name, scorer)| (name.clone(), side(catalog, scorer, &rules, traces, spans)))
            .collect::<std::collections::BTreeMap<String, ScorerSide>>()
    };
    let mut before = sides(before);
    let mut after = sides(after);
    let names: BTreeSet<String> = before.keys().chain(after.keys()).cloned().collect();
    let scorers: Vec<ScorerForecast> = names
        .into_iter()
        .map(|name| ScorerForecast {
            before: before.remove(&name),
            after: after.remove(&name),
            scorer: Arc::from(name),
        })
        .collect();
    let sum = |judge: bool, pick: fn(&ScorerForecast) -> Option<&ScorerSide>| {
        scorers
            .iter()
            .filter_map(pick)
            .filter(|s| s.llm_judge == judge)
            .map(|s| {
                if judge {
                    s.llm_judge_calls
                } else {
                    s.evaluations
                }
            })
            .fold(0u64, u64::saturating_add)
    };
    let calls = |judge: bool| Calls {
        before: sum(judge, |s| s.before.as_ref()),
        after: sum(judge, |s| s.after.as_ref()),
    };
    let figures = match input.run_kind {
        RunKind::LogStream => Figures::PerDay {
            llm_judge_calls_per_day: calls(true),
            other_evaluations_per_day: calls(false),
            cost_per_month: None,
        },
        RunKind::Experiment => Figures::PerRun {
            llm_judge_calls_per_run: calls(true),
            other_evaluations_per_run: calls(false),
            cost_per_run: None,
        },
    };
    let upper_bound = scorers.iter().any(|s| {
        [&s.before, &s.after]
            .into_iter()
            .flatten()
            .any(|side| side.upper_bound && side.evaluations > 0)
    });
    RunForecast {
        project: Arc::from(input.project),
        run_kind: input.run_kind,
        run: input.run.to_owned(),
        traffic: traffic.0,
        figures,
        upper_bound,
        scorers,
    }
}

/// The traffic a run's figures assume, and its traces and spans (a day for
/// a log stream, in all for an experiment) unrounded.
fn traffic_used(input: &RunInput<'_>) -> (TrafficUsed, (f64, f64)) {
    let c = input.counted;
    let used = |source, traces: f64, spans: f64, age_days| {
        (
            TrafficUsed {
                source,
                traces: arithmetic::whole(traces),
                spans: arithmetic::whole(spans),
                age_days,
            },
            (traces, spans),
        )
    };
    match (input.run_kind, input.declared) {
        (RunKind::LogStream, Some(declared)) => {
            let counted = c.num_traces.zip(c.num_spans);
            let spans = arithmetic::declared_spans(
                declared.traces_per_day,
                declared.spans_per_day,
                counted,
            );
            used(
                TrafficSource::Declared,
                declared.traces_per_day as f64,
                spans,
                None,
            )
        }
        (RunKind::LogStream, None) => match (c.num_traces, c.age_seconds) {
            (Some(traces), Some(age)) => {
                let spans = c.num_spans.unwrap_or(traces);
                let days = arithmetic::whole((age as f64 / 86_400.0).max(arithmetic::MIN_AGE_DAYS));
                used(
                    TrafficSource::Counted,
                    arithmetic::per_day(traces, age),
                    arithmetic::per_day(spans, age),
                    Some(days),
                )
            }
            _ => used(TrafficSource::Unknown, 0.0, 0.0, None),
        },
        (RunKind::Experiment, _) => match c.num_traces {
            Some(traces) => {
                let spans = c.num_spans.unwrap_or(traces);
                used(TrafficSource::Counted, traces as f64, spans as f64, None)
            }
            None => used(TrafficSource::Unknown, 0.0, 0.0, None),
        },
    }
}

/// Whether a scorer is an LLM judge: an llm scorer, or a preset (or custom
/// scorer) that runs on a large model; code and luna scorers are not.
pub fn is_llm_judge(scorer: &NormScorer, catalog: &Catalog) -> bool {
    let entry = catalog.by_id(&scorer.id);
    match scorer.scorer_type {
        ScorerType::Llm => true,
        ScorerType::Code | ScorerType::Luna => false,
        _ => match scorer
            .model_type
            .as_ref()
            .or_else(|| entry.and_then(|e| e.model_type.as_ref()))
        {
            Some(ModelType::Llm) => true,
            Some(_) => false,
            None => scorer.model_name.is_some() || entry.is_some_and(|e| e.model_name.is_some()),
        },
    }
}

fn side(
    catalog: &Catalog,
    scorer: &NormScorer,
    rules: &[Rule],
    traces: f64,
    spans: f64,
) -> ScorerSide {
    let entry = catalog.by_id(&scorer.id);
    let llm_judge = is_llm_judge(scorer, catalog);
    let multimodal =
        !scorer.multimodal_capabilities.is_empty() || entry.is_some_and(|e| e.multimodal);
    let node_types: Vec<&str> = if !scorer.scoreable_node_types.is_empty() {
        scorer
            .scoreable_node_types
            .iter()
            .map(String::as_str)
            .collect()
    } else {
        match entry {
            Some(e) if !e.scoreable_node_types.is_empty() => {
                e.scoreable_node_types.iter().map(String::as_str).collect()
            }
            _ => vec![DEFAULT_NODE_TYPE],
        }
    };
    let per_trace = node_types.iter().any(|t| TRACE_NODE_TYPES.contains(t));
    let per_span = node_types.iter().any(|t| !TRACE_NODE_TYPES.contains(t));
    let unit = match (per_trace, per_span) {
        (true, true) => Unit::TraceAndSpan,
        (true, false) => Unit::Trace,
        _ => Unit::Span,
    };
    let Share { rate, upper_bound } = arithmetic::share(rules, llm_judge, multimodal);
    let evaluations = arithmetic::evaluations(
        arithmetic::units(per_trace, per_span, traces, spans),
        Share { rate, upper_bound },
    );
    let judges = llm_judge.then(|| {
        scorer
            .num_judges
            .or_else(|| entry.and_then(|e| e.num_judges))
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(1)
            .max(1)
    });
    let model_name = if llm_judge {
        scorer
            .model_name
            .as_deref()
            .or_else(|| entry.and_then(|e| e.model_name.as_deref()))
            .map(Arc::from)
    } else {
        None
    };
    ScorerSide {
        llm_judge,
        unit,
        share: rate,
        upper_bound,
        judges,
        model_name,
        evaluations: arithmetic::whole(evaluations),
        llm_judge_calls: judges.map_or(0, |j| {
            arithmetic::whole(arithmetic::judge_calls(evaluations, j))
        }),
    }
}
