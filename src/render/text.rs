//! The text format: what people read in a terminal and in CI logs.
//!
//! Terraform-like: one line per change (`  ~ address (reason)`), its field
//! changes indented under it (`      ~ path: 3 → 5`), long texts as unified
//! diffs, warnings (`!`) and blast radius after them; notes grouped by kind;
//! a one-line footer with the counts. A three-way plan (`--base`) groups
//! its changes by attribution, says under a field when it is not its
//! group's, and counts the groups after the footer. Drift mode words fields as
//! `configured: X  live: Y`. Colour, when asked for, marks only symbols,
//! addresses, diff lines and warnings.

use std::fmt::Write as _;

use super::entries::{self, Entry, Wording, blast_radius_line, display_path, plural, secret_sent};
use super::style::{Painter, Role};
use super::values::{DiffLine, Shown, is_bare_entry, sanitize, sanitize_lines, show, text_diff};
use super::{Mode, RenderOptions};
use crate::plan::attribution::AttributionCounts;
use crate::plan::guard;
use crate::plan::{
    Action, ApplyReport, Attribution, ChangeOutcome, ChangesError, Enrichment, Note, NoteKind,
    OutcomeStatus, Plan, ResourceChange,
};

/// Indentation of a change's lines.
const CHANGE: &str = "  ";
/// Indentation of a field's lines.
const FIELD: &str = "      ";
/// Indentation of what is nested under a field.
const NESTED: &str = "          ";

/// Renders a plan or drift report.
pub(crate) fn plan(
    plan: &Plan,
    enrichment: &Enrichment,
    opts: &RenderOptions,
) -> Result<String, ChangesError> {
    let mut text = String::new();
    write_plan(plan, enrichment, opts, &mut |chunk: &str| {
        text.push_str(chunk)
    })?;
    Ok(text)
}

/// How much rendered text is held before it is handed on: a large plan
/// renders to megabytes, which are never held whole when printed.
const CHUNK: usize = 64 * 1024;

/// Renders a plan or drift report, handing the text to `emit` in pieces
/// that end at a line break, in order ([`plan`] joins them). The changes
/// are read one at a time (a large plan's are in a temporary file).
pub(crate) fn write_plan(
    plan: &Plan,
    enrichment: &Enrichment,
    opts: &RenderOptions,
    emit: &mut dyn FnMut(&str),
) -> Result<(), ChangesError> {
    let p = Painter::new(opts.color);
    let mut out = Chunks {
        text: String::new(),
        emit,
    };
    let out = &mut out;
    let n = plan.changes.len();
    if n > 0 {
        let head = match opts.mode {
            Mode::Plan => "evalctl will perform the following actions:".to_owned(),
            Mode::Drift => format!("Drift detected in {n} object{}:", plural(n)),
        };
        let _ = writeln!(out.text, "{}\n", p.paint(Role::Strong, &head));
        if AttributionCounts::of(plan).is_some() {
            attributed(out, plan, enrichment, opts.mode, p)?;
        } else {
            for change in plan.changes.iter() {
                change_block(&mut out.text, &*change?, enrichment, opts.mode, p);
                out.text.push('\n');
                out.pass_on_when_full();
            }
        }
    }
    let chunks = out;
    let out = &mut chunks.text;
    notes(out, &plan.notes, enrichment, p);
    let summary = plan.summary();
    let footer = match (opts.mode, n) {
        (Mode::Plan, 0) => "No changes. Live state matches the manifests.".to_owned(),
        (Mode::Plan, _) => format!("Plan: {summary}."),
        (Mode::Drift, 0) => "No drift.".to_owned(),
        (Mode::Drift, _) => format!("To reconcile: {summary} (evalctl apply)."),
    };
    let _ = writeln!(out, "{}", p.paint(Role::Strong, &footer));
    mass_changes(out, plan, opts.mode, p);
    match (AttributionCounts::of(plan), opts.mode) {
        (Some(counts), Mode::Plan) => {
            let _ = writeln!(
                out,
                "By attribution: {} by this PR, {} reverting out-of-band changes, {} in conflict, {} pending.",
                counts.proposed, counts.drift, counts.conflict, counts.pending
            );
        }
        (Some(counts), Mode::Drift) => {
            let _ = writeln!(
                out,
                "By attribution: {} drifted out of band, {} pending (not applied yet), {} changed in the manifests since the base, {} in conflict.",
                counts.drift, counts.pending, counts.proposed, counts.conflict
            );
        }
        (None, _) => {}
    }
    if let Some(forecast) = &plan.forecast {
        // A run at a time, handed on as the changes are: a forecast of
        // 10,000 runs is megabytes of text.
        super::forecast::text_block(forecast, opts.mode, p, &mut |text| {
            chunks.text.push_str(text);
            chunks.pass_on_when_full();
        });
    }
    Ok(())
}

