//! The judge-call forecast in words, shared by the text and markdown
//! renderers: the headline lines ("LLM-judge calls: 4,200 → 16,600 a day,
//! +12,400 (≈ +$37 a month at the repo's prices)"), a run's figures and a
//! scorer's, and the text format's "Forecast" block. A drift report words
//! the same figures as live against declared.

use std::fmt::Write as _;

use super::Mode;
use super::style::{Painter, Role};
use super::values::sanitize;
use crate::plan::RunKind;
use crate::plan::forecast::display::{change, count, money, money_change, percent};
use crate::plan::forecast::{
    Calls, Cost, Forecast, RunForecast, ScorerForecast, ScorerSide, TrafficSource, Unit,
};

/// "a day" or "once": what a figure counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Per {
    /// A log stream's figures.
    Day,
    /// An experiment's.
    Run,
}

impl Per {
    fn of(kind: RunKind) -> Per {
        match kind {
            RunKind::LogStream => Per::Day,
            RunKind::Experiment => Per::Run,
        }
    }

    fn calls(self) -> &'static str {
        match self {
            Per::Day => " a day",
            Per::Run => " once",
        }
    }

    fn money(self) -> &'static str {
        match self {
            Per::Day => " a month",
            Per::Run => "",
        }
    }
}

/// `4,200 → 16,600 a day, +12,400` (a drift report: `4,200 live → 16,600
/// declared a day, +12,400`); `≤` before the figures of an upper bound.
pub(crate) fn calls(c: Calls, per: Per, (before, after): (bool, bool), mode: Mode) -> String {
    let bound = |upper: bool, n: u64| if upper && n > 0 { "≤ " } else { "" };
    let (live, wanted) = match mode {
        Mode::Plan => ("", ""),
        Mode::Drift => (" live", " declared"),
    };
    format!(
        "{}{}{live} → {}{}{wanted}{}, {}",
        bound(before, c.before),
        count(c.before),
        bound(after, c.after),
        count(c.after),
        per.calls(),
        change(c.change())
    )
}

/// ` (≈ +$37 a month at the repo's prices)`.
fn cost_suffix(cost: Option<Cost>, currency: Option<&str>, per: Per) -> String {
    match (cost, currency) {
        (Some(cost), Some(currency)) => format!(
            " (≈ {}{} at the repo's prices)",
            money_change(currency, cost.change()),
            per.money()
        ),
        _ => String::new(),
    }
}

/// Whether the before and after figures of `runs`' LLM-judge calls
/// (`judge`) or other evaluations are upper bounds: a scorer of that kind
/// scores a share set by a filtered rule.
pub(crate) fn bounds<R: std::borrow::Borrow<RunForecast>>(
    runs: impl Iterator<Item = R> + Clone,
    judge: bool,
) -> (bool, bool) {
    let bound = |pick: fn(&ScorerForecast) -> Option<&ScorerSide>| {
        runs.clone().any(|r| {
            r.borrow()
                .scorers
                .iter()
                .filter_map(pick)
                .any(|s| s.llm_judge == judge && s.upper_bound && s.evaluations > 0)
        })
    };
    (bound(|s| s.before.as_ref()), bound(|s| s.after.as_ref()))
}

/// The headline lines: LLM-judge calls and other evaluations of the log
/// streams (a day), then of the experiments (once), each only when the
/// forecast covers such runs. The first is the PR comment's line.
pub(crate) fn headlines(forecast: &Forecast, mode: Mode) -> Vec<String> {
    let t = &forecast.totals;
    let currency = forecast.currency.as_deref();
    let bound = |kind: RunKind, judge: bool| {
        bounds(
            forecast.runs.iter().filter(move |r| r.run_kind == kind),
            judge,
        )
    };
    let mut out = Vec::new();
    if t.log_streams > 0 {
        out.push(format!(
            "LLM-judge calls: {}{}",
            calls(
                t.llm_judge_calls_per_day,
                Per::Day,
                bound(RunKind::LogStream, true),
                mode
            ),
            cost_suffix(t.cost_per_month, currency, Per::Day)
        ));
        out.push(format!(
            "Other evaluations: {}",
            calls(
                t.other_evaluations_per_day,
                Per::Day,
                bound(RunKind::LogStream, false),
                mode
            )
        ));
    }
    if t.experiments > 0 {
        out.push(format!(
            "LLM-judge calls of experiments: {}{}",
            calls(
                t.experiment_llm_judge_calls,
                Per::Run,
                bound(RunKind::Experiment, true),
                mode
            ),
            cost_suffix(t.experiment_cost, currency, Per::Run)
        ));
        out.push(format!(
            "Other evaluations of experiments: {}",
            calls(
                t.experiment_other_evaluations,
                Per::Run,
                bound(RunKind::Experiment, false),
                mode
            )
        ));
    }
    out
}

/// A run's traffic: `1,400 traces and 9,800 spans a day (counted over 30
/// days)`, `declared`, or that nothing was counted.
pub(crate) fn traffic(run: &RunForecast) -> String {
    let t = &run.traffic;
    let per = Per::of(run.run_kind);
    let figures = format!(
        "{} traces and {} spans{}",
        count(t.traces),
        count(t.spans),
        match per {
            Per::Day => " a day",
            Per::Run => "",
        }
    );
    match (t.source, t.age_days) {
        (TrafficSource::Counted, Some(days)) => format!(
            "{figures} (counted over {} day{})",
            count(days),
            if days == 1 { "" } else { "s" }
        ),
        (TrafficSource::Counted, None) => format!("{figures} (counted)"),
        (TrafficSource::Declared, _) => format!("{figures} (declared in the manifest)"),
        (TrafficSource::Unknown, _) => "no traffic counted".to_owned(),
    }
}

