//! The judge-call forecast: for each log stream and experiment whose metric
//! settings a plan changes, how many scorer evaluations a day the settings
//! cause before and after, split into LLM-judge calls (llm scorers and
//! presets that run on a model, times their judges) and other evaluations
//! (code, luna), and what the calls cost a month at the repo's prices
//! (`kind: Pricing`, [`crate::manifest::pricing`]).
//!
//! Pure, like the rest of the planner: the traffic comes with live state
//! ([`crate::state::Traffic`], counted by the run search evalctl already
//! makes) or from the manifest (`forecast: {traces_per_day: ..}` on a log
//! stream), the scorers' kinds, judges, models and node types from their
//! configuration and the catalog, the shares from the sampling rules. The
//! numbers themselves are [`arithmetic`]'s. The forecast is a plain value in
//! the plan ([`Forecast`], versioned by [`FORECAST_FORMAT_VERSION`]): the
//! renderers show it and policies read it. A plan that changes no metric
//! settings has none.

pub mod arithmetic;
mod assumptions;
pub mod display;

use std::collections::BTreeSet;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use self::arithmetic::{Rule, Share};
use super::address::RunKind;
use crate::api::{ModelType, ScorerType};
use crate::manifest::pricing::PricingSpec;
use crate::manifest::set::Located;
use crate::manifest::types::TrafficSpec;
use crate::state::metric_settings::{NormMetricSettings, NormScorer};
use crate::state::{Catalog, Traffic};

/// Version of the `forecast` object of a plan. Bumped on any incompatible change.
pub const FORECAST_FORMAT_VERSION: u32 = 1;

/// The node types a scorer scores once per trace (a session scorer is
/// counted per trace: an upper bound). Every other node type is a span's.
const TRACE_NODE_TYPES: [&str; 2] = ["session", "trace"];

/// The node type a scorer scores when neither its configuration nor the
/// catalog says (the service's default: the llm/chat node type).
const DEFAULT_NODE_TYPE: &str = "llm";

/// The forecast of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Forecast {
    /// [`FORECAST_FORMAT_VERSION`].
    pub format_version: u32,
    /// One entry per log stream or experiment whose metric settings change,
    /// ordered by project, kind and name.
    pub runs: Vec<RunForecast>,
    /// The sums over `runs`.
    pub totals: Totals,
    /// The currency of the costs, when the repo has prices (`kind: Pricing`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// Every assumption behind the figures, once each, in a fixed order.
    pub assumptions: Vec<String>,
}

/// Before and after, as counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Calls {
    /// With the live settings.
    pub before: u64,
    /// With the settings the plan makes.
    pub after: u64,
}

impl Calls {
    /// `after - before`.
    pub fn change(&self) -> i128 {
        i128::from(self.after) - i128::from(self.before)
    }

    fn add(&mut self, other: Calls) {
        self.before = self.before.saturating_add(other.before);
        self.after = self.after.saturating_add(other.after);
    }
}

/// Before and after, as money (rounded to cents).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Cost {
    /// With the live settings.
    pub before: f64,
    /// With the settings the plan makes.
    pub after: f64,
}

impl Cost {
    /// `after - before`.
    pub fn change(&self) -> f64 {
        arithmetic::cents(self.after - self.before)
    }

    fn add(&mut self, other: Cost) {
        self.before = arithmetic::cents(self.before + other.before);
        self.after = arithmetic::cents(self.after + other.after);
    }
}

/// A run's figures: a day's for a log stream, a run's for an experiment
/// (which scores its records once).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Figures {
    /// A log stream's.
    PerDay {
        /// LLM-judge calls a day.
        llm_judge_calls_per_day: Calls,
        /// Other evaluations (code, luna) a day.
        other_evaluations_per_day: Calls,
        /// What the judge calls cost a month, when the repo has prices.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_per_month: Option<Cost>,
    },
    /// An experiment's.
    PerRun {
        /// LLM-judge calls, once.
        llm_judge_calls_per_run: Calls,
        /// Other evaluations (code, luna), once.
        other_evaluations_per_run: Calls,
        /// What the judge calls cost, once, when the repo has prices.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_per_run: Option<Cost>,
    },
}

