//! The forecast's arithmetic, and nothing else: numbers in, numbers out, no
//! I/O, no service types. Every rule the forecast applies to turn counts,
//! sampling rules and judges into calls a day and money a month is one
//! function here, pinned by the tests below on literals.

/// Days in a month, for costs a month.
pub const DAYS_A_MONTH: f64 = 30.0;

/// The shortest age a log stream's counts are spread over: a stream created
/// an hour ago holds an hour of traffic, which is not multiplied by 24.
pub const MIN_AGE_DAYS: f64 = 1.0;

/// Seconds in a day.
const SECONDS_A_DAY: f64 = 86_400.0;

/// A sampling rule (segment filter) as the forecast sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Its `sample_rate` (clamped to 0..=1).
    pub sample_rate: f64,
    /// Whether it has a `filter` (whose selectivity cannot be known).
    pub filtered: bool,
    /// `llm_scorers`: it samples LLM-judge scorers only.
    pub llm_scorers: bool,
    /// `multimodal_scorers`: it samples multimodal scorers only.
    pub multimodal_scorers: bool,
}

/// The share of a run's traffic a scorer scores.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    /// The share, 0 to 1.
    pub rate: f64,
    /// Whether `rate` is an upper bound (a rule with a filter takes part).
    pub upper_bound: bool,
}

/// The share of traffic a scorer scores under `rules`. The rules that name
/// the scorer's kind (`llm_scorers` for an LLM-judge scorer,
/// `multimodal_scorers` for a multimodal one) apply to it when there are
/// any; else the rules that name no kind; with none of either, everything is
/// scored. Of rules without a filter the largest rate is the share; a rule
/// with a filter counts as if the filter matched everything, and then the
/// rates add up (capped at 1) as an upper bound: segments may not overlap.
pub fn share(rules: &[Rule], judge: bool, multimodal: bool) -> Share {
    let names_it = |r: &&Rule| (r.llm_scorers && judge) || (r.multimodal_scorers && multimodal);
    let general = |r: &&Rule| !r.llm_scorers && !r.multimodal_scorers;
    let mut applying: Vec<&Rule> = rules.iter().filter(names_it).collect();
    if applying.is_empty() {
        applying = rules.iter().filter(general).collect();
    }
    if applying.is_empty() {
        return Share {
            rate: 1.0,
            upper_bound: false,
        };
    }
    let rate = |r: &Rule| r.sample_rate.clamp(0.0, 1.0);
    if applying.iter().any(|r| r.filtered) {
        Share {
            rate: applying.iter().map(|r| rate(r)).sum::<f64>().min(1.0),
            upper_bound: true,
        }
    } else {
        Share {
            rate: applying.iter().map(|r| rate(r)).fold(0.0, f64::max),
            upper_bound: false,
        }
    }
}

/// A count spread over an age: how many a day. The age is at least
/// [`MIN_AGE_DAYS`].
pub fn per_day(count: u64, age_seconds: u64) -> f64 {
    let days = (age_seconds as f64 / SECONDS_A_DAY).max(MIN_AGE_DAYS);
    count as f64 / days
}

/// Spans a day of a log stream declared to see `traces_per_day` traces:
/// `spans_per_day` when declared, else the spans per trace counted so far,
/// else one span a trace.
pub fn declared_spans(
    traces_per_day: u64,
    spans_per_day: Option<u64>,
    counted: Option<(u64, u64)>,
) -> f64 {
    if let Some(spans) = spans_per_day {
        return spans as f64;
    }
    match counted {
        Some((traces, spans)) if traces > 0 => traces_per_day as f64 * spans as f64 / traces as f64,
        _ => traces_per_day as f64,
    }
}

/// The units a scorer scores: traces when it scores trace-level node types,
/// spans when it scores span-level ones, both when both.
pub fn units(per_trace: bool, per_span: bool, traces: f64, spans: f64) -> f64 {
    (if per_trace { traces } else { 0.0 }) + (if per_span { spans } else { 0.0 })
}

/// Evaluations of a scorer: its units times its share.
pub fn evaluations(units: f64, share: Share) -> f64 {
    units * share.rate
}

/// LLM-judge calls of a judge scorer: each evaluation asks each judge once
/// (at least one).
pub fn judge_calls(evaluations: f64, judges: u64) -> f64 {
    evaluations * judges.max(1) as f64
}

/// A figure as a whole number (rounded, never negative).
pub fn whole(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        x.round() as u64
    } else {
        0
    }
}

