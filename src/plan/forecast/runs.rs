//! The runs of a forecast, held compactly: a plan of an organization
//! forecasts every run whose metric settings change, and most of what a
//! [`RunForecast`] holds is the same from run to run (the project, the
//! scorers' names, and each scorer side's kind, unit, share, judges and
//! model). [`Runs`] holds each name and each such shape once, in tables, and
//! per run only what differs (its name, traffic, figures and the scorers'
//! evaluations and calls) as bytes, variable-length integers mostly. A run
//! is decoded back into a plain [`RunForecast`] as it is read
//! ([`Runs::iter`]); serialized, [`Runs`] is the array of runs it was
//! before, byte for byte, and a saved plan's array is read back into it.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::de::{SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{
    Calls, Cost, Figures, RunForecast, ScorerForecast, ScorerSide, TrafficSource, TrafficUsed, Unit,
};
use crate::plan::address::RunKind;

/// A scorer side without its counts: what many runs share.
#[derive(Debug, Clone, PartialEq)]
struct Shape {
    llm_judge: bool,
    unit: Unit,
    share: f64,
    upper_bound: bool,
    judges: Option<u64>,
    model_name: Option<u32>,
}

/// A [`Shape`] as a key of the interning map (the share by its bits).
type ShapeKey = (bool, u8, u64, bool, Option<u64>, Option<u32>);

impl Shape {
    fn key(&self) -> ShapeKey {
        let unit = match self.unit {
            Unit::Trace => 0,
            Unit::Span => 1,
            Unit::TraceAndSpan => 2,
        };
        (
            self.llm_judge,
            unit,
            self.share.to_bits(),
            self.upper_bound,
            self.judges,
            self.model_name,
        )
    }
}

// The flags byte of a run.
const EXPERIMENT: u8 = 1;
const PER_RUN: u8 = 1 << 1;
const UPPER_BOUND: u8 = 1 << 2;
const COST: u8 = 1 << 3;
const DECLARED: u8 = 1 << 4;
const UNKNOWN: u8 = 1 << 5;
const AGE: u8 = 1 << 6;

/// The runs of a forecast, in order ([`super::finish`] sorts them), held
/// compactly (the module's paragraph).
#[derive(Clone, Default)]
pub struct Runs {
    /// Project, scorer and model names, each once.
    names: Vec<Arc<str>>,
    /// Scorer sides without their counts, each once.
    shapes: Vec<Shape>,
    /// The runs, one after the other.
    bytes: Vec<u8>,
    /// Where each run starts in `bytes`.
    starts: Vec<usize>,
}

/// What interning needs while runs are added, dropped once they are all in.
#[derive(Default)]
pub(crate) struct Builder {
    runs: Runs,
    name_index: HashMap<Arc<str>, u32>,
    shape_index: HashMap<ShapeKey, u32>,
}

impl Builder {
    /// Adds `run` after those added before.
    pub(crate) fn push(&mut self, run: &RunForecast) {
        let start = self.runs.bytes.len();
        self.runs.starts.push(start);
        let project = self.name(&run.project);
        let mut flags = 0u8;
        if run.run_kind == RunKind::Experiment {
            flags |= EXPERIMENT;
        }
        if matches!(run.figures, Figures::PerRun { .. }) {
            flags |= PER_RUN;
        }
        if run.upper_bound {
            flags |= UPPER_BOUND;
        }
        let cost = run.figures.cost();
        if cost.is_some() {
            flags |= COST;
        }
        match run.traffic.source {
            TrafficSource::Counted => {}
            TrafficSource::Declared => flags |= DECLARED,
            TrafficSource::Unknown => flags |= UNKNOWN,
        }
        if run.traffic.age_days.is_some() {
            flags |= AGE;
        }
        let mut scorers = Vec::with_capacity(run.scorers.len());
        for scorer in &run.scorers {
            let name = self.name(&scorer.scorer);
            let before = scorer.before.as_ref().map(|s| self.shape(s));
            let after = scorer.after.as_ref().map(|s| self.shape(s));
            scorers.push((name, before, after));
        }
        let out = &mut self.runs.bytes;
        varint(out, u64::from(project));
        out.push(flags);
        varint(out, run.run.len() as u64);
        out.extend_from_slice(run.run.as_bytes());
        varint(out, run.traffic.traces);
        varint(out, run.traffic.spans);
        if let Some(age) = run.traffic.age_days {
            varint(out, age);
        }
        for calls in [run.figures.judge_calls(), run.figures.others()] {
            varint(out, calls.before);
            varint(out, calls.after);
        }
        if let Some(cost) = cost {
            out.extend_from_slice(&cost.before.to_le_bytes());
            out.extend_from_slice(&cost.after.to_le_bytes());
        }
        varint(out, run.scorers.len() as u64);
        for (scorer, (name, before, after)) in run.scorers.iter().zip(scorers) {
            varint(out, u64::from(name));
            for (side, shape) in [(&scorer.before, before), (&scorer.after, after)] {
                match (side, shape) {
                    (Some(side), Some(shape)) => {
                        varint(out, u64::from(shape) + 1);
                        varint(out, side.evaluations);
                        varint(out, side.llm_judge_calls);
                    }
                    _ => varint(out, 0),
                }
            }
        }
    }

