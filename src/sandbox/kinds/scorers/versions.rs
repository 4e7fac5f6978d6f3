//! The versions of custom scorers: created (`…/version/llm`,
//! `…/version/code`, `…/version/preset`) or restored
//! (`…/versions/{n}/restore`), always appended as `max + 1`, never changed
//! (see the parent module's docs); and the file of a code version.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::api::{
    ChainPollTemplate, GeneratedScorer, InputType, OutputType, RegisteredScorer, ScorerType,
    ScorerVersion,
};
use crate::sandbox::fingerprint::new_id;
use crate::sandbox::reply::ApiError;
use crate::sandbox::store::scorers::version_response;
use crate::sandbox::store::{ScorerRecord, State, UserRecord, VersionRecord, now};

use super::super::refuse;
use super::read_only_preset;

/// The body of `…/version/llm` (`CreateLLMScorerVersionRequest`); the
/// version fields of `…/version/preset` (`CreateScorerVersionRequest`) are
/// its first six.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct NewVersion {
    /// Model.
    #[serde(default)]
    pub model_name: Option<String>,
    /// Number of judges.
    #[serde(default)]
    pub num_judges: Option<i64>,
    /// Node types.
    #[serde(default)]
    pub scoreable_node_types: Option<Vec<String>>,
    /// Chain of thought.
    #[serde(default)]
    pub cot_enabled: Option<bool>,
    /// Output type.
    #[serde(default)]
    pub output_type: Option<OutputType>,
    /// Input type.
    #[serde(default)]
    pub input_type: Option<InputType>,
    /// Instructions (LLM).
    #[serde(default)]
    pub instructions: Option<String>,
    /// The judge's prompt (LLM; the latest version's when omitted).
    #[serde(default)]
    pub chain_poll_template: Option<ChainPollTemplate>,
    /// User prompt (LLM).
    #[serde(default)]
    pub user_prompt: Option<String>,
}

/// `GeneratedScorerConfiguration.num_judges`: 1 to 10.
const MAX_JUDGES: i64 = 10;

impl State {
    /// Appends `version` (its number and id filled in) to scorer `i`.
    fn append_version(
        &mut self,
        i: usize,
        mut version: ScorerVersion,
        code: Option<String>,
        caller: &UserRecord,
    ) -> Value {
        let s = &mut self.scorers[i];
        let next = s
            .versions
            .iter()
            .map(|v| v.version.version)
            .max()
            .unwrap_or(0)
            + 1;
        version.id = new_id();
        version.version = next;
        version.scorer_id = s.id.clone();
        let ts = now();
        let record = VersionRecord {
            version,
            created_at: ts.clone(),
            updated_at: ts.clone(),
            created_by: Some(caller.id.clone()),
            code,
        };
        let out = version_response(s, &record);
        s.versions.push(record);
        s.updated_at = ts;
        out
    }