impl Figures {
    /// LLM-judge calls (a day, or once).
    pub fn judge_calls(&self) -> Calls {
        match self {
            Figures::PerDay {
                llm_judge_calls_per_day: c,
                ..
            }
            | Figures::PerRun {
                llm_judge_calls_per_run: c,
                ..
            } => *c,
        }
    }

    /// Other evaluations (a day, or once).
    pub fn others(&self) -> Calls {
        match self {
            Figures::PerDay {
                other_evaluations_per_day: c,
                ..
            }
            | Figures::PerRun {
                other_evaluations_per_run: c,
                ..
            } => *c,
        }
    }

    /// The cost (a month, or once), when priced.
    pub fn cost(&self) -> Option<Cost> {
        match self {
            Figures::PerDay { cost_per_month, .. } => *cost_per_month,
            Figures::PerRun { cost_per_run, .. } => *cost_per_run,
        }
    }

    fn set_cost(&mut self, cost: Cost) {
        match self {
            Figures::PerDay { cost_per_month, .. } => *cost_per_month = Some(cost),
            Figures::PerRun { cost_per_run, .. } => *cost_per_run = Some(cost),
        }
    }
}

/// The sums of a forecast: log streams a day, experiments once.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Totals {
    /// LLM-judge calls a day, of the log streams.
    pub llm_judge_calls_per_day: Calls,
    /// Other evaluations a day, of the log streams.
    pub other_evaluations_per_day: Calls,
    /// What the log streams' judge calls cost a month, when priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_per_month: Option<Cost>,
    /// LLM-judge calls of the experiments, once.
    pub experiment_llm_judge_calls: Calls,
    /// Other evaluations of the experiments, once.
    pub experiment_other_evaluations: Calls,
    /// What the experiments' judge calls cost, once, when priced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment_cost: Option<Cost>,
    /// How many log streams the forecast covers.
    pub log_streams: usize,
    /// How many experiments the forecast covers.
    pub experiments: usize,
}

/// Where a run's traffic figure comes from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TrafficSource {
    /// The service's counts (`num_traces`, `num_spans`; a log stream's over its age).
    Counted,
    /// The manifest's `forecast` on the log stream.
    Declared,
    /// Neither: the service counted nothing (figures are 0).
    Unknown,
}

/// The traffic a run's figures assume.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrafficUsed {
    /// Where it comes from.
    pub source: TrafficSource,
    /// Traces: a day for a log stream, all of them for an experiment.
    pub traces: u64,
    /// Spans, likewise.
    pub spans: u64,
    /// The log stream's age in days its counts are spread over (at least
    /// one), when counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age_days: Option<u64>,
}

/// What a scorer scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Each trace (trace and session node types).
    Trace,
    /// Each span (every other node type).
    Span,
    /// Each trace and each span.
    TraceAndSpan,
}

/// One side (before or after) of a scorer of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScorerSide {
    /// Whether it is an LLM judge (llm scorers, presets that run on a model).
    pub llm_judge: bool,
    /// What it scores.
    pub unit: Unit,
    /// The share of the traffic it scores (0 to 1).
    pub share: f64,
    /// Whether `share` is an upper bound (a sampling rule with a filter).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub upper_bound: bool,
    /// Its judges (LLM judges only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judges: Option<u64>,
    /// The model its judges run on, when known (LLM judges only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name: Option<Arc<str>>,
    /// Its evaluations (a day, or once).
    pub evaluations: u64,
    /// Its LLM-judge calls: evaluations times judges (0 for others).
    pub llm_judge_calls: u64,
}

/// A scorer of a run, before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ScorerForecast {
    /// The scorer, as the plan shows it.
    pub scorer: Arc<str>,
    /// Live (absent: not enabled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<ScorerSide>,
    /// After the plan (absent: disabled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<ScorerSide>,
}

