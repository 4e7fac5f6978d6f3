//! The shared first half of plan, apply and drift: load the manifests, check
//! the targets against them, connect, read live state, compute the plan, and
//! read what reviewers want beside it.

use std::path::PathBuf;

use crate::cli::{LiveArgs, ManifestArgs, ThreeWayArgs};
use crate::error::Error;
use crate::manifest::diagnostic::{self, Diagnostic, Severity, github};
use crate::manifest::{self, Threads, set::ManifestSet};
use crate::output::Printer;
use crate::plan::attribution::{self, Sides};
use crate::plan::{Enrichment, Plan, PlanError, PlanOptions, Problem, target};
use crate::progress::Progress;
use crate::reconcile::{
    ReadAndPlanned, ReadError, TouchedVersions, enrich::enrich, read_and_plan, read_and_plan_once,
    read_and_plan_three_way,
};
use crate::state::State;

use super::connect::{Connection, connect};

/// Everything a reconciling command has after planning.
pub struct Planned {
    /// Where the manifests are, to load them again: they were handed to the
    /// planner, which released each project once planned.
    pub source: ManifestSource,
    /// The connection.
    pub connection: Connection,
    /// Live state, as read for the plan (each project's compared contents
    /// released once planned: ids and names are left).
    pub state: State,
    /// The plan.
    pub plan: Plan,
    /// Blast radius and people.
    pub enrichment: Enrichment,
}

/// What `plan` and `drift` print from: the plan, what was read beside it and
/// the connection. The manifests and live state are not kept: they grow
/// with the repo, and printing does not need them.
pub struct Printable {
    /// The plan.
    pub plan: Plan,
    /// Blast radius and people.
    pub enrichment: Enrichment,
    /// The connection.
    pub connection: Connection,
}

impl From<Planned> for Printable {
    fn from(planned: Planned) -> Self {
        Printable {
            plan: planned.plan,
            enrichment: planned.enrichment,
            connection: planned.connection,
        }
    }
}

/// The manifests a plan was made from, as where they are and a digest of
/// what they held: `apply` loads them again to confirm rather than holding
/// them through the apply (they grow with the repo; reading them again
/// costs time, not memory).
#[derive(Debug, Clone)]
pub struct ManifestSource {
    paths: Vec<PathBuf>,
    digest: u64,
    /// The mass-change guard's limits the repo's Settings give.
    guard: crate::plan::GuardLimits,
    /// What a plan of these manifests notes ([`crate::policy::plan_notes`]).
    notes: Vec<String>,
    /// The Policy documents, for their forecast rules ([`ManifestSource::check_forecast`]).
    policies: Vec<crate::manifest::set::Located<crate::policy::PolicySpec>>,
    /// Whether problems are also written as GitHub annotations
    /// (`--github-annotations`).
    annotate: bool,
}

impl ManifestSource {
    /// The mass-change guard's limits these manifests set (`kind: Settings`).
    pub fn guard(&self) -> crate::plan::GuardLimits {
        self.guard
    }

    /// `options` with the guard's limits these manifests set.
    fn options(&self, options: &PlanOptions) -> PlanOptions {
        PlanOptions {
            guard: self.guard,
            ..options.clone()
        }
    }

    /// The forecast rules of these manifests' policies on a plan's forecast
    /// `figures`: the seam the judge-call forecast calls once it has them (a plan
    /// without a forecast calls nothing, and no forecast rule is evaluated).
    /// Violations are printed on stderr at their rules, as loading prints manifest
    /// problems (and as GitHub annotations with `annotate`); an error-severity one
    /// ends the command (exit 65, [`Error::InvalidManifests`]); the warnings come back
    /// as notes for the plan (`plan.notes`, then sorted), which every format shows.
    pub fn check_forecast(
        &self,
        figures: &crate::policy::ForecastFigures,
        printer: &Printer,
        annotate: bool,
    ) -> Result<Vec<crate::plan::Note>, Error> {
        let violations = crate::policy::evaluate_forecast(&self.policies, figures);
        if violations.is_empty() {
            return Ok(Vec::new());
        }
        let (diagnostics, sources) = crate::policy::diagnostics(&violations);
        let rendered = diagnostic::render_all(
            &diagnostics,
            |d| {
                let masked = sources.get(&d.file)?;
                Some((masked.text(), masked.shown(d.span?)))
            },
            printer.color_stderr(),
        );
        printer.diagnostics(rendered.trim_end_matches('\n'));
        if annotate {
            let annotations = github::annotations(&diagnostics);
            printer.diagnostics(annotations.trim_end_matches('\n'));
        }
        let errors = diagnostics.iter().filter(|d| d.is_error()).count();
        if errors > 0 {
            return Err(Error::InvalidManifests { count: errors });
        }
        Ok(diagnostics
            .iter()
            .map(|d| crate::plan::Note {
                address: None,
                kind: crate::plan::NoteKind::Info,
                message: crate::policy::note_text(d),
                created_by: None,
            })
            .collect())
    }

