//! What the fault suite shares: the config repo it applies, the live state
//! that repo must produce (written out by hand, independent of the planner,
//! so a planner bug cannot hide itself), a reader of live state through the
//! API, the checks ("what the report says succeeded is live", "live equals
//! desired", "no name twice"), and a standalone `evalctl sandbox --state`
//! process that can be SIGKILLed and started again on the same port.

#![allow(dead_code)] // each test uses a different part

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use evalctl::api::{ListScorersRequest, MetricSettingsResponse, Secret, TrendsDashboard};
use evalctl::apply::{ApplyReport, OutcomeStatus};
use evalctl::client::{ApiError, Client, ClientConfig, Credentials};
use evalctl::plan::{Action, Address, RunKind, TemplateKind};
use serde_json::{Value, json};

/// The integration token the repo's `${OPENAI_API_KEY}` resolves to.
pub const OPENAI_TOKEN: &str = "sk-fault-suite-0123456789abcdef";

/// The config repo: `(relative path, content)`. Against the demo fixture it
/// plans 1 integration, 9 template creates, 1 template update, 1 template
/// replace, 4 metric-settings updates, 1 section update (a rename), 8 section
/// creates and 3 favorites.
pub const REPO: &[(&str, &str)] = &[
    (
        "repo/demo-project.yaml",
        r##"
kind: Project
name: demo-project
log_streams:
  - name: production
    metric_settings:
      scorers:
        - name: correctness
          num_judges: 3
          cot_enabled: true
        - name: context_adherence
          scorer_version: 1
        - name: helpfulness-judge
          filters:
            - {name: metadata, key: customer_tier, operator: eq, value: enterprise}
        - name: output_toxicity
      segment_filters:
        - sample_rate: 0.5
          filter: {name: node_name, operator: contains, value: llm}
        - sample_rate: 0.1
    trends:
      sections:
        - {name: Quality, description: Quality charts, color: "#1F77B4"}
        - {name: Latency and cost, renamed_from: [Latency], description: Time and spend, color: "#FF7F0E"}
        - {name: Safety, description: Toxicity and PII, color: "#D62728"}
        - {name: Retrieval, description: Context use, color: "#2CA02C"}
        - {name: Tools, color: "#9467BD"}
      favorite: project
  - name: staging
    metric_settings:
      scorers:
        - name: correctness
        - name: completeness
          model_name: gpt-4.1-mini
      segment_filters:
        - sample_rate: 0.25
          filter: {name: metadata, key: env, operator: not_in, value: [dev, test]}
          llm_scorers: true
    trends:
      sections:
        - {name: Staging quality, description: Before release, color: "#17BECF"}
        - {name: Staging latency, color: "#BCBD22"}
      favorite: user
experiments:
  - name: baseline-eval
    metric_settings:
      scorers:
        - name: helpfulness-judge
          scorer_version: 1
        - name: bleu
annotation_templates:
  - name: helpful
    criteria: Was the response helpful?
    constraints: {annotation_type: like_dislike}
  - name: overall-rating
    criteria: Rate the response overall.
    include_explanation: true
    constraints: {annotation_type: star}
  - name: issue-tags
    constraints:
      annotation_type: tags
      tags: [hallucination, off-topic, unsafe]
      allow_other: true
  - name: star-annotation
    criteria: Stars, reworded.
    constraints: {annotation_type: star}
  - name: score-annotation
    criteria: Rate the response (score-annotation).
    include_explanation: true
    constraints: {annotation_type: score, min: 1, max: 5}
feedback_templates:
  - name: thumbs
    constraints: {feedback_type: like_dislike}
  - name: satisfaction
    criteria: How satisfied are you?
    constraints: {feedback_type: score, min: 0, max: 5}
  - name: resolved
    constraints:
      feedback_type: choice
      choices: ["yes", "no"]
      allow_other: true
"##,
    ),
    (
        "repo/support-bot.yaml",
        r##"
kind: Project
name: support-bot
log_streams:
  - name: default
    metric_settings:
      scorers:
        - name: prompt_injection
        - name: input_toxicity
      segment_filters:
        - sample_rate: 1.0
          filter: {name: modality, operator: ne, value: text}
          multimodal_scorers: true
    trends:
      sections:
        - {name: Support quality, description: Answers, color: "#E377C2"}
        - {name: Escalations, color: "#7F7F7F"}
      favorite: user
annotation_templates:
  - name: support-verdict
    criteria: Did the bot resolve it?
    constraints: {annotation_type: choice, choices: [resolved, escalated]}
feedback_templates:
  - name: support-stars
    constraints: {feedback_type: star}
"##,
    ),
    (
        "repo/integrations.yaml",
        r##"
kind: Integration
provider: openai
token: ${OPENAI_API_KEY}
organization_id: org-fault-suite
"##,
    ),
];