/// The collections a plan deletes or replaces too much of, as a warning
/// under the footer (a drift report applies nothing, so it has none).
fn mass_changes(out: &mut String, plan: &Plan, mode: Mode, p: Painter) {
    if mode != Mode::Plan || plan.mass_changes.is_empty() {
        return;
    }
    let head = format!("Warning: {}:", guard::headline(&plan.mass_changes));
    let _ = writeln!(out, "\n{}", p.paint(Role::Warning, &head));
    for change in &plan.mass_changes {
        let _ = writeln!(out, "  - {}", sanitize(&change.to_string()));
    }
}

/// Rendered text not yet handed on, and where it goes.
struct Chunks<'a> {
    text: String,
    emit: &'a mut dyn FnMut(&str),
}

impl Chunks<'_> {
    /// Hands the text on once [`CHUNK`] bytes are held (the text ends at a
    /// line break whenever this is called).
    fn pass_on_when_full(&mut self) {
        if self.text.len() >= CHUNK {
            (self.emit)(&self.text);
            self.text.clear();
        }
    }
}

impl Drop for Chunks<'_> {
    /// Hands on what is left.
    fn drop(&mut self) {
        if !self.text.is_empty() {
            (self.emit)(&self.text);
        }
    }
}

/// A three-way plan's group heading. A drift report (`drift --base`, on a
/// schedule) compares the manifests with an earlier commit, not a PR.
fn attribution_heading(attribution: Attribution, mode: Mode) -> &'static str {
    match (attribution, mode) {
        (Attribution::Proposed, Mode::Plan) => "Changed by this PR",
        (Attribution::Proposed, Mode::Drift) => {
            "Changed in the manifests since the base, not applied"
        }
        (Attribution::Drift, Mode::Plan) => "Out-of-band changes this apply would revert",
        (Attribution::Drift, Mode::Drift) => "Drift: changed out of band since the last apply",
        (Attribution::Conflict, Mode::Plan) => {
            "Conflicts: changed by this PR and out of band since the base"
        }
        (Attribution::Conflict, Mode::Drift) => {
            "Conflicts: changed in the manifests since the base and out of band"
        }
        (Attribution::Pending, Mode::Plan) => "Pending: changed at the base and never applied",
        (Attribution::Pending, Mode::Drift) => "Pending: changed in the manifests, not applied yet",
    }
}

/// A three-way plan's changes, grouped by attribution (in
/// [`Attribution::ALL`]'s order; a change whose attribution is unknown
/// last).
fn attributed(
    out: &mut Chunks<'_>,
    plan: &Plan,
    enrichment: &Enrichment,
    mode: Mode,
    p: Painter,
) -> Result<(), ChangesError> {
    let changes = &plan.changes;
    let groups = Attribution::ALL.map(Some).into_iter().chain([None]);
    for group in groups {
        let indices: Vec<usize> = (0..changes.len())
            .filter(|&i| changes.attribution(i) == group)
            .collect();
        if indices.is_empty() {
            continue;
        }
        let heading = group.map_or("Not attributed", |a| attribution_heading(a, mode));
        let heading = format!("{heading} ({}):", indices.len());
        let _ = writeln!(out.text, "{}\n", p.paint(Role::Strong, &heading));
        for i in indices {
            change_block(&mut out.text, &*changes.get(i)?, enrichment, mode, p);
            out.text.push('\n');
            out.pass_on_when_full();
        }
    }
    Ok(())
}

