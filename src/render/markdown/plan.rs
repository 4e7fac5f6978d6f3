//! A plan or drift report as a pull-request comment, in the order a reviewer
//! reads it, each part given a share of the budget so the next still fits:
//!
//! 1. the counts by project and action, with the kinds of objects touched
//!    (every change is counted, also when projects are folded);
//! 2. what needs attention: deletes, replacements, warnings, blast radius;
//! 3. per change, a collapsed `<details>` with a ```diff block;
//! 4. notes (their room is kept while the details are written), but not
//!    the details nobody can act on ([`NoteKind::Detail`], in `-o json`).
//!
//! A three-way plan (`--base`) counts its changes by attribution under the
//! first sentence, and puts the details in a section per attribution
//! ("Conflicts", "Out-of-band changes this apply would revert", "This PR
//! changes", "Pending"; a drift report speaks of drift: "Drift: changed out of
//! band", "Pending: merged, not applied yet"), a `@@ … @@` line under a field
//! whose attribution is not its change's (a conflict's names the base's value).
//!
//! What is left out is counted, with a pointer to where it is: the saved plan
//! (`--out`), which the CI recipe keeps as an artifact, when there is one.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{
    Doc, MARKDOWN_BUDGET, code, entry_lines, escape, html, html_prose, one_line, prose, section,
};
use crate::plan::attribution::AttributionCounts;
use crate::plan::guard;
use crate::plan::{
    Action, Address, Attribution, ChangesError, Enrichment, Note, NoteKind, Plan, ResourceChange,
};
use crate::render::entries::{self, Wording, blast_radius_line, plural};
use crate::render::values::{sanitize, sanitize_lines};
use crate::render::{Mode, RenderOptions};

/// Where the counts by project may reach, and where what needs attention
/// and the notes (counted as if they came before the details) may: the rest
/// is for the details.
const TABLE_SHARE: usize = MARKDOWN_BUDGET / 3;
const ATTENTION_SHARE: usize = MARKDOWN_BUDGET / 2;
const NOTES_SHARE: usize = MARKDOWN_BUDGET * 3 / 5;

/// The four actions in the order the tables list them.
const ACTIONS: [Action; 4] = [
    Action::Create,
    Action::Update,
    Action::Replace,
    Action::Delete,
];

