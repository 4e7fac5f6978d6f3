//! Resource addresses: the stable, human-readable name of every object a plan
//! can touch, e.g. `project[demo-project].log_stream[production].metric_settings`.
//!
//! Addresses order plans, name objects in every output, and are what
//! `--target` selects ([`super::target`] parses the same grammar).

use serde::{Deserialize, Serialize};

use super::target::{Kind, Segment};

/// Whether a run is a log stream or an experiment.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum RunKind {
    /// A log stream.
    LogStream,
    /// An experiment.
    Experiment,
}

impl RunKind {
    /// `log_stream` or `experiment`.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::LogStream => "log_stream",
            RunKind::Experiment => "experiment",
        }
    }
}

/// Annotation or feedback.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TemplateKind {
    /// Annotation template.
    Annotation,
    /// Feedback template.
    Feedback,
}

impl TemplateKind {
    /// `annotation_template` or `feedback_template`.
    pub fn as_str(self) -> &'static str {
        match self {
            TemplateKind::Annotation => "annotation_template",
            TemplateKind::Feedback => "feedback_template",
        }
    }
}

/// The address of an object a plan can touch.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Address {
    /// The calling user's integration with a provider.
    Integration {
        /// Provider.
        provider: String,
    },
    /// A named custom integration of the calling user.
    CustomIntegration {
        /// Its name.
        name: String,
    },
    /// A template of a project.
    Template {
        /// Project, as the manifest refers to it.
        project: String,
        /// Annotation or feedback.
        kind: TemplateKind,
        /// Template name.
        name: String,
    },
    /// Metric settings of a log stream or experiment.
    MetricSettings {
        /// Project.
        project: String,
        /// Log stream or experiment.
        run_kind: RunKind,
        /// Run, as the manifest refers to it.
        run: String,
    },
    /// A dashboard of a log stream other than its default one: its name,
    /// visibility and description.
    Dashboard {
        /// Project.
        project: String,
        /// Log stream.
        log_stream: String,
        /// Dashboard name.
        name: String,
    },
    /// A section of a dashboard of a log stream.
    Section {
        /// Project.
        project: String,
        /// Log stream.
        log_stream: String,
        /// The dashboard, by name; `None`: the log stream's default one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dashboard: Option<String>,
        /// Section name.
        name: String,
    },
    /// The favorite state of a log stream's default dashboard.
    Favorite {
        /// Project.
        project: String,
        /// Log stream.
        log_stream: String,
    },
    /// A widget of a dashboard, in a section or at its top level.
    Widget {
        /// Project.
        project: String,
        /// Log stream.
        log_stream: String,
        /// The dashboard, by name; `None`: the log stream's default one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dashboard: Option<String>,
        /// The section it is declared in; `None`: the top level.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        section: Option<String>,
        /// Widget name.
        name: String,
    },
    /// The settings of a dashboard (interval, time range, group-by).
    Settings {
        /// Project.
        project: String,
        /// Log stream.
        log_stream: String,
        /// The dashboard, by name; `None`: the log stream's default one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dashboard: Option<String>,
    },
}

fn quote(name: &str) -> String {
    name.replace('\\', "\\\\").replace(']', "\\]")
}

/// The address of a log stream: `project[P].log_stream[L]`.
fn run(project: &str, log_stream: &str) -> String {
    format!(
        "project[{}].log_stream[{}]",
        quote(project),
        quote(log_stream)
    )
}

/// Where a dashboard's parts are: `trends` (the default dashboard) or
/// `dashboard[NAME]`.
fn dashboard_segment(dashboard: Option<&str>) -> String {
    match dashboard {
        None => "trends".to_owned(),
        Some(name) => format!("dashboard[{}]", quote(name)),
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Integration { provider } => write!(f, "integration[{}]", quote(provider)),
            Address::CustomIntegration { name } => {
                write!(f, "custom_integration[{}]", quote(name))
            }
            Address::Template {
                project,
                kind,
                name,
            } => {
                write!(
                    f,
                    "project[{}].{}[{}]",
                    quote(project),
                    kind.as_str(),
                    quote(name)
                )
            }
            Address::MetricSettings {
                project,
                run_kind,
                run,
            } => write!(
                f,
                "project[{}].{}[{}].metric_settings",
                quote(project),
                run_kind.as_str(),
                quote(run)
            ),
            Address::Section {
                project,
                log_stream,
                dashboard,
                name,
            } => write!(
                f,
                "{}.{}.section[{}]",
                run(project, log_stream),
                dashboard_segment(dashboard.as_deref()),
                quote(name)
            ),
            Address::Favorite {
                project,
                log_stream,
            } => write!(f, "{}.trends.favorite", run(project, log_stream)),
            Address::Widget {
                project,
                log_stream,
                dashboard,
                section,
                name,
            } => {
                write!(
                    f,
                    "{}.{}",
                    run(project, log_stream),
                    dashboard_segment(dashboard.as_deref())
                )?;
                if let Some(section) = section {
                    write!(f, ".section[{}]", quote(section))?;
                }
                write!(f, ".widget[{}]", quote(name))
            }
            Address::Settings {
                project,
                log_stream,
                dashboard,
            } => write!(
                f,
                "{}.{}.settings",
                run(project, log_stream),
                dashboard_segment(dashboard.as_deref())
            ),
            Address::Dashboard {
                project,
                log_stream,
                name,
            } => write!(f, "{}.dashboard[{}]", run(project, log_stream), quote(name)),
        }
    }
}