fn change_block(
    out: &mut String,
    change: &ResourceChange,
    enrichment: &Enrichment,
    mode: Mode,
    p: Painter,
) {
    let symbol = p.paint(Role::of(change.action), change.action.symbol());
    let address = p.paint(Role::Strong, &sanitize(&change.address.to_string()));
    let _ = write!(out, "{CHANGE}{symbol} {address}");
    let reason = sanitize(&change.reason);
    if !reason.is_empty() {
        let _ = write!(out, " ({reason})");
    }
    out.push('\n');
    let wording = Wording::of_change(mode, change.action);
    for (shown, remark) in entries::shown_by_field(change, mode) {
        for entry in shown {
            entry_lines(out, &entry, wording, change.action, p);
        }
        if let Some(remark) = remark {
            let _ = writeln!(
                out,
                "{NESTED}{}",
                p.paint(Role::Dim, &format!("({remark})"))
            );
        }
    }
    for warning in &change.warnings {
        for (i, line) in sanitize_lines(warning).iter().enumerate() {
            let lead = if i == 0 { "! " } else { "  " };
            let _ = writeln!(
                out,
                "{FIELD}{}",
                p.paint(Role::Warning, &format!("{lead}{line}"))
            );
        }
    }
    for b in enrichment.blast_radius_of(&change.address) {
        let _ = writeln!(out, "{FIELD}{}", sanitize(&blast_radius_line(b)));
    }
    if let Some(who) = &change.created_by {
        let line = format!("created by {}", sanitize(enrichment.person(who)));
        let _ = writeln!(out, "{FIELD}{}", p.paint(Role::Dim, &line));
    }
}

/// `head` and the value after it: inline on the same line, a block or a
/// literal indented by `indent` under it.
fn put_shown(out: &mut String, head: &str, shown: &Shown, indent: &str) {
    match shown {
        Shown::Inline(s) => {
            let _ = writeln!(out, "{head} {s}");
        }
        Shown::Block(lines) => {
            let _ = writeln!(out, "{head}");
            for line in lines {
                let _ = writeln!(out, "{indent}{line}");
            }
        }
        Shown::Literal(lines) => {
            let _ = writeln!(out, "{head} |");
            for line in lines {
                let _ = writeln!(out, "{indent}{line}");
            }
        }
    }
}

fn shown_or_absent(v: Option<&serde_json::Value>) -> Shown {
    v.map_or_else(|| Shown::Inline("absent".to_owned()), show)
}

