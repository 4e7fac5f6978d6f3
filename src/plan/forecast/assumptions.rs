//! The assumptions behind a forecast's figures, each written once with its
//! figures, only those the figures rest on, in a fixed order.

use std::collections::BTreeSet;

use super::display::money;
use super::{Runs, TrafficSource, Unit};
use crate::manifest::pricing::{Price, PricingSpec};
use crate::manifest::set::Located;
use crate::plan::address::RunKind;

/// The assumptions of a forecast of `runs` priced by `pricing`, whose calls
/// of the models `unpriced` have no price.
pub(super) fn of(
    runs: &Runs,
    pricing: Option<&Located<PricingSpec>>,
    unpriced: &BTreeSet<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    let any_side = |test: fn(&super::ScorerSide) -> bool| {
        runs.iter().any(|r| {
            r.scorers
                .iter()
                .flat_map(|s| [&s.before, &s.after])
                .flatten()
                .any(test)
        })
    };
    let sourced = |kind: RunKind, source: TrafficSource| {
        runs.iter()
            .filter(|r| r.run_kind == kind && r.traffic.source == source)
            .count()
    };
    if sourced(RunKind::LogStream, TrafficSource::Counted) > 0 {
        out.push(
            "A log stream's traffic a day is the traces and spans it holds (the service's \
             num_traces and num_spans) spread over its age since created_at (at least one day)."
                .to_owned(),
        );
    }
    if sourced(RunKind::LogStream, TrafficSource::Declared) > 0 {
        out.push(
            "A log stream's `forecast.traces_per_day` in the manifest replaces its counts; its \
             spans a day are its `spans_per_day`, else its traces a day times the spans per \
             trace counted so far (one when none were counted)."
                .to_owned(),
        );
    }
    if runs.iter().any(|r| r.run_kind == RunKind::Experiment) {
        out.push(
            "An experiment scores its records once: its figures are for the run, not a day."
                .to_owned(),
        );
    }
    let unknown: Vec<String> = runs
        .iter()
        .filter(|r| r.traffic.source == TrafficSource::Unknown)
        .map(|r| format!("{}/{}", r.project, r.run))
        .collect();
    if !unknown.is_empty() {
        out.push(format!(
            "The service counted no traffic for {} ({}): its figures are 0; declare \
             `forecast: {{traces_per_day: N}}` on a log stream to forecast it.",
            plural(unknown.len(), "run"),
            unknown.join(", ")
        ));
    }
    out.push(
        "An LLM-judge call is one judge answering for one evaluation: llm scorers and scorers \
         that run on a large model, times their num_judges (the configuration's, else the \
         catalog's default, else 1). Code and luna scorers are other evaluations."
            .to_owned(),
    );
    if any_side(|s| s.unit != Unit::Trace) {
        out.push(
            "A scorer of span node types (llm, chat, tool, retriever, ...) is counted once per \
             span of any type: the counts do not say which spans are of its types, so this is \
             an upper bound. A scorer of trace or session node types is counted once per trace."
                .to_owned(),
        );
    }
    out.push(
        "A scorer is sampled at the rate of the segment filters that select it: those for its \
         kind (llm_scorers, multimodal_scorers) when there are any, else those for every \
         scorer; with none, everything is scored."
            .to_owned(),
    );
    if runs.iter().any(|r| r.upper_bound) {
        out.push(
            "A segment filter with a `filter` counts as if the filter matched everything (its \
             selectivity cannot be known), and the rates of such rules add up: figures marked \
             ≤ are upper bounds."
                .to_owned(),
        );
    }
    if let Some(pricing) = pricing {
        let currency = pricing.spec.currency();
        let price = |p: &Price| match p {
            Price::PerCall(x) => format!("{} per call", money(currency, *x)),
            Price::Per1000Calls(x) => format!("{} per 1,000 calls", money(currency, *x)),
        };
        let mut prices: Vec<String> = pricing
            .spec
            .models
            .iter()
            .map(|(model, p)| format!("{model} {}", price(p)))
            .collect();
        if let Some(default) = &pricing.spec.default {
            prices.push(format!("any other model {}", price(default)));
        }
        out.push(format!(
            "Prices from the Pricing document at {}: {}. A month is 30 days.",
            pricing.origin,
            if prices.is_empty() {
                "none".to_owned()
            } else {
                prices.join("; ")
            }
        ));
        if !unpriced.is_empty() {
            let models: Vec<&str> = unpriced.iter().map(String::as_str).collect();
            out.push(format!(
                "Calls to {} have no price (no entry under `models` and no `default`): \
                 they are not in the costs.",
                models.join(", ")
            ));
        }
    }
    out
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