/// Writes [`REPO`] under `root`.
pub fn write_repo(root: &Path) {
    for (relative, content) in REPO {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create the directory");
        std::fs::write(path, content).expect("write the manifest");
    }
}

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
    /// Favorited (for the project when `for_project`, else for the caller).
    pub for_project: bool,
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
            for_project: true,
        },
        WantDashboard {
            project: "demo-project",
            log_stream: "staging",
            sections: vec![
                section("Staging quality", Some("Before release"), "#17BECF"),
                section("Staging latency", None, "#BCBD22"),
            ],
            for_project: false,
        },
        WantDashboard {
            project: "support-bot",
            log_stream: "default",
            sections: vec![
                section("Support quality", Some("Answers"), "#E377C2"),
                section("Escalations", None, "#7F7F7F"),
            ],
            for_project: false,
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
    let kinds = [
        "like_dislike",
        "star",
        "score",
        "tags",
        "text",
        "choice",
        "tree_choice",
    ];
    let mut template_names: BTreeMap<(&'static str, TemplateKind), BTreeSet<&'static str>> =
        BTreeMap::new();
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
    assert_eq!(kinds.len(), fixture_names[0].1.len());
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
        let mut out = vec![Address::Integration {
            provider: "openai".into(),
        }];
        for s in &self.settings {
            out.push(Address::MetricSettings {
                project: s.project.into(),
                run_kind: s.kind,
                run: s.run.into(),
            });
        }
        for d in &self.dashboards {
            for s in &d.sections {
                out.push(Address::Section {
                    project: d.project.into(),
                    log_stream: d.log_stream.into(),
                    name: s.name.into(),
                });
            }
            out.push(Address::Favorite {
                project: d.project.into(),
                log_stream: d.log_stream.into(),
            });
        }
        for t in &self.templates {
            out.push(Address::Template {
                project: t.project.into(),
                kind: t.kind,
                name: t.name.into(),
            });
        }
        out
    }
}

/// Live state of everything the repo touches, read through the API.
#[derive(Debug, Clone)]
pub struct LiveView {
    /// Scorer ids by catalog name.
    pub scorer_ids: BTreeMap<String, String>,
    /// Metric settings by (project, kind, run).
    pub settings: BTreeMap<(String, RunKind, String), MetricSettingsResponse>,
    /// Default dashboards by (project, log stream).
    pub dashboards: BTreeMap<(String, String), TrendsDashboard>,
    /// Templates (as JSON) by (project, kind).
    pub templates: BTreeMap<(String, TemplateKind), Vec<Value>>,
    /// The openai integration (as JSON), if any.
    pub integration: Option<Value>,
}

/// A client of `base_url` with the demo API key and a short, bounded retry
/// policy (the checks run with faults off).
pub fn client_for(base_url: &str) -> Client {
    let config = ClientConfig::new(base_url, Credentials::ApiKey(Secret::new("demo-api-key")));
    Client::new(config).expect("a client")
}

fn missing(what: &str) -> String {
    format!("{what} not found")
}

fn api(e: ApiError) -> String {
    e.to_string()
}

