//! The attribution table cell by cell, with literals; then over plans.

use crate::plan::address::{MetricSettingsAddress, SectionAddress, WidgetAddress};
use serde_json::{Value, json};

use super::*;
use crate::plan::address::RunKind;
use crate::plan::types::Action;

const P: Attribution = Attribution::Proposed;
const D: Attribution = Attribution::Drift;
const C: Attribution = Attribution::Conflict;
const N: Attribution = Attribution::Pending;

fn v(x: i64) -> Option<Value> {
    Some(json!(x))
}

#[track_caller]
fn cell(
    desired: Option<Value>,
    base: Option<Value>,
    live: Option<Value>,
    applied: Option<Option<Value>>,
    want: Attribution,
) {
    let got = classify(
        desired.as_ref(),
        base.as_ref(),
        live.as_ref(),
        applied.as_ref().map(Option::as_ref),
    );
    assert_eq!(
        got, want,
        "desired {desired:?}, base {base:?}, live {live:?}, applied {applied:?}"
    );
}

#[test]
fn three_values_give_the_three_cells() {
    // desired ≠ base, live = base: the PR's change.
    cell(v(5), v(3), v(3), None, P);
    // desired = base ≠ live: applying reverts an out-of-band change.
    cell(v(3), v(3), v(7), None, D);
    // desired ≠ base ≠ live, desired ≠ live: both moved.
    cell(v(5), v(3), v(7), None, C);
}

#[test]
fn absent_values_are_values() {
    // An object only in the PR: base and live do not have it.
    cell(v(1), None, None, None, P);
    // Only in the PR, and someone created one out of band: both moved.
    cell(v(1), None, v(2), None, C);
    // The PR deletes what base and live agree on (with --prune).
    cell(None, v(1), v(1), None, P);
    // Declared alike at the base and in the PR, missing live: deleted out of
    // band (or never applied: without `applied`, drift).
    cell(v(1), v(1), None, None, D);
    // The base deletes it (prune), live still has it, the PR keeps it changed.
    cell(v(2), None, v(1), None, C);
}

#[test]
fn what_was_last_applied_tells_pending_from_drift() {
    // desired = base ≠ live, and live still holds what was last applied:
    // the base's change never reached live.
    cell(v(3), v(3), v(1), Some(v(1)), N);
    // The same, but live holds something nobody applied: drift.
    cell(v(3), v(3), v(7), Some(v(1)), D);
    // Applied = base: the ordinary drift cell.
    cell(v(3), v(3), v(7), Some(v(3)), D);
    // The PR changes a field whose base change was never applied: live did
    // not move, so it is only the PR's change.
    cell(v(5), v(3), v(1), Some(v(1)), P);
    // The PR changes it and live moved away from both: conflict.
    cell(v(5), v(3), v(7), Some(v(1)), C);
    // Live equals the base (applied by hand since): the PR's change.
    cell(v(5), v(3), v(3), Some(v(1)), P);
    // An object the base added and never created: pending.
    cell(v(1), v(1), None, Some(None), N);
}

// ---------------------------------------------------------------- plans

fn settings() -> Address {
    Address::MetricSettings(MetricSettingsAddress {
        project: "demo".into(),
        run_kind: RunKind::LogStream,
        run: "production".into(),
    })
}

fn section(name: &str) -> Address {
    Address::Section(SectionAddress {
        project: "demo".into(),
        log_stream: "production".into(),
        dashboard: None,
        name: name.into(),
    })
}

fn field(path: &str, before: Option<Value>, after: Option<Value>) -> FieldChange {
    FieldChange::new(path, before, after)
}

fn change(address: Address, action: Action, fields: Vec<FieldChange>) -> ResourceChange {
    ResourceChange {
        address,
        action,
        reason: String::new(),
        fields,
        live_fingerprint: String::new(),
        operations: Vec::new(),
        warnings: Vec::new(),
        created_by: None,
        attribution: None,
    }
}

fn plan(changes: Vec<ResourceChange>) -> Plan {
    Plan {
        changes: changes.into(),
        ..Plan::empty()
    }
}

