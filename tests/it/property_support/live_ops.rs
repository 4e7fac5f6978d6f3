//! Random live states of the reconciler property: out-of-band changes made
//! through the API (duplicate sections, raw metric settings, templates,
//! favorites), and the whole [`Case`]: a repo applied first, those changes,
//! then the desired repo; its `Debug` is what a person needs to replay it.

use std::fmt;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::desired::{
    ANNOTATION_NAMES, FEEDBACK_NAMES, RUNS, Run, SECTION_NAMES, constraints, documents, filter,
    log_streams, pick, sample_rate, scorers,
};

/// A change to live state made out of band, through the API.
#[derive(Clone, PartialEq)]
pub enum LiveOp {
    /// Create a section (even one whose name exists: duplicates).
    CreateSection {
        /// Log stream.
        run: Run,
        /// Name.
        name: &'static str,
        /// Colour.
        color: Option<&'static str>,
    },
    /// Delete the first section of that name.
    DeleteSection {
        /// Log stream.
        run: Run,
        /// Name.
        name: &'static str,
    },
    /// Favorite the default dashboard.
    Favorite {
        /// Log stream.
        run: Run,
        /// For the project (else for the caller).
        project_wide: bool,
    },
    /// Unfavorite it.
    Unfavorite {
        /// Log stream.
        run: Run,
        /// For the project (else for the caller).
        project_wide: bool,
    },
    /// PATCH metric settings with raw configs (pins by version number).
    Settings {
        /// The run.
        run: Run,
        /// Scorers by catalog name with an optional pin (may repeat).
        scorers: Vec<(String, Option<i64>)>,
        /// Raw segment filters (JSON), when sent.
        segment_filters: Option<Vec<Value>>,
    },
    /// Create a template.
    CreateTemplate {
        /// Project.
        project: &'static str,
        /// Feedback (else annotation).
        feedback: bool,
        /// Name.
        name: &'static str,
        /// Constraints (JSON).
        constraints: Value,
    },
    /// Delete the template of that name.
    DeleteTemplate {
        /// Project.
        project: &'static str,
        /// Feedback (else annotation).
        feedback: bool,
        /// Name.
        name: &'static str,
    },
}

impl fmt::Debug for LiveOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let run = |r: &Run| format!("{}/{}", r.0, r.2);
        let kind = |fb: &bool| if *fb { "feedback" } else { "annotation" };
        match self {
            LiveOp::CreateSection {
                run: r,
                name,
                color,
            } => {
                write!(f, "create section {name:?} ({color:?}) on {}", run(r))
            }
            LiveOp::DeleteSection { run: r, name } => {
                write!(f, "delete section {name:?} of {}", run(r))
            }
            LiveOp::Favorite {
                run: r,
                project_wide,
            } => {
                write!(f, "favorite {} (project-wide: {project_wide})", run(r))
            }
            LiveOp::Unfavorite {
                run: r,
                project_wide,
            } => {
                write!(f, "unfavorite {} (project-wide: {project_wide})", run(r))
            }
            LiveOp::Settings {
                run: r,
                scorers,
                segment_filters,
            } => write!(
                f,
                "patch metric settings of {}: scorers {scorers:?}, segment filters {}",
                run(r),
                segment_filters
                    .as_ref()
                    .map_or("unchanged".to_owned(), |s| json!(s).to_string())
            ),
            LiveOp::CreateTemplate {
                project,
                feedback,
                name,
                constraints,
            } => write!(
                f,
                "create {} template {name:?} in {project}: {constraints}",
                kind(feedback)
            ),
            LiveOp::DeleteTemplate {
                project,
                feedback,
                name,
            } => write!(
                f,
                "delete {} template {name:?} of {project}",
                kind(feedback)
            ),
        }
    }
}