impl LiveView {
    /// Reads everything [`Expected`] names.
    pub async fn read(client: &Client, expected: &Expected) -> Result<LiveView, String> {
        let scorer_ids = client
            .list_scorers(ListScorersRequest::default())
            .await
            .map_err(api)?
            .into_iter()
            .map(|s| (s.name, s.id))
            .collect();
        let mut project_ids = BTreeMap::new();
        for project in ["demo-project", "support-bot"] {
            let p = client
                .find_project_by_name(project)
                .await
                .map_err(api)?
                .ok_or_else(|| missing(project))?;
            project_ids.insert(project, p.id);
        }
        let mut settings = BTreeMap::new();
        for s in &expected.settings {
            let pid = &project_ids[s.project];
            let got = match s.kind {
                RunKind::LogStream => {
                    let ls = client
                        .find_log_stream_by_name(pid, s.run)
                        .await
                        .map_err(api)?
                        .ok_or_else(|| missing(s.run))?;
                    client
                        .get_log_stream_metric_settings(pid, &ls.id)
                        .await
                        .map_err(api)?
                }
                RunKind::Experiment => {
                    let ex = client
                        .find_experiment_by_name(pid, s.run)
                        .await
                        .map_err(api)?
                        .ok_or_else(|| missing(s.run))?;
                    client
                        .get_experiment_metric_settings(pid, &ex.id)
                        .await
                        .map_err(api)?
                }
            }
            .ok_or_else(|| missing("metric settings"))?;
            settings.insert((s.project.to_owned(), s.kind, s.run.to_owned()), got);
        }
        let mut dashboards = BTreeMap::new();
        for d in &expected.dashboards {
            let pid = &project_ids[d.project];
            let ls = client
                .find_log_stream_by_name(pid, d.log_stream)
                .await
                .map_err(api)?
                .ok_or_else(|| missing(d.log_stream))?;
            let dashboard = client
                .get_dashboard(pid, &ls.id, None)
                .await
                .map_err(api)?
                .ok_or_else(|| missing("dashboard"))?;
            dashboards.insert((d.project.to_owned(), d.log_stream.to_owned()), dashboard);
        }
        let mut templates = BTreeMap::new();
        for (project, pid) in &project_ids {
            let annotation = client.list_annotation_templates(pid).await.map_err(api)?;
            let feedback = client.list_feedback_templates(pid).await.map_err(api)?;
            let json = |v: Result<Value, serde_json::Error>| v.expect("templates serialize");
            templates.insert(
                ((*project).to_owned(), TemplateKind::Annotation),
                annotation
                    .iter()
                    .map(|t| json(serde_json::to_value(t)))
                    .collect(),
            );
            templates.insert(
                ((*project).to_owned(), TemplateKind::Feedback),
                feedback
                    .iter()
                    .map(|t| json(serde_json::to_value(t)))
                    .collect(),
            );
        }
        let integration = client
            .get_integration("openai")
            .await
            .map_err(api)?
            .map(|i| serde_json::to_value(i).expect("an integration serializes"));
        Ok(LiveView {
            scorer_ids,
            settings,
            dashboards,
            templates,
            integration,
        })
    }

