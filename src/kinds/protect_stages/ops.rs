//! The operations on Protect stages, and how each is sent.
//!
//! - A stage's create is not sent blindly: a fresh read by name first finds
//!   a stage another run made since the plan; after a lost answer the stage
//!   is read by name, present is done (created once), absent is sent again
//!   (at most `MAX_SENDS` in all) unless the request may still land (the
//!   client timed out), which is reported for the next apply to re-read. A
//!   create refused as a duplicate (409) is done when a read finds it.
//! - A replace of the rulesets after a lost answer reads the stage: a
//!   version above the plan's means it landed (the service bumps the version
//!   on every replace), so it is never sent twice when it landed.
//! - A pause or resume is a PUT, retried as any idempotent write.
//!
//! After a create or a replace, what was sent and the version the service
//! answered with are written to the local record ([`super::record`]); a
//! record that cannot be written is said, not a failure (the next plan finds
//! the rulesets unknown and replaces them once).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::client::StageBy;
use super::record::{self, StageRecord};
use super::webhooks::{for_sending, variables};
use super::wire::{RulesetsBody, StageCreate, StageWire};
use crate::client::{ApiError, Client};
use crate::reconcile::ReadError;
use crate::reconcile::apply::OperationError;
use crate::reconcile::apply::create::{MAX_SENDS, may_still_land};
use crate::reconcile::apply::settle::short_cause;

/// One API call on a Protect stage. Ids are resolved; bodies are what is
/// sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ProtectStageOp {
    /// POST a stage with its rulesets.
    CreateStage {
        /// Project id.
        project_id: String,
        /// The body.
        body: StageCreate,
    },
    /// POST the stage's rulesets, replacing them all (bumps its version).
    ReplaceStageRulesets {
        /// Project id.
        project_id: String,
        /// Stage id.
        stage_id: String,
        /// Stage name (for the record).
        name: String,
        /// The stage's version when the plan was made.
        base_version: Option<i64>,
        /// The body.
        body: RulesetsBody,
    },
    /// PUT the stage's pause.
    PauseStage {
        /// Project id.
        project_id: String,
        /// Stage id.
        stage_id: String,
        /// Pause (`true`) or resume (`false`).
        pause: bool,
    },
}

const STAGE: &str = "Protect stage";
const RULESETS: &str = "Protect stage's new rulesets";

impl ProtectStageOp {
    /// The id of the live stage it acts on (`None` for a create).
    pub fn stage_id(&self) -> Option<&str> {
        match self {
            ProtectStageOp::ReplaceStageRulesets { stage_id, .. }
            | ProtectStageOp::PauseStage { stage_id, .. } => Some(stage_id),
            ProtectStageOp::CreateStage { .. } => None,
        }
    }

    /// The environment variables its rulesets' webhook URLs are read from
    /// when it is sent.
    pub fn variables(&self) -> Vec<String> {
        match self {
            ProtectStageOp::CreateStage { body, .. } => variables(&body.prioritized_rulesets),
            ProtectStageOp::ReplaceStageRulesets { body, .. } => {
                variables(&body.prioritized_rulesets)
            }
            ProtectStageOp::PauseStage { .. } => Vec::new(),
        }
    }

    /// The project it is in, by id.
    pub fn project_id(&self) -> &str {
        match self {
            ProtectStageOp::CreateStage { project_id, .. }
            | ProtectStageOp::ReplaceStageRulesets { project_id, .. }
            | ProtectStageOp::PauseStage { project_id, .. } => project_id,
        }
    }

    /// Sends the operation as the module says; `Ok(Some(note))` when it
    /// succeeded in a way worth saying.
    pub async fn send(
        &self,
        client: &Client,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, OperationError> {
        match self {
            ProtectStageOp::CreateStage { project_id, body } => {
                let (sent, recorded) = for_sending(&body.prioritized_rulesets, env)?;
                let body = StageCreate {
                    prioritized_rulesets: sent,
                    ..body.clone()
                };
                create(client, project_id, &body, &recorded).await
            }
            ProtectStageOp::ReplaceStageRulesets {
                project_id,
                stage_id,
                name,
                base_version,
                body,
            } => {
                let (sent, recorded) = for_sending(&body.prioritized_rulesets, env)?;
                let body = RulesetsBody {
                    prioritized_rulesets: sent,
                };
                let at = Stage {
                    project_id,
                    stage_id,
                    name,
                    base_version: *base_version,
                };
                replace(client, &at, &body, &recorded).await
            }
            ProtectStageOp::PauseStage {
                project_id,
                stage_id,
                pause,
            } => {
                client.pause_stage(project_id, stage_id, *pause).await?;
                Ok(None)
            }
        }
    }
}

/// Records what was sent to `stage`; a note when it cannot be.
fn remember(project_id: &str, stage: &StageWire, rulesets: &[Value]) -> Option<String> {
    let Some(version) = stage.version else {
        return Some(format!(
            "the service gave stage `{}` no version, so what was sent is not recorded; the next plan replaces its rulesets once",
            stage.name
        ));
    };
    let entry = StageRecord {
        id: stage.id.clone(),
        name: stage.name.clone(),
        version,
        prioritized_rulesets: rulesets.to_vec(),
    };
    record::save(project_id, &entry).err().map(|e| {
        format!("{e}; the next plan finds the stage's rulesets unknown and replaces them once")
    })
}

fn join(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}; {b}")),
        (a, b) => a.or(b),
    }
}