fn attributed(pr: Vec<ResourceChange>, base: Vec<ResourceChange>) -> Plan {
    let base = plan(base);
    attribute(
        plan(pr),
        Sides {
            base: &base,
            applied: None,
            declared: &[],
        },
    )
    .expect("held in memory")
}

/// `path: attribution` of every field, then the change's.
fn shown(plan: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    for c in plan.changes.to_vec().expect("changes read back") {
        for f in &c.fields {
            out.push(format!(
                "{}: {}",
                f.path,
                f.attribution.map_or("-", Attribution::as_str)
            ));
        }
        out.push(format!(
            "= {}",
            c.attribution.map_or("-", Attribution::as_str)
        ));
    }
    out
}

#[test]
fn no_change_at_the_base_means_the_base_equals_live() {
    let pr = vec![change(
        settings(),
        Action::Update,
        vec![field("scorers[correctness].num_judges", v(3), v(5))],
    )];
    let got = attributed(pr, Vec::new());
    assert_eq!(
        shown(&got),
        ["scorers[correctness].num_judges: proposed", "= proposed"]
    );
    assert!(got.notes.is_empty());
}

#[test]
fn fields_of_one_change_are_attributed_one_by_one() {
    // Live: num_judges 7 (someone's UI edit), sample rate 0.5.
    // Base: num_judges 3, sample rate 0.5. PR: num_judges 5, sample rate 0.25;
    // and both want bleu, which someone removed.
    let pr = vec![change(
        settings(),
        Action::Update,
        vec![
            field(
                "scorers[bleu]",
                None,
                Some(json!({"scorer_type": "preset"})),
            ),
            field("scorers[correctness].num_judges", v(7), v(5)),
            field(
                "segment_filters[0].sample_rate",
                Some(json!(0.5)),
                Some(json!(0.25)),
            ),
        ],
    )];
    let base = vec![change(
        settings(),
        Action::Update,
        vec![
            field(
                "scorers[bleu]",
                None,
                Some(json!({"scorer_type": "preset"})),
            ),
            field("scorers[correctness].num_judges", v(7), v(3)),
        ],
    )];
    let got = attributed(pr, base);
    assert_eq!(
        shown(&got),
        [
            "scorers[bleu]: drift",
            "scorers[correctness].num_judges: conflict",
            "segment_filters[0].sample_rate: proposed",
            "= conflict",
        ]
    );
    // A conflict keeps the base's value beside live's and the PR's.
    let fields = &got.changes.to_vec().expect("changes read back")[0].fields;
    assert_eq!(fields[1].base, v(3));
    assert_eq!(fields[0].base, None);
    assert_eq!(fields[2].base, None);
}

#[test]
fn a_change_takes_its_most_pressing_field() {
    let pr = vec![change(
        section("Quality"),
        Action::Update,
        vec![
            field("color", Some(json!("#f00")), Some(json!("#0f0"))),
            field("description", Some(json!("x")), Some(json!("y"))),
        ],
    )];
    // The base wants the colour the PR wants: live's is out of band.
    let base = vec![change(
        section("Quality"),
        Action::Update,
        vec![field("color", Some(json!("#f00")), Some(json!("#0f0")))],
    )];
    assert_eq!(
        shown(&attributed(pr, base)),
        ["color: drift", "description: proposed", "= drift"]
    );
}

#[test]
fn a_coarser_base_change_holds_the_value_of_a_finer_field() {
    // The base changes the whole list (its length differs from live's); the
    // PR keeps live's length and changes one element.
    let pr = vec![change(
        settings(),
        Action::Update,
        vec![field(
            "segment_filters[1].sample_rate",
            Some(json!(0.5)),
            Some(json!(0.25)),
        )],
    )];
    let base_list = json!([{"sample_rate": 1.0}, {"sample_rate": 0.25}, {"sample_rate": 0.1}]);
    let live_list = json!([{"sample_rate": 1.0}, {"sample_rate": 0.5}]);
    let base = vec![change(
        settings(),
        Action::Update,
        vec![field("segment_filters", Some(live_list), Some(base_list))],
    )];
    // base[1].sample_rate = 0.25 = desired; live 0.5: drift.
    assert_eq!(
        shown(&attributed(pr, base)),
        ["segment_filters[1].sample_rate: drift", "= drift"]
    );
}