/// How a mode words the report.
struct Words {
    title: &'static str,
    /// Per action, in [`ACTIONS`] order.
    labels: [&'static str; 4],
    /// Where the rest is, after "… N more … left out;".
    rest: String,
}

impl Words {
    fn of(opts: &RenderOptions) -> Words {
        match opts.mode {
            Mode::Plan => Words {
                title: "evalctl plan",
                labels: ["create", "update", "replace", "delete"],
                rest: match (opts.saved_plan, opts.artifact) {
                    (Some(path), Some(artifact)) => format!(
                        "every change is in the saved plan {}, uploaded as the artifact {} of this CI run",
                        code(path, false),
                        code(artifact, false)
                    ),
                    (Some(path), None) => format!(
                        "every change is in the saved plan {} (`evalctl plan --out`)",
                        code(path, false)
                    ),
                    (None, _) => {
                        "`evalctl plan` shows every change (`--out FILE` saves them)".to_owned()
                    }
                },
            },
            Mode::Drift => Words {
                title: "evalctl drift",
                labels: [
                    "missing live",
                    "differs",
                    "needs replacement",
                    "not configured",
                ],
                rest: "`evalctl drift` (or `-o json`) shows every difference".to_owned(),
            },
        }
    }
}

/// Renders a plan or drift report; where changes are left out, it names the
/// saved plan (`--out`) and its CI artifact from `opts`.
pub(crate) fn plan(
    plan: &Plan,
    enrichment: &Enrichment,
    opts: &RenderOptions,
) -> Result<String, ChangesError> {
    let mode = opts.mode;
    let words = Words::of(opts);
    let mut doc = Doc::new();
    let n = plan.changes.len();
    let sentence = match (mode, n) {
        (Mode::Plan, 0) => "No changes. Live state matches the manifests.".to_owned(),
        (Mode::Plan, _) => format!("**Plan: {}.**", plan.summary()),
        (Mode::Drift, 0) => "No drift.".to_owned(),
        (Mode::Drift, _) => format!("**Drift detected in {n} object{}.**", plural(n)),
    };
    let _ = write!(doc.out, "## {}\n\n{sentence}\n\n", words.title);
    if let Some(forecast) = &plan.forecast {
        super::forecast::headline(&mut doc, forecast, mode);
    }
    if mode == Mode::Plan && !plan.mass_changes.is_empty() {
        let _ = write!(
            doc.out,
            "**⚠️ Mass change: {}.**\n\n",
            escape(&guard::headline(&plan.mass_changes))
        );
        for change in &plan.mass_changes {
            let _ = writeln!(doc.out, "- {}", escape(&one_line(&change.to_string())));
        }
        doc.out.push('\n');
    }
    let counts = AttributionCounts::of(plan);
    if let Some(counts) = counts {
        let parts: Vec<String> = Attribution::ALL
            .iter()
            .map(|a| format!("{}: **{}**", group_heading(*a, mode), counts.get(*a)))
            .collect();
        let _ = write!(doc.out, "{}\n\n", parts.join(" · "));
    }
    if n > 0 {
        by_project(&mut doc, plan, &words);
        attention(&mut doc, plan, enrichment, &words)?;
    }
    if let Some(forecast) = &plan.forecast {
        super::forecast::details(&mut doc, forecast, mode);
    }
    // The notes come after the changes, in the room they would have had
    // before them: the details stop short of it.
    let mut tail = Doc::new();
    let room = NOTES_SHARE.saturating_sub(doc.out.len());
    notes(&mut tail, &plan.notes, enrichment, &words, room);
    let limit = MARKDOWN_BUDGET.saturating_sub(tail.out.len());
    if n > 0 && counts.is_some() {
        attributed_details(&mut doc, plan, enrichment, &words, mode, limit)?;
    } else if n > 0 {
        doc.push("### Details\n\n");
        let all: Vec<usize> = (0..n).collect();
        let left_out = doc.try_push_while_within(&all, limit, |&i| {
            Ok(details(&*plan.changes.get(i)?, enrichment, mode))
        })?;
        doc.fold_line(left_out, "changes not shown in detail", &words.rest);
    }
    doc.push(&tail.out);
    Ok(doc.out)
}

/// A group of a three-way plan, as its section and its count are titled.
/// A drift report (`drift --base`) compares the manifests with an earlier
/// commit, not a PR.
fn group_heading(attribution: Attribution, mode: Mode) -> &'static str {
    match (attribution, mode) {
        (Attribution::Proposed, Mode::Plan) => "This PR changes",
        (Attribution::Proposed, Mode::Drift) => "Changed in the manifests since the base",
        (Attribution::Drift, Mode::Plan) => "Out-of-band changes this apply would revert",
        (Attribution::Drift, Mode::Drift) => "Drift: changed out of band",
        (Attribution::Conflict, _) => "Conflicts",
        (Attribution::Pending, Mode::Plan) => "Pending",
        (Attribution::Pending, Mode::Drift) => "Pending: merged, not applied yet",
    }
}

/// What a group of a three-way plan is, under its heading.
fn group_intro(attribution: Attribution, mode: Mode) -> &'static str {
    match (attribution, mode) {
        (Attribution::Conflict, Mode::Plan) => {
            "This PR changes these, and live moved away from the base since: applying replaces an out-of-band change with this PR's value."
        }
        (Attribution::Conflict, Mode::Drift) => {
            "Changed in the manifests since the base, and live moved away from the base too: applying replaces an out-of-band change."
        }
        (Attribution::Drift, Mode::Plan) => {
            "Someone changed these outside the manifests, which still declare the base's value: applying reverts them."
        }
        (Attribution::Drift, Mode::Drift) => {
            "Someone changed these outside the manifests since they were applied: apply the manifests to undo it, or change the manifests to keep it."
        }
        (Attribution::Proposed, Mode::Plan) => "The changes this PR makes.",
        (Attribution::Proposed, Mode::Drift) => {
            "Changed in the manifests since the base and not applied yet."
        }
        (Attribution::Pending, Mode::Plan) => {
            "The base changed these and was never applied (live still holds what was last applied): applying applies them."
        }
        (Attribution::Pending, Mode::Drift) => {
            "The manifests changed these and no apply has run since (live still holds what was last applied): the next apply applies them."
        }
    }
}

