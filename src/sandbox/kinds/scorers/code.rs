//! The asynchronous validation of a code scorer's file: POST
//! `/v2/scorers/code/validate` starts a task (`pending`), GET
//! `/v2/scorers/code/validate/{task_id}` polls it. The sandbox's task is
//! deterministic: its first poll answers `pending`, every later one
//! `completed` with the result (a `ValidateRegisteredScorerResult`).
//!
//! The sandbox cannot run Python; its rule is the entry point the service
//! calls: the file must be UTF-8 text that defines, at the top level, a
//! function `scorer_fn` (`def scorer_fn(` or `async def scorer_fn(` at the
//! start of a line). Otherwise the result is `invalid` with an
//! `error_message` saying what is missing. A valid result's `score_type`
//! is the return annotation of `scorer_fn` when it is `bool`, `int`,
//! `float` or `str` (else `float`); its `scoreable_node_types` are the
//! form's (default `["llm"]`; an unknown node type makes the result
//! invalid); `test_scores` has one unscored entry per node type when a
//! `test_input` or `test_output` was sent.
//!
//! A code version (`…/version/code`) is created only from a
//! `validation_result` that is the result of a completed, valid task of
//! the same file (compared by fingerprint): anything else is a 422 at
//! `["body","validation_result"]`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::sandbox::fingerprint::{fingerprint, new_id};
use crate::sandbox::persist::tables::TableDef;
use crate::sandbox::reply::ApiError;
use crate::sandbox::store::{State, UserRecord, now};

use super::super::refuse;

/// The function the service calls in a code scorer's file.
pub const ENTRY_POINT: &str = "scorer_fn";

/// The polls a task answers `pending` before it is `completed`.
pub const PENDING_POLLS: u32 = 1;

/// The node types a code scorer may score (`NodeType`).
const NODE_TYPES: &[&str] = &[
    "chain",
    "chat",
    "llm",
    "retriever",
    "tool",
    "agent",
    "workflow",
    "trace",
    "session",
];

/// A validation task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CodeValidationRecord {
    /// Id (uuid4): the `task_id`.
    pub id: String,
    /// Who asked for it.
    pub created_by: String,
    /// Creation time.
    pub created_at: String,
    /// Time of the last poll.
    pub updated_at: String,
    /// Fingerprint of the file validated.
    pub file_fingerprint: String,
    /// Polls answered so far.
    #[serde(default)]
    pub polls: u32,
    /// The result it completes with (`ValidateRegisteredScorerResult`).
    pub result: Value,
}

/// What a valid result says, as a code version stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Valid {
    /// Return type of the scorer.
    pub score_type: String,
    /// Node types it scores.
    pub scoreable_node_types: Vec<String>,
}

/// The form fields of POST `/v2/scorers/code/validate` besides the file.
#[derive(Debug, Clone, Default)]
pub struct ValidateForm {
    /// `test_input`.
    pub test_input: Option<String>,
    /// `test_output`.
    pub test_output: Option<String>,
    /// `scoreable_node_types` (each value of the field).
    pub scoreable_node_types: Vec<String>,
}

fn file_fingerprint(file: &[u8]) -> String {
    fingerprint("code-scorer-file", &String::from_utf8_lossy(file))
}

/// The return annotation of the `scorer_fn` defined on `line`, if any.
fn entry_point(line: &str) -> Option<Option<&str>> {
    let rest = line
        .strip_prefix("async def ")
        .or_else(|| line.strip_prefix("def "))?;
    let rest = rest.trim_start().strip_prefix(ENTRY_POINT)?;
    if !rest.trim_start().starts_with('(') {
        return None;
    }
    let annotation = rest
        .rsplit_once("->")
        .map(|(_, r)| r.trim().trim_end_matches(':').trim());
    Some(annotation)
}

/// The validation of `file` (see the module docs): a
/// `ValidateRegisteredScorerResult`.
pub fn validate(file: &[u8], form: &ValidateForm) -> Value {
    let invalid =
        |message: &str| json!({"result": {"result_type": "invalid", "error_message": message}});
    let Ok(text) = std::str::from_utf8(file) else {
        return invalid("The scorer file is not UTF-8 text.");
    };
    if text.trim().is_empty() {
        return invalid("The scorer file is empty.");
    }
    let Some(annotation) = text.lines().find_map(entry_point) else {
        return invalid(&format!(
            "No function named '{ENTRY_POINT}' found in the scorer file. Define \
             `def {ENTRY_POINT}(*, index, node_input, node_output, **kwargs)` at the top level."
        ));
    };
    let node_types = if form.scoreable_node_types.is_empty() {
        vec!["llm".to_owned()]
    } else {
        form.scoreable_node_types.clone()
    };
    if let Some(bad) = node_types
        .iter()
        .find(|t| !NODE_TYPES.contains(&t.as_str()))
    {
        return invalid(&format!(
            "Unknown scoreable node type {bad:?}: expected one of {}.",
            NODE_TYPES.join(", ")
        ));
    }
    let score_type = annotation
        .filter(|t| ["bool", "int", "float", "str"].contains(t))
        .unwrap_or("float");
    let tested = form.test_input.is_some() || form.test_output.is_some();
    let test_scores: Vec<Value> = if tested {
        node_types
            .iter()
            .map(|t| json!({"node_type": t, "score": null}))
            .collect()
    } else {
        Vec::new()
    };
    json!({"result": {
        "result_type": "valid",
        "score_type": score_type,
        "scoreable_node_types": node_types,
        "include_llm_credentials": false,
        "chain_aggregation": null,
        "test_scores": test_scores,
    }})
}

