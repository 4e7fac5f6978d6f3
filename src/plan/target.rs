//! `--target`: an address, or the start of one, parsed with the grammar the
//! plan prints addresses in, so that any address copied from a plan is a
//! valid target and a typo is an error with its position.
//!
//! ```text
//! target  := segment ( "." segment )*
//! segment := kind ( "[" name "]" )?
//! kind    := one of the address kinds (project, log_stream, experiment,
//!            metric_settings, trends, dashboard, section, widget, settings,
//!            favorite, annotation_template, feedback_template, integration,
//!            custom_integration)
//! name    := any characters; `\]` is a `]` and `\\` a `\`
//! ```
//!
//! The segments must follow one another as in an address:
//! `integration[P]` or `custom_integration[N]`; `project[P]`, then
//! `log_stream[R]` or `experiment[R]` or `annotation_template[N]` or
//! `feedback_template[N]`; after a run, `metric_settings`; after a log
//! stream, `trends` (its default dashboard) or `dashboard[N]` (another
//! one), then `section[N]`, `widget[N]`, `settings` or (after `trends`)
//! `favorite`; after a section, `widget[N]`. A target selects every address
//! it is the start of: `project[demo]` selects everything in project `demo`.

use crate::plan::address::{CustomIntegrationAddress, IntegrationAddress};
use std::fmt;

use super::address::{Address, RunKind};
use super::trends::DashboardContents;
use crate::manifest::set::ManifestSet;
use crate::state::ObjectKey;
use crate::suggest::{did_you_mean, nearest};

/// One segment of an address: a kind, and a name for kinds that have one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Segment {
    /// The kind, e.g. `project`.
    pub kind: Kind,
    /// The name between brackets; `None` for kinds without one, and in a
    /// scope, for "any name".
    pub name: Option<String>,
}

use crate::kinds::SEGMENT_KINDS as KINDS;
pub use crate::kinds::SegmentKind as Kind;

/// A parsed `--target`, or a scope the planner asks about.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Target {
    segments: Vec<Segment>,
}

/// A `--target` that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --target `{input}`: {message} at column {column}\n  {input}\n  {caret}^")]
pub struct TargetParseError {
    /// The target as given.
    pub input: String,
    /// The column (1-based, in characters) where it goes wrong.
    pub column: usize,
    /// What is wrong there.
    pub message: String,
    /// Spaces up to the column, for the caret line.
    caret: String,
}

impl TargetParseError {
    fn new(input: &str, index: usize, message: impl Into<String>) -> Self {
        TargetParseError {
            input: input.to_owned(),
            column: index + 1,
            message: message.into(),
            caret: " ".repeat(index),
        }
    }
}

