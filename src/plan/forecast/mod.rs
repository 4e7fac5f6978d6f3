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
mod run;
mod runs;

pub use run::{RunInput, is_llm_judge, run_forecast};
pub(crate) use runs::Builder;
pub use runs::Runs;

use std::collections::BTreeSet;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::address::RunKind;
use crate::manifest::pricing::PricingSpec;
use crate::manifest::set::Located;

/// Version of the `forecast` object of a plan. Bumped on any incompatible change.
pub const FORECAST_FORMAT_VERSION: u32 = 1;

/// The forecast of a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Forecast {
    /// [`FORECAST_FORMAT_VERSION`].
    pub format_version: u32,
    /// One entry per log stream or experiment whose metric settings change,
    /// ordered by project, kind and name.
    #[schemars(with = "Vec<RunForecast>")]
    pub runs: Runs,
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

/// The forecast of a plan whose runs' forecasts are `runs` (added in any
/// order), priced by `pricing`; `None` when no run's metric settings change.
pub(crate) fn finish(runs: Builder, pricing: Option<&Located<PricingSpec>>) -> Option<Forecast> {
    if runs.len() == 0 {
        return None;
    }
    let mut unpriced: BTreeSet<String> = BTreeSet::new();
    let mut totals = Totals::default();
    let runs = runs.sorted(|run| {
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
    });
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