/// What `calls` calls cost at `per_call` each; a month of them when
/// `calls` is a day's.
pub fn cost(calls: u64, per_call: f64, a_month: bool) -> f64 {
    let cost = calls as f64 * per_call;
    if a_month { cost * DAYS_A_MONTH } else { cost }
}

/// Money rounded to cents.
pub fn cents(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(sample_rate: f64) -> Rule {
        Rule {
            sample_rate,
            filtered: false,
            llm_scorers: false,
            multimodal_scorers: false,
        }
    }

    #[test]
    fn without_rules_everything_is_scored() {
        assert_eq!(
            share(&[], true, false),
            Share {
                rate: 1.0,
                upper_bound: false
            }
        );
    }

    #[test]
    fn a_rule_for_llm_scorers_wins_over_a_general_one_for_judges_only() {
        let rules = [
            rule(0.5),
            Rule {
                llm_scorers: true,
                ..rule(0.1)
            },
        ];
        assert_eq!(share(&rules, true, false).rate, 0.1);
        assert_eq!(share(&rules, false, false).rate, 0.5);
        assert!(!share(&rules, true, false).upper_bound);
    }

    #[test]
    fn a_rule_for_another_kind_leaves_a_scorer_unsampled() {
        let rules = [Rule {
            multimodal_scorers: true,
            ..rule(0.2)
        }];
        assert_eq!(share(&rules, true, false).rate, 1.0);
        assert_eq!(share(&rules, true, true).rate, 0.2);
    }

    #[test]
    fn filtered_rules_add_up_as_an_upper_bound_capped_at_one() {
        let filtered = |r| Rule {
            filtered: true,
            ..rule(r)
        };
        let s = share(&[filtered(0.25), rule(0.5)], false, false);
        assert_eq!(s.rate, 0.75);
        assert!(s.upper_bound);
        let capped = share(&[filtered(0.75), filtered(0.5)], false, false);
        assert_eq!(capped.rate, 1.0);
        // Without a filter the largest rate is exact.
        let exact = share(&[rule(0.25), rule(0.5)], false, false);
        assert_eq!(
            exact,
            Share {
                rate: 0.5,
                upper_bound: false
            }
        );
    }

    #[test]
    fn rates_out_of_range_are_clamped() {
        assert_eq!(share(&[rule(1.5)], false, false).rate, 1.0);
        assert_eq!(share(&[rule(-1.0)], false, false).rate, 0.0);
    }

    #[test]
    fn counts_are_spread_over_at_least_a_day() {
        // 30 days, 42,000 traces: 1,400 a day.
        assert_eq!(per_day(42_000, 30 * 86_400), 1400.0);
        // An hour old: the hour's traffic is one day's, not 24 times it.
        assert_eq!(per_day(50, 3_600), 50.0);
        assert_eq!(per_day(0, 0), 0.0);
    }

    #[test]
    fn declared_traffic_takes_its_spans_from_the_counts_when_not_declared() {
        assert_eq!(
            declared_spans(20_000, Some(90_000), Some((10, 70))),
            90_000.0
        );
        assert_eq!(declared_spans(20_000, None, Some((10, 70))), 140_000.0);
        assert_eq!(declared_spans(20_000, None, Some((0, 0))), 20_000.0);
        assert_eq!(declared_spans(20_000, None, None), 20_000.0);
    }

    #[test]
    fn a_judge_scorer_on_sampled_spans_with_three_judges() {
        // 1,400 traces and 9,800 spans a day; a span scorer sampled at 10%
        // with three judges: 980 evaluations, 2,940 calls.
        let units = units(false, true, 1400.0, 9800.0);
        let evaluations = evaluations(
            units,
            Share {
                rate: 0.1,
                upper_bound: false,
            },
        );
        assert_eq!(whole(evaluations), 980);
        assert_eq!(whole(judge_calls(evaluations, 3)), 2940);
        assert_eq!(whole(judge_calls(evaluations, 0)), 980);
        assert_eq!(units_both(), 11_200.0);
    }

    fn units_both() -> f64 {
        units(true, true, 1400.0, 9800.0)
    }

    #[test]
    fn costs_are_a_month_of_days_and_rounded_to_cents() {
        // 12,400 calls a day at $0.10 per 1,000: $37.20 a month.
        assert_eq!(cents(cost(12_400, 0.0001, true)), 37.2);
        assert_eq!(cents(cost(300, 0.002, false)), 0.6);
        assert_eq!(whole(-3.0), 0);
        assert_eq!(whole(f64::NAN), 0);
        assert_eq!(whole(2.5), 3);
    }
}
