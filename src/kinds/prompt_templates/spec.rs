//! A prompt template as a manifest declares it (`prompt_templates:` in a
//! Project).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::wire::PromptText;
use crate::manifest::limits::{Binding, Service};

/// A prompt template of a project. Its versions are append-only and
/// immutable: a changed `template` or `settings` creates one new version; an
/// unchanged one creates nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptTemplateSpec {
    /// Name, unique among the project's prompt templates.
    pub name: String,
    /// The template: one string (at least one character), or a list of
    /// messages `{role, content}`. Give this or `template_file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<PromptText>,
    /// A file holding the template's text, relative to the manifest's
    /// directory (e.g. `prompts/answer.txt`), read when the manifest is
    /// loaded, as written (it is not interpolated). Give this or `template`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1))]
    pub template_file: Option<String>,
    /// Run settings. Only the fields written are managed: one left out keeps
    /// the latest version's value (a new template gets the service's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<PromptSettings>,
    /// Which version is selected: `latest` (the default: each new version is
    /// selected when created) or a version number, which stays selected
    /// while new versions are created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_version: Option<SelectedVersion>,
}

/// `latest`, or a version number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SelectedVersion {
    /// The latest version, whichever it is.
    Latest(Latest),
    /// This version, from 1.
    Number(#[schemars(range(min = 1))] u32),
}

/// The word `latest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Latest {
    /// `latest`.
    Latest,
}

/// A prompt's run settings (the reference's `PromptRunSettings`); the
/// service fills in every field left out of a new template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptSettings {
    /// The model, e.g. `gpt-4.1-mini` (the service's default: `gpt-5.1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_alias: Option<String>,
    /// An Azure deployment name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_name: Option<String>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens to generate (default 4096).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<i64>,
    /// Sequences that stop generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Nucleus sampling (default 1.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Top-k sampling (default 40).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_k: Option<i64>,
    /// Frequency penalty (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    /// Presence penalty (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    /// Completions per prompt (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<i64>,
    /// Whether log probabilities are returned (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<bool>,
    /// How many top log probabilities (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<i64>,
    /// Whether the prompt is echoed (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo: Option<bool>,
    /// Reasoning effort (default `medium`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Verbosity (default `medium`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verbosity: Option<String>,
    /// Tools the model may call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Map<String, Value>>>,
    /// Which tool the model must call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<Value>,
    /// The response format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<Map<String, Value>>,
}

impl PromptSettings {
    /// The fields written, as the service takes them.
    pub fn declared(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }
}

impl PromptTemplateSpec {
    /// The settings written (none: an empty map).
    pub fn declared_settings(&self) -> Map<String, Value> {
        self.settings
            .as_ref()
            .map(PromptSettings::declared)
            .unwrap_or_default()
    }

    /// The version number pinned, if one is.
    pub fn pinned(&self) -> Option<u32> {
        match self.selected_version {
            Some(SelectedVersion::Number(n)) => Some(n),
            _ => None,
        }
    }
}

/// Which service schemas the manifest's prompt template fields take their limits
/// from (`crate::manifest::limits`).
pub const LIMITS: &[Binding] = &[
    Binding {
        manifest: "/$defs/PromptTemplateSpec",
        service: &[Service::Schema(
            "CreatePromptTemplateWithVersionRequestBody",
        )],
    },
    Binding {
        manifest: "/$defs/PromptTemplateDocument",
        service: &[Service::Schema(
            "CreatePromptTemplateWithVersionRequestBody",
        )],
    },
    Binding {
        manifest: "/$defs/PromptSettings",
        service: &[Service::Schema("PromptRunSettings")],
    },
];

#[cfg(test)]
mod limit_tests {
    use super::LIMITS;
    use crate::manifest::limits::{apply_with, service_reference};
    use crate::manifest::schema::generate_types;

    #[test]
    fn the_limits_of_the_reference_on_its_fields() {
        let mut schema = generate_types();
        let applied = apply_with(&mut schema, &service_reference(), LIMITS, false);
        insta::assert_snapshot!(applied.listing(), @r#"
        /$defs/PromptTemplateSpec/properties/name minLength=1 <- #/components/schemas/CreatePromptTemplateWithVersionRequestBody/properties/name/anyOf/0
        /$defs/PromptText/anyOf/0 minLength=1 <- #/components/schemas/CreatePromptTemplateWithVersionRequestBody/properties/template/anyOf/0
        /$defs/PromptTemplateDocument/properties/name minLength=1 <- #/components/schemas/CreatePromptTemplateWithVersionRequestBody/properties/name/anyOf/0
        "#);
        for binding in LIMITS {
            let def = binding.manifest.trim_start_matches("/$defs/");
            let name = def.split('/').next().unwrap_or(def);
            assert!(applied.reached.contains(name), "{name} was not reached");
        }
    }
}