fn quote(name: &str) -> String {
    name.replace('\\', "\\\\").replace(']', "\\]")
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.segments.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            f.write_str(s.kind.as_str())?;
            match &s.name {
                Some(name) => write!(f, "[{}]", quote(name))?,
                None if s.kind.is_named() => f.write_str("[*]")?,
                None => {}
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for Target {
    type Err = TargetParseError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        Target::parse(input)
    }
}

impl Target {
    /// Parses a target (see the module docs).
    pub fn parse(input: &str) -> Result<Target, TargetParseError> {
        let chars: Vec<char> = input.chars().collect();
        let mut i = 0;
        let mut segments: Vec<Segment> = Vec::new();
        if chars.is_empty() {
            return Err(TargetParseError::new(
                input,
                0,
                "an empty target selects nothing",
            ));
        }
        loop {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_lowercase() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let parent = segments.last().map(|s| s.kind);
            let allowed = Kind::children(parent);
            let expected = || {
                let names: Vec<&str> = allowed.iter().map(|k| k.as_str()).collect();
                names.join(", ")
            };
            if let (Some(parent), true) = (parent, allowed.is_empty()) {
                // `…metric_settings.scorers`: nothing has a place after this segment.
                return Err(TargetParseError::new(
                    input,
                    start,
                    format!(
                        "nothing can follow `{}`: it is the last segment of an address",
                        parent.as_str()
                    ),
                ));
            }
            if word.is_empty() {
                return Err(TargetParseError::new(
                    input,
                    start,
                    format!("expected one of {}", expected()),
                ));
            }
            let Some(kind) = KINDS.iter().copied().find(|k| k.as_str() == word) else {
                return Err(TargetParseError::new(
                    input,
                    start,
                    format!("unknown kind `{word}`; expected one of {}", expected()),
                ));
            };
            if !allowed.contains(&kind) {
                let after = parent.map_or("at the start".to_owned(), |p| {
                    format!("after `{}`", p.as_str())
                });
                let message = if allowed.is_empty() {
                    format!("nothing can follow `{}`", parent.map_or("", Kind::as_str))
                } else {
                    format!(
                        "`{word}` cannot come {after}; expected one of {}",
                        expected()
                    )
                };
                return Err(TargetParseError::new(input, start, message));
            }
            let mut name = None;
            if kind.is_named() {
                if chars.get(i) != Some(&'[') {
                    return Err(TargetParseError::new(
                        input,
                        i,
                        format!("expected `[` and the {}'s name", kind.as_str()),
                    ));
                }
                i += 1;
                let mut text = String::new();
                loop {
                    match chars.get(i) {
                        None => {
                            return Err(TargetParseError::new(
                                input,
                                i,
                                "expected `]` to close the name",
                            ));
                        }
                        Some('\\') if matches!(chars.get(i + 1), Some(']' | '\\')) => {
                            text.push(chars[i + 1]);
                            i += 2;
                        }
                        Some(']') => {
                            i += 1;
                            break;
                        }
                        Some(c) => {
                            text.push(*c);
                            i += 1;
                        }
                    }
                }
                name = Some(text);
            } else if chars.get(i) == Some(&'[') {
                return Err(TargetParseError::new(
                    input,
                    i,
                    format!("`{}` takes no name", kind.as_str()),
                ));
            }
            segments.push(Segment { kind, name });
            match chars.get(i) {
                None => break,
                Some('.') => i += 1,
                Some(c) => {
                    return Err(TargetParseError::new(
                        input,
                        i,
                        format!("unexpected `{c}`; expected `.` or the end"),
                    ));
                }
            }
        }
        Ok(Target { segments })
    }

    /// The segments.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The target that selects exactly `address` (and what is under it).
    pub fn of(address: &Address) -> Target {
        let mut segments = address.segments();
        // Held: an apply's confirmation targets every address it touched (a
        // few per log stream), and segments grow past their length.
        segments.shrink_to_fit();
        Target { segments }
    }

    /// A scope: the given segments; a named kind with `None` stands for any name.
    pub fn scope(segments: Vec<Segment>) -> Target {
        Target { segments }
    }

    /// The scope of a project.
    pub fn project(project: &str) -> Target {
        Target::scope(vec![Segment::named(Kind::Project, project)])
    }

    /// The scope of a run of a project.
    pub fn run(project: &str, kind: RunKind, run: &str) -> Target {
        Target::scope(vec![
            Segment::named(Kind::Project, project),
            Segment::run(kind, run),
        ])
    }

    /// The scope of a log stream's trends.
    pub fn trends(project: &str, log_stream: &str) -> Target {
        Target::scope(vec![
            Segment::named(Kind::Project, project),
            Segment::run(RunKind::LogStream, log_stream),
            Segment::kind(Kind::Trends),
        ])
    }

    /// The scope of a log stream's dashboards other than the default one
    /// (`name: None`: any of them).
    pub fn dashboard(project: &str, log_stream: &str, name: Option<&str>) -> Target {
        Target::scope(vec![
            Segment::named(Kind::Project, project),
            Segment::run(RunKind::LogStream, log_stream),
            Segment {
                kind: Kind::Dashboard,
                name: name.map(str::to_owned),
            },
        ])
    }

    /// This target with one more segment.
    pub fn child(&self, segment: Segment) -> Target {
        let mut segments = self.segments.clone();
        segments.push(segment);
        Target { segments }
    }

    /// Whether this target is the start of `other` (or equal to it).
    pub fn is_prefix_of(&self, other: &Target) -> bool {
        self.segments.len() <= other.segments.len()
            && self
                .segments
                .iter()
                .zip(&other.segments)
                .all(|(a, b)| a == b)
    }

    /// Whether this target selects `address`: it is the start of the address.
    pub fn selects(&self, address: &Address) -> bool {
        let segments = address.segments();
        self.segments.len() <= segments.len()
            && self.segments.iter().zip(&segments).all(|(t, a)| t == a)
    }

    /// Whether this target and `scope` can select a common address: one is
    /// the start of the other, a `None` name in the scope matching any name.
    pub fn overlaps(&self, scope: &Target) -> bool {
        self.segments
            .iter()
            .zip(&scope.segments)
            .all(|(t, s)| t.kind == s.kind && (s.name.is_none() || t.name == s.name))
    }
}

/// The targets a plan is narrowed to (every address when there are none),
/// sorted, so that asking whether one selects an address, or reaches a
/// scope, is a few binary searches: an apply's confirmation targets every
/// address it touched (a few per log stream), and asking each target about
/// each address planned was quadratic (measured: docs/performance.md,
/// Figures behind choices in the code). Each target is held as one byte
/// string ([`encode`]) that sorts as its segments do: a target of segments
/// held as they parse is several allocations, and the confirmation holds
/// one per address it touched (measured: docs/performance.md, The
/// confirmation's targets held compactly).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    sorted: Vec<Box<[u8]>>,
}