    /// `plan` with the notes the manifests add (policy warnings, a loosened
    /// guard), its forecast checked against the policies' forecast rules
    /// ([`ManifestSource::check_forecast`]: an error-severity violation ends
    /// the command).
    fn noted(&self, mut plan: Plan, printer: &Printer) -> Result<Plan, Error> {
        if let Some(forecast) = &plan.forecast {
            let figures = crate::policy::ForecastFigures::of(forecast);
            let warnings = self.check_forecast(&figures, printer, self.annotate)?;
            plan.notes.extend(warnings);
            plan.notes.sort();
        }
        if self.notes.is_empty() {
            return Ok(plan);
        }
        plan.notes
            .extend(self.notes.iter().map(|message| crate::plan::Note {
                address: None,
                kind: crate::plan::NoteKind::Info,
                message: message.clone(),
                created_by: None,
            }));
        plan.notes.sort();
        Ok(plan)
    }
}

impl ManifestSource {
    /// The manifests again, exactly as they were planned (their diagnostics
    /// were printed then); an error when a file changed since.
    pub fn reload(&self) -> Result<ManifestSet, ManifestsChanged> {
        let outcome = manifest::load_on(Threads::One, &self.paths, &process_env);
        if outcome.has_errors() || outcome.digest != self.digest {
            return Err(ManifestsChanged);
        }
        Ok(outcome.set)
    }
}

impl ManifestSource {
    /// The warnings at the fields that take each of `names` (integration
    /// secrets found unset), rendered: loaded again on this error path only,
    /// as `apply` mentions an unset secret only when its plan sends it.
    pub fn unset_secrets(&self, names: &[String], color: bool) -> String {
        let mut outcome = manifest::load_on(Threads::One, &self.paths, &process_env);
        outcome
            .diagnostics
            .retain(|d| d.unset_secret.as_ref().is_some_and(|n| names.contains(n)));
        outcome.render_diagnostics(color)
    }
}

/// The manifests changed on disk between the plan and the confirmation.
#[derive(Debug, thiserror::Error)]
#[error(
    "the manifests changed while apply ran, so what it did cannot be confirmed against them; `evalctl plan` shows what is left"
)]
pub struct ManifestsChanged;

/// Reads environment variables for the manifests.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Whether the command sends integration secrets (write-only tokens).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secrets {
    /// `apply`: an unset variable is an error when the plan sends it
    /// (checked once planned, before any write), and not mentioned otherwise.
    Sent,
    /// `plan`, `drift`: they never read write-only secrets, so unset ones are
    /// mentioned once, together, and not per integration.
    NotNeeded,
}

/// Takes the warnings about unset integration tokens out of `outcome` and
/// says once, on stderr, which are unset: only `apply` needs them (for
/// `validate`, `plan`, `drift`, so a CI log or a pull request's annotations
/// carry no warning per integration for a token the job does not need).
pub fn note_unset_secrets(outcome: &mut manifest::LoadOutcome, printer: &Printer) {
    let mut unset: Vec<String> = outcome
        .diagnostics
        .iter()
        .filter_map(|d| d.unset_secret.clone())
        .collect();
    unset.sort();
    unset.dedup();
    outcome.diagnostics.retain(|d| d.unset_secret.is_none());
    if !unset.is_empty() {
        printer.info(&format!(
            "note: plan and drift do not need integration tokens; apply does ({} not set here: {})",
            unset.len(),
            unset.join(", ")
        ));
    }
}

