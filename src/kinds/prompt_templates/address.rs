//! A prompt template's address, `project[P].prompt_template[NAME]` (a
//! global one: `prompt_template[NAME]`), and one of its versions,
//! `project[P].prompt_template[NAME].version[N]` (what a plan creates when
//! the template changes).

use serde::{Deserialize, Serialize};

use crate::plan::Action;
use crate::plan::address::{Address, KindAddress, project_segment, quote};
use crate::plan::address_key::{KeyFields, KeyReader, KeyWriter};
use crate::plan::target::{Kind, Segment};
use crate::state::ProjectState;

/// A prompt template of a project or a global one, or one of its versions.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct PromptTemplateAddress {
    /// Project, as the manifest refers to it (absent: a global template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Template name.
    pub name: String,
    /// A version's number (absent: the template itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
}

impl PromptTemplateAddress {
    /// The template `name` of `project`.
    pub fn template(project: &str, name: &str) -> Self {
        Self::scoped(Some(project), name)
    }

    /// The template `name` of `project`, or the global one (`None`).
    pub fn scoped(project: Option<&str>, name: &str) -> Self {
        PromptTemplateAddress {
            project: project.map(str::to_owned),
            name: name.to_owned(),
            version: None,
        }
    }

    /// Version `version` of the template `name` of `project`.
    pub fn version(project: Option<&str>, name: &str, version: u32) -> Self {
        PromptTemplateAddress {
            version: Some(version),
            ..Self::scoped(project, name)
        }
    }
}

impl KindAddress for PromptTemplateAddress {
    fn apply_stage(_action: Action) -> Option<u8> {
        Some(15)
    }

    fn segments(&self) -> Vec<Segment> {
        let mut segments: Vec<Segment> = self.project.iter().map(|p| project_segment(p)).collect();
        segments.push(Segment::named(Kind::PromptTemplate, &self.name));
        if let Some(v) = self.version {
            segments.push(Segment::named(Kind::PromptVersion, v.to_string()));
        }
        segments
    }

    fn project(&self) -> Option<&str> {
        self.project.as_deref()
    }

    fn collection(&self) -> Option<(String, &'static str)> {
        match (&self.project, self.version) {
            (Some(project), None) => {
                Some((format!("project[{}]", quote(project)), "prompt templates"))
            }
            // Global templates are not a project's collection.
            _ => None,
        }
    }

    fn collection_size(&self, live: &ProjectState) -> usize {
        live.parts.prompt_templates.as_ref().map_or(0, Vec::len)
    }

    fn live_identity(&self, _before: &dyn Fn(&str) -> Option<Option<String>>) -> Option<Address> {
        Some(Address::PromptTemplate(self.clone()))
    }
}

impl KeyFields for PromptTemplateAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.optional(self.project.as_deref());
        w.string(&self.name);
        w.optional_u32(self.version);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        PromptTemplateAddress {
            project: r.optional(),
            name: r.string(),
            version: r.optional_u32(),
        }
    }
}