#[test]
fn finer_base_changes_patch_live_under_a_coarser_field() {
    let live = json!({"num_judges": 3, "model": "gpt"});
    // The PR replaces bleu's settings wholesale (a different type of value
    // below it is one change); the base changed only num_judges, to what the
    // PR also wants.
    let wanted = json!({"num_judges": 5, "model": "gpt"});
    let pr = vec![change(
        settings(),
        Action::Update,
        vec![field("scorers[bleu]", Some(live.clone()), Some(wanted))],
    )];
    let base = vec![change(
        settings(),
        Action::Update,
        vec![field("scorers[bleu].num_judges", v(3), v(5))],
    )];
    assert_eq!(
        shown(&attributed(pr.clone(), base)),
        ["scorers[bleu]: drift", "= drift"]
    );
    // The base also adds a key the PR does not want: the values differ.
    let base = vec![change(
        settings(),
        Action::Update,
        vec![
            field("scorers[bleu].num_judges", v(3), v(5)),
            field("scorers[bleu].threshold", None, Some(json!(0.5))),
        ],
    )];
    let got = attributed(pr, base);
    assert_eq!(shown(&got), ["scorers[bleu]: conflict", "= conflict"]);
    assert_eq!(
        got.changes.to_vec().expect("changes read back")[0].fields[0].base,
        Some(json!({"num_judges": 5, "model": "gpt", "threshold": 0.5}))
    );
}

#[test]
fn whole_objects_compare_with_their_fields() {
    // The PR creates a section the base does not declare: proposed.
    let created = json!({"name": "Latency", "color": "#00f"});
    let pr = vec![change(
        section("Latency"),
        Action::Create,
        vec![field("", None, Some(created.clone()))],
    )];
    assert_eq!(
        shown(&attributed(pr.clone(), Vec::new())),
        [": proposed", "= proposed"]
    );
    // The base declares it alike and live lacks it: deleted out of band.
    let base = vec![change(
        section("Latency"),
        Action::Create,
        vec![field("", None, Some(created))],
    )];
    assert_eq!(shown(&attributed(pr, base)), [": drift", "= drift"]);
    // The PR deletes (with --prune) a section the base has its colour
    // changed for: the base's object is live's, patched.
    let live = json!({"name": "Old", "color": "#f00"});
    let pr = vec![change(
        section("Old"),
        Action::Delete,
        vec![field("", Some(live), None)],
    )];
    let base = vec![change(
        section("Old"),
        Action::Update,
        vec![field("color", Some(json!("#f00")), Some(json!("#0f0")))],
    )];
    let got = attributed(pr, base);
    assert_eq!(shown(&got), [": conflict", "= conflict"]);
    assert_eq!(
        got.changes.to_vec().expect("changes read back")[0].fields[0].base,
        Some(json!({"name": "Old", "color": "#0f0"}))
    );
}

#[test]
fn a_renamed_object_is_matched_by_its_live_name() {
    // The PR renames Quality to Correctness; the base keeps the name but
    // wants the colour live lost.
    let pr = vec![change(
        section("Correctness"),
        Action::Update,
        vec![
            field("color", Some(json!("#f00")), Some(json!("#0f0"))),
            field("name", Some(json!("Quality")), Some(json!("Correctness"))),
        ],
    )];
    let base = vec![change(
        section("Quality"),
        Action::Update,
        vec![field("color", Some(json!("#f00")), Some(json!("#0f0")))],
    )];
    let got = attributed(pr, base);
    assert_eq!(shown(&got), ["color: drift", "name: proposed", "= drift"]);
    assert!(got.notes.is_empty(), "matched: {:?}", got.notes);
}