/// One entry of a change (or of an unconverged object, with [`Wording::Apply`]).
fn entry_lines(out: &mut String, entry: &Entry, wording: Wording, action: Action, p: Painter) {
    let sign = |role: Role, s: &str| match wording {
        Wording::Apply => String::new(),
        _ => format!("{} ", p.paint(role, s)),
    };
    match entry {
        Entry::Changed {
            path,
            before,
            after,
        } => sides(
            out,
            &sign(Role::Change, "~"),
            path,
            Some(before),
            Some(after),
            wording,
        ),
        Entry::Added { path, value } => {
            sides(out, &sign(Role::Add, "+"), path, None, Some(value), wording);
        }
        Entry::Removed { path, value } => {
            sides(
                out,
                &sign(Role::Remove, "-"),
                path,
                Some(value),
                None,
                wording,
            );
        }
        Entry::Text {
            path,
            before,
            after,
        } => {
            let path = display_path(path);
            let sign = sign(Role::Change, "~");
            match wording {
                Wording::Plan => {
                    let _ = writeln!(out, "{FIELD}{sign}{path}:");
                }
                _ => {
                    let (old, new) = wording.labels();
                    let _ = writeln!(out, "{FIELD}{sign}{path}  (- {old}, + {new}):");
                }
            }
            for line in text_diff(before, after) {
                let text = match &line {
                    DiffLine::Hunk(h) => p.paint(Role::Hunk, h),
                    DiffLine::Same(s) => format!(" {s}"),
                    DiffLine::Old(s) => p.paint(Role::Remove, &format!("-{s}")),
                    DiffLine::New(s) => p.paint(Role::Add, &format!("+{s}")),
                };
                let _ = writeln!(out, "{NESTED}{text}");
            }
        }
        Entry::Secret { path, reference } => {
            if wording == Wording::Apply {
                return;
            }
            let (role, s) = match action {
                Action::Create | Action::Replace => (Role::Add, "+"),
                Action::Update | Action::Delete => (Role::Change, "~"),
            };
            let how = secret_sent(action);
            let _ = writeln!(
                out,
                "{FIELD}{}{}: {} {}",
                sign(role, s),
                display_path(path),
                sanitize(reference),
                p.paint(
                    Role::Dim,
                    &format!("(write-only secret, {how} from the environment at apply)")
                ),
            );
        }
    }
}

/// A field with its two sides, worded for a plan, a drift report or an
/// apply report.
fn sides(
    out: &mut String,
    sign: &str,
    path: &str,
    before: Option<&serde_json::Value>,
    after: Option<&serde_json::Value>,
    wording: Wording,
) {
    let path = display_path(path);
    if wording == Wording::Plan {
        match (before, after) {
            (Some(b), Some(a)) => {
                if let (Shown::Inline(b), Shown::Inline(a)) = (show(b), show(a)) {
                    let _ = writeln!(out, "{FIELD}{sign}{path}: {b} → {a}");
                    return;
                }
            }
            // An entry of a set shown as written, with nothing to show
            // besides its key (an enabled scorer).
            (None, Some(v)) if is_bare_entry(&path, v) => {
                let _ = writeln!(out, "{FIELD}{sign}{path}");
                return;
            }
            (None, Some(v)) | (Some(v), None) => {
                put_shown(out, &format!("{FIELD}{sign}{path}:"), &show(v), NESTED);
                return;
            }
            (None, None) => return,
        }
    }
    let parts = wording.parts(before, after);
    let shown: Vec<(&str, Shown)> = parts
        .iter()
        .map(|(label, v)| (*label, shown_or_absent(*v)))
        .collect();
    let all_inline: Option<Vec<(&str, &str)>> = shown
        .iter()
        .map(|(label, s)| match s {
            Shown::Inline(s) => Some((*label, s.as_str())),
            _ => None,
        })
        .collect();
    match (wording, all_inline) {
        (Wording::Drift, Some(parts)) => {
            let joined: Vec<String> = parts.iter().map(|(l, v)| format!("{l}: {v}")).collect();
            let _ = writeln!(out, "{FIELD}{sign}{path}  {}", joined.join("  "));
        }
        (Wording::Apply, Some(parts)) => {
            let joined: Vec<String> = parts.iter().map(|(l, v)| format!("{l} {v}")).collect();
            let _ = writeln!(out, "{FIELD}{sign}{path}: {}", joined.join(", "));
        }
        _ => {
            let _ = writeln!(out, "{FIELD}{sign}{path}:");
            let deeper = format!("{NESTED}  ");
            for (label, s) in &shown {
                put_shown(out, &format!("{NESTED}{label}:"), s, &deeper);
            }
        }
    }
}