impl Targets {
    /// Whether there are none (every address is selected).
    pub fn is_empty(&self) -> bool {
        self.sorted.is_empty()
    }

    /// The targets, in address order.
    pub fn to_vec(&self) -> Vec<Target> {
        self.sorted.iter().map(|t| decode(t)).collect()
    }

    /// Whether `segments` is one of the targets.
    fn contains(&self, segments: &[Segment]) -> bool {
        let key = encode(segments);
        self.sorted
            .binary_search_by(|t| (**t).cmp(key.as_slice()))
            .is_ok()
    }

    /// Whether a target selects `address`: is the address or one of its
    /// scopes (every address when there are none).
    pub fn selects(&self, address: &Address) -> bool {
        if self.is_empty() {
            return true;
        }
        let segments = address.segments();
        (1..=segments.len()).any(|n| self.contains(&segments[..n]))
    }

    /// Whether a target can select something in `scope` ([`Target::overlaps`];
    /// always when there are none). The targets that overlap a scope are
    /// those that start its named part (before its first "any name") and
    /// those that go on from it, which are together in the sorted targets
    /// (a target's encoding starts with its first segments' encoding).
    pub fn reaches(&self, scope: &Target) -> bool {
        if self.is_empty() {
            return true;
        }
        let named = scope
            .segments
            .iter()
            .position(|s| s.name.is_none())
            .unwrap_or(scope.segments.len());
        let fixed = &scope.segments[..named];
        if (1..=fixed.len()).any(|n| self.contains(&fixed[..n])) {
            return true;
        }
        let prefix = encode(fixed);
        let start = self.sorted.partition_point(|t| **t < *prefix.as_slice());
        self.sorted[start..]
            .iter()
            .take_while(|t| t.starts_with(&prefix))
            .any(|t| decode(t).overlaps(scope))
    }
}

impl FromIterator<Target> for Targets {
    fn from_iter<I: IntoIterator<Item = Target>>(targets: I) -> Self {
        let mut sorted: Vec<Box<[u8]>> = targets
            .into_iter()
            .map(|t| encode(&t.segments).into_boxed_slice())
            .collect();
        sorted.sort_unstable();
        sorted.dedup();
        sorted.shrink_to_fit();
        Targets { sorted }
    }
}