    fn name(&mut self, name: &Arc<str>) -> u32 {
        if let Some(&index) = self.name_index.get(name) {
            return index;
        }
        let index = u32::try_from(self.runs.names.len()).unwrap_or(u32::MAX);
        self.runs.names.push(Arc::clone(name));
        self.name_index.insert(Arc::clone(name), index);
        index
    }

    fn shape(&mut self, side: &ScorerSide) -> u32 {
        let shape = Shape {
            llm_judge: side.llm_judge,
            unit: side.unit,
            share: side.share,
            upper_bound: side.upper_bound,
            judges: side.judges,
            model_name: side.model_name.as_ref().map(|m| self.name(m)),
        };
        let key = shape.key();
        if let Some(&index) = self.shape_index.get(&key) {
            return index;
        }
        let index = u32::try_from(self.runs.shapes.len()).unwrap_or(u32::MAX);
        self.runs.shapes.push(shape);
        self.shape_index.insert(key, index);
        index
    }

    /// How many runs were added.
    pub(crate) fn len(&self) -> usize {
        self.runs.starts.len()
    }

    /// The runs added, in the order of their project, kind and name (the
    /// order of addition among equal ones), each passed through `each` as
    /// it is stored again.
    pub(crate) fn sorted(mut self, mut each: impl FnMut(&mut RunForecast)) -> Runs {
        let mut order = std::mem::take(&mut self.runs.starts);
        {
            let runs = &self.runs;
            order.sort_by(|&a, &b| runs.key_at(a).cmp(&runs.key_at(b)));
        }
        let old = std::mem::take(&mut self.runs.bytes);
        let reader = Runs {
            names: self.runs.names.clone(),
            shapes: self.runs.shapes.clone(),
            bytes: old,
            starts: Vec::new(),
        };
        self.runs.bytes = Vec::with_capacity(reader.bytes.len());
        self.runs.starts = Vec::with_capacity(order.len());
        for start in order {
            let mut run = reader.decode(start);
            each(&mut run);
            self.push(&run);
        }
        drop(reader);
        self.finish()
    }

    /// The runs added, in the order they were added.
    pub(crate) fn finish(mut self) -> Runs {
        self.runs.bytes.shrink_to_fit();
        self.runs.starts.shrink_to_fit();
        self.runs.names.shrink_to_fit();
        self.runs.shapes.shrink_to_fit();
        self.runs
    }
}