/// A run's figures on one line: `LLM-judge calls 4,200 → 16,600 a day,
/// +12,400; other evaluations 0 → 1,400 a day, +1,400; cost $12 → $49 a month`.
pub(crate) fn run_figures(run: &RunForecast, currency: Option<&str>, mode: Mode) -> String {
    let per = Per::of(run.run_kind);
    let f = &run.figures;
    let mut out = format!(
        "LLM-judge calls {}; other evaluations {}",
        calls(
            f.judge_calls(),
            per,
            bounds(std::iter::once(run), true),
            mode
        ),
        calls(f.others(), per, bounds(std::iter::once(run), false), mode)
    );
    if let (Some(cost), Some(currency)) = (f.cost(), currency) {
        let _ = write!(out, "; cost {}", cost_figures(cost, currency, per));
    }
    out
}

/// `$12 → $49 a month, +$37`.
pub(crate) fn cost_figures(cost: Cost, currency: &str, per: Per) -> String {
    format!(
        "{} → {}{}, {}",
        money(currency, cost.before),
        money(currency, cost.after),
        per.money(),
        money_change(currency, cost.change())
    )
}

/// The per-run `Per`.
pub(crate) fn per(run: &RunForecast) -> Per {
    Per::of(run.run_kind)
}

/// One side of a scorer: `2,940 calls (10% of spans × 3 judges,
/// gpt-4.1-mini)`, `1,400 evaluations (100% of traces)`, or `off`.
pub(crate) fn side(side: Option<&ScorerSide>) -> String {
    let Some(s) = side else {
        return "off".to_owned();
    };
    let bound = if s.upper_bound && s.evaluations > 0 {
        "≤ "
    } else {
        ""
    };
    let unit = match s.unit {
        Unit::Trace => "traces",
        Unit::Span => "spans",
        Unit::TraceAndSpan => "traces and spans",
    };
    if s.llm_judge {
        let judges = s.judges.unwrap_or(1);
        let model = s
            .model_name
            .as_deref()
            .map(|m| format!(", {}", sanitize(m)))
            .unwrap_or_default();
        format!(
            "{bound}{} calls ({bound}{} of {unit} × {judges} judge{}{model})",
            count(s.llm_judge_calls),
            percent(s.share),
            if judges == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "{bound}{} evaluations ({bound}{} of {unit})",
            count(s.evaluations),
            percent(s.share)
        )
    }
}

/// The "Forecast" block of a text plan: the headlines, each run with its
/// traffic, figures and scorers, and the assumptions, once; handed to
/// `emit` in pieces that end at a line break (a run at a time).
pub(crate) fn text_block(forecast: &Forecast, mode: Mode, p: Painter, emit: &mut dyn FnMut(&str)) {
    let mut text = String::new();
    let out = &mut text;
    let head = match mode {
        Mode::Plan => "Forecast (live settings → settings after this plan):",
        Mode::Drift => "Forecast (live settings → declared settings):",
    };
    let _ = writeln!(out, "\n{}", p.paint(Role::Strong, head));
    for line in headlines(forecast, mode) {
        let _ = writeln!(out, "  {line}");
    }
    let currency = forecast.currency.as_deref();
    for run in &forecast.runs {
        let address = format!(
            "project[{}].{}[{}]",
            sanitize(&run.project),
            run.run_kind.as_str(),
            sanitize(&run.run)
        );
        let _ = writeln!(
            out,
            "\n  {}: {}",
            p.paint(Role::Strong, &address),
            traffic(&run)
        );
        let _ = writeln!(out, "    {}", run_figures(&run, currency, mode));
        for scorer in &run.scorers {
            let before = side(scorer.before.as_ref());
            let after = side(scorer.after.as_ref());
            let line = if before == after {
                format!("{}: {after}", sanitize(&scorer.scorer))
            } else {
                format!("{}: {before} → {after}", sanitize(&scorer.scorer))
            };
            let role = match (&scorer.before, &scorer.after) {
                (None, Some(_)) => Role::Add,
                (Some(_), None) => Role::Remove,
                _ if before != after => Role::Change,
                _ => Role::Dim,
            };
            let _ = writeln!(out, "      {}", p.paint(role, &line));
        }
        emit(out);
        out.clear();
    }
    let _ = writeln!(out, "\n  Assumptions:");
    for assumption in &forecast.assumptions {
        let _ = writeln!(out, "    - {}", sanitize(assumption));
    }
    emit(out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::forecast::tests::issue_example;

    #[test]
    fn the_comment_line_is_written_as_the_issue_shows_it() {
        let forecast = issue_example();
        let lines = headlines(&forecast, Mode::Plan);
        assert_eq!(
            lines[0],
            "LLM-judge calls: 4,200 → 16,600 a day, +12,400 (≈ +$37 a month at the repo's prices)"
        );
        assert_eq!(lines[1], "Other evaluations: 0 → 0 a day, ±0");
        assert_eq!(lines.len(), 2);
        let drift = headlines(&forecast, Mode::Drift);
        assert_eq!(
            drift[0],
            "LLM-judge calls: 4,200 live → 16,600 declared a day, +12,400 (≈ +$37 a month at the repo's prices)"
        );
    }

    #[test]
    fn a_scorer_side_says_its_share_judges_and_model() {
        let forecast = issue_example();
        let run = &forecast.runs.get(0).unwrap_or_else(|| unreachable!());
        let trace = run.scorers.iter().find(|s| &*s.scorer == "trace_judge");
        assert_eq!(
            side(trace.and_then(|s| s.after.as_ref())),
            "4,200 calls (100% of traces × 3 judges, gpt-4o)"
        );
        assert_eq!(side(None), "off");
        assert_eq!(
            traffic(run),
            "1,400 traces and 6,200 spans a day (declared in the manifest)"
        );
    }
}