/// `recorded`: the rulesets as the record keeps them
/// ([`super::webhooks::for_sending`]).
async fn create(
    client: &Client,
    project_id: &str,
    body: &StageCreate,
    recorded: &[Value],
) -> Result<Option<String>, OperationError> {
    let find = || client.get_stage(project_id, StageBy::Name(&body.name));
    let not_read = |e: ApiError| OperationError::NotRead {
        noun: STAGE,
        source: ReadError::new(format!("the stage named `{}`", body.name), e),
    };
    if find().await.map_err(not_read)?.is_some() {
        // Another run's stage: its rulesets are not known to be ours, so
        // nothing is recorded and the next plan replaces them once.
        return Ok(Some(format!(
            "the {STAGE} exists already (created since the plan was read, by another run); not created again"
        )));
    }
    let mut lost: Vec<String> = Vec::new();
    for _ in 0..MAX_SENDS {
        let error = match client.create_stage(project_id, body).await {
            Ok(stage) => {
                let said = (!lost.is_empty()).then(|| {
                    format!(
                        "the answer to {} earlier request(s) was lost ({}) and a re-read did not find the {STAGE}, so it was sent again",
                        lost.len(),
                        lost.join(", ")
                    )
                });
                return Ok(join(said, remember(project_id, &stage, recorded)));
            }
            Err(e @ ApiError::Ambiguous { .. }) => e,
            Err(e @ ApiError::Conflict { .. }) => {
                return match find().await {
                    Ok(Some(_)) => Ok(Some(format!(
                        "another run created the {STAGE} at the same time; not created again"
                    ))),
                    _ => Err(e.into()),
                };
            }
            Err(e) => return Err(e.into()),
        };
        let cause = short_cause(&error);
        match find().await {
            Ok(Some(stage)) => {
                let said = format!(
                    "the service's answer was lost ({cause}); a re-read found the {STAGE}, so it was created once"
                );
                return Ok(join(Some(said), remember(project_id, &stage, recorded)));
            }
            Ok(None) if may_still_land(&cause) => {
                return Err(OperationError::MaybeLate { noun: STAGE, cause });
            }
            Ok(None) => lost.push(cause),
            Err(e) => {
                return Err(OperationError::Unsettled {
                    noun: STAGE,
                    source: ReadError::new(format!("the stage named `{}`", body.name), e),
                });
            }
        }
    }
    Err(OperationError::LostCreate {
        noun: STAGE,
        sends: MAX_SENDS,
    })
}

/// The stage a replace acts on.
struct Stage<'a> {
    project_id: &'a str,
    stage_id: &'a str,
    name: &'a str,
    /// Its version when the plan was made.
    base_version: Option<i64>,
}

/// `recorded`: the rulesets as the record keeps them
/// ([`super::webhooks::for_sending`]).
async fn replace(
    client: &Client,
    at: &Stage<'_>,
    body: &RulesetsBody,
    recorded: &[Value],
) -> Result<Option<String>, OperationError> {
    let &Stage {
        project_id,
        stage_id,
        name,
        base_version,
    } = at;
    let rulesets = recorded;
    let mut lost: Vec<String> = Vec::new();
    for _ in 0..MAX_SENDS {
        let error = match client
            .replace_stage_rulesets(project_id, stage_id, body)
            .await
        {
            Ok(stage) => {
                let said = (!lost.is_empty()).then(|| {
                    format!(
                        "the answer to {} earlier request(s) was lost ({}) and a re-read showed the stage's version unchanged, so it was sent again",
                        lost.len(),
                        lost.join(", ")
                    )
                });
                return Ok(join(said, remember(project_id, &stage, rulesets)));
            }
            Err(e @ ApiError::Ambiguous { .. }) => e,
            Err(e) => return Err(e.into()),
        };
        let cause = short_cause(&error);
        let read = client
            .get_stage(project_id, StageBy::Id(stage_id))
            .await
            .map_err(|e| OperationError::Unsettled {
                noun: RULESETS,
                source: ReadError::new(format!("the stage `{name}`"), e),
            })?;
        let Some(stage) = read else {
            return Err(OperationError::Unresolved {
                what: format!("the stage `{name}` ({stage_id}) is gone"),
            });
        };
        if stage.version > base_version {
            let said = format!(
                "the service's answer was lost ({cause}); a re-read found the stage's version bumped to {}, so the rulesets were replaced once",
                stage.version.unwrap_or_default()
            );
            return Ok(join(Some(said), remember(project_id, &stage, rulesets)));
        }
        if may_still_land(&cause) {
            return Err(OperationError::MaybeLate {
                noun: RULESETS,
                cause,
            });
        }
        lost.push(cause);
    }
    Err(OperationError::LostCreate {
        noun: RULESETS,
        sends: MAX_SENDS,
    })
}
