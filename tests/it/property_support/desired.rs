//! Random desired states of the reconciler property: manifests within the
//! demo fixture's names. Scorers of the catalog with random fields and pins,
//! segment filters, sections with renames, favorites, templates of every
//! kind, integrations. Everything generated is valid (the loader accepts it
//! and every name it refers to exists), so a failure is about reconciling,
//! not about input. Values come from small pools so that desired and live
//! collide often, and shrink towards empty lists and `None`.

use std::collections::BTreeSet;
use std::fmt;

use evalctl::sandbox::Fixture;
use evalctl::sandbox::fixture::ids;
use proptest::prelude::*;
use serde_json::{Value, json};

/// A log stream or experiment of the demo fixture: (project, kind, name).
pub type Run = (&'static str, bool, &'static str);

/// The demo fixture's log streams (`true`) and experiments (`false`).
pub const RUNS: &[Run] = &[
    ("demo-project", true, "production"),
    ("demo-project", true, "staging"),
    ("support-bot", true, "default"),
    ("demo-project", false, "baseline-eval"),
    ("demo-project", false, "candidate-eval"),
    ("support-bot", false, "regression-suite"),
];

/// The log streams only.
pub fn log_streams() -> Vec<Run> {
    RUNS.iter().copied().filter(|r| r.1).collect()
}

/// Scorers the generators use: a spread of presets and the three custom
/// scorers, with the number of versions the demo catalog has of each.
pub fn scorers() -> Vec<(String, i64)> {
    let wanted = [
        "correctness",
        "context_adherence",
        "completeness",
        "bleu",
        "rouge",
        "output_toxicity",
        "prompt_injection",
        "input_pii",
        "chunk_relevance",
        "tool_selection_quality",
        "helpfulness-judge",
        "response-length-check",
        "brand-safety-luna",
    ];
    let fixture = Fixture::demo();
    wanted
        .iter()
        .filter_map(|name| {
            let s = fixture.state().scorers.iter().find(|s| s.name == *name)?;
            Some((s.name.clone(), s.versions.len() as i64))
        })
        .collect()
}

/// Section names: the fixture's, case variants, and new ones.
pub const SECTION_NAMES: &[&str] = &[
    "Quality",
    "Latency",
    "quality",
    "Safety",
    "Cost and spend",
    "Ünïcødé ✓",
];

/// Template names, per kind: the fixture's (so updates and replaces happen)
/// and new ones.
pub const ANNOTATION_NAMES: &[&str] = &[
    "star-annotation",
    "score-annotation",
    "text-annotation",
    "tree_choice-annotation",
    "helpful",
    "Helpful",
    "rating ✓",
];
pub const FEEDBACK_NAMES: &[&str] = &[
    "star-feedback",
    "choice-feedback",
    "like_dislike-feedback",
    "thumbs",
    "stars",
];

pub fn pick<T: Clone + fmt::Debug + 'static>(items: &[T]) -> impl Strategy<Value = T> + use<T> {
    prop::sample::select(items.to_vec())
}

/// A filter (`FilterSpec` as JSON) that the loader accepts.
pub fn filter() -> impl Strategy<Value = Value> {
    let words = || pick(&["llm", "chat", "tool", "retriever", "prod", "ci"]);
    let list = move || prop::collection::btree_set(words(), 1..3);
    let modalities = || pick(&["text", "document", "image", "audio", "video"]);
    prop_oneof![
        (
            pick(&["eq", "ne", "contains"]),
            words(),
            prop::option::of(any::<bool>())
        )
            .prop_map(|(op, v, cs)| {
                let mut f = json!({"name": "node_name", "operator": op, "value": v});
                if let Some(cs) = cs {
                    f["case_sensitive"] = json!(cs);
                }
                f
            }),
        (pick(&["one_of", "not_in"]), list())
            .prop_map(|(op, v)| json!({"name": "node_name", "operator": op, "value": v})),
        (pick(&["eq", "ne"]), pick(&["env", "tier"]), words()).prop_map(
            |(op, k, v)| json!({"name": "metadata", "operator": op, "key": k, "value": v})
        ),
        (pick(&["one_of", "not_in"]), pick(&["env", "tier"]), list()).prop_map(
            |(op, k, v)| json!({"name": "metadata", "operator": op, "key": k, "value": v})
        ),
        (pick(&["eq", "ne"]), modalities())
            .prop_map(|(op, v)| json!({"name": "modality", "operator": op, "value": v})),
        (
            pick(&["one_of", "not_in"]),
            prop::collection::btree_set(modalities(), 1..3)
        )
            .prop_map(|(op, v)| json!({"name": "modality", "operator": op, "value": v})),
    ]
}