    /// Whether the object at `address` is live as `expected` wants it.
    pub fn check(&self, expected: &Expected, address: &Address) -> Result<(), String> {
        match address {
            Address::Integration { provider } => {
                if provider != "openai" {
                    return Err(format!("unexpected provider {provider}"));
                }
                let live = self.integration.as_ref().ok_or("no openai integration")?;
                subset(&expected.integration, live, "integration")
            }
            Address::MetricSettings {
                project,
                run_kind,
                run,
            } => {
                let want = expected
                    .settings
                    .iter()
                    .find(|s| s.project == project && s.kind == *run_kind && s.run == run)
                    .ok_or("not in the repo")?;
                let live = self
                    .settings
                    .get(&(project.clone(), *run_kind, run.clone()))
                    .ok_or("not read")?;
                self.check_settings(want, live)
            }
            Address::Section {
                project,
                log_stream,
                name,
            } => {
                let (want_dash, live) = self.dashboard(expected, project, log_stream)?;
                let want = want_dash
                    .sections
                    .iter()
                    .find(|s| s.name == name)
                    .ok_or("not in the repo")?;
                let found: Vec<_> = live.sections.iter().filter(|s| s.name == *name).collect();
                let [section] = found.as_slice() else {
                    return Err(format!("{} sections named {name:?}", found.len()));
                };
                if let Some(d) = want.description
                    && section.description.as_deref() != Some(d)
                {
                    return Err(format!(
                        "description {:?}, wanted {d:?}",
                        section.description
                    ));
                }
                if !section
                    .color
                    .as_deref()
                    .is_some_and(|c| c.eq_ignore_ascii_case(want.color))
                {
                    return Err(format!("color {:?}, wanted {}", section.color, want.color));
                }
                let widgets: BTreeSet<&str> =
                    section.widgets.iter().map(|w| w.name.as_str()).collect();
                let wanted: BTreeSet<&str> = want.widgets.iter().copied().collect();
                if widgets != wanted {
                    return Err(format!("widgets {widgets:?}, wanted {wanted:?}"));
                }
                Ok(())
            }
            Address::Favorite {
                project,
                log_stream,
            } => {
                let (_, live) = self.dashboard(expected, project, log_stream)?;
                if live.is_favorited {
                    Ok(())
                } else {
                    Err("not favorited".into())
                }
            }
            Address::Template {
                project,
                kind,
                name,
            } => {
                let want = expected
                    .templates
                    .iter()
                    .find(|t| t.project == project && t.kind == *kind && t.name == name)
                    .ok_or("not in the repo")?;
                let live = self
                    .templates
                    .get(&(project.clone(), *kind))
                    .ok_or("not read")?;
                let found: Vec<&Value> = live.iter().filter(|t| t["name"] == *name).collect();
                let [t] = found.as_slice() else {
                    return Err(format!("{} templates named {name:?}", found.len()));
                };
                if let Some(c) = want.criteria
                    && t["criteria"] != c
                {
                    return Err(format!("criteria {}, wanted {c:?}", t["criteria"]));
                }
                if t["include_explanation"] != want.include_explanation {
                    return Err(format!(
                        "include_explanation {}, wanted {}",
                        t["include_explanation"], want.include_explanation
                    ));
                }
                subset(&want.constraints, &t["constraints"], "constraints")
            }
        }
    }