impl Runs {
    /// How many runs.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The runs, in order, each decoded as it is read.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            runs: self,
            next: 0,
        }
    }

    /// The `index`th run.
    pub fn get(&self, index: usize) -> Option<RunForecast> {
        self.starts.get(index).map(|&start| self.decode(start))
    }

    fn name(&self, index: u64) -> Arc<str> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.names.get(i))
            .map_or_else(|| Arc::from(""), Arc::clone)
    }

    fn name_str(&self, index: u64) -> &str {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.names.get(i))
            .map_or("", |n| n)
    }

    /// The sort key of the run at `start`: project, kind, name.
    fn key_at(&self, start: usize) -> (&str, RunKind, &str) {
        let mut r = Reader {
            bytes: &self.bytes,
            at: start,
        };
        let project = self.name_str(r.varint());
        let flags = r.byte();
        let kind = if flags & EXPERIMENT != 0 {
            RunKind::Experiment
        } else {
            RunKind::LogStream
        };
        let len = usize::try_from(r.varint()).unwrap_or(0);
        (project, kind, r.str(len))
    }

    /// The run stored at `start`.
    fn decode(&self, start: usize) -> RunForecast {
        let mut r = Reader {
            bytes: &self.bytes,
            at: start,
        };
        let project = self.name(r.varint());
        let flags = r.byte();
        let len = usize::try_from(r.varint()).unwrap_or(0);
        let run = r.str(len).to_owned();
        let source = if flags & DECLARED != 0 {
            TrafficSource::Declared
        } else if flags & UNKNOWN != 0 {
            TrafficSource::Unknown
        } else {
            TrafficSource::Counted
        };
        let traffic = TrafficUsed {
            source,
            traces: r.varint(),
            spans: r.varint(),
            age_days: (flags & AGE != 0).then(|| r.varint()),
        };
        let judge = Calls {
            before: r.varint(),
            after: r.varint(),
        };
        let others = Calls {
            before: r.varint(),
            after: r.varint(),
        };
        let cost = (flags & COST != 0).then(|| Cost {
            before: r.f64(),
            after: r.f64(),
        });
        let figures = if flags & PER_RUN != 0 {
            Figures::PerRun {
                llm_judge_calls_per_run: judge,
                other_evaluations_per_run: others,
                cost_per_run: cost,
            }
        } else {
            Figures::PerDay {
                llm_judge_calls_per_day: judge,
                other_evaluations_per_day: others,
                cost_per_month: cost,
            }
        };
        let count = usize::try_from(r.varint()).unwrap_or(0);
        let mut scorers = Vec::with_capacity(count);
        for _ in 0..count {
            let scorer = self.name(r.varint());
            let mut side = || {
                let shape = r.varint().checked_sub(1)?;
                let shape = usize::try_from(shape).ok().and_then(|i| self.shapes.get(i));
                let evaluations = r.varint();
                let llm_judge_calls = r.varint();
                shape.map(|shape| ScorerSide {
                    llm_judge: shape.llm_judge,
                    unit: shape.unit,
                    share: shape.share,
                    upper_bound: shape.upper_bound,
                    judges: shape.judges,
                    model_name: shape.model_name.map(|m| self.name(u64::from(m))),
                    evaluations,
                    llm_judge_calls,
                })
            };
            let before = side();
            let after = side();
            scorers.push(ScorerForecast {
                scorer,
                before,
                after,
            });
        }
        RunForecast {
            project,
            run_kind: if flags & EXPERIMENT != 0 {
                RunKind::Experiment
            } else {
                RunKind::LogStream
            },
            run,
            traffic,
            figures,
            upper_bound: flags & UPPER_BOUND != 0,
            scorers,
        }
    }
}

impl FromIterator<RunForecast> for Runs {
    fn from_iter<I: IntoIterator<Item = RunForecast>>(iter: I) -> Self {
        let mut builder = Builder::default();
        for run in iter {
            builder.push(&run);
        }
        builder.finish()
    }
}

/// The runs of [`Runs::iter`].
#[derive(Clone)]
pub struct Iter<'a> {
    runs: &'a Runs,
    next: usize,
}