/// A scorer entry (`ScorerSpec` as JSON): a catalog scorer, maybe pinned,
/// maybe with fields set.
pub fn scorer() -> impl Strategy<Value = Value> {
    let catalog = scorers();
    (0..catalog.len()).prop_flat_map(move |i| {
        let (name, versions) = catalog[i].clone();
        (
            prop::option::weighted(0.3, 1..=versions),
            prop::option::weighted(0.2, pick(&["gpt-4.1-mini", "gpt-4o-mini", "claude-3-5"])),
            prop::option::weighted(0.2, 1i64..=5),
            prop::option::weighted(0.2, any::<bool>()),
            prop::option::weighted(0.2, prop::collection::vec(filter(), 0..3)),
            prop::option::weighted(
                0.15,
                prop::collection::vec(pick(&["llm", "chat", "tool", "retriever"]), 0..3),
            ),
            prop::option::weighted(0.15, pick(&["boolean", "percentage", "categorical"])),
            prop::option::weighted(
                0.15,
                pick(&["llm_spans", "trace_io_only", "sessions_normalized"]),
            ),
            prop::option::weighted(0.15, pick(&["llm", "slm", "code"])),
            prop::option::weighted(0.1, prop::collection::vec(pick(&["vision", "audio"]), 0..3)),
            prop::option::weighted(0.15, pick(&["average", "sum", "percentage_true"])),
            prop::bool::weighted(0.2),
        )
            .prop_map(
                move |(
                    pin,
                    model,
                    judges,
                    cot,
                    filters,
                    nodes,
                    out,
                    inp,
                    mt,
                    caps,
                    roll,
                    by_id,
                )| {
                    let mut s = if by_id {
                        json!({"id": ids::scorer_id(&name)})
                    } else {
                        json!({"name": name})
                    };
                    let mut set = |k: &str, v: Option<Value>| {
                        if let Some(v) = v {
                            s[k] = v;
                        }
                    };
                    set("scorer_version", pin.map(Value::from));
                    set("model_name", model.map(Value::from));
                    set("num_judges", judges.map(Value::from));
                    set("cot_enabled", cot.map(Value::from));
                    set("filters", filters.map(Value::from));
                    set("scoreable_node_types", nodes.map(|v| json!(v)));
                    set("output_type", out.map(Value::from));
                    set("input_type", inp.map(Value::from));
                    set("model_type", mt.map(Value::from));
                    set("multimodal_capabilities", caps.map(|v| json!(v)));
                    set("roll_up_method", roll.map(Value::from));
                    s
                },
            )
    })
}

/// A sample rate, including ones that do not round-trip through decimal
/// text trivially.
pub fn sample_rate() -> impl Strategy<Value = f64> {
    prop_oneof![
        pick(&[0.0, 0.1, 0.25, 0.5, 1.0, 0.3]),
        (0u32..=1000).prop_map(|n| f64::from(n) / 1000.0),
        (0.0f64..=1.0),
    ]
}

/// A segment filter (`SegmentFilterSpec` as JSON).
pub fn segment_filter() -> impl Strategy<Value = Value> {
    (
        sample_rate(),
        prop::option::of(filter()),
        prop::option::weighted(0.3, any::<bool>()),
        prop::option::weighted(0.3, any::<bool>()),
    )
        .prop_map(|(rate, f, llm, mm)| {
            let mut s = json!({"sample_rate": rate});
            if let Some(f) = f {
                s["filter"] = f;
            }
            if let Some(b) = llm {
                s["llm_scorers"] = json!(b);
            }
            if let Some(b) = mm {
                s["multimodal_scorers"] = json!(b);
            }
            s
        })
}