fn notes(out: &mut String, notes: &[Note], enrichment: &Enrichment, p: Painter) {
    for (kind, heading) in [
        (
            NoteKind::Unmanaged,
            "Unmanaged (live, not declared; deleted only with --prune):",
        ),
        (NoteKind::Unverifiable, "Not verifiable:"),
        (NoteKind::Info, "Notes:"),
    ] {
        let of_kind: Vec<&Note> = notes.iter().filter(|n| n.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        let _ = writeln!(out, "{}", p.paint(Role::Strong, heading));
        for note in of_kind {
            if let (NoteKind::Unmanaged, Some(address)) = (kind, &note.address) {
                // The heading says what these are: one line per object.
                let who = note
                    .created_by
                    .as_ref()
                    .map(|w| {
                        let who = sanitize(enrichment.person(w));
                        p.paint(Role::Dim, &format!(" (created by {who})"))
                    })
                    .unwrap_or_default();
                let _ = writeln!(out, "{CHANGE}* {}{who}", sanitize(&address.to_string()));
                continue;
            }
            let lines = sanitize_lines(&note.message);
            let first = lines.first().map(String::as_str).unwrap_or_default();
            match &note.address {
                Some(a) => {
                    let _ = writeln!(out, "{CHANGE}* {}: {first}", sanitize(&a.to_string()));
                }
                None => {
                    let _ = writeln!(out, "{CHANGE}* {first}");
                }
            }
            for line in lines.iter().skip(1) {
                let _ = writeln!(out, "{CHANGE}  {line}");
            }
            if let Some(who) = &note.created_by {
                let line = format!("created by {}", sanitize(enrichment.person(who)));
                let _ = writeln!(out, "{CHANGE}  {}", p.paint(Role::Dim, &line));
            }
        }
        out.push('\n');
    }
}

/// Renders what an apply did: every outcome in plan order, then the summary.
pub(crate) fn apply(report: &ApplyReport, opts: &RenderOptions) -> String {
    let mut out = String::new();
    for o in &report.outcomes {
        out.push_str(&outcome(o, opts));
    }
    if !report.outcomes.is_empty() {
        out.push('\n');
    }
    out.push_str(&summary(report, opts, false));
    out
}

/// The lines of one outcome (`  ✓ address: created`, then its detail), as
/// printed in the report and, during an apply, as soon as it is known.
pub(crate) fn outcome(o: &ChangeOutcome, opts: &RenderOptions) -> String {
    let p = Painter::new(opts.color);
    let mut out = String::new();
    let (symbol, what) = entries::outcome(o);
    let _ = writeln!(
        out,
        "{CHANGE}{} {}: {what}",
        p.paint(outcome_role(o.status), symbol),
        p.paint(Role::Strong, &sanitize(&o.address.to_string())),
    );
    if let Some(detail) = &o.detail {
        for line in sanitize_lines(detail) {
            let _ = writeln!(out, "{FIELD}{line}");
        }
    }
    out
}

fn outcome_role(status: OutcomeStatus) -> Role {
    match status {
        OutcomeStatus::Succeeded => Role::Add,
        OutcomeStatus::Failed => Role::Remove,
        OutcomeStatus::Skipped => Role::Dim,
    }
}

/// What follows the outcomes: after a streamed apply (`recap`), the failed
/// changes again, so a long log ends with them; then the objects that did not
/// converge and the counts.
pub(crate) fn summary(report: &ApplyReport, opts: &RenderOptions, recap: bool) -> String {
    let p = Painter::new(opts.color);
    let mut out = String::new();
    let failed: Vec<&ChangeOutcome> = report
        .outcomes
        .iter()
        .filter(|o| o.status == OutcomeStatus::Failed)
        .collect();
    if recap && !failed.is_empty() {
        let n = failed.len();
        let head = format!("{n} change{} failed:", plural(n));
        let _ = writeln!(out, "{}", p.paint(Role::Warning, &head));
        for o in failed {
            out.push_str(&outcome(o, opts));
        }
        out.push('\n');
    }
    if !report.unconverged.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            p.paint(
                Role::Warning,
                "Did not converge (re-read after applying, live state still differs):"
            )
        );
        for u in &report.unconverged {
            let _ = writeln!(
                out,
                "{CHANGE}{} {}",
                p.paint(Role::Warning, "!"),
                p.paint(Role::Strong, &sanitize(&u.address.to_string()))
            );
            for entry in entries::of_fields(&u.fields) {
                entry_lines(&mut out, &entry, Wording::Apply, Action::Update, p);
            }
        }
        out.push('\n');
    }
    let c = report.counts();
    let footer = format!(
        "Apply: {} succeeded, {} failed, {} skipped.",
        c.succeeded, c.failed, c.skipped
    );
    let _ = writeln!(out, "{}", p.paint(Role::Strong, &footer));
    if !report.is_complete() {
        let _ = writeln!(out, "{}", incomplete_line(report));
    }
    out
}

