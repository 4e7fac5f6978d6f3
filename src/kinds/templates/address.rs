//! A template's address, `project[P].annotation_template[NAME]` (or
//! `feedback_template`): which project, which of the two kinds, which name.

use serde::{Deserialize, Serialize};

use crate::plan::Action;
use crate::plan::address::{Address, KindAddress, live_name, project_segment, quote};
use crate::plan::address_key::{KeyFields, KeyReader, KeyWriter};
use crate::plan::target::{Kind, Segment, Target};
use crate::state::ProjectState;

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

    /// The segment kind of its addresses.
    pub fn segment_kind(self) -> Kind {
        match self {
            TemplateKind::Annotation => Kind::AnnotationTemplate,
            TemplateKind::Feedback => Kind::FeedbackTemplate,
        }
    }

    /// The scope of a project's templates of this kind.
    pub fn scope(self, project: &str) -> Target {
        Target::scope(vec![
            project_segment(project),
            Segment::kind(self.segment_kind()),
        ])
    }

    /// The plural, as a collection is named.
    pub fn plural(self) -> &'static str {
        match self {
            TemplateKind::Annotation => "annotation templates",
            TemplateKind::Feedback => "feedback templates",
        }
    }
}

/// A template of a project.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct TemplateAddress {
    /// Project, as the manifest refers to it.
    pub project: String,
    /// Annotation or feedback.
    pub kind: TemplateKind,
    /// Template name.
    pub name: String,
}

impl KindAddress for TemplateAddress {
    fn apply_stage(_action: Action) -> Option<u8> {
        Some(10)
    }

    fn segments(&self) -> Vec<Segment> {
        vec![
            project_segment(&self.project),
            Segment::named(self.kind.segment_kind(), &self.name),
        ]
    }

    fn project(&self) -> Option<&str> {
        Some(&self.project)
    }

    fn collection(&self) -> Option<(String, &'static str)> {
        Some((
            format!("project[{}]", quote(&self.project)),
            self.kind.plural(),
        ))
    }

    fn collection_size(&self, live: &ProjectState) -> usize {
        match self.kind {
            TemplateKind::Annotation => {
                live.parts.annotation_templates.as_ref().map_or(0, Vec::len)
            }
            TemplateKind::Feedback => live.parts.feedback_templates.as_ref().map_or(0, Vec::len),
        }
    }

    fn live_identity(&self, before: &dyn Fn(&str) -> Option<Option<String>>) -> Option<Address> {
        Some(Address::Template(TemplateAddress {
            name: live_name(&self.name, before),
            ..self.clone()
        }))
    }
}

impl KeyFields for TemplateAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.project);
        w.byte(match self.kind {
            TemplateKind::Annotation => 0,
            TemplateKind::Feedback => 1,
        });
        w.string(&self.name);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        TemplateAddress {
            project: r.string(),
            kind: if r.byte() == 0 {
                TemplateKind::Annotation
            } else {
                TemplateKind::Feedback
            },
            name: r.string(),
        }
    }
}