/// Metric settings (`MetricSettingsSpec` as JSON), scorers unique by name.
pub fn metric_settings() -> impl Strategy<Value = Value> {
    (
        prop::option::of(prop::collection::vec(scorer(), 0..4)),
        prop::option::of(prop::collection::vec(segment_filter(), 0..3)),
    )
        .prop_map(|(scorers, filters)| {
            let mut m = json!({});
            if let Some(list) = scorers {
                let mut seen = BTreeSet::new();
                let unique: Vec<Value> = list
                    .into_iter()
                    .filter(|s| {
                        // One scorer, whether named or given by id.
                        let id = match s["name"].as_str() {
                            Some(name) => ids::scorer_id(name),
                            None => s["id"].as_str().unwrap_or_default().to_owned(),
                        };
                        seen.insert(id)
                    })
                    .collect();
                m["scorers"] = json!(unique);
            }
            if let Some(f) = filters {
                m["segment_filters"] = json!(f);
            }
            m
        })
}

/// Sections (`SectionSpec`s as JSON): unique names; `renamed_from` only
/// from fixture names that no section declares, each at most once.
pub fn sections() -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec(
        (
            pick(SECTION_NAMES),
            prop::option::weighted(0.2, pick(&["Quality", "Latency"])),
            prop::option::of(pick(&[
                "",
                "Charts",
                "Quality charts",
                "Ü ✓ — long description",
            ])),
            prop::option::of(pick(&[
                "#1F77B4", "#1f77b4", "#FF7F0E", "#000000", "#abcDEF",
            ])),
        ),
        0..4,
    )
    .prop_map(|items| {
        let declared: BTreeSet<&str> = items.iter().map(|i| i.0).collect();
        let mut names = BTreeSet::new();
        let mut renamed = BTreeSet::new();
        items
            .into_iter()
            .filter(|i| names.insert(i.0))
            .map(|(name, from, description, color)| {
                let mut s = json!({"name": name});
                if let Some(old) = from
                    && old != name
                    && !declared.contains(old)
                    && renamed.insert(old)
                {
                    s["renamed_from"] = json!([old]);
                }
                if let Some(d) = description {
                    s["description"] = json!(d);
                }
                if let Some(c) = color {
                    s["color"] = json!(c);
                }
                s
            })
            .collect()
    })
}

/// Trends (`TrendsSpec` as JSON).
pub fn trends() -> impl Strategy<Value = Value> {
    (
        prop::option::of(sections()),
        prop::option::of(pick(&["user", "project", "none"])),
    )
        .prop_map(|(sections, favorite)| {
            let mut t = json!({});
            if let Some(s) = sections {
                t["sections"] = json!(s);
            }
            if let Some(f) = favorite {
                t["favorite"] = json!(f);
            }
            t
        })
}

/// Constraints of a template of `kind` (`annotation_type` or
/// `feedback_type`), as JSON.
pub fn constraints(feedback: bool) -> impl Strategy<Value = Value> {
    let field = if feedback {
        "feedback_type"
    } else {
        "annotation_type"
    };
    let words = || prop::collection::btree_set(pick(&["a", "b", "c", "yes", "no", "ü"]), 2..4);
    let tree = if feedback {
        Just(json!([{"label": "Top", "value": "top", "children": [{"value": "leaf"}]}, {"value": "other"}]))
            .boxed()
    } else {
        Just(json!([{"label": "Top", "id": "top", "children": [{"label": "Leaf", "id": "leaf"}]}, {"label": "Other", "id": "other"}]))
            .boxed()
    };
    prop_oneof![
        Just(json!({ field: "like_dislike" })),
        Just(json!({ field: "star" })),
        Just(json!({ field: "text" })),
        (0i64..3, 0i64..8).prop_map(move |(min, span)| json!({ field: "score", "min": min, "max": min + span })),
        (words(), any::<bool>())
            .prop_map(move |(tags, other)| json!({ field: "tags", "tags": tags, "allow_other": other })),
        (words(), any::<bool>()).prop_map(
            move |(choices, other)| json!({ field: "choice", "choices": choices, "allow_other": other })
        ),
        tree.prop_map(move |t| json!({ field: "tree_choice", "choices_tree": t })),
    ]
}