/// The details of a three-way plan, a section per attribution, in the
/// order a reviewer weighs them: conflicts, then what the apply would revert,
/// then the PR's own changes, then the base's never applied. Each section is
/// titled with its count; what does not fit is counted in it.
fn attributed_details(
    doc: &mut Doc,
    plan: &Plan,
    enrichment: &Enrichment,
    words: &Words,
    mode: Mode,
    limit: usize,
) -> Result<(), ChangesError> {
    const ORDER: [Attribution; 4] = [
        Attribution::Conflict,
        Attribution::Drift,
        Attribution::Proposed,
        Attribution::Pending,
    ];
    let groups = ORDER
        .iter()
        .map(|a| (group_heading(*a, mode), group_intro(*a, mode), Some(*a)))
        .chain([("Not attributed", "", None)]);
    let changes = &plan.changes;
    for (heading, intro, attribution) in groups {
        let indices: Vec<usize> = (0..changes.len())
            .filter(|&i| changes.attribution(i) == attribution)
            .collect();
        if indices.is_empty() {
            continue;
        }
        let _ = write!(doc.out, "### {heading} ({})\n\n", indices.len());
        if !intro.is_empty() {
            let _ = write!(doc.out, "{intro}\n\n");
        }
        let left_out = doc.try_push_while_within(&indices, limit, |&i| {
            Ok(details(&*changes.get(i)?, enrichment, mode))
        })?;
        doc.fold_line(left_out, "changes not shown in detail", &words.rest);
    }
    Ok(())
}

/// The changes of one project (or of the integrations): counts by action
/// and by kind of object.
#[derive(Default)]
struct Group {
    by_action: [usize; 4],
    by_kind: BTreeMap<&'static str, usize>,
}

impl Group {
    fn add(&mut self, address: &Address, action: Action) {
        if let Some(i) = ACTIONS.iter().position(|a| *a == action) {
            self.by_action[i] += 1;
        }
        let kind = address
            .segments()
            .last()
            .map_or("object", |s| s.kind.as_str());
        *self.by_kind.entry(kind).or_default() += 1;
    }

    fn merge(&mut self, other: &Group) {
        for (mine, theirs) in self.by_action.iter_mut().zip(other.by_action) {
            *mine += theirs;
        }
        for (kind, count) in &other.by_kind {
            *self.by_kind.entry(kind).or_default() += count;
        }
    }

    /// The count cells and the kinds cell of a table row.
    fn cells(&self) -> String {
        let mut row = String::new();
        for count in self.by_action {
            let _ = write!(row, " {count} |");
        }
        let kinds: Vec<String> = self
            .by_kind
            .iter()
            .map(|(kind, count)| format!("`{kind}` {count}"))
            .collect();
        let _ = write!(row, " {} |", kinds.join(", "));
        row
    }
}

/// The table of counts by project and action. Projects that do not fit in
/// the table's share are summed in one row, so the counts always add up.
fn by_project(doc: &mut Doc, plan: &Plan, words: &Words) {
    let mut groups: BTreeMap<Option<String>, Group> = BTreeMap::new();
    let mut total = Group::default();
    let changes = &plan.changes;
    for i in 0..changes.len() {
        let (address, action) = (changes.address(i), changes.action(i));
        groups
            .entry(address.project().map(str::to_owned))
            .or_default()
            .add(&address, action);
        total.add(&address, action);
    }
    doc.push("| Project |");
    for (action, label) in ACTIONS.iter().zip(words.labels) {
        let _ = write!(doc.out, " `{}` {label} |", action.symbol());
    }
    doc.push(" Objects |\n|:--|--:|--:|--:|--:|:--|\n");
    let rows: Vec<(Option<&str>, &Group)> = groups.iter().map(|(p, g)| (p.as_deref(), g)).collect();
    let left_out = doc.push_while_within(&rows, TABLE_SHARE, |(project, group)| {
        let name = project.map_or_else(|| "(integrations)".to_owned(), |p| code(p, true));
        format!("| {name} |{}\n", group.cells())
    });
    if left_out > 0 {
        let mut rest = Group::default();
        for (_, group) in &rows[rows.len() - left_out..] {
            rest.merge(group);
        }
        let _ = writeln!(
            doc.out,
            "| … {left_out} more project{} |{}",
            plural(left_out),
            rest.cells()
        );
    }
    if rows.len() > 1 || left_out > 0 {
        let _ = writeln!(doc.out, "| **Total** |{}", total.cells());
    }
    doc.push("\n");
}

/// Whether a reviewer must look at `change` before approving: it deletes or
/// replaces something, or carries a warning or a blast radius.
fn needs_attention(change: &ResourceChange, enrichment: &Enrichment) -> bool {
    matches!(change.action, Action::Delete | Action::Replace)
        || !change.warnings.is_empty()
        || !enrichment.blast_radius_of(&change.address).is_empty()
}