/// The line under an incomplete apply's footer: a second apply is advised
/// for what failed for a reason that passes, never for what the service
/// refused (see [`crate::plan::ChangeOutcome::transient`]).
pub(crate) fn incomplete_line(report: &ApplyReport) -> String {
    const AGAIN: &str = "a second `evalctl apply` plans afresh from live state and completes";
    const PASSES: &str = "(a timeout, a lost connection, 429, 5xx, an interrupt or a race)";
    const STAYS: &str = "(the service refused the request or the credentials, or a variable is missing) fail the same way until the manifests, the credentials or the service change";
    match report.incomplete() {
        (0, 0) => {
            format!("Not complete: objects did not read back as planned (above); {AGAIN} them.")
        }
        (transient, 0) => format!(
            "Not complete: {transient} change(s) did not complete, for a reason that passes {PASSES}; {AGAIN} the rest."
        ),
        (0, lasting) => format!(
            "Not complete: {lasting} change(s) that failed for a reason that stays {STAYS}; applying again will not complete them."
        ),
        (transient, lasting) => format!(
            "Not complete: {AGAIN} the {transient} change(s) that did not complete, for a reason that passes {PASSES}; the other {lasting} {STAYS}."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::address::IntegrationAddress;
    use crate::plan::{Action, Address, ChangeOutcome, OutcomeStatus};

    fn report(outcomes: &[(OutcomeStatus, bool)]) -> ApplyReport {
        ApplyReport {
            outcomes: outcomes
                .iter()
                .enumerate()
                .map(|(i, &(status, transient))| ChangeOutcome {
                    address: Address::Integration(IntegrationAddress {
                        provider: format!("p{i}"),
                    })
                    .into(),
                    action: Action::Update,
                    status,
                    detail: None,
                    transient,
                    invalid_input: false,
                })
                .collect(),
            ..ApplyReport::default()
        }
    }

    #[test]
    fn the_advice_to_apply_again_follows_what_failed() {
        use OutcomeStatus::{Failed, Skipped, Succeeded};
        let passes = incomplete_line(&report(&[(Succeeded, false), (Failed, true)]));
        assert!(passes.contains("completes the rest"), "{passes}");
        assert!(!passes.contains("stays"), "{passes}");
        let stays = incomplete_line(&report(&[(Failed, false), (Skipped, false)]));
        assert!(
            stays.starts_with("Not complete: 2 change(s) that failed for a reason that stays"),
            "{stays}"
        );
        assert!(
            stays.contains("applying again will not complete them"),
            "{stays}"
        );
        assert!(!stays.contains("completes the"), "{stays}");
        let both = incomplete_line(&report(&[(Failed, true), (Skipped, true), (Failed, false)]));
        assert!(both.contains("completes the 2 change(s)"), "{both}");
        assert!(both.contains("the other 1 (the service refused"), "{both}");
        let unconverged = incomplete_line(&report(&[(Succeeded, false)]));
        assert!(
            unconverged.contains("did not read back as planned"),
            "{unconverged}"
        );
    }
}