impl From<Vec<Target>> for Targets {
    fn from(targets: Vec<Target>) -> Self {
        targets.into_iter().collect()
    }
}

/// Ends a name in [`encode`]; a zero byte of the name is written as
/// `[0, ESCAPED]`, which sorts after the end.
const END: u8 = 0;
/// See [`END`].
const ESCAPED: u8 = 0xff;
/// A segment without a name, then one with, in [`encode`].
const UNNAMED: u8 = 0;
/// See [`UNNAMED`].
const NAMED: u8 = 1;

/// `segments` as bytes that sort as the segments do (kind, then no name
/// before a name, then the name) and of which a target's first segments'
/// are the start: each segment is its kind's byte, then [`UNNAMED`], or
/// [`NAMED`] and the name's bytes (a zero byte escaped) closed by
/// `[END, END]`.
fn encode(segments: &[Segment]) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        segments
            .iter()
            .map(|s| 4 + s.name.as_ref().map_or(0, String::len))
            .sum(),
    );
    for segment in segments {
        out.push(segment.kind as u8);
        match &segment.name {
            None => out.push(UNNAMED),
            Some(name) => {
                out.push(NAMED);
                for &byte in name.as_bytes() {
                    out.push(byte);
                    if byte == END {
                        out.push(ESCAPED);
                    }
                }
                out.extend([END, END]);
            }
        }
    }
    out
}

/// The segments [`encode`] wrote.
fn decode(mut bytes: &[u8]) -> Target {
    let mut segments = Vec::new();
    while let [kind, tag, rest @ ..] = bytes {
        let Some(kind) = KINDS.iter().copied().find(|k| *k as u8 == *kind) else {
            break;
        };
        bytes = rest;
        let name = (*tag == NAMED).then(|| {
            let mut name = Vec::new();
            loop {
                match bytes {
                    [END, ESCAPED, rest @ ..] => {
                        name.push(END);
                        bytes = rest;
                    }
                    [END, END, rest @ ..] => {
                        bytes = rest;
                        break;
                    }
                    [byte, rest @ ..] => {
                        name.push(*byte);
                        bytes = rest;
                    }
                    [] => break,
                }
            }
            String::from_utf8_lossy(&name).into_owned()
        });
        segments.push(Segment { kind, name });
    }
    Target { segments }
}

/// `--target`s that select nothing the manifests declare (nor, with `--prune`, anything
/// the plan deletes), each with the nearest addresses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render_unmatched(.targets, *.pruned))]
pub struct UnmatchedTargets {
    /// Each target, with the nearest addresses.
    pub targets: Vec<(Target, Vec<String>)>,
    /// Whether `--prune` was on (what it deletes was looked at too).
    pub pruned: bool,
}

fn render_unmatched(unmatched: &[(Target, Vec<String>)], pruned: bool) -> String {
    let nor = if pruned {
        ", nor anything `--prune` deletes"
    } else {
        ""
    };
    let lines: Vec<String> = unmatched
        .iter()
        .map(|(t, suggestions)| {
            format!(
                "--target `{t}` selects nothing the manifests declare{nor}{}",
                did_you_mean(suggestions)
            )
        })
        .collect();
    lines.join("\n")
}