/// Templates of one kind (as JSON), unique names.
pub fn templates(feedback: bool) -> impl Strategy<Value = Vec<Value>> {
    let names = if feedback {
        FEEDBACK_NAMES
    } else {
        ANNOTATION_NAMES
    };
    prop::collection::vec(
        (
            pick(names),
            prop::option::of(pick(&["Is it good?", "Rate it.", "Ü ✓"])),
            prop::option::of(any::<bool>()),
            constraints(feedback),
        ),
        0..3,
    )
    .prop_map(|items| {
        let mut seen = BTreeSet::new();
        items
            .into_iter()
            .filter(|i| seen.insert(i.0))
            .map(|(name, criteria, explain, constraints)| {
                let mut t = json!({"name": name, "constraints": constraints});
                if let Some(c) = criteria {
                    t["criteria"] = json!(c);
                }
                if let Some(e) = explain {
                    t["include_explanation"] = json!(e);
                }
                t
            })
            .collect()
    })
}

/// A `kind: Project` document for `project`.
pub fn project(project: &'static str) -> impl Strategy<Value = Value> {
    let runs: Vec<Run> = RUNS.iter().copied().filter(|r| r.0 == project).collect();
    let run_specs = runs
        .into_iter()
        .map(|run| {
            (
                prop::option::weighted(0.6, metric_settings()),
                prop::option::weighted(0.6, trends()),
            )
                .prop_map(move |(m, t)| (run, m, t))
        })
        .collect::<Vec<_>>();
    (
        run_specs,
        prop::option::weighted(0.5, templates(false)),
        prop::option::weighted(0.5, templates(true)),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
    )
        .prop_map(
            move |(runs, annotation, feedback, project_by_id, runs_by_id)| {
                // A project, log stream or experiment may be given by id.
                let mut doc = if project_by_id {
                    json!({"kind": "Project", "id": ids::project(project)})
                } else {
                    json!({"kind": "Project", "name": project})
                };
                let mut streams = Vec::new();
                let mut experiments = Vec::new();
                for ((_, is_stream, name), m, t) in runs {
                    let mut r = match (runs_by_id, is_stream) {
                        (false, _) => json!({"name": name}),
                        (true, true) => json!({"id": ids::log_stream(project, name)}),
                        (true, false) => json!({"id": ids::experiment(project, name)}),
                    };
                    if let Some(m) = m {
                        r["metric_settings"] = m;
                    }
                    if let (true, Some(t)) = (is_stream, t) {
                        r["trends"] = t;
                    }
                    if r.as_object().is_some_and(|o| o.len() > 1) {
                        if is_stream {
                            streams.push(r);
                        } else {
                            experiments.push(r);
                        }
                    }
                }
                if !streams.is_empty() {
                    doc["log_streams"] = json!(streams);
                }
                if !experiments.is_empty() {
                    doc["experiments"] = json!(experiments);
                }
                if let Some(a) = annotation {
                    doc["annotation_templates"] = json!(a);
                }
                if let Some(f) = feedback {
                    doc["feedback_templates"] = json!(f);
                }
                doc
            },
        )
}

/// `kind: Integration` documents (0 to 2 providers). Never
/// `rotate_secrets: true`: it re-sends the secrets on every apply, so its
/// plan is never empty, by design.
pub fn integrations() -> impl Strategy<Value = Vec<Value>> {
    (
        prop::option::weighted(0.3, prop::option::of(pick(&["org-a", "org-b"]))),
        prop::option::weighted(0.2, any::<bool>()),
    )
        .prop_map(|(openai, anthropic)| {
            let mut docs = Vec::new();
            if let Some(org) = openai {
                let mut d =
                    json!({"kind": "Integration", "provider": "openai", "token": "${OPENAI_API_KEY}"});
                if let Some(org) = org {
                    d["organization_id"] = json!(org);
                }
                docs.push(d);
            }
            if let Some(explicit) = anthropic {
                let mut d = json!({
                    "kind": "Integration", "provider": "anthropic", "token": "${ANTHROPIC_API_KEY}"
                });
                if explicit {
                    d["rotate_secrets"] = json!(false);
                }
                docs.push(d);
            }
            docs
        })
}

/// A desired state: the documents of a config repo.
pub fn documents() -> impl Strategy<Value = Vec<Value>> {
    (
        prop::option::weighted(0.9, project("demo-project")),
        prop::option::weighted(0.5, project("support-bot")),
        integrations(),
    )
        .prop_map(|(demo, support, integrations)| {
            demo.into_iter()
                .chain(support)
                .chain(integrations)
                .collect()
        })
}
