//! The live state the fault suite's repo must produce from the demo fixture,
//! written out by hand (not computed by the planner, so a planner bug cannot
//! hide itself), and the addresses of everything the repo manages.

use evalctl::kinds::templates::{TemplateAddress, TemplateKind};
use evalctl::plan::address::{
    FavoriteAddress, IntegrationAddress, MetricSettingsAddress, SectionAddress,
};
use std::collections::{BTreeMap, BTreeSet};

use evalctl::plan::{Address, RunKind};
use serde_json::{Value, json};

/// A scorer the repo enables: by catalog name, with its pin and the fields
/// the manifest sets (compared as a subset of the live config).
#[derive(Debug, Clone)]
pub struct WantScorer {
    /// Catalog name.
    pub name: &'static str,
    /// Pinned version; `None` is "latest" (no pin live).
    pub pin: Option<i64>,
    /// Fields the manifest sets.
    pub fields: Value,
}

/// A run's metric settings as the repo wants them.
#[derive(Debug, Clone)]
pub struct WantSettings {
    /// Project name.
    pub project: &'static str,
    /// Log stream or experiment.
    pub kind: RunKind,
    /// Run name.
    pub run: &'static str,
    /// The whole set of scorers.
    pub scorers: Vec<WantScorer>,
    /// The segment filters, in order (each a subset of the live one).
    pub segment_filters: Vec<Value>,
}

/// A section as the repo wants it.
#[derive(Debug, Clone)]
pub struct WantSection {
    /// Name.
    pub name: &'static str,
    /// Description, when the manifest manages it.
    pub description: Option<&'static str>,
    /// Colour (compared case-insensitively).
    pub color: &'static str,
    /// Widgets it must still have (a rename keeps them).
    pub widgets: &'static [&'static str],
}

/// A default dashboard as the repo wants it.
#[derive(Debug, Clone)]
pub struct WantDashboard {
    /// Project name.
    pub project: &'static str,
    /// Log stream name.
    pub log_stream: &'static str,
    /// Exactly these sections (no prune, but no other section exists).
    pub sections: Vec<WantSection>,
}

/// A template as the repo wants it.
#[derive(Debug, Clone)]
pub struct WantTemplate {
    /// Project name.
    pub project: &'static str,
    /// Annotation or feedback.
    pub kind: TemplateKind,
    /// Name.
    pub name: &'static str,
    /// Criteria, when declared.
    pub criteria: Option<&'static str>,
    /// Whether raters explain.
    pub include_explanation: bool,
    /// Constraints (a subset of the live ones).
    pub constraints: Value,
}

