//! Live prompt templates written as manifest specs (export): sorted by name,
//! the latest version's template as text (or messages), its settings
//! without the service's defaults (the reference's `PromptRunSettings`
//! defaults) and without empty ones, and the selection: left out when the
//! latest is selected, else its number. Planned against the same live
//! state, the export is an empty plan.

use crate::manifest::types::ProjectSpec;
use crate::state::ProjectState;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::live::PromptTemplateState;
use super::normalize::same_value;
use super::spec::{PromptSettings, PromptTemplateSpec, SelectedVersion};
use crate::api::reference::SERVICE_REFERENCE;

/// The defaults the reference gives `PromptRunSettings`' fields.
fn defaults() -> &'static Map<String, Value> {
    static DEFAULTS: OnceLock<Map<String, Value>> = OnceLock::new();
    DEFAULTS.get_or_init(|| {
        let reference: Value = serde_json::from_str(SERVICE_REFERENCE).unwrap_or(Value::Null);
        reference
            .pointer("/components/schemas/PromptRunSettings/properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .filter_map(|(k, p)| p.get("default").map(|d| (k.clone(), d.clone())))
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// A version's settings as a manifest writes them; a field a manifest
/// cannot write is a warning.
fn settings(
    live: &Map<String, Value>,
    what: &str,
    warnings: &mut Vec<String>,
) -> Option<PromptSettings> {
    let mut kept = Map::new();
    for (k, v) in live {
        if v.is_null() || defaults().get(k).is_some_and(|d| same_value(d, v)) {
            continue;
        }
        let one = Value::Object(Map::from_iter([(k.clone(), v.clone())]));
        if serde_json::from_value::<PromptSettings>(one).is_ok() {
            kept.insert(k.clone(), v.clone());
        } else {
            warnings.push(format!(
                "{what}: the setting `{k}` cannot be written in a manifest and was left out"
            ));
        }
    }
    if kept.is_empty() {
        return None;
    }
    serde_json::from_value(Value::Object(kept)).ok()
}

/// A project's prompt templates as specs.
pub fn prompt_templates(
    project: &str,
    live: &[PromptTemplateState],
    warnings: &mut Vec<String>,
) -> Vec<PromptTemplateSpec> {
    specs(
        live,
        &|name| format!("prompt template `{name}` of project `{project}`"),
        warnings,
    )
}

/// The global prompt templates as specs (one PromptTemplate document each).
pub fn global(live: &[PromptTemplateState], warnings: &mut Vec<String>) -> Vec<PromptTemplateSpec> {
    specs(
        live,
        &|name| format!("global prompt template `{name}`"),
        warnings,
    )
}

fn specs(
    live: &[PromptTemplateState],
    describe: &dyn Fn(&str) -> String,
    warnings: &mut Vec<String>,
) -> Vec<PromptTemplateSpec> {
    let mut live: Vec<&PromptTemplateState> = live.iter().collect();
    live.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    live.into_iter()
        .map(|t| {
            let what = describe(&t.name);
            PromptTemplateSpec {
                name: t.name.clone(),
                template: Some(t.latest.template.clone()),
                template_file: None,
                settings: settings(&t.latest.settings, &what, warnings),
                selected_version: (t.selected_version != t.latest.version)
                    .then_some(SelectedVersion::Number(t.selected_version)),
            }
        })
        .collect()
}

/// Fills in the prompt templates of a project's exported `spec` from
/// `live`, when they were read.
pub fn export_project(live: &ProjectState, spec: &mut ProjectSpec, warnings: &mut Vec<String>) {
    spec.prompt_templates = live
        .parts
        .prompt_templates
        .as_ref()
        .map(|ts| prompt_templates(&live.name, ts, warnings));
}

const ABOUT: &[&str] = &[
    "",
    "The global prompt templates, one document per template: the latest version's",
    "template and settings, and the selected version when it is not the latest.",
    "With one of these documents in a repo, a global template not declared is",
    "deleted only with --prune.",
];

/// The file of an export of the global prompt templates `live` (when read,
/// and there are any): `prompt-templates.yaml`, one document per template.
pub(crate) fn export_global(
    live: Option<&[PromptTemplateState]>,
    provenance: &crate::export::Provenance,
    out: &mut Vec<crate::export::ExportedFile>,
    warnings: &mut Vec<String>,
) {
    let Some(live) = live.filter(|l| !l.is_empty()) else {
        return;
    };
    let documents: Vec<crate::export::write::Document> = global(live, warnings)
        .into_iter()
        .map(|spec| crate::export::write::Document {
            preamble: Vec::new(),
            body: crate::export::write::Body::Global(crate::kinds::Document::PromptTemplate(
                Box::new(spec),
            )),
            comments: Default::default(),
        })
        .collect();
    let count = documents.len();
    out.push(crate::export::ExportedFile {
        name: crate::export::files::PROMPT_TEMPLATES_FILE.to_owned(),
        text: crate::export::write::render_file(&provenance.header(ABOUT), &documents),
        content: crate::export::Content::Documents {
            description: format!(
                "{count} global prompt template{}",
                if count == 1 { "" } else { "s" }
            ),
        },
    });
}