/// Loads the manifests for a command that uses `secrets` so, printing their
/// diagnostics: the manifests, and where they came from.
pub fn load_manifests_for(
    args: &ManifestArgs,
    secrets: Secrets,
    printer: &Printer,
) -> Result<(ManifestSet, ManifestSource), Error> {
    let mut outcome = manifest::load_on(Threads::One, &args.paths, &process_env);
    if secrets == Secrets::Sent {
        // Needed only where the plan sends them: apply refuses then, naming
        // each, before any write (`check_secrets_available`).
        outcome.diagnostics.retain(|d| d.unset_secret.is_none());
    } else {
        note_unset_secrets(&mut outcome, printer);
    }
    let rendered = outcome.render_diagnostics(printer.color_stderr());
    if !rendered.is_empty() {
        printer.diagnostics(&rendered);
    }
    if args.github_annotations {
        let annotations = outcome.github_annotations();
        if !annotations.is_empty() {
            printer.diagnostics(annotations.trim_end_matches('\n'));
        }
    }
    if outcome.has_errors() {
        return Err(Error::InvalidManifests {
            count: outcome.error_count(),
        });
    }
    let source = ManifestSource {
        paths: args.paths.clone(),
        digest: outcome.digest,
        guard: crate::policy::settings::guard_limits(&outcome.set),
        notes: crate::policy::plan_notes(&outcome.set),
        policies: outcome.set.policies.clone(),
        annotate: args.github_annotations,
    };
    Ok((outcome.set, source))
}

/// Loads, checks the targets, connects, reads and plans for a command that
/// uses write-only secrets so. The manifests are handed to the planner,
/// which releases each project once planned ([`read_and_plan_once`]): what
/// is kept of them is where they are ([`ManifestSource`]).
pub async fn plan_from_manifests(
    manifests: &ManifestArgs,
    secrets: Secrets,
    live_args: &LiveArgs,
    options: &PlanOptions,
    printer: &Printer,
) -> Result<Planned, Error> {
    let (desired, source) = load_manifests_for(manifests, secrets, printer)?;
    let options = &source.options(options);
    let pruned = target::unmatched(&desired, &options.targets.to_vec(), options.prune)?;
    let connection = connect(live_args)?;
    let shown = Progress::start(printer, &connection.client, "Loading live state");
    let read = read_and_plan_once(&connection.client, desired, options).await;
    drop(shown);
    let planned = enriched(&connection, read, printer).await;
    let (state, plan, enrichment) = words_unresolved(planned, manifests, printer)?;
    let plan = source.noted(plan, printer)?;
    if !pruned.is_empty() {
        let addresses: Vec<crate::plan::Address> = (0..plan.changes.len())
            .map(|i| plan.changes.address(i).into_owned())
            .collect();
        target::unplanned(&pruned, &addresses)?;
    }
    Ok(Planned {
        source,
        connection,
        state,
        plan,
        enrichment,
    })
}

/// `planned`, with references that do not exist reported at their fields
/// ([`report_unresolved`]).
fn words_unresolved(
    planned: Result<(State, Plan, Enrichment), Error>,
    manifests: &ManifestArgs,
    printer: &Printer,
) -> Result<(State, Plan, Enrichment), Error> {
    match planned {
        Err(Error::UnknownReferences(error)) => Err(report_unresolved(
            &error,
            printer,
            manifests.github_annotations,
        )),
        planned => planned,
    }
}

/// Loads the other manifests of a three-way plan (`--base`, `--applied`):
/// the set, or why it cannot be used (a sentence for the plan's note). Their
/// diagnostics are not printed: they are not this PR's to fix. A path that
/// does not exist declares nothing (the first PR adding the manifests: the
/// base branch has none), with a warning in case it is a typo.
fn load_other(
    flag: &str,
    what: &'static str,
    paths: &[PathBuf],
    printer: &Printer,
) -> Result<ManifestSet, OtherNotLoaded> {
    let (present, missing): (Vec<PathBuf>, Vec<PathBuf>) =
        paths.iter().cloned().partition(|p| p.exists());
    for path in &missing {
        printer.warn(&format!(
            "{flag} {}: no such file or directory; {what} there declare nothing",
            path.display()
        ));
    }
    if present.is_empty() {
        return Ok(ManifestSet::default());
    }
    let outcome = manifest::load_on(Threads::One, &present, &process_env);
    if outcome.has_errors() {
        return Err(OtherNotLoaded {
            what,
            errors: outcome.error_count(),
            paths: present,
        });
    }
    Ok(outcome.set)
}