/// The state database's table of code validations
/// ([`crate::sandbox::kinds::KindRecords::code_validations`]).
pub const CODE_VALIDATIONS: TableDef = TableDef {
    name: "code_validations",
    columns: &[("id", "$.id")],
    sealed: &[],
};

impl State {
    /// POST `/v2/scorers/code/validate`: starts a task (`ValidateCodeScorerResponse`).
    pub fn start_code_validation(
        &mut self,
        file: &[u8],
        form: &ValidateForm,
        caller: &UserRecord,
    ) -> Value {
        let ts = now();
        let record = CodeValidationRecord {
            id: new_id(),
            created_by: caller.id.clone(),
            created_at: ts.clone(),
            updated_at: ts,
            file_fingerprint: file_fingerprint(file),
            polls: 0,
            result: validate(file, form),
        };
        let out = json!({"task_id": record.id});
        self.kinds.code_validations.push(record);
        out
    }

    /// GET `/v2/scorers/code/validate/{task_id}`
    /// (`RegisteredScorerTaskResultResponse`): `pending` at the first poll,
    /// `completed` with the result after.
    pub fn poll_code_validation(&mut self, task_id: &str) -> Result<Value, ApiError> {
        let i = self
            .kinds
            .code_validations
            .iter()
            .position(|t| t.id == task_id)
            .ok_or_else(|| ApiError::not_found("Task result"))?;
        let task = &mut self.kinds.code_validations[i];
        let pending = task.polls < PENDING_POLLS;
        task.polls = task.polls.saturating_add(1);
        task.updated_at = now();
        Ok(json!({
            "id": task.id,
            "created_at": task.created_at,
            "updated_at": task.updated_at,
            "status": if pending { "pending" } else { "completed" },
            "result": if pending { Value::Null } else { task.result.clone() },
        }))
    }

    /// The valid result that `validation_result` is, for `file`, or a 422.
    pub(super) fn check_validation(
        &self,
        file: &str,
        validation_result: &str,
    ) -> Result<Valid, ApiError> {
        let loc = ["body", "validation_result"];
        let input = || Some(json!(validation_result));
        let sent: Value = serde_json::from_str(validation_result).map_err(|_| {
            refuse(
                &loc,
                input(),
                "not JSON: send the result of the validate endpoint",
            )
        })?;
        // Either the task's result or the whole task response.
        let result = if sent.get("status").is_some() {
            sent.get("result").cloned().unwrap_or(Value::Null)
        } else {
            sent
        };
        let inner = &result["result"];
        match inner["result_type"].as_str() {
            Some("valid") => {}
            Some("invalid") => {
                let why = inner["error_message"].as_str().unwrap_or("invalid");
                return Err(refuse(
                    &loc,
                    input(),
                    &format!("the validation failed: {why}"),
                ));
            }
            _ => {
                return Err(refuse(
                    &loc,
                    input(),
                    "not a validation result: send the result of a completed validation task",
                ));
            }
        }
        let fp = file_fingerprint(file.as_bytes());
        let matching = self
            .kinds
            .code_validations
            .iter()
            .any(|t| t.file_fingerprint == fp && t.polls > PENDING_POLLS && t.result == result);
        if !matching {
            return Err(refuse(
                &loc,
                input(),
                "no completed validation of this file has this result: validate the file \
                 (POST /v2/scorers/code/validate) and wait for the task to complete",
            ));
        }
        let node_types = inner["scoreable_node_types"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_else(|| vec!["llm".to_owned()]);
        Ok(Valid {
            score_type: inner["score_type"].as_str().unwrap_or("float").to_owned(),
            scoreable_node_types: node_types,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_entry_point_decides_and_its_annotation_is_the_score_type() {
        let form = ValidateForm::default();
        let ok = validate(
            b"import json\n\ndef scorer_fn(*, node_output: str, **kwargs) -> bool:\n    return True\n",
            &form,
        );
        assert_eq!(ok["result"]["result_type"], "valid");
        assert_eq!(ok["result"]["score_type"], "bool");
        let async_ok = validate(b"async def scorer_fn(**kw):\n    return 1\n", &form);
        assert_eq!(async_ok["result"]["score_type"], "float");
        for bad in [
            &b"def score(**kw):\n    return 1\n"[..],
            b"    def scorer_fn(**kw): pass\n",
            b"def scorer_fn_v2(**kw): pass\n",
            b"",
            b"\xff\xfe",
        ] {
            let r = validate(bad, &form);
            assert_eq!(r["result"]["result_type"], "invalid", "{bad:?}");
            assert!(r["result"]["error_message"].as_str().unwrap().len() > 10);
        }
        let typo = ValidateForm {
            scoreable_node_types: vec!["spanz".into()],
            ..ValidateForm::default()
        };
        let r = validate(b"def scorer_fn(**kw): pass\n", &typo);
        assert_eq!(r["result"]["result_type"], "invalid");
    }
}