/// The forecast of one log stream or experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunForecast {
    /// The project, as the manifests name it.
    pub project: Arc<str>,
    /// Log stream or experiment.
    pub run_kind: RunKind,
    /// The run, as the manifests name it.
    pub run: String,
    /// The traffic assumed.
    pub traffic: TrafficUsed,
    /// Calls and evaluations before and after (and cost, when priced).
    #[serde(flatten)]
    pub figures: Figures,
    /// Whether a figure is an upper bound (a sampling rule with a filter).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub upper_bound: bool,
    /// Its scorers, by name.
    pub scorers: Vec<ScorerForecast>,
}

impl RunForecast {
    /// Holds its project, scorer and model names once with equal ones
    /// `names` has: a forecast of 10,000 runs names the same few thousands
    /// of times.
    pub fn share_names(&mut self, names: &mut BTreeSet<Arc<str>>) {
        let mut share = |name: &mut Arc<str>| match names.get(name) {
            Some(held) => *name = Arc::clone(held),
            None => {
                names.insert(Arc::clone(name));
            }
        };
        share(&mut self.project);
        for scorer in &mut self.scorers {
            share(&mut scorer.scorer);
            for side in [&mut scorer.before, &mut scorer.after]
                .into_iter()
                .flatten()
            {
                if let Some(model) = &mut side.model_name {
                    share(model);
                }
            }
        }
    }
}

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
/// (its cost is added once the prices are known: [`finish`]).
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

/// The forecast of a plan whose runs' forecasts are `runs` (in any order),
/// priced by `pricing`; `None` when no run's metric settings change.
pub fn finish(
    mut runs: Vec<RunForecast>,
    pricing: Option<&Located<PricingSpec>>,
) -> Option<Forecast> {
    if runs.is_empty() {
        return None;
    }
    runs.sort_by(|a, b| (&a.project, a.run_kind, &a.run).cmp(&(&b.project, b.run_kind, &b.run)));
    let mut unpriced: BTreeSet<String> = BTreeSet::new();
    let mut totals = Totals::default();
    for run in &mut runs {
        if let Some(pricing) = pricing {
            let a_month = run.run_kind == RunKind::LogStream;
            let mut cost = Cost::default();
            for scorer in &run.scorers {
                for (side, slot) in [
                    (&scorer.before, &mut cost.before),
                    (&scorer.after, &mut cost.after),
                ] {
                    let Some(side) = side.as_ref().filter(|s| s.llm_judge_calls > 0) else {
                        continue;
                    };
                    match pricing.spec.per_call(side.model_name.as_deref()) {
                        Some(price) => {
                            *slot += arithmetic::cost(side.llm_judge_calls, price, a_month);
                        }
                        None => {
                            let model = side.model_name.as_deref().unwrap_or("(no model)");
                            unpriced.insert(model.to_owned());
                        }
                    }
                }
            }
            cost.before = arithmetic::cents(cost.before);
            cost.after = arithmetic::cents(cost.after);
            run.figures.set_cost(cost);
        }
        let priced = |total: &mut Option<Cost>, cost: Option<Cost>| {
            if let Some(cost) = cost {
                total.get_or_insert_with(Cost::default).add(cost);
            }
        };
        match run.run_kind {
            RunKind::LogStream => {
                totals.log_streams += 1;
                totals
                    .llm_judge_calls_per_day
                    .add(run.figures.judge_calls());
                totals.other_evaluations_per_day.add(run.figures.others());
                priced(&mut totals.cost_per_month, run.figures.cost());
            }
            RunKind::Experiment => {
                totals.experiments += 1;
                totals
                    .experiment_llm_judge_calls
                    .add(run.figures.judge_calls());
                totals
                    .experiment_other_evaluations
                    .add(run.figures.others());
                priced(&mut totals.experiment_cost, run.figures.cost());
            }
        }
    }
    let assumptions = assumptions::of(&runs, pricing, &unpriced);
    Some(Forecast {
        format_version: FORECAST_FORMAT_VERSION,
        runs,
        totals,
        currency: pricing.map(|p| p.spec.currency().to_owned()),
        assumptions,
    })
}

#[cfg(test)]
pub(crate) mod tests;