fn attention(
    doc: &mut Doc,
    plan: &Plan,
    enrichment: &Enrichment,
    words: &Words,
) -> Result<(), ChangesError> {
    let mut flagged = Vec::new();
    for (i, change) in plan.changes.iter().enumerate() {
        if needs_attention(&*change?, enrichment) {
            flagged.push(i);
        }
    }
    if flagged.is_empty() {
        return Ok(());
    }
    doc.push("### Needs attention\n\n");
    let left_out = doc.try_push_while_within(&flagged, ATTENTION_SHARE, |&i| {
        let c = plan.changes.get(i)?;
        let mut item = format!(
            "- `{}` {}",
            c.action.symbol(),
            code(&c.address.to_string(), false)
        );
        if !c.reason.is_empty() {
            let _ = write!(item, ": {}", prose(&c.reason, false));
        }
        item.push('\n');
        for w in &c.warnings {
            let _ = writeln!(item, "  - ⚠️ {}", prose(w, false));
        }
        for b in enrichment.blast_radius_of(&c.address) {
            let _ = writeln!(item, "  - ⚠️ {}", escape(&blast_radius_line(b)));
        }
        Ok(item)
    })?;
    doc.fold_line(
        left_out,
        "changes that need attention not listed",
        &words.rest,
    );
    doc.push("\n");
    Ok(())
}

/// The notes section, within `limit` characters of `doc`; details
/// ([`NoteKind::Detail`]) are left out.
fn notes(doc: &mut Doc, notes: &[Note], enrichment: &Enrichment, words: &Words, limit: usize) {
    if notes.iter().all(|n| n.kind == NoteKind::Detail) {
        return;
    }
    doc.push("### Notes\n\n");
    let mut items = Vec::new();
    for (kind, heading) in [
        (
            NoteKind::Unmanaged,
            "Unmanaged (live, not declared; deleted only with --prune)",
        ),
        (NoteKind::Unverifiable, "Not verifiable"),
        (NoteKind::Info, "Other notes"),
    ] {
        let of_kind: Vec<&Note> = notes.iter().filter(|n| n.kind == kind).collect();
        for (i, note) in of_kind.iter().enumerate() {
            let mut item = String::new();
            if i == 0 {
                let _ = write!(item, "**{heading}**\n\n");
            }
            match (&note.address, kind) {
                // The heading says what these are: the address alone.
                (Some(a), NoteKind::Unmanaged) => {
                    let _ = write!(item, "- {}", code(&a.to_string(), false));
                }
                (Some(a), _) => {
                    let _ = write!(item, "- {}: ", code(&a.to_string(), false));
                    item.push_str(&prose(&note.message, false));
                }
                (None, _) => {
                    item.push_str("- ");
                    item.push_str(&prose(&note.message, false));
                }
            }
            if let Some(who) = &note.created_by {
                let _ = write!(item, " (created by {})", escape(enrichment.person(who)));
            }
            item.push('\n');
            if i + 1 == of_kind.len() {
                item.push('\n');
            }
            items.push(item);
        }
    }
    let left_out = doc.push_while_within(&items, limit, String::clone);
    doc.fold_line(left_out, "notes not shown", &words.rest);
}

/// A change's collapsed section: its entries as a diff, then its warnings.
fn details(c: &ResourceChange, enrichment: &Enrichment, mode: Mode) -> String {
    let wording = Wording::of_change(mode, c.action);
    let mut lines = Vec::new();
    for (shown, remark) in entries::shown_by_field(c, mode) {
        for entry in shown {
            entry_lines(&mut lines, &entry, wording, c.action);
        }
        // A hunk line: GitHub colours it apart from the values.
        if let Some(remark) = remark {
            lines.push(format!("@@ {} @@", sanitize(&remark)));
        }
    }
    for w in &c.warnings {
        lines.push(format!("! {}", sanitize_lines(w).join(" ")));
    }
    for b in enrichment.blast_radius_of(&c.address) {
        lines.push(format!("! {}", sanitize(&blast_radius_line(b))));
    }
    let mut summary = format!(
        "{} <code>{}</code>",
        html(c.action.symbol()),
        html(&c.address.to_string())
    );
    if !c.reason.is_empty() {
        let _ = write!(summary, ": {}", html_prose(&c.reason));
    }
    let intro = c
        .created_by
        .as_deref()
        .map(|who| format!("Created by {}.\n\n", escape(enrichment.person(who))));
    section(&summary, intro.as_deref().unwrap_or_default(), &lines)
}