    fn dashboard<'a>(
        &'a self,
        expected: &'a Expected,
        project: &str,
        log_stream: &str,
    ) -> Result<(&'a WantDashboard, &'a TrendsDashboard), String> {
        let want = expected
            .dashboards
            .iter()
            .find(|d| d.project == project && d.log_stream == log_stream)
            .ok_or("not in the repo")?;
        let live = self
            .dashboards
            .get(&(project.to_owned(), log_stream.to_owned()))
            .ok_or("not read")?;
        Ok((want, live))
    }

    fn check_settings(
        &self,
        want: &WantSettings,
        live: &MetricSettingsResponse,
    ) -> Result<(), String> {
        let live_scorers: Vec<Value> = live
            .scorers
            .iter()
            .map(|s| serde_json::to_value(s).expect("a scorer config serializes"))
            .collect();
        let mut wanted_ids = BTreeSet::new();
        for w in &want.scorers {
            let id = self
                .scorer_ids
                .get(w.name)
                .ok_or_else(|| format!("scorer {} not in the catalog", w.name))?;
            wanted_ids.insert(id.as_str());
            let found: Vec<&Value> = live_scorers.iter().filter(|s| s["id"] == **id).collect();
            let [s] = found.as_slice() else {
                return Err(format!("scorer {} enabled {} times", w.name, found.len()));
            };
            subset(&w.fields, s, &format!("scorer {}", w.name))?;
            let version = s["scorer_version"]["version"].as_i64();
            if version != w.pin {
                return Err(format!(
                    "scorer {} pinned to {version:?}, wanted {:?}",
                    w.name, w.pin
                ));
            }
        }
        let live_ids: BTreeSet<&str> = live.scorers.iter().map(|s| s.id.as_str()).collect();
        if live_ids != wanted_ids {
            return Err(format!("scorers {live_ids:?}, wanted {wanted_ids:?}"));
        }
        if want.segment_filters.is_empty() {
            return Ok(());
        }
        let live_filters = serde_json::to_value(&live.segment_filters).expect("filters serialize");
        let live_filters = live_filters.as_array().cloned().unwrap_or_default();
        if live_filters.len() != want.segment_filters.len() {
            return Err(format!(
                "{} segment filters, wanted {}",
                live_filters.len(),
                want.segment_filters.len()
            ));
        }
        for (i, (w, l)) in want.segment_filters.iter().zip(&live_filters).enumerate() {
            let mut w = w.clone();
            // Unset flags are false; an absent filter is null.
            for flag in ["llm_scorers", "multimodal_scorers"] {
                if w.get(flag).is_none() {
                    w[flag] = json!(false);
                }
            }
            let mut l = l.clone();
            if l.get("filter").is_none() {
                l["filter"] = Value::Null;
            }
            subset(&w, &l, &format!("segment_filters[{i}]"))?;
        }
        Ok(())
    }

    /// Names that occur more than once where names are keys: sections of a
    /// dashboard, templates of a project and kind.
    pub fn duplicates(&self) -> Vec<String> {
        let mut out = Vec::new();
        for ((project, ls), d) in &self.dashboards {
            let names: Vec<&str> = d.sections.iter().map(|s| s.name.as_str()).collect();
            out.extend(
                repeated(&names)
                    .into_iter()
                    .map(|n| format!("section {n:?} of {project}/{ls} exists more than once")),
            );
        }
        for ((project, kind), list) in &self.templates {
            let names: Vec<&str> = list.iter().filter_map(|t| t["name"].as_str()).collect();
            out.extend(
                repeated(&names)
                    .into_iter()
                    .map(|n| format!("{} {n:?} of {project} exists more than once", kind.as_str())),
            );
        }
        out
    }

    /// Every way live differs from `expected`: each managed object checked,
    /// no duplicates, and no section or template that should not exist.
    pub fn mismatches(&self, expected: &Expected) -> Vec<String> {
        let mut out: Vec<String> = expected
            .addresses()
            .iter()
            .filter_map(|a| self.check(expected, a).err().map(|e| format!("{a}: {e}")))
            .collect();
        out.extend(self.duplicates());
        for d in &expected.dashboards {
            if let Some(live) = self
                .dashboards
                .get(&(d.project.to_owned(), d.log_stream.to_owned()))
            {
                let names: BTreeSet<&str> = live.sections.iter().map(|s| s.name.as_str()).collect();
                let wanted: BTreeSet<&str> = d.sections.iter().map(|s| s.name).collect();
                if names != wanted {
                    out.push(format!(
                        "sections of {}/{}: {names:?}, wanted {wanted:?}",
                        d.project, d.log_stream
                    ));
                }
            }
        }
        for ((project, kind), wanted) in &expected.template_names {
            let names: BTreeSet<&str> = self
                .templates
                .get(&((*project).to_owned(), *kind))
                .map(|l| l.iter().filter_map(|t| t["name"].as_str()).collect())
                .unwrap_or_default();
            if names != *wanted {
                out.push(format!(
                    "{} names of {project}: {names:?}, wanted {wanted:?}",
                    kind.as_str()
                ));
            }
        }
        out
    }
}

fn repeated<'a>(names: &[&'a str]) -> Vec<&'a str> {
    let mut seen = BTreeSet::new();
    let mut twice = BTreeSet::new();
    for n in names {
        if !seen.insert(*n) {
            twice.insert(*n);
        }
    }
    twice.into_iter().collect()
}

/// `want` is a subset of `got`: every key of an object equal (recursively),
/// arrays equal element by element; numbers compare as numbers.
pub fn subset(want: &Value, got: &Value, what: &str) -> Result<(), String> {
    fn walk(want: &Value, got: &Value, path: &str) -> Result<(), String> {
        match (want, got) {
            (Value::Object(w), Value::Object(g)) => {
                for (k, wv) in w {
                    let gv = g.get(k).unwrap_or(&Value::Null);
                    walk(wv, gv, &format!("{path}.{k}"))?;
                }
                Ok(())
            }
            (Value::Array(w), Value::Array(g)) if w.len() == g.len() => w
                .iter()
                .zip(g)
                .enumerate()
                .try_for_each(|(i, (wv, gv))| walk(wv, gv, &format!("{path}[{i}]"))),
            (Value::Number(w), Value::Number(g)) if w.as_f64() == g.as_f64() => Ok(()),
            (w, g) if w == g => Ok(()),
            (w, g) => Err(format!("{path}: live {g}, wanted {w}")),
        }
    }
    walk(want, got, what)
}

