//! A custom scorer's operations, as a plan holds them and as apply sends
//! them: the scorer's create, a version's create, a metadata update, the
//! scope, the pinned version, a delete.
//!
//! An operation after the scorer's create in the same change names the
//! scorer by name ([`ScorerRef`] with no id); it is looked up when sent.
//!
//! The two creates are not idempotent: a lost answer (a 5xx, a dropped
//! connection, a timeout) may hide one that landed. They are settled the
//! way apply settles every create (`crate::reconcile::apply::create`), with
//! its bound and its errors: a fresh read just before sending (a scorer of
//! that name, or a latest version newer than the plan's that already holds
//! this definition, is not made again); after a lost answer, a read:
//! present, it was made once; absent, it is sent again (at most
//! `MAX_SENDS` in all), unless the request may still be in the service (the
//! client timed out), which is reported as failed for the next apply to
//! re-read. A scorer's create refused as a duplicate (409: another run made
//! it since the read) is done when a read finds it, and the scorer is
//! adopted: this run waits (bounded) for the other run's first version,
//! then creates its own only when that one does not hold its definition, so
//! two applies of one manifest leave one scorer with one version, and both
//! succeed. A code scorer's file is validated before its scorer is created.

use serde::{Deserialize, Serialize};

use super::normalize::NormDefinition;
use super::read::read_custom_scorers;
use super::wire::{CreateScorerBody, ScopeBody, UpdateScorerBody, VersionBody};
use crate::client::{ApiError, Client};
use crate::reconcile::apply::OperationError;
pub(super) use crate::reconcile::apply::create::settle_described as settled;

/// The scorer an operation acts on: by id, or (created by the same
/// change) by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScorerRef {
    /// Id, when it existed at plan time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Name (the live one when known).
    pub name: String,
}

impl ScorerRef {
    /// A scorer the same change creates.
    pub fn named(name: &str) -> Self {
        ScorerRef {
            id: None,
            name: name.to_owned(),
        }
    }

    /// A live scorer.
    pub fn of(id: &str, name: &str) -> Self {
        ScorerRef {
            id: Some(id.to_owned()),
            name: name.to_owned(),
        }
    }

    /// Its id: as planned, or found by name.
    async fn id(&self, client: &Client) -> Result<String, OperationError> {
        if let Some(id) = &self.id {
            return Ok(id.clone());
        }
        let all = client.list_custom_scorers().await?;
        let found: Vec<_> = all.iter().filter(|s| s.name == self.name).collect();
        match found.as_slice() {
            [one] => Ok(one.id.clone()),
            other => Err(OperationError::Unresolved {
                what: format!(
                    "custom scorer `{}` ({} found of that name)",
                    self.name,
                    other.len()
                ),
            }),
        }
    }
}

/// One API call (or, for a version, the calls that make one) on a custom
/// scorer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum CustomScorerOp {
    /// POST a scorer (no version yet; a code scorer's file validated
    /// first), then `then`: its first version, scope and pin. A scorer
    /// another run made meanwhile is adopted: its first version, once that
    /// run made it, is not made twice when it holds the same definition.
    CreateCustomScorer {
        /// The body.
        body: CreateScorerBody,
        /// What follows the create, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        then: Vec<CustomScorerOp>,
    },
    /// POST a new version.
    CreateScorerVersion {
        /// The scorer.
        scorer: ScorerRef,
        /// The latest version when the plan was made.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        base_version: Option<u32>,
        /// What the manifest declares of it (how a lost answer is settled).
        declared: Box<NormDefinition>,
        /// The body.
        body: Box<VersionBody>,
    },
    /// PATCH metadata.
    UpdateCustomScorer {
        /// The scorer.
        scorer: ScorerRef,
        /// The fields that change.
        body: UpdateScorerBody,
    },
    /// PUT the scope.
    SetScorerScope {
        /// The scorer.
        scorer: ScorerRef,
        /// The scope, projects by name.
        scope: ScopeBody,
    },
    /// PATCH the pinned version (`default_version_id`).
    PinScorerVersion {
        /// The scorer.
        scorer: ScorerRef,
        /// The version's number.
        version: u32,
    },
    /// DELETE the scorer and its versions.
    DeleteCustomScorer {
        /// Id.
        scorer_id: String,
        /// Name.
        name: String,
    },
}

