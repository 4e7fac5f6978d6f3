//! Live custom scorers written as `kind: Scorer` specs (export): sorted by
//! name, the metadata, scope and pin, and the latest version's definition
//! (the chain-poll fields the service defaults, `rating` and `explanation`,
//! left out when they are the defaults). Planned against the same live
//! state, the export is an empty plan.

use super::live::CustomScorerState;
use super::spec::{ChainPollSpec, CustomScorerSpec, CustomScorerType, GlobalWord, ScopeSpec};

/// The spec of one live scorer.
pub fn custom_scorer(s: &CustomScorerState) -> CustomScorerSpec {
    let d = s
        .latest
        .as_ref()
        .map(|v| v.definition.clone())
        .unwrap_or_default();
    let llm = s.scorer_type == CustomScorerType::Llm;
    let chain = d
        .template
        .clone()
        .filter(|_| llm)
        .map(|template| ChainPollSpec {
            template: Some(template),
            template_file: None,
            metric_system_prompt: d.metric_system_prompt.clone(),
            metric_system_prompt_file: None,
            metric_description: d.metric_description.clone(),
            value_field_name: d.value_field_name.clone().filter(|v| v != "rating"),
            explanation_field_name: d
                .explanation_field_name
                .clone()
                .filter(|v| v != "explanation"),
            metric_few_shot_examples: d.metric_few_shot_examples.clone().filter(|e| !e.is_empty()),
            response_schema: d.response_schema.clone(),
        });
    let defaults = (s.defaults != Default::default()).then(|| s.defaults.clone());
    CustomScorerSpec {
        name: s.name.clone(),
        renamed_from: Vec::new(),
        scorer_type: s.scorer_type,
        description: (!s.description.is_empty()).then(|| s.description.clone()),
        tags: (!s.tags.is_empty()).then(|| s.tags.clone()),
        defaults,
        scope: Some(if s.is_global {
            ScopeSpec::Global(GlobalWord::Global)
        } else {
            ScopeSpec::Projects(s.projects.clone())
        }),
        default_version: s.default_version,
        chain_poll_template: chain,
        instructions: d.instructions.clone().filter(|_| llm),
        instructions_file: None,
        user_prompt: d.user_prompt.clone().filter(|_| llm),
        user_prompt_file: None,
        model_name: d.model_name.clone().filter(|_| llm),
        num_judges: d.num_judges.filter(|_| llm),
        cot_enabled: d.cot_enabled.filter(|_| llm),
        output_type: d.output_type.as_deref().filter(|_| llm).map(Into::into),
        input_type: d.input_type.as_deref().filter(|_| llm).map(Into::into),
        scoreable_node_types: d.scoreable_node_types.clone(),
        code_file: None,
        code: d.code.clone().filter(|_| !llm),
    }
}

/// Every live scorer's spec, sorted by name.
pub fn custom_scorers(live: &[CustomScorerState]) -> Vec<CustomScorerSpec> {
    let mut live: Vec<&CustomScorerState> = live.iter().collect();
    live.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    live.into_iter().map(custom_scorer).collect()
}

/// A prompt or code file beside the manifest: `(file name, text, scorer)`.
pub type SideFile = (String, String, String);

/// The `kind: Scorer` documents of every live scorer, sorted by name, each
/// prompt template and code file moved to a file of its own beside the
/// manifest; the names, and the files.
pub fn documents(
    live: &[CustomScorerState],
) -> (
    Vec<crate::export::write::Document>,
    Vec<String>,
    Vec<SideFile>,
) {
    let mut documents = Vec::new();
    let mut names = Vec::new();
    let mut files = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for mut spec in custom_scorers(live) {
        let mut base = format!("scorer-{}", crate::export::files::slug(&spec.name));
        let mut n = 2;
        while !used.insert(base.clone()) {
            base = format!("scorer-{}-{n}", crate::export::files::slug(&spec.name));
            n += 1;
        }
        if let Some(chain) = &mut spec.chain_poll_template
            && let Some(template) = chain.template.take()
        {
            let name = format!("{base}.prompt.txt");
            chain.template_file = Some(name.clone());
            files.push((name, template, spec.name.clone()));
        }
        if let Some(code) = spec.code.take() {
            let name = format!("{base}.py");
            spec.code_file = Some(name.clone());
            files.push((name, code, spec.name.clone()));
        }
        names.push(spec.name.clone());
        documents.push(crate::export::write::Document {
            preamble: Vec::new(),
            body: crate::export::write::Body::Global(crate::kinds::Document::Scorer(Box::new(
                spec,
            ))),
            comments: std::collections::BTreeMap::new(),
        });
    }
    (documents, names, files)
}

const ABOUT: &[&str] = &[
    "",
    "The organization's custom scorers, one document per scorer: metadata,",
    "scope, the pinned version and the latest version's definition; each prompt",
    "template and code file is the file beside this one that the document names.",
];

/// The files of an export of the custom scorers `live` (when read, and
/// there are any): `scorers.yaml`, then the prompt and code files its
/// documents name.
pub(crate) fn export_global(
    live: Option<&[CustomScorerState]>,
    provenance: &crate::export::Provenance,
    out: &mut Vec<crate::export::ExportedFile>,
) {
    let Some(live) = live.filter(|l| !l.is_empty()) else {
        return;
    };
    let (documents, names, side) = documents(live);
    out.push(crate::export::ExportedFile {
        name: crate::export::files::SCORERS_FILE.to_owned(),
        text: crate::export::write::render_file(&provenance.header(ABOUT), &documents),
        content: crate::export::Content::Documents {
            description: format!(
                "{} custom scorer{}",
                names.len(),
                if names.len() == 1 { "" } else { "s" }
            ),
        },
    });
    out.extend(
        side.into_iter()
            .map(|(name, text, scorer)| crate::export::ExportedFile {
                name,
                text,
                content: crate::export::Content::NamedFile {
                    description: format!(
                        "a file of custom scorer `{}`",
                        crate::scrub::escape_controls(&scorer)
                    ),
                },
            }),
    );
}