impl Address {
    /// The collection the object is one of, for objects `--prune` can delete
    /// or a plan can replace: the address of what holds it and the plural
    /// of its kind (`project[a]` and `annotation templates`). A dashboard's
    /// widgets are one collection, whichever section holds each. `None` for
    /// singletons (metric settings, settings, favorites, integrations).
    pub fn collection(&self) -> Option<(String, &'static str)> {
        match self {
            Address::Template { project, kind, .. } => Some((
                format!("project[{}]", quote(project)),
                match kind {
                    TemplateKind::Annotation => "annotation templates",
                    TemplateKind::Feedback => "feedback templates",
                },
            )),
            Address::Dashboard {
                project,
                log_stream,
                ..
            } => Some((run(project, log_stream), "dashboards")),
            Address::Section {
                project,
                log_stream,
                dashboard,
                ..
            }
            | Address::Widget {
                project,
                log_stream,
                dashboard,
                ..
            } => Some((
                format!(
                    "{}.{}",
                    run(project, log_stream),
                    dashboard_segment(dashboard.as_deref())
                ),
                if matches!(self, Address::Section { .. }) {
                    "sections"
                } else {
                    "widgets"
                },
            )),
            Address::Integration { .. }
            | Address::CustomIntegration { .. }
            | Address::MetricSettings { .. }
            | Address::Favorite { .. }
            | Address::Settings { .. } => None,
        }
    }

    /// The project the address is in, if any.
    pub fn project(&self) -> Option<&str> {
        match self {
            Address::Integration { .. } | Address::CustomIntegration { .. } => None,
            Address::Template { project, .. }
            | Address::MetricSettings { project, .. }
            | Address::Section { project, .. }
            | Address::Favorite { project, .. }
            | Address::Widget { project, .. }
            | Address::Settings { project, .. }
            | Address::Dashboard { project, .. } => Some(project),
        }
    }

    /// The address as segments, the way targets are matched against it.
    pub fn segments(&self) -> Vec<Segment> {
        let project = |p: &str| Segment::named(Kind::Project, p);
        let dashboard = |p: &str, ls: &str, d: Option<&str>| {
            vec![
                project(p),
                Segment::run(RunKind::LogStream, ls),
                match d {
                    None => Segment::kind(Kind::Trends),
                    Some(name) => Segment::named(Kind::Dashboard, name),
                },
            ]
        };
        match self {
            Address::Integration { provider } => vec![Segment::named(Kind::Integration, provider)],
            Address::CustomIntegration { name } => {
                vec![Segment::named(Kind::CustomIntegration, name)]
            }
            Address::Template {
                project: p,
                kind,
                name,
            } => vec![
                project(p),
                Segment::named(
                    match kind {
                        TemplateKind::Annotation => Kind::AnnotationTemplate,
                        TemplateKind::Feedback => Kind::FeedbackTemplate,
                    },
                    name,
                ),
            ],
            Address::MetricSettings {
                project: p,
                run_kind,
                run,
            } => vec![
                project(p),
                Segment::run(*run_kind, run),
                Segment::kind(Kind::MetricSettings),
            ],
            Address::Section {
                project: p,
                log_stream,
                dashboard: d,
                name,
            } => {
                let mut out = dashboard(p, log_stream, d.as_deref());
                out.push(Segment::named(Kind::Section, name));
                out
            }
            Address::Favorite {
                project: p,
                log_stream,
            } => {
                let mut out = dashboard(p, log_stream, None);
                out.push(Segment::kind(Kind::Favorite));
                out
            }
            Address::Widget {
                project: p,
                log_stream,
                dashboard: d,
                section,
                name,
            } => {
                let mut out = dashboard(p, log_stream, d.as_deref());
                if let Some(section) = section {
                    out.push(Segment::named(Kind::Section, section));
                }
                out.push(Segment::named(Kind::Widget, name));
                out
            }
            Address::Settings {
                project: p,
                log_stream,
                dashboard: d,
            } => {
                let mut out = dashboard(p, log_stream, d.as_deref());
                out.push(Segment::kind(Kind::Settings));
                out
            }
            Address::Dashboard {
                project: p,
                log_stream,
                name,
            } => dashboard(p, log_stream, Some(name)),
        }
    }

    /// The fields of this kind of object that hold keyed sets (shown as
    /// `field[key]` in differences).
    pub fn keyed_sets(&self) -> &'static [&'static str] {
        match self {
            Address::MetricSettings { .. } => &["scorers"],
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_like_paths() {
        let a = Address::Section {
            project: "demo".into(),
            log_stream: "prod".into(),
            dashboard: None,
            name: "Latency [p95]".into(),
        };
        assert_eq!(
            a.to_string(),
            "project[demo].log_stream[prod].trends.section[Latency [p95\\]]"
        );
        let w = Address::Widget {
            project: "demo".into(),
            log_stream: "prod".into(),
            dashboard: Some("On-call".into()),
            section: Some("Errors".into()),
            name: "5xx".into(),
        };
        assert_eq!(
            w.to_string(),
            "project[demo].log_stream[prod].dashboard[On-call].section[Errors].widget[5xx]"
        );
    }
}
