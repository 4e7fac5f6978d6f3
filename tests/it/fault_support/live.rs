//! Live state of everything the fault suite's repo touches, read through
//! the API, and the checks against [`Expected`]: one object at a time (what
//! an apply report says succeeded), all of them, and duplicate names.

use evalctl::kinds::templates::{TemplateAddress, TemplateKind};
use evalctl::plan::address::{
    FavoriteAddress, IntegrationAddress, MetricSettingsAddress, SectionAddress,
};
use std::collections::{BTreeMap, BTreeSet};

use evalctl::api::{ListScorersRequest, MetricSettingsResponse, Secret, TrendsDashboard};
use evalctl::client::{ApiError, Client, ClientConfig, Credentials};
use evalctl::plan::{Address, RunKind};
use serde_json::{Value, json};

use super::expected::{Expected, WantDashboard, WantSettings};

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
            Address::Integration(IntegrationAddress { provider }) => {
                if provider != "openai" {
                    return Err(format!("unexpected provider {provider}"));
                }
                let live = self.integration.as_ref().ok_or("no openai integration")?;
                subset(&expected.integration, live, "integration")
            }
            Address::MetricSettings(MetricSettingsAddress {
                project,
                run_kind,
                run,
            }) => {
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
            Address::Section(SectionAddress {
                project,
                log_stream,
                name,
                ..
            }) => {
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
            Address::Favorite(FavoriteAddress {
                project,
                log_stream,
            }) => {
                let (_, live) = self.dashboard(expected, project, log_stream)?;
                if live.is_favorited {
                    Ok(())
                } else {
                    Err("not favorited".into())
                }
            }
            Address::Template(TemplateAddress {
                project,
                kind,
                name,
            }) => {
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
            other => Err(format!("the fault suite declares no {other}")),
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