/// Every object the manifests declare, as a full address target (its
/// prefixes are what a target may also name).
pub fn declared(desired: &ManifestSet) -> Vec<Target> {
    let mut out = Vec::new();
    for project in &desired.projects {
        let spec = &project.spec;
        let Some(key) = ObjectKey::from_parts(spec.name.as_deref(), spec.id.as_deref()) else {
            continue;
        };
        let p = key.to_string();
        out.push(Target::project(&p));
        let runs = spec
            .log_streams
            .iter()
            .map(|l| {
                let key = ObjectKey::from_parts(l.name.as_deref(), l.id.as_deref());
                (
                    RunKind::LogStream,
                    key,
                    l.metric_settings.is_some(),
                    l.trends.as_deref(),
                )
            })
            .chain(spec.experiments.iter().map(|e| {
                let key = ObjectKey::from_parts(e.name.as_deref(), e.id.as_deref());
                (RunKind::Experiment, key, e.metric_settings.is_some(), None)
            }));
        for (kind, key, settings, trends) in runs {
            let Some(key) = key else { continue };
            let r = key.to_string();
            let run = Target::run(&p, kind, &r);
            if settings {
                out.push(run.child(Segment::kind(Kind::MetricSettings)));
            }
            if let Some(trends) = trends {
                let scope = Target::trends(&p, &r);
                declared_contents(&scope, &DashboardContents::of_trends(trends), &mut out);
                if trends.favorite.is_some() {
                    out.push(scope.child(Segment::kind(Kind::Favorite)));
                }
                out.push(scope);
                for dashboard in trends.dashboards.iter().flatten() {
                    let scope = Target::dashboard(&p, &r, Some(&dashboard.name));
                    declared_contents(
                        &scope,
                        &DashboardContents::of_dashboard(dashboard),
                        &mut out,
                    );
                    out.push(scope);
                }
            }
            out.push(run);
        }
        crate::kinds::declared_project_parts(&p, spec, &mut out);
    }
    for integration in &desired.integrations {
        out.push(Target::of(&integration_address(&integration.spec)));
    }
    crate::kinds::declared_global_parts(&desired.global, &mut out);
    out.sort();
    out.dedup();
    out
}

/// The sections, widgets and settings a dashboard declares, under `scope`.
fn declared_contents(scope: &Target, contents: &DashboardContents<'_>, out: &mut Vec<Target>) {
    for widget in contents.widgets.iter().flat_map(|ws| ws.iter()) {
        out.push(scope.child(Segment::named(Kind::Widget, &widget.name)));
    }
    for section in contents.sections.iter().flat_map(|ss| ss.iter()) {
        let at = scope.child(Segment::named(Kind::Section, &section.name));
        for widget in section.widgets.iter().flatten() {
            out.push(at.child(Segment::named(Kind::Widget, &widget.name)));
        }
        out.push(at);
    }
    if contents.declares_settings() {
        out.push(scope.child(Segment::kind(Kind::Settings)));
    }
}

/// The address of an Integration document: a provider's integration, or a
/// named custom integration.
pub fn integration_address(spec: &crate::manifest::types::IntegrationSpec) -> Address {
    match &spec.name {
        Some(name) => Address::CustomIntegration(CustomIntegrationAddress { name: name.clone() }),
        None => Address::Integration(IntegrationAddress {
            provider: spec.config.provider().to_string(),
        }),
    }
}

/// The targets that select nothing `desired` declares, each with the nearest
/// declared addresses. Empty: every target selects something. With `prune`, a
/// target may also name an object the manifests do not declare in a scope they do
/// (what `plan --prune` prints for a delete: `project[p].annotation_template[old]`);
/// whether the plan then deletes it is checked after planning ([`unplanned`]): those
/// targets are returned.
pub fn unmatched(
    desired: &ManifestSet,
    targets: &[Target],
    prune: bool,
) -> Result<Vec<Target>, UnmatchedTargets> {
    let declared = declared(desired);
    let mut out = Vec::new();
    let mut pruned = Vec::new();
    for target in targets {
        if declared.iter().any(|d| target.is_prefix_of(d)) {
            continue;
        }
        if prune && in_declared_scope(target, &declared) {
            pruned.push(target.clone());
            continue;
        }
        let names: Vec<String> = declared.iter().map(ToString::to_string).collect();
        let suggestions = nearest(&target.to_string(), names.iter().map(String::as_str));
        out.push((target.clone(), suggestions));
    }
    if out.is_empty() {
        Ok(pruned)
    } else {
        Err(UnmatchedTargets {
            targets: out,
            pruned: prune,
        })
    }
}