const SCORER: &str = "custom scorer";

/// How long a run that finds the scorer it was to create made by another
/// run waits for that run's first version before comparing with it.
const ADOPT_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// Adopts the scorer `name` another run created (its create was refused as
/// a duplicate, or a read before sending found it): that run makes its
/// first version right after the scorer, so this one waits for it (within
/// [`ADOPT_WAIT`]), then goes on as for an existing scorer: its version is
/// created only when the latest one does not hold this definition.
async fn adopt(client: &Client, name: &str) -> Result<String, OperationError> {
    let started = tokio::time::Instant::now();
    let mut wait = std::time::Duration::from_millis(50);
    loop {
        let all = client.list_custom_scorers().await?;
        let versioned = all
            .iter()
            .any(|s| s.name == name && s.latest_version.is_some());
        if versioned {
            return Ok(
                "another run created the scorer at the same time; this run adopted it and compared its definition with that run's first version"
                    .to_owned(),
            );
        }
        if started.elapsed() + wait > ADOPT_WAIT {
            return Ok(format!(
                "another run created the scorer and had made no version after {}s; this run adopted it and made its first version",
                ADOPT_WAIT.as_secs()
            ));
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(std::time::Duration::from_secs(1));
    }
}
const VERSION: &str = "custom scorer version";

impl CustomScorerOp {
    /// The id of the live scorer it acts on, when planned with one.
    pub fn scorer_id(&self) -> Option<&str> {
        match self {
            CustomScorerOp::CreateScorerVersion { scorer, .. }
            | CustomScorerOp::UpdateCustomScorer { scorer, .. }
            | CustomScorerOp::SetScorerScope { scorer, .. }
            | CustomScorerOp::PinScorerVersion { scorer, .. } => scorer.id.as_deref(),
            CustomScorerOp::DeleteCustomScorer { scorer_id, .. } => Some(scorer_id),
            CustomScorerOp::CreateCustomScorer { .. } => None,
        }
    }

    /// Creates a version (the operation is `CreateScorerVersion`; `passed`:
    /// its code's passing validation, made already), unless a version newer
    /// than the plan's base already holds its definition.
    async fn create_version(
        &self,
        client: &Client,
        passed: Option<serde_json::Value>,
    ) -> Result<Option<String>, OperationError> {
        let CustomScorerOp::CreateScorerVersion {
            scorer,
            base_version,
            declared,
            body,
        } = self
        else {
            return Ok(None);
        };
        let id = scorer.id(client).await?;
        let find = || async {
            let all = read_custom_scorers(client).await?;
            Ok(all.iter().any(|s| {
                s.id == id
                    && s.latest.as_ref().is_some_and(|v| {
                        Some(v.version) > *base_version && v.definition.holds(declared)
                    })
            }))
        };
        match body.as_ref() {
            VersionBody::Llm(llm) => {
                settled(
                    VERSION,
                    find,
                    || format!("custom scorer `{}`", scorer.name),
                    || async { client.create_llm_scorer_version(&id, llm).await.map(|_| ()) },
                )
                .await
            }
            VersionBody::Code { code } => {
                super::code::create_code_version(client, (&id, &scorer.name), code, passed, find)
                    .await
            }
        }
    }

    /// Sends the operation: an update once (the client retries it as its
    /// policy allows), a create settled as the module says;
    /// `Ok(Some(note))` when it succeeded in a way worth saying.
    pub async fn send(&self, client: &Client) -> Result<Option<String>, OperationError> {
        match self {
            CustomScorerOp::CreateCustomScorer { body, then } => {
                // A code scorer's file is validated first: a failing one
                // leaves neither a scorer nor a version.
                let mut passed = match then.first() {
                    Some(CustomScorerOp::CreateScorerVersion { body: version, .. }) => {
                        match version.as_ref() {
                            VersionBody::Code { code } => {
                                Some(super::code::validated(client, &body.name, code).await?)
                            }
                            VersionBody::Llm(_) => None,
                        }
                    }
                    _ => None,
                };
                let find = || async {
                    let all = client.list_custom_scorers().await?;
                    Ok(all.iter().any(|s| s.name == body.name))
                };
                // Whether this run sent the create that made it (not refused
                // as a duplicate, not found made before sending).
                let ours = std::sync::atomic::AtomicBool::new(false);
                let note = settled(
                    SCORER,
                    find,
                    || format!("the custom scorers (looking for `{}`)", body.name),
                    || async {
                        let sent = client.create_custom_scorer(body).await.map(|_| ());
                        let mine = !matches!(sent, Err(ApiError::Conflict { .. }));
                        ours.store(mine, std::sync::atomic::Ordering::SeqCst);
                        sent
                    },
                )
                .await?;
                let mut notes: Vec<String> = note.into_iter().collect();
                if !ours.load(std::sync::atomic::Ordering::SeqCst) {
                    notes.push(adopt(client, &body.name).await?);
                }
                for op in then {
                    let note = match op {
                        CustomScorerOp::CreateScorerVersion { .. } => {
                            Box::pin(op.create_version(client, passed.take())).await?
                        }
                        other => Box::pin(other.send(client)).await?,
                    };
                    notes.extend(note);
                }
                Ok((!notes.is_empty()).then(|| notes.join("; ")))
            }
            CustomScorerOp::CreateScorerVersion { .. } => self.create_version(client, None).await,
            CustomScorerOp::UpdateCustomScorer { scorer, body } => {
                let id = scorer.id(client).await?;
                let json = serde_json::to_value(body).unwrap_or(serde_json::Value::Null);
                client.update_custom_scorer(&id, &json).await?;
                Ok(None)
            }
            CustomScorerOp::SetScorerScope { scorer, scope } => {
                let id = scorer.id(client).await?;
                let mut ids = Vec::new();
                for name in &scope.projects {
                    match client.find_project_by_name(name).await? {
                        Some(p) => ids.push(p.id),
                        None => {
                            return Err(OperationError::Unresolved {
                                what: format!(
                                    "project `{name}` (in the scope of custom scorer `{}`)",
                                    scorer.name
                                ),
                            });
                        }
                    }
                }
                client.set_scorer_scope(&id, scope.is_global, &ids).await?;
                Ok(None)
            }
            CustomScorerOp::PinScorerVersion { scorer, version } => {
                let id = scorer.id(client).await?;
                let versions = client.list_scorer_versions(&id).await?;
                let Some(v) = versions.iter().find(|v| v.version == i64::from(*version)) else {
                    return Err(OperationError::Unresolved {
                        what: format!("version {version} of custom scorer `{}`", scorer.name),
                    });
                };
                let json = serde_json::json!({"default_version_id": v.id});
                client.update_custom_scorer(&id, &json).await?;
                Ok(None)
            }
            CustomScorerOp::DeleteCustomScorer { scorer_id, name } => {
                match client.delete_custom_scorer(scorer_id).await {
                    Ok(deleted) => Ok(deleted.note()),
                    // Refused while in use: said so, with what it is
                    // associated with.
                    Err(source @ (ApiError::Validation { .. } | ApiError::Conflict { .. })) => {
                        let projects = client
                            .custom_scorer_projects(scorer_id)
                            .await
                            .ok()
                            .map(|ps| ps.into_iter().map(|p| p.name).collect());
                        Err(OperationError::ScorerInUse {
                            scorer: name.clone(),
                            projects,
                            source,
                        })
                    }
                    Err(e) => Err(e.into()),
                }
            }
        }
    }
}