/// Why the manifests given to `--base` or `--applied` are not used: they
/// have errors. Shown as a warning and a note, not as a failure.
#[derive(Debug, thiserror::Error)]
#[error(
    "{what} do not load ({errors} error{s}; `evalctl validate {paths}` shows them)",
    s = if *.errors == 1 { "" } else { "s" },
    paths = .paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" ")
)]
struct OtherNotLoaded {
    /// What they are ("the base manifests").
    what: &'static str,
    /// How many errors loading them found.
    errors: usize,
    /// The paths given that exist.
    paths: Vec<PathBuf>,
}

/// Refuses manifests that hold a path given to `flag`: the manifests would
/// hold the other side's copy of every project besides their own. Most often
/// the manifests' path was left out and defaulted to `.`, which holds the
/// base's worktree. (The same path on both sides is allowed: each is loaded
/// on its own.)
fn overlap(flag: &'static str, manifests: &[PathBuf], others: &[PathBuf]) -> Result<(), Error> {
    for manifest in manifests {
        let Ok(manifest_full) = manifest.canonicalize() else {
            continue;
        };
        for other in others {
            let Ok(other_full) = other.canonicalize() else {
                continue;
            };
            if other_full != manifest_full && other_full.starts_with(&manifest_full) {
                return Err(Error::PathsOverlap {
                    flag,
                    manifests: manifest.clone(),
                    other: other.clone(),
                    defaulted: manifests.len() == 1 && manifest.as_os_str() == ".",
                });
            }
        }
    }
    Ok(())
}

