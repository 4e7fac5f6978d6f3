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
    /// A section of a log stream's default dashboard.
    Section {
        /// Project.
        project: String,
        /// Log stream.
        log_stream: String,
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
}

fn quote(name: &str) -> String {
    name.replace('\\', "\\\\").replace(']', "\\]")
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Integration { provider } => write!(f, "integration[{}]", quote(provider)),
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
                name,
            } => write!(
                f,
                "project[{}].log_stream[{}].trends.section[{}]",
                quote(project),
                quote(log_stream),
                quote(name)
            ),
            Address::Favorite {
                project,
                log_stream,
            } => write!(
                f,
                "project[{}].log_stream[{}].trends.favorite",
                quote(project),
                quote(log_stream)
            ),
        }
    }
}

impl Address {
    /// The project the address is in, if any.
    pub fn project(&self) -> Option<&str> {
        match self {
            Address::Integration { .. } => None,
            Address::Template { project, .. }
            | Address::MetricSettings { project, .. }
            | Address::Section { project, .. }
            | Address::Favorite { project, .. } => Some(project),
        }
    }

    /// The address as segments, the way targets are matched against it.
    pub fn segments(&self) -> Vec<Segment> {
        let project = |p: &str| Segment::named(Kind::Project, p);
        match self {
            Address::Integration { provider } => vec![Segment::named(Kind::Integration, provider)],
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
                name,
            } => vec![
                project(p),
                Segment::run(RunKind::LogStream, log_stream),
                Segment::kind(Kind::Trends),
                Segment::named(Kind::Section, name),
            ],
            Address::Favorite {
                project: p,
                log_stream,
            } => vec![
                project(p),
                Segment::run(RunKind::LogStream, log_stream),
                Segment::kind(Kind::Trends),
                Segment::kind(Kind::Favorite),
            ],
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
            name: "Latency [p95]".into(),
        };
        assert_eq!(
            a.to_string(),
            "project[demo].log_stream[prod].trends.section[Latency [p95\\]]"
        );
    }
}