    fn version_of_kind(&self, id: &str, kinds: &[ScorerType]) -> Result<usize, ApiError> {
        let i = self.scorer_index(id)?;
        let s = &self.scorers[i];
        if !kinds.contains(&s.scorer_type) {
            return Err(refuse(
                &["path", "scorer_id"],
                Some(json!(id)),
                &format!(
                    "scorer {:?} is a {} scorer: this operation creates {} versions",
                    s.name,
                    s.scorer_type.as_str(),
                    kinds
                        .iter()
                        .map(ScorerType::as_str)
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            ));
        }
        Ok(i)
    }

    /// POST `…/version/llm`: a new version of an LLM scorer. Omitted fields
    /// take the scorer's defaults, then the service's (`gpt-4.1-mini`, 3
    /// judges, boolean output, no chain of thought, `llm` nodes); an omitted
    /// `chain_poll_template` is the latest version's (none: 422).
    pub fn create_llm_version(
        &mut self,
        id: &str,
        request: NewVersion,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.version_of_kind(id, &[ScorerType::Llm])?;
        let s = &self.scorers[i];
        let latest = s.latest().and_then(|v| v.version.generated_scorer.clone());
        let template = match (request.chain_poll_template.clone(), &latest) {
            (Some(t), _) => t,
            (None, Some(g)) => g.chain_poll_template.clone(),
            (None, None) => {
                return Err(refuse(
                    &["body", "chain_poll_template"],
                    None,
                    "the first version of an LLM scorer needs a chain_poll_template",
                ));
            }
        };
        let mut version = settings_version(s, &request)?;
        version.generated_scorer = Some(GeneratedScorer {
            id: new_id(),
            name: s.name.clone(),
            instructions: request
                .instructions
                .clone()
                .or_else(|| latest.as_ref().and_then(|g| g.instructions.clone())),
            chain_poll_template: template,
            user_prompt: request
                .user_prompt
                .clone()
                .or_else(|| latest.as_ref().and_then(|g| g.user_prompt.clone())),
        });
        Ok(self.append_version(i, version, None, caller))
    }

    /// POST `…/version/preset`: a new version of a preset or Luna scorer
    /// with other settings.
    pub fn create_preset_version(
        &mut self,
        id: &str,
        request: NewVersion,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.version_of_kind(id, &[ScorerType::Preset, ScorerType::Luna])?;
        let s = &self.scorers[i];
        let mut version = settings_version(s, &request)?;
        if let Some(latest) = s.latest() {
            version.finetuned_scorer = latest.version.finetuned_scorer.clone();
        }
        Ok(self.append_version(i, version, None, caller))
    }

    /// POST `…/version/code`: a new version of a code scorer from `file`,
    /// given the result of a completed, passing validation of that file
    /// (see [`code`]).
    pub fn create_code_version(
        &mut self,
        id: &str,
        file: String,
        validation_result: &str,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.version_of_kind(id, &[ScorerType::Code])?;
        let valid = self.check_validation(&file, validation_result)?;
        let s = &self.scorers[i];
        let mut version = empty_version();
        version.registered_scorer = Some(RegisteredScorer {
            id: new_id(),
            name: s.name.clone(),
            score_type: Some(valid.score_type),
        });
        version.scoreable_node_types = Some(valid.scoreable_node_types);
        Ok(self.append_version(i, version, Some(file), caller))
    }

    /// GET `…/version/code?version=`: the file of that version (the latest
    /// when none is given), as a JSON string.
    pub fn scorer_version_code(&self, id: &str, number: Option<i64>) -> Result<Value, ApiError> {
        let s = self.require_scorer(id)?;
        let v = match number {
            Some(n) => s.versions.iter().find(|v| v.version.version == n),
            None => s.latest(),
        }
        .ok_or_else(|| ApiError::not_found("Scorer version"))?;
        v.code
            .clone()
            .map(Value::String)
            .ok_or_else(|| ApiError::not_found("Scorer version code"))
    }

    /// POST `…/versions/{n}/restore`: a new version (the latest) with the
    /// definition of version `n`.
    pub fn restore_scorer_version(
        &mut self,
        id: &str,
        number: i64,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let i = self.scorer_index(id)?;
        read_only_preset(&self.scorers[i])?;
        let old = self.scorers[i]
            .versions
            .iter()
            .find(|v| v.version.version == number)
            .cloned()
            .ok_or_else(|| ApiError::not_found("Scorer version"))?;
        let mut version = old.version;
        if let Some(g) = &mut version.generated_scorer {
            g.id = new_id();
        }
        if let Some(r) = &mut version.registered_scorer {
            r.id = new_id();
        }
        Ok(self.append_version(i, version, old.code, caller))
    }
}

fn empty_version() -> ScorerVersion {
    ScorerVersion {
        id: String::new(),
        version: 0,
        scorer_id: String::new(),
        generated_scorer: None,
        registered_scorer: None,
        finetuned_scorer: None,
        model_name: None,
        num_judges: None,
        scoreable_node_types: None,
        cot_enabled: None,
        output_type: None,
        input_type: None,
    }
}

/// A version's settings: the request's, else the scorer's defaults, else
/// the service's.
fn settings_version(s: &ScorerRecord, request: &NewVersion) -> Result<ScorerVersion, ApiError> {
    let d = s.defaults.clone().unwrap_or_default();
    let num_judges = request.num_judges.or(d.num_judges).unwrap_or(3);
    if !(1..=MAX_JUDGES).contains(&num_judges) {
        return Err(ApiError::Validation(vec![json!({
            "type": if num_judges < 1 { "greater_than_equal" } else { "less_than_equal" },
            "loc": ["body", "num_judges"],
            "msg": if num_judges < 1 {
                "Input should be greater than or equal to 1".to_owned()
            } else {
                format!("Input should be less than or equal to {MAX_JUDGES}")
            },
            "input": num_judges,
            "ctx": if num_judges < 1 { json!({"ge": 1}) } else { json!({"le": MAX_JUDGES}) },
        })]));
    }
    let mut v = empty_version();
    v.model_name = Some(
        request
            .model_name
            .clone()
            .or(d.model_name)
            .unwrap_or_else(|| "gpt-4.1-mini".to_owned()),
    );
    v.num_judges = Some(num_judges);
    v.scoreable_node_types = Some(
        request
            .scoreable_node_types
            .clone()
            .or(d.scoreable_node_types)
            .or_else(|| s.scoreable_node_types.clone())
            .unwrap_or_else(|| vec!["llm".to_owned()]),
    );
    v.cot_enabled = Some(request.cot_enabled.or(d.cot_enabled).unwrap_or(false));
    v.output_type = Some(
        request
            .output_type
            .clone()
            .or(d.output_type)
            .or_else(|| s.output_type.clone())
            .unwrap_or(OutputType::Boolean),
    );
    v.input_type = request
        .input_type
        .clone()
        .or(d.input_type)
        .or_else(|| s.input_type.clone());
    Ok(v)
}