/// The live state the repo must produce.
#[derive(Debug, Clone)]
pub struct Expected {
    /// Metric settings.
    pub settings: Vec<WantSettings>,
    /// Dashboards.
    pub dashboards: Vec<WantDashboard>,
    /// Declared templates.
    pub templates: Vec<WantTemplate>,
    /// Every template name each project must hold, per kind (declared ones
    /// and the fixture's undeclared ones, which are left alone).
    pub template_names: BTreeMap<(&'static str, TemplateKind), BTreeSet<&'static str>>,
    /// The openai integration's readable fields.
    pub integration: Value,
}

fn scorer(name: &'static str, pin: Option<i64>, fields: Value) -> WantScorer {
    WantScorer { name, pin, fields }
}

fn section(
    name: &'static str,
    description: Option<&'static str>,
    color: &'static str,
) -> WantSection {
    WantSection {
        name,
        description,
        color,
        widgets: &[],
    }
}

fn template(
    project: &'static str,
    kind: TemplateKind,
    name: &'static str,
    criteria: Option<&'static str>,
    include_explanation: bool,
    constraints: Value,
) -> WantTemplate {
    WantTemplate {
        project,
        kind,
        name,
        criteria,
        include_explanation,
        constraints,
    }
}

/// What [`REPO`] applied to the demo fixture must leave live, written out by
/// hand.
pub fn expected() -> Expected {
    use TemplateKind::{Annotation, Feedback};
    let settings = vec![
        WantSettings {
            project: "demo-project",
            kind: RunKind::LogStream,
            run: "production",
            scorers: vec![
                scorer(
                    "correctness",
                    None,
                    json!({"num_judges": 3, "cot_enabled": true}),
                ),
                scorer("context_adherence", Some(1), json!({})),
                scorer(
                    "helpfulness-judge",
                    None,
                    json!({"filters": [{"name": "metadata", "key": "customer_tier", "operator": "eq", "value": "enterprise"}]}),
                ),
                scorer("output_toxicity", None, json!({})),
            ],
            segment_filters: vec![
                json!({"sample_rate": 0.5, "filter": {"name": "node_name", "operator": "contains", "value": "llm"}}),
                json!({"sample_rate": 0.1, "filter": null}),
            ],
        },
        WantSettings {
            project: "demo-project",
            kind: RunKind::LogStream,
            run: "staging",
            scorers: vec![
                scorer("correctness", None, json!({})),
                scorer("completeness", None, json!({"model_name": "gpt-4.1-mini"})),
            ],
            segment_filters: vec![json!({
                "sample_rate": 0.25,
                "filter": {"name": "metadata", "key": "env", "operator": "not_in", "value": ["dev", "test"]},
                "llm_scorers": true
            })],
        },
        WantSettings {
            project: "demo-project",
            kind: RunKind::Experiment,
            run: "baseline-eval",
            scorers: vec![
                scorer("helpfulness-judge", Some(1), json!({})),
                scorer("bleu", None, json!({})),
            ],
            // Unmanaged: the manifest does not declare segment filters.
            segment_filters: Vec::new(),
        },
        WantSettings {
            project: "support-bot",
            kind: RunKind::LogStream,
            run: "default",
            scorers: vec![
                scorer("prompt_injection", None, json!({})),
                scorer("input_toxicity", None, json!({})),
            ],
            segment_filters: vec![json!({
                "sample_rate": 1.0,
                "filter": {"name": "modality", "operator": "ne", "value": "text"},
                "multimodal_scorers": true
            })],
        },
    ];
    let dashboards = vec![
        WantDashboard {
            project: "demo-project",
            log_stream: "production",
            sections: vec![
                WantSection {
                    widgets: &["Correctness", "Context adherence"],
                    ..section("Quality", Some("Quality charts"), "#1F77B4")
                },
                WantSection {
                    widgets: &["Latency p95"],
                    ..section("Latency and cost", Some("Time and spend"), "#FF7F0E")
                },
                section("Safety", Some("Toxicity and PII"), "#D62728"),
                section("Retrieval", Some("Context use"), "#2CA02C"),
                section("Tools", None, "#9467BD"),
            ],
        },
        WantDashboard {
            project: "demo-project",
            log_stream: "staging",
            sections: vec![
                section("Staging quality", Some("Before release"), "#17BECF"),
                section("Staging latency", None, "#BCBD22"),
            ],
        },
        WantDashboard {
            project: "support-bot",
            log_stream: "default",
            sections: vec![
                section("Support quality", Some("Answers"), "#E377C2"),
                section("Escalations", None, "#7F7F7F"),
            ],
        },
    ];
    let templates = vec![
        template(
            "demo-project",
            Annotation,
            "helpful",
            Some("Was the response helpful?"),
            false,
            json!({"annotation_type": "like_dislike"}),
        ),
        template(
            "demo-project",
            Annotation,
            "overall-rating",
            Some("Rate the response overall."),
            true,
            json!({"annotation_type": "star"}),
        ),
        template(
            "demo-project",
            Annotation,
            "issue-tags",
            None,
            false,
            json!({"annotation_type": "tags", "tags": ["hallucination", "off-topic", "unsafe"], "allow_other": true}),
        ),
        template(
            "demo-project",
            Annotation,
            "star-annotation",
            Some("Stars, reworded."),
            false,
            json!({"annotation_type": "star"}),
        ),
        template(
            "demo-project",
            Annotation,
            "score-annotation",
            Some("Rate the response (score-annotation)."),
            true,
            json!({"annotation_type": "score", "min": 1, "max": 5}),
        ),
        template(
            "demo-project",
            Feedback,
            "thumbs",
            None,
            false,
            json!({"feedback_type": "like_dislike"}),
        ),
        template(
            "demo-project",
            Feedback,
            "satisfaction",
            Some("How satisfied are you?"),
            false,
            json!({"feedback_type": "score", "min": 0, "max": 5}),
        ),
        template(
            "demo-project",
            Feedback,
            "resolved",
            None,
            false,
            json!({"feedback_type": "choice", "choices": ["yes", "no"], "allow_other": true}),
        ),
        template(
            "support-bot",
            Annotation,
            "support-verdict",
            Some("Did the bot resolve it?"),
            false,
            json!({"annotation_type": "choice", "choices": ["resolved", "escalated"]}),
        ),
        template(
            "support-bot",
            Feedback,
            "support-stars",
            None,
            false,
            json!({"feedback_type": "star"}),
        ),
    ];
    let mut template_names: BTreeMap<(&'static str, TemplateKind), BTreeSet<&'static str>> =
        BTreeMap::new();
    // The demo fixture's templates, one of each of the seven kinds.
    let fixture_names: [(TemplateKind, [&'static str; 7]); 2] = [
        (
            Annotation,
            [
                "like_dislike-annotation",
                "star-annotation",
                "score-annotation",
                "tags-annotation",
                "text-annotation",
                "choice-annotation",
                "tree_choice-annotation",
            ],
        ),
        (
            Feedback,
            [
                "like_dislike-feedback",
                "star-feedback",
                "score-feedback",
                "tags-feedback",
                "text-feedback",
                "choice-feedback",
                "tree_choice-feedback",
            ],
        ),
    ];
    for (kind, names) in fixture_names {
        template_names
            .entry(("demo-project", kind))
            .or_default()
            .extend(names);
        template_names.entry(("support-bot", kind)).or_default();
    }
    for t in &templates {
        template_names
            .entry((t.project, t.kind))
            .or_default()
            .insert(t.name);
    }
    Expected {
        settings,
        dashboards,
        templates,
        template_names,
        integration: json!({"provider": "openai", "organization_id": "org-fault-suite"}),
    }
}

impl Expected {
    /// Every address the repo manages.
    pub fn addresses(&self) -> Vec<Address> {
        let mut out = vec![Address::Integration(IntegrationAddress {
            provider: "openai".into(),
        })];
        for s in &self.settings {
            out.push(Address::MetricSettings(MetricSettingsAddress {
                project: s.project.into(),
                run_kind: s.kind,
                run: s.run.into(),
            }));
        }
        for d in &self.dashboards {
            for s in &d.sections {
                out.push(Address::Section(SectionAddress {
                    project: d.project.into(),
                    log_stream: d.log_stream.into(),
                    dashboard: None,
                    name: s.name.into(),
                }));
            }
            out.push(Address::Favorite(FavoriteAddress {
                project: d.project.into(),
                log_stream: d.log_stream.into(),
            }));
        }
        for t in &self.templates {
            out.push(Address::Template(TemplateAddress {
                project: t.project.into(),
                kind: t.kind,
                name: t.name.into(),
            }));
        }
        out
    }
}