fn problems(what: &str, error: &PlanError) -> String {
    let first = error
        .problems
        .first()
        .map(ToString::to_string)
        .unwrap_or_default();
    let more = match error.problems.len() {
        0 | 1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    format!("{what} refer to objects that do not exist ({first}{more})")
}

/// Like [`plan_from_manifests`], with the base branch's manifests (and the
/// manifests as last applied) when `three_way` names them: every change
/// and field of the plan is then attributed ([`attribution`]). A base that
/// does not load or plan gives the usual plan with a note saying why it is
/// not attributed (and a warning). For `plan` and `drift`: write-only
/// secrets are not needed ([`Secrets::NotNeeded`]).
pub async fn plan_three_way(
    manifests: &ManifestArgs,
    three_way: &ThreeWayArgs,
    live_args: &LiveArgs,
    options: &PlanOptions,
    printer: &Printer,
) -> Result<Printable, Error> {
    if three_way.base.is_empty() {
        let planned =
            plan_from_manifests(manifests, Secrets::NotNeeded, live_args, options, printer).await?;
        return Ok(planned.into());
    }
    overlap("--base", &manifests.paths, &three_way.base)?;
    overlap("--applied", &manifests.paths, &three_way.applied)?;
    let (desired, source) = load_manifests_for(manifests, Secrets::NotNeeded, printer)?;
    let options = &source.options(options);
    // Here a target names a declared object (a pruned object's address is for plain plans).
    target::unmatched(&desired, &options.targets.to_vec(), false)?;
    let base = load_other("--base", "the base manifests", &three_way.base, printer);
    let applied = if three_way.applied.is_empty() {
        None
    } else {
        Some(load_other(
            "--applied",
            "the manifests as last applied",
            &three_way.applied,
            printer,
        ))
    };
    let connection = connect(live_args).map_err(Error::Connect)?;
    let base = match base {
        Ok(base) => base,
        Err(why) => {
            let why = why.to_string();
            printer.warn(&format!("{why}: this plan is not attributed"));
            let planned = plan_with(&connection, &desired, options, printer).await;
            let (_, plan, enrichment) = words_unresolved(planned, manifests, printer)?;
            return Ok(Printable {
                plan: source.noted(attribution::unattributed(plan, &why), printer)?,
                enrichment,
                connection,
            });
        }
    };
    let shown = Progress::start(printer, &connection.client, "Loading live state");
    let read = read_and_plan_three_way(
        &connection.client,
        &desired,
        &base,
        applied.as_ref().and_then(|a| a.as_ref().ok()),
        options,
    )
    .await;
    drop(shown);
    let three = read?;
    let plan = three
        .plan
        .map_err(|error| report_unresolved(&error, printer, manifests.github_annotations))?;
    let plan = match &three.base {
        Err(error) => {
            let why = problems("the base manifests", error);
            printer.warn(&format!("{why}: this plan is not attributed"));
            attribution::unattributed(plan, &why)
        }
        Ok(base_plan) => {
            let mut unknown = None;
            let applied_plan = match (&applied, &three.applied) {
                (Some(Err(why)), _) => {
                    unknown = Some(why.to_string());
                    None
                }
                (_, Some(Err(error))) => {
                    unknown = Some(problems("the manifests as last applied", error));
                    None
                }
                (_, Some(Ok(plan))) => Some(plan),
                _ => None,
            };
            let declared = target::declared(&desired);
            let mut plan = attribution::attribute(
                plan,
                Sides {
                    base: base_plan,
                    applied: applied_plan,
                    declared: &declared,
                },
            )?;
            if let Some(why) = unknown {
                printer.warn(&format!("{why}: pending changes are shown as drift"));
                plan.notes.push(attribution::applied_unknown(&why));
                plan.notes.sort();
            }
            plan
        }
    };
    let plan = source.noted(plan, printer)?;
    log_details(&plan);
    let touched = TouchedVersions::of_state(&three.state, &plan)?;
    let (enrichment, warning) = enrich(&connection.client, &touched, &plan).await;
    if let Some(warning) = warning {
        printer.warn(&warning);
    }
    Ok(Printable {
        plan,
        enrichment,
        connection,
    })
}

/// Prints each problem of `error` as a diagnostic at the field that makes the
/// reference (`file:line:column`, the line quoted, the nearest names as help),
/// found again in its file ([`manifest::locate`], on this error path only), and
/// with `annotate` as a GitHub annotation too; returns the error that ends the
/// command (exit 65).
pub fn report_unresolved(error: &PlanError, printer: &Printer, annotate: bool) -> Error {
    let color = printer.color_stderr();
    // Each diagnostic with its rendering, sorted by file and position.
    let mut located = Vec::new();
    let mut unlocated_ones = Vec::new();
    for problem in &error.problems {
        let (message, help) = split_help(&problem.message);
        let field = problem.field.clone().unwrap_or_default();
        match problem
            .origin
            .as_ref()
            .and_then(|origin| manifest::locate(origin, &field))
        {
            Some(location) => {
                let diagnostic = location
                    .diagnostic(Severity::Error, message)
                    .with_help_opt(help);
                let rendered = location.render(&diagnostic, color);
                located.push((diagnostic, rendered));
            }
            None => unlocated_ones.push(unlocated(problem, color)),
        }
    }
    located.sort_by(|a, b| diagnostic::compare(&a.0, &b.0));
    let mut rendered = String::new();
    for text in located.iter().map(|(_, r)| r).chain(&unlocated_ones) {
        rendered.push_str(text);
        rendered.push('\n');
    }
    printer.diagnostics(rendered.trim_end_matches('\n'));
    if annotate {
        let diagnostics: Vec<Diagnostic> = located.into_iter().map(|(d, _)| d).collect();
        let annotations = github::annotations(&diagnostics);
        if !annotations.is_empty() {
            printer.diagnostics(annotations.trim_end_matches('\n'));
        }
    }
    Error::UnresolvedReferences {
        count: error.problems.len(),
    }
}

/// A problem whose file cannot be read again: its origin (or nothing) and message.
fn unlocated(problem: &Problem, color: bool) -> String {
    let file = problem
        .origin
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    let (message, help) = split_help(&problem.message);
    Diagnostic::new(Severity::Error, file, None, message)
        .with_help_opt(help)
        .render(None, color)
}

/// `message; did you mean `x`?` as the message and the help line.
fn split_help(message: &str) -> (&str, Option<&str>) {
    match message.split_once("; did you mean ") {
        Some((what, _)) => (what, Some(&message[what.len() + 2..])),
        None => (message, None),
    }
}

/// Reads live state for `desired` over `connection` and plans, with blast
/// radius and people.
pub async fn plan_with(
    connection: &Connection,
    desired: &ManifestSet,
    options: &PlanOptions,
    printer: &Printer,
) -> Result<(State, Plan, Enrichment), Error> {
    let shown = Progress::start(printer, &connection.client, "Loading live state");
    let read = read_and_plan(&connection.client, desired, options).await;
    drop(shown);
    enriched(connection, read, printer).await
}

/// The plan `read` holds, with blast radius and people read beside it.
/// Logs the plan's details (`-v`): notes nobody can act on
/// ([`crate::plan::NoteKind::Detail`]), which text and markdown leave out.
fn log_details(plan: &Plan) {
    for note in plan
        .notes
        .iter()
        .filter(|n| n.kind == crate::plan::NoteKind::Detail)
    {
        let message = crate::render::values::sanitize(&note.message);
        match &note.address {
            Some(address) => tracing::info!(
                "note: {}: {message}",
                crate::render::values::sanitize(&address.to_string())
            ),
            None => tracing::info!("note: {message}"),
        }
    }
}

async fn enriched(
    connection: &Connection,
    read: Result<ReadAndPlanned, ReadError>,
    printer: &Printer,
) -> Result<(State, Plan, Enrichment), Error> {
    let read = read?;
    let plan = read.plan?;
    log_details(&plan);
    let (enrichment, warning) = enrich(&connection.client, &read.touched, &plan).await;
    if let Some(warning) = warning {
        printer.warn(&warning);
    }
    Ok((read.state, plan, enrichment))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROJECT: &str = "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    metric_settings:\n      scorers:\n        - name: correctness\n";

    /// Where the manifests in `dir` are and what they held, as
    /// [`load_manifests_for`] records it.
    fn source_of(dir: &std::path::Path) -> ManifestSource {
        let paths = vec![dir.to_path_buf()];
        let outcome = manifest::load_on(Threads::One, &paths, &process_env);
        assert!(!outcome.has_errors(), "{:?}", outcome.diagnostics);
        ManifestSource {
            paths,
            digest: outcome.digest,
            guard: crate::plan::GuardLimits::default(),
            notes: Vec::new(),
            policies: outcome.set.policies,
            annotate: false,
        }
    }

    /// The forecast's seam: no violation, nothing; a warning, a plan note at the rule;
    /// an error, exit 65.
    #[test]
    fn forecast_rules_run_on_the_figures_given() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("demo.yaml"), PROJECT).expect("write");
        let policy = "kind: Policy\nname: budget\nrules:\n  - name: soft\n    target: forecast\n    expression: forecast.llm_judge_calls_per_day <= 1000.0\n    message: over the soft budget\n    severity: warning\n  - name: hard\n    target: forecast\n    expression: forecast.projects.all(p, forecast.projects[p].llm_judge_calls_per_day <= 5000.0)\n    message: a project is over its budget\n";
        std::fs::write(dir.path().join("policy.yaml"), policy).expect("write");
        let source = source_of(dir.path());
        let printer = Printer::new(crate::output::ColorChoice::Never, true);
        let mut figures = crate::policy::ForecastFigures {
            llm_judge_calls_per_day: 900.0,
            ..Default::default()
        };
        let notes = source.check_forecast(&figures, &printer, false);
        assert!(notes.as_ref().is_ok_and(Vec::is_empty), "{notes:?}");

        figures.llm_judge_calls_per_day = 4200.0;
        let notes = source
            .check_forecast(&figures, &printer, false)
            .expect("a warning");
        assert_eq!(notes.len(), 1);
        let file = dir.path().join("policy.yaml").display().to_string();
        assert!(
            notes[0].message.starts_with(&format!(
                "policy warning at {file}:4:5: the judge-call forecast: over the soft budget"
            )),
            "{notes:?}"
        );

        figures.projects.insert(
            "demo-project".into(),
            crate::policy::objects::ProjectForecast {
                llm_judge_calls_per_day: 6000.0,
                ..Default::default()
            },
        );
        let error = source
            .check_forecast(&figures, &printer, false)
            .expect_err("over the hard budget");
        assert!(
            matches!(error, Error::InvalidManifests { count: 1 }),
            "{error:?}"
        );
    }

    #[test]
    fn manifests_load_again_as_planned_unless_a_file_changed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("demo.yaml");
        std::fs::write(&file, PROJECT).expect("write");
        let source = source_of(dir.path());
        let again = source.reload().expect("unchanged manifests load again");
        assert_eq!(again.projects.len(), 1);
        assert_eq!(again.projects[0].spec.name.as_deref(), Some("demo-project"));

        // One character of one file, the same size: not the manifests planned.
        std::fs::write(&file, PROJECT.replace("correctness", "completeness")).expect("write");
        let changed = source.reload().expect_err("a changed file is noticed");
        assert!(changed.to_string().contains("changed while apply ran"));

        // Back as it was: the same manifests again.
        std::fs::write(&file, PROJECT).expect("write");
        assert!(source.reload().is_ok());

        // A file added beside them is a change too.
        std::fs::write(dir.path().join("more.yaml"), "kind: Project\nname: other\n")
            .expect("write");
        assert!(source.reload().is_err());
    }
}