#[test]
fn a_path_that_does_not_fit_the_base_is_a_conflict() {
    // The base's finer change cannot be placed in live's value (live holds a
    // number where the base has an object): a human should look.
    let pr = vec![change(
        settings(),
        Action::Update,
        vec![field("scorers[bleu]", v(1), Some(json!({"a": 1})))],
    )];
    let base = vec![change(
        settings(),
        Action::Update,
        vec![field("scorers[bleu].a", v(1), v(2))],
    )];
    let got = attributed(pr, base);
    assert_eq!(shown(&got), ["scorers[bleu]: conflict", "= conflict"]);
    assert_eq!(
        got.changes.to_vec().expect("changes read back")[0].fields[0].base,
        None
    );
}

#[test]
fn the_manifests_as_last_applied_tell_pending_from_drift() {
    // Live: red, described "hot-fix" (someone's UI edit). Last applied: red,
    // "old". The base (never applied) and the PR: green, "old".
    let pr = vec![change(
        section("Quality"),
        Action::Update,
        vec![
            field("color", Some(json!("red")), Some(json!("green"))),
            field("description", Some(json!("hot-fix")), Some(json!("old"))),
        ],
    )];
    let base = plan(vec![change(
        section("Quality"),
        Action::Update,
        vec![
            field("color", Some(json!("red")), Some(json!("green"))),
            field("description", Some(json!("hot-fix")), Some(json!("old"))),
        ],
    )]);
    let applied = plan(vec![change(
        section("Quality"),
        Action::Update,
        vec![field(
            "description",
            Some(json!("hot-fix")),
            Some(json!("old")),
        )],
    )]);
    let got = attribute(
        plan(pr),
        Sides {
            base: &base,
            applied: Some(&applied),
            declared: &[],
        },
    )
    .expect("held in memory");
    assert_eq!(
        shown(&got),
        ["color: pending", "description: drift", "= drift"]
    );
}

#[test]
fn what_only_the_base_changes_is_a_note() {
    // Two objects of two kinds: one the PR declares, one it no longer does.
    let dropped = settings();
    let base = vec![
        change(
            section("Quality"),
            Action::Update,
            vec![field("color", Some(json!("#f00")), Some(json!("#0f0")))],
        ),
        change(
            dropped.clone(),
            Action::Update,
            vec![field("num_judges", Some(json!(3)), Some(json!(5)))],
        ),
    ];
    let base = plan(base);
    // The PR declares the section (matching live) and no longer the settings.
    let declared = [Target::of(&section("Quality"))];
    let got = attribute(
        plan(Vec::new()),
        Sides {
            base: &base,
            applied: None,
            declared: &declared,
        },
    )
    .expect("held in memory");
    let notes: Vec<(String, &str)> = got
        .notes
        .iter()
        .map(|n| {
            (
                n.address
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
                n.message.as_str(),
            )
        })
        .collect();
    assert_eq!(
        notes,
        [
            (
                dropped.to_string(),
                "declared at the base, not by this PR: evalctl stops managing it and this apply leaves it as it is live (the base would update it (`num_judges`))"
            ),
            (
                section("Quality").to_string(),
                "the base would update it (`color`); this PR's manifests match live there, so this apply leaves it as it is (the PR adopts the live value)"
            ),
        ]
    );
    assert!(got.notes.iter().all(|n| n.kind == NoteKind::Info));
}

#[test]
fn a_plan_that_cannot_be_attributed_says_so() {
    let pr = plan(vec![change(
        settings(),
        Action::Update,
        vec![field("scorers[bleu].num_judges", v(1), v(2))],
    )]);
    let got = unattributed(pr, "the base manifests do not load (2 errors)");
    assert_eq!(shown(&got), ["scorers[bleu].num_judges: -", "= -"]);
    assert_eq!(got.notes.len(), 1);
    assert!(
        got.notes[0]
            .message
            .starts_with("the base manifests do not load (2 errors): changes are not attributed"),
        "{}",
        got.notes[0].message
    );
}