impl Iterator for Iter<'_> {
    type Item = RunForecast;

    fn next(&mut self) -> Option<RunForecast> {
        let run = self.runs.get(self.next)?;
        self.next += 1;
        Some(run)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.runs.len().saturating_sub(self.next);
        (left, Some(left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Runs {
    type Item = RunForecast;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl PartialEq for Runs {
    fn eq(&self, other: &Runs) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl fmt::Debug for Runs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Runs {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for run in self.iter() {
            seq.serialize_element(&run)?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for Runs {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Runs, D::Error> {
        struct RunsVisitor;
        impl<'de> Visitor<'de> for RunsVisitor {
            type Value = Runs;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of run forecasts")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Runs, A::Error> {
                let mut builder = Builder::default();
                while let Some(run) = seq.next_element::<RunForecast>()? {
                    builder.push(&run);
                }
                Ok(builder.finish())
            }
        }
        deserializer.deserialize_seq(RunsVisitor)
    }
}

/// Appends `n` as a LEB128 variable-length integer.
fn varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let low = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

/// Reads what [`Builder::push`] wrote. The bytes are this module's own, so
/// they are whole; past their end it reads zeros rather than panic.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    fn varint(&mut self) -> u64 {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte();
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                break;
            }
        }
        n
    }

    fn f64(&mut self) -> f64 {
        let mut le = [0u8; 8];
        for b in &mut le {
            *b = self.byte();
        }
        f64::from_le_bytes(le)
    }

    fn str(&mut self, len: usize) -> &'a str {
        let end = self.at.saturating_add(len).min(self.bytes.len());
        let text = self
            .bytes
            .get(self.at..end)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("");
        self.at = end;
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(evaluations: u64, model: Option<&str>) -> ScorerSide {
        ScorerSide {
            llm_judge: model.is_some(),
            unit: Unit::Span,
            share: 0.25,
            upper_bound: false,
            judges: model.map(|_| 3),
            model_name: model.map(Arc::from),
            evaluations,
            llm_judge_calls: evaluations * 3,
        }
    }

    fn run(project: &str, kind: RunKind, name: &str, traces: u64) -> RunForecast {
        RunForecast {
            project: Arc::from(project),
            run_kind: kind,
            run: name.to_owned(),
            traffic: TrafficUsed {
                source: TrafficSource::Counted,
                traces,
                spans: u64::MAX,
                age_days: Some(30),
            },
            figures: match kind {
                RunKind::LogStream => Figures::PerDay {
                    llm_judge_calls_per_day: Calls {
                        before: 0,
                        after: traces,
                    },
                    other_evaluations_per_day: Calls {
                        before: 7,
                        after: 0,
                    },
                    cost_per_month: Some(Cost {
                        before: 0.1,
                        after: 12.34,
                    }),
                },
                RunKind::Experiment => Figures::PerRun {
                    llm_judge_calls_per_run: Calls {
                        before: 1,
                        after: 2,
                    },
                    other_evaluations_per_run: Calls {
                        before: 3,
                        after: 4,
                    },
                    cost_per_run: None,
                },
            },
            upper_bound: kind == RunKind::Experiment,
            scorers: vec![
                ScorerForecast {
                    scorer: Arc::from("correctness"),
                    before: None,
                    after: Some(side(traces, Some("gpt-4o"))),
                },
                ScorerForecast {
                    scorer: Arc::from("toxicity"),
                    before: Some(side(7, None)),
                    after: None,
                },
            ],
        }
    }

    #[test]
    fn runs_read_back_as_they_were_added_and_sort_by_project_kind_and_name() {
        let added = vec![
            run("b", RunKind::LogStream, "ünïcode", 300),
            run("a", RunKind::Experiment, "x", 0),
            run("a", RunKind::LogStream, "z", 1 << 40),
            run("a", RunKind::LogStream, "y", 5),
        ];
        let runs: Runs = added.iter().cloned().collect();
        assert_eq!(runs.iter().collect::<Vec<_>>(), added);
        let json = serde_json::to_string(&runs).unwrap_or_default();
        assert_eq!(json, serde_json::to_string(&added).unwrap_or_default());
        let back: Runs = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(back, runs);

        let mut builder = Builder::default();
        for run in &added {
            builder.push(run);
        }
        let mut seen = 0;
        let sorted = builder.sorted(|_| seen += 1);
        assert_eq!(seen, 4);
        let mut expected = added.clone();
        expected.sort_by(|a, b| {
            (&a.project, a.run_kind, &a.run).cmp(&(&b.project, b.run_kind, &b.run))
        });
        assert_eq!(sorted.iter().collect::<Vec<_>>(), expected);
        // Names and shapes are held once however many runs name them.
        assert_eq!(sorted.names.len(), 5);
        assert_eq!(sorted.shapes.len(), 2);
    }
}