/// A random out-of-band change.
pub fn live_op() -> impl Strategy<Value = LiveOp> {
    let streams = log_streams();
    let catalog: Vec<String> = scorers().into_iter().map(|s| s.0).collect();
    let project = || pick(&["demo-project", "support-bot"]);
    prop_oneof![
        (
            pick(&streams),
            pick(SECTION_NAMES),
            prop::option::of(pick(&["#1F77B4", "#ff7f0e"]))
        )
            .prop_map(|(run, name, color)| LiveOp::CreateSection { run, name, color }),
        (pick(&streams), pick(SECTION_NAMES))
            .prop_map(|(run, name)| LiveOp::DeleteSection { run, name }),
        (pick(&streams), any::<bool>())
            .prop_map(|(run, project_wide)| LiveOp::Favorite { run, project_wide }),
        (pick(&streams), any::<bool>())
            .prop_map(|(run, project_wide)| LiveOp::Unfavorite { run, project_wide }),
        (
            pick(RUNS),
            prop::collection::vec((pick(&catalog), prop::option::of(1i64..=1)), 0..4),
            prop::option::of(prop::collection::vec(
                (sample_rate(), prop::option::of(filter()), any::<bool>()).prop_map(
                    |(r, mut f, no_operator)| {
                        // Without an operator, the service picks one from
                        // the value's shape.
                        if let (Some(f), true) = (f.as_mut(), no_operator)
                            && let Some(map) = f.as_object_mut()
                        {
                            map.remove("operator");
                        }
                        json!({"sample_rate": r, "filter": f})
                    }
                ),
                0..3
            )),
        )
            .prop_map(|(run, scorers, segment_filters)| LiveOp::Settings {
                run,
                scorers,
                segment_filters,
            }),
        (project(), any::<bool>()).prop_flat_map(move |(project, feedback)| {
            let names = if feedback {
                FEEDBACK_NAMES
            } else {
                ANNOTATION_NAMES
            };
            (pick(names), constraints(feedback)).prop_map(move |(name, constraints)| {
                LiveOp::CreateTemplate {
                    project,
                    feedback,
                    name,
                    constraints,
                }
            })
        }),
        (project(), any::<bool>()).prop_flat_map(|(project, feedback)| {
            let names = if feedback {
                FEEDBACK_NAMES
            } else {
                ANNOTATION_NAMES
            };
            pick(names).prop_map(move |name| LiveOp::DeleteTemplate {
                project,
                feedback,
                name,
            })
        }),
    ]
}

/// One case: how live state is randomized (a config repo applied by evalctl
/// itself, then out-of-band changes), then the desired state and whether to
/// prune.
#[derive(Clone)]
pub struct Case {
    /// Documents applied first, to randomize live state.
    pub live_documents: Vec<Value>,
    /// Out-of-band changes, after those.
    pub live_ops: Vec<LiveOp>,
    /// The desired state.
    pub desired: Vec<Value>,
    /// `--prune`.
    pub prune: bool,
}

fn yaml_stream(docs: &[Value]) -> String {
    docs.iter()
        .map(|d| {
            format!(
                "---\n{}\n",
                serde_json::to_string_pretty(d).unwrap_or_default()
            )
        })
        .collect()
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // What a person needs to replay the case by hand.
        writeln!(f)?;
        writeln!(
            f,
            "# 1. live state: the demo fixture, then this repo applied:"
        )?;
        writeln!(f, "{}", yaml_stream(&self.live_documents))?;
        writeln!(f, "# 2. then, out of band:")?;
        for op in &self.live_ops {
            writeln!(f, "#   - {op:?}")?;
        }
        writeln!(f, "# 3. desired state (prune: {}):", self.prune)?;
        write!(f, "{}", yaml_stream(&self.desired))
    }
}

/// A random case.
pub fn case() -> impl Strategy<Value = Case> {
    (
        prop::option::weighted(0.5, documents()),
        prop::collection::vec(live_op(), 0..5),
        documents(),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(live_documents, live_ops, desired, prune)| Case {
            live_documents: live_documents.unwrap_or_default(),
            live_ops,
            desired,
            prune,
        })
}