#[test]
fn an_attributed_plan_reads_back_and_an_old_one_still_reads() {
    let pr = vec![change(
        settings(),
        Action::Update,
        vec![field("scorers[bleu].num_judges", v(7), v(5))],
    )];
    let base = vec![change(
        settings(),
        Action::Update,
        vec![field("scorers[bleu].num_judges", v(7), v(3))],
    )];
    let got = attributed(pr, base);
    let text = serde_json::to_value(&got).expect("serializes");
    let c = &text["changes"][0];
    assert_eq!(c["attribution"], "conflict");
    assert_eq!(c["fields"][0]["attribution"], "conflict");
    assert_eq!(c["fields"][0]["base"], 3);
    let back: Plan = serde_json::from_value(text).expect("reads back");
    assert_eq!(back, got);
    // A plan written before attribution existed has none of these fields.
    let old = json!({"format_version": 2, "notes": [], "changes": [{
        "address": {"type": "favorite", "project": "p", "log_stream": "l"},
        "action": "update", "reason": "", "live_fingerprint": "", "operations": [],
        "fields": [{"path": "favorited", "before": false, "after": true}]}]});
    let old: Plan = serde_json::from_value(old).expect("reads");
    assert_eq!(
        old.changes.to_vec().expect("changes read back")[0].attribution,
        None
    );
    assert_eq!(
        old.changes.to_vec().expect("changes read back")[0].fields[0].attribution,
        None
    );
    let again = serde_json::to_value(&old).expect("serializes");
    assert!(again["changes"][0].get("attribution").is_none());
    assert!(again["changes"][0]["fields"][0].get("base").is_none());
}

#[test]
fn paths_nest_only_at_separators() {
    assert!(is_under("scorers[bleu]", "scorers"));
    assert!(is_under("a.b", "a"));
    assert!(is_under("a", ""));
    assert!(!is_under("", ""));
    assert!(!is_under("scorers_x", "scorers"));
    assert!(!is_under("a", "a"));
    let keyed = ["scorers"];
    let value = json!({"scorers": {"a.b": {"n": 1}, "a": {"n": 2}}});
    assert_eq!(
        lookup("", &value, "scorers[a.b].n", &keyed),
        Some(&json!(1))
    );
    assert_eq!(lookup("", &value, "scorers[a].n", &keyed), Some(&json!(2)));
    assert_eq!(lookup("", &value, "scorers[c]", &keyed), None);
}

#[test]
fn a_moved_or_renamed_widget_is_matched_by_its_live_place_and_name() {
    let widget = |section: &str, name: &str| {
        Address::Widget(WidgetAddress {
            project: "demo".into(),
            log_stream: "production".into(),
            dashboard: None,
            section: Some(section.into()),
            name: name.into(),
        })
    };
    // The PR moves `p95` from Latency to Quality and renames it `p95 latency`;
    // the base keeps it in place and wants the metric someone changed back.
    let pr = vec![change(
        widget("Quality", "p95 latency"),
        Action::Update,
        vec![
            field("metric", Some(json!("cost")), Some(json!("latency_ms"))),
            field("name", Some(json!("p95")), Some(json!("p95 latency"))),
            field("section", Some(json!("Latency")), Some(json!("Quality"))),
        ],
    )];
    let base = vec![
        // Another widget of the same name elsewhere is not it.
        change(
            widget("Errors", "p95"),
            Action::Update,
            vec![field("metric", Some(json!("x")), Some(json!("y")))],
        ),
        change(
            widget("Latency", "p95"),
            Action::Update,
            vec![field(
                "metric",
                Some(json!("cost")),
                Some(json!("latency_ms")),
            )],
        ),
    ];
    let got = attributed(pr, base);
    assert_eq!(
        shown(&got),
        [
            "metric: drift",
            "name: proposed",
            "section: proposed",
            "= drift"
        ]
    );
    // The base's change to the other widget is noted, not matched.
    let noted: Vec<String> = got
        .notes
        .iter()
        .filter_map(|n| n.address.as_ref().map(ToString::to_string))
        .collect();
    assert_eq!(noted, [widget("Errors", "p95").to_string()]);
}