/// A JSON apply report read back from `apply -o json`.
pub fn parse_report(stdout: &str) -> Option<ApplyReport> {
    serde_json::from_str(stdout.trim()).ok()
}

/// Checks that a first apply under faults ended honestly, and returns its
/// report (none when it stopped before applying, exit 1):
/// - exit 0 or 3, or 1 with an error message;
/// - exit 0 exactly when the report says complete;
/// - every change it says succeeded is live as wanted (for a delete: gone).
#[track_caller]
pub fn check_honest(
    status: i32,
    stdout: &str,
    stderr: &str,
    live: &LiveView,
    expected: &Expected,
) -> Option<ApplyReport> {
    let both = format!("--- stdout\n{stdout}\n--- stderr\n{stderr}");
    match status {
        1 => {
            assert!(
                stderr.contains("error"),
                "exit 1 without an error message\n{both}"
            );
            return None;
        }
        0 | 3 => {}
        other => panic!("exit {other}: neither 0, 3 nor 1\n{both}"),
    }
    let report = parse_report(stdout).unwrap_or_else(|| panic!("no JSON apply report\n{both}"));
    assert_eq!(
        status == 0,
        report.is_complete(),
        "the exit status and the report disagree\n{both}"
    );
    let managed: BTreeSet<Address> = expected.addresses().into_iter().collect();
    for outcome in &report.outcomes {
        assert!(
            managed.contains(&outcome.address),
            "the report names {}, which the repo does not manage\n{both}",
            outcome.address
        );
        if outcome.status == OutcomeStatus::Succeeded {
            assert_ne!(outcome.action, Action::Delete, "the repo deletes nothing");
            if let Err(e) = live.check(expected, &outcome.address) {
                panic!(
                    "the report says {} succeeded, but live disagrees: {e}\n{both}",
                    outcome.address
                );
            }
        } else {
            let detail = outcome.detail.as_deref().unwrap_or_default();
            assert!(
                !detail.is_empty(),
                "{} {:?} without a reason\n{both}",
                outcome.address,
                outcome.status
            );
            if detail.contains("it was not created") {
                assert!(
                    live.check(expected, &outcome.address).is_err(),
                    "the report says {} was not created, but it is live\n{both}",
                    outcome.address
                );
            }
        }
    }
    Some(report)
}

/// A free TCP port on 127.0.0.1 (free when this returns; another process
/// could take it, which makes the start fail loudly, not silently).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// `evalctl sandbox --state FILE --listen 127.0.0.1:PORT`, as a child
/// process. Dropping it kills it.
pub struct SandboxProcess {
    child: Option<Child>,
    /// The port it listens on.
    pub port: u16,
    /// The state file.
    pub state: PathBuf,
    /// Extra `evalctl sandbox` flags (faults).
    pub flags: Vec<String>,
}

impl SandboxProcess {
    /// Starts it and waits until it listens.
    pub fn start(state: &Path, port: u16, flags: &[&str]) -> SandboxProcess {
        let mut p = SandboxProcess {
            child: None,
            port,
            state: state.to_owned(),
            flags: flags.iter().map(|s| (*s).to_owned()).collect(),
        };
        p.restart();
        p
    }

    /// Its base URL.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// SIGKILLs it (no graceful shutdown, nothing flushed) and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // `Child::kill` is SIGKILL on Unix.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, with the same state file, and waits
    /// until it listens (retrying while the port is still held).
    pub fn restart(&mut self) {
        self.kill();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let mut child = Command::new(env!("CARGO_BIN_EXE_evalctl"))
                .arg("sandbox")
                .arg("--state")
                .arg(&self.state)
                .arg("--listen")
                .arg(format!("127.0.0.1:{}", self.port))
                .args(&self.flags)
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("start evalctl sandbox");
            let stdout = child.stdout.take().expect("a stdout");
            let mut first = String::new();
            let _ = BufReader::new(stdout).read_line(&mut first);
            if first.contains("listening on") {
                self.child = Some(child);
                return;
            }
            let _ = child.kill();
            let _ = child.wait();
            assert!(
                Instant::now() < deadline,
                "the sandbox did not start on port {}: {first:?}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for SandboxProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
