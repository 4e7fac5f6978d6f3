//! The judge-call forecast in a pull-request comment: its headline line
//! under the summary ("LLM-judge calls: 4,200 → 16,600 a day, +12,400
//! (≈ +$37 a month at the repo's prices)"), and in the details a table per
//! project (one row per log stream or experiment) with the assumptions
//! behind it, folded to its share of the comment's budget.

use std::fmt::Write as _;

use super::{Doc, MARKDOWN_BUDGET, code, escape};
use crate::plan::forecast::Forecast;
use crate::render::Mode;
use crate::render::entries::plural;
use crate::render::forecast::{bounds, cost_figures, headlines, per, traffic};

/// The part of the comment the forecast's tables may fill.
const FORECAST_SHARE: usize = MARKDOWN_BUDGET / 6;

/// The line under the summary: the log streams' LLM-judge calls, else the
/// experiments'.
pub(super) fn headline(doc: &mut Doc, forecast: &Forecast, mode: Mode) {
    if let Some(first) = headlines(forecast, mode).first() {
        let _ = write!(doc.out, "{}\n\n", escape(first));
    }
}

/// The forecast's tables, one per project, and its assumptions, in a
/// folded section.
pub(super) fn details(doc: &mut Doc, forecast: &Forecast, mode: Mode) {
    let limit = (doc.out.len() + FORECAST_SHARE).min(MARKDOWN_BUDGET);
    doc.push("<details><summary>Judge-call forecast</summary>\n\n");
    for line in headlines(forecast, mode) {
        let _ = writeln!(doc.out, "- {}", escape(&line));
    }
    let currency = forecast.currency.as_deref();
    let mut rows: Vec<(usize, String)> = Vec::new();
    let mut project: Option<std::sync::Arc<str>> = None;
    for run in &forecast.runs {
        let mut text = String::new();
        if project.as_deref() != Some(&*run.project) {
            project = Some(std::sync::Arc::clone(&run.project));
            let _ = write!(
                text,
                "\n**Project {}**\n\n| Run | Traffic | LLM-judge calls | Other evaluations |{}\n|:--|:--|:--|:--|{}\n",
                code(&run.project, false),
                if currency.is_some() { " Cost |" } else { "" },
                if currency.is_some() { ":--|" } else { "" },
            );
        }
        let f = &run.figures;
        let kind = match run.run_kind {
            crate::plan::RunKind::LogStream => "log stream",
            crate::plan::RunKind::Experiment => "experiment",
        };
        let per = per(&run);
        let calls = |c, judge| {
            crate::render::forecast::calls(c, per, bounds(std::iter::once(&run), judge), mode)
        };
        let _ = write!(
            text,
            "| {kind} {} | {} | {} | {} |",
            code(&run.run, true),
            escape(&traffic(&run)),
            escape(&calls(f.judge_calls(), true)),
            escape(&calls(f.others(), false)),
        );
        if let Some(currency) = currency {
            let cost = f
                .cost()
                .map(|c| escape(&cost_figures(c, currency, per)))
                .unwrap_or_default();
            let _ = write!(text, " {cost} |");
        }
        text.push('\n');
        rows.push((rows.len(), text));
    }
    let left_out = doc.push_while_within(&rows, limit, |(_, text)| text.clone());
    if left_out > 0 {
        let _ = writeln!(
            doc.out,
            "\n… {left_out} more run{} not shown; `evalctl plan -o json` has every figure (`forecast`).",
            plural(left_out)
        );
    }
    doc.push("\nAssumptions:\n\n");
    let assumptions: Vec<&String> = forecast.assumptions.iter().collect();
    doc.push_while_within(&assumptions, MARKDOWN_BUDGET, |a| {
        format!("- {}\n", escape(a))
    });
    doc.push("\n</details>\n\n");
}