/// Whether `target` names one object inside a scope `declared` holds (its last
/// segment dropped, what remains is declared or holds something declared).
fn in_declared_scope(target: &Target, declared: &[Target]) -> bool {
    let segments = target.segments();
    if segments.len() < 2 || segments.last().is_none_or(|s| s.name.is_none()) {
        return false;
    }
    let scope = Target {
        segments: segments[..segments.len() - 1].to_vec(),
    };
    declared.iter().any(|d| scope.is_prefix_of(d))
}

/// Of the `pruned` targets [`unmatched`] let through, those that select no change of
/// the plan (`planned`: its changes' addresses): a pruned object's address the plan does
/// not delete after all (a typo, or a scope `--prune` leaves alone).
pub fn unplanned(pruned: &[Target], planned: &[Address]) -> Result<(), UnmatchedTargets> {
    let missing: Vec<&Target> = pruned
        .iter()
        .filter(|target| !planned.iter().any(|address| target.selects(address)))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = planned.iter().map(ToString::to_string).collect();
    Err(UnmatchedTargets {
        targets: missing
            .into_iter()
            .map(|target| {
                let suggestions = nearest(&target.to_string(), names.iter().map(String::as_str));
                (target.clone(), suggestions)
            })
            .collect(),
        pruned: true,
    })
}

/// Builders of the segments of addresses and scopes.
impl Segment {
    /// `kind[name]`.
    pub fn named(kind: Kind, name: impl Into<String>) -> Segment {
        Segment {
            kind,
            name: Some(name.into()),
        }
    }

    /// A kind without a name (or, in a scope, any name).
    pub fn kind(kind: Kind) -> Segment {
        Segment { kind, name: None }
    }

    /// The segment of a run.
    pub fn run(kind: RunKind, name: impl Into<String>) -> Segment {
        let kind = match kind {
            RunKind::LogStream => Kind::LogStream,
            RunKind::Experiment => Kind::Experiment,
        };
        Segment::named(kind, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::templates::{TemplateAddress, TemplateKind};
    use crate::plan::address::{
        DashboardAddress, FavoriteAddress, MetricSettingsAddress, SectionAddress, SettingsAddress,
        WidgetAddress,
    };

    fn section() -> Address {
        Address::Section(SectionAddress {
            project: "demo".into(),
            log_stream: "prod".into(),
            dashboard: None,
            name: "Latency [p95]".into(),
        })
    }

    /// Addresses of two projects, each with two log streams (metric
    /// settings, a section, a favorite, a dashboard of its own) and
    /// templates of both kinds.
    fn universe() -> Vec<Address> {
        let mut out = Vec::new();
        for project in ["a", "b"] {
            for kind in [TemplateKind::Annotation, TemplateKind::Feedback] {
                out.push(Address::Template(TemplateAddress {
                    project: project.into(),
                    kind,
                    name: "t".into(),
                }));
            }
            for run in ["x", "y"] {
                out.push(Address::MetricSettings(MetricSettingsAddress {
                    project: project.into(),
                    run_kind: RunKind::LogStream,
                    run: run.into(),
                }));
                out.push(Address::Section(SectionAddress {
                    project: project.into(),
                    log_stream: run.into(),
                    dashboard: None,
                    name: "s".into(),
                }));
                out.push(Address::Section(SectionAddress {
                    project: project.into(),
                    log_stream: run.into(),
                    dashboard: Some("d".into()),
                    name: "s".into(),
                }));
                out.push(Address::Favorite(FavoriteAddress {
                    project: project.into(),
                    log_stream: run.into(),
                }));
            }
        }
        out
    }

    /// The scopes the planner and the readers ask about, over [`universe`].
    fn scopes() -> Vec<Target> {
        let mut out = Vec::new();
        for project in ["a", "b", "c"] {
            out.push(Target::project(project));
            out.push(TemplateKind::Feedback.scope(project));
            for run in ["x", "y", "z"] {
                out.push(Target::run(project, RunKind::LogStream, run));
                out.push(Target::trends(project, run));
                out.push(Target::dashboard(project, run, None));
                out.push(Target::dashboard(project, run, Some("d")));
            }
        }
        out
    }

    #[test]
    fn sorted_targets_answer_as_asking_each_target_would() {
        let universe = universe();
        // Every prefix of every address is a candidate target; each set of
        // targets is a stride through them.
        let mut candidates: Vec<Target> = Vec::new();
        for address in &universe {
            let segments = address.segments();
            for n in 1..=segments.len() {
                candidates.push(Target {
                    segments: segments[..n].to_vec(),
                });
            }
        }
        for stride in 1..=7 {
            for offset in 0..stride {
                let given: Vec<Target> = candidates
                    .iter()
                    .skip(offset)
                    .step_by(stride)
                    .cloned()
                    .collect();
                let targets: Targets = given.clone().into();
                for address in &universe {
                    assert_eq!(
                        targets.selects(address),
                        given.iter().any(|t| t.selects(address)),
                        "{address} among {given:?}"
                    );
                }
                for scope in scopes() {
                    assert_eq!(
                        targets.reaches(&scope),
                        given.iter().any(|t| t.overlaps(&scope)),
                        "{scope:?} among {given:?}"
                    );
                }
            }
        }
        let none = Targets::default();
        assert!(universe.iter().all(|a| none.selects(a)));
        assert!(scopes().iter().all(|s| none.reaches(s)));
    }

    #[test]
    fn held_targets_sort_as_their_segments_and_read_back_whole() {
        let named = |kind, name: &str| Segment {
            kind,
            name: Some(name.to_owned()),
        };
        let unnamed = |kind| Segment { kind, name: None };
        let mut given: Vec<Target> = Vec::new();
        for name in ["", "a", "a\0", "a\0b", "ab", "a\u{ff}", "é", "b"] {
            given.push(Target::scope(vec![named(Kind::Project, name)]));
            for run in ["", "x", "x\0", "xy"] {
                let project = named(Kind::Project, name);
                given.push(Target::scope(vec![
                    project.clone(),
                    named(Kind::LogStream, run),
                ]));
                given.push(Target::scope(vec![
                    project.clone(),
                    named(Kind::LogStream, run),
                    unnamed(Kind::Settings),
                ]));
                given.push(Target::scope(vec![project, named(Kind::Experiment, run)]));
            }
            given.push(Target::scope(vec![named(Kind::Integration, name)]));
        }
        given.push(Target::scope(vec![unnamed(Kind::Project)]));
        let mut expected = given.clone();
        expected.sort();
        expected.dedup();
        given.reverse();
        let targets: Targets = given.into();
        assert_eq!(targets.to_vec(), expected);
    }

    #[test]
    fn every_printed_address_parses_back_to_itself() {
        let addresses = [
            section(),
            Address::Integration(IntegrationAddress {
                provider: "openai".into(),
            }),
            Address::Favorite(FavoriteAddress {
                project: "a.b".into(),
                log_stream: "c\\d".into(),
            }),
            Address::MetricSettings(MetricSettingsAddress {
                project: "demo".into(),
                run_kind: RunKind::Experiment,
                run: "id:123".into(),
            }),
            Address::Template(TemplateAddress {
                project: "demo".into(),
                kind: TemplateKind::Feedback,
                name: "]]]".into(),
            }),
            Address::Widget(WidgetAddress {
                project: "demo".into(),
                log_stream: "prod".into(),
                dashboard: None,
                section: Some("Quality".into()),
                name: "p95 [ms]".into(),
            }),
            Address::Widget(WidgetAddress {
                project: "demo".into(),
                log_stream: "prod".into(),
                dashboard: Some("On-call".into()),
                section: None,
                name: "Errors".into(),
            }),
            Address::Settings(SettingsAddress {
                project: "demo".into(),
                log_stream: "prod".into(),
                dashboard: Some("x.y".into()),
            }),
            Address::Settings(SettingsAddress {
                project: "demo".into(),
                log_stream: "prod".into(),
                dashboard: None,
            }),
            Address::Dashboard(DashboardAddress {
                project: "demo".into(),
                log_stream: "prod".into(),
                name: "On-call".into(),
            }),
            Address::CustomIntegration(CustomIntegrationAddress {
                name: "gateway".into(),
            }),
        ];
        for a in addresses {
            let t = Target::parse(&a.to_string()).unwrap();
            assert!(t.selects(&a), "{a}");
            assert_eq!(t.to_string(), a.to_string());
        }
    }

    #[test]
    fn a_target_selects_the_addresses_it_starts() {
        let a = section();
        let parse = |s: &str| Target::parse(s).unwrap();
        assert!(parse("project[demo]").selects(&a));
        assert!(parse("project[demo].log_stream[prod]").selects(&a));
        assert!(parse("project[demo].log_stream[prod].trends").selects(&a));
        assert!(!parse("project[dem]").selects(&a));
        assert!(!parse("project[demo].log_stream[pro]").selects(&a));
        assert!(!parse("project[demo].log_stream[prod].trends.favorite").selects(&a));
    }

    #[test]
    fn errors_say_where_and_what() {
        let err = |s: &str| Target::parse(s).unwrap_err();
        assert_eq!(err("]]]").column, 1);
        assert!(
            err("]]]")
                .message
                .contains("expected one of project, integration, custom_integration")
        );
        let e = err("project[demo-projetc");
        assert_eq!(e.column, 21);
        assert!(e.message.contains("expected `]`"), "{e}");
        let e = err("projetc[demo]");
        assert!(e.message.contains("unknown kind `projetc`"), "{e}");
        let e = err("project[demo].section[x]");
        assert_eq!(e.column, 15);
        assert!(e.message.contains("cannot come after `project`"), "{e}");
        assert!(
            err("project[demo].log_stream[x].metric_settings[y]")
                .message
                .contains("takes no name")
        );
        assert!(
            err("project[demo].log_stream[x].trends.settings[y]")
                .message
                .contains("takes no name")
        );
        let e = err("project[demo].log_stream[x].dashboard[d].favorite");
        assert!(e.message.contains("cannot come after `dashboard`"), "{e}");
        let e = err("project[demo].log_stream[x].trends.widget[w].section[s]");
        assert!(e.message.contains("nothing can follow `widget`"), "{e}");
        let e = err("project[demo].log_stream[x].metric_settings.scorers");
        assert_eq!(e.column, 45);
        assert!(
            e.message
                .contains("nothing can follow `metric_settings`: it is the last segment"),
            "{e}"
        );
        assert!(err("project[demo]x").message.contains("unexpected `x`"));
        assert!(err("").message.contains("empty"));
        assert!(
            err("project[a].")
                .message
                .contains("expected one of log_stream")
        );
        let rendered = err("project[demo-projetc").to_string();
        assert!(
            rendered.ends_with("\n  project[demo-projetc\n                      ^"),
            "{rendered}"
        );
    }

    #[test]
    fn scopes_overlap_targets_inside_and_around_them() {
        let t = Target::parse("project[demo].annotation_template[Q]").unwrap();
        let scope = Target::scope(vec![
            Segment::named(Kind::Project, "demo"),
            Segment::kind(TemplateKind::Annotation.segment_kind()),
        ]);
        assert!(t.overlaps(&scope));
        let wide = Target::parse("project[demo]").unwrap();
        assert!(wide.overlaps(&scope));
        let other = Target::parse("project[demo].feedback_template[Q]").unwrap();
        assert!(!other.overlaps(&scope));
    }
}
