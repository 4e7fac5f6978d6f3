//! Planning the custom scorers (`kind: Scorer` documents): a set keyed by
//! name (`renamed_from` finds a renamed one), each with append-only,
//! immutable versions.
//!
//! - A declared scorer that does not exist is created with its version 1,
//!   its scope and its pin (`+ scorer[N]`).
//! - When the declared definition differs from the latest version's
//!   (fields the manifest leaves out are not compared; the service keeps
//!   the latest version's value for them), exactly one version is created
//!   (`+ scorer[N].version[K]`), its fields showing the prompt (or code)
//!   against the latest version's as a unified diff. An identical one
//!   creates nothing, so a second apply never adds a version.
//! - Metadata (name, description, tags, defaults), scope and the pinned
//!   `default_version` are an update with no new version (`~ scorer[N]`);
//!   a pin of the version the same change creates is set right after it.
//! - An undeclared custom scorer is deleted only with `--prune` (the
//!   service refuses while metric settings use it, and says which).

use crate::kinds::KindOp;
use serde::Serialize;
use serde_json::Value;

use super::address::CustomScorerAddress;
use super::live::CustomScorerState;
use super::normalize::{NormDefinition, node_set};
use super::ops::{CustomScorerOp, ScorerRef};
use super::spec::{CustomScorerSpec, CustomScorerType, ScopeSpec, ScorerDefaultsSpec};
use super::wire::{
    ChainPollBody, CreateScorerBody, LlmVersionBody, ScopeBody, UpdateScorerBody, VersionBody,
};
use crate::manifest::locate::FieldPath;
use crate::manifest::set::Located;
use crate::plan::address::Address;
use crate::plan::types::{Action, NoteKind, Operation};
use crate::plan::{Draft, Planner, find_by_name, fingerprint};

/// A scorer's metadata as plans compare it: only the fields written.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
struct NormMeta {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tags: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    defaults: Option<ScorerDefaultsSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    default_version: Option<u32>,
}

/// A scorer as a plan shows it whole (a create or a delete).
#[derive(Debug, Serialize)]
struct NormWhole {
    scorer_type: &'static str,
    #[serde(flatten)]
    meta: NormMeta,
    #[serde(flatten)]
    definition: NormDefinition,
}

fn defaults_norm(d: &ScorerDefaultsSpec) -> ScorerDefaultsSpec {
    ScorerDefaultsSpec {
        scoreable_node_types: d.scoreable_node_types.as_deref().map(node_set),
        ..d.clone()
    }
}

fn scope_norm(scope: &ScopeSpec) -> Value {
    match scope {
        ScopeSpec::Global(_) => Value::from("global"),
        ScopeSpec::Projects(names) => Value::from(node_set(names)),
    }
}

fn scope_body(scope: &ScopeSpec) -> ScopeBody {
    match scope {
        ScopeSpec::Global(_) => ScopeBody {
            is_global: true,
            projects: Vec::new(),
        },
        ScopeSpec::Projects(names) => ScopeBody {
            is_global: false,
            projects: node_set(names),
        },
    }
}

impl NormMeta {
    fn declared(spec: &CustomScorerSpec) -> Self {
        NormMeta {
            name: Some(spec.name.clone()),
            description: spec.description.clone(),
            tags: spec.tags.as_deref().map(node_set),
            defaults: spec.defaults.as_ref().map(defaults_norm),
            scope: spec.scope.as_ref().map(scope_norm),
            default_version: spec.default_version,
        }
    }

    /// The live scorer's metadata, reduced to the fields `declared` writes.
    fn live(s: &CustomScorerState, declared: &NormMeta) -> Self {
        NormMeta {
            name: Some(s.name.clone()),
            description: declared.description.as_ref().map(|_| s.description.clone()),
            tags: declared.tags.as_ref().map(|_| s.tags.clone()),
            defaults: declared.defaults.as_ref().map(|_| s.defaults.clone()),
            scope: declared.scope.as_ref().map(|_| {
                if s.is_global {
                    Value::from("global")
                } else {
                    Value::from(s.projects.clone())
                }
            }),
            default_version: declared.default_version.and(s.default_version),
        }
    }
}

/// The body of a version's create: what the manifest writes (a field left
/// out is the latest version's, which the service keeps).
fn version_body(spec: &CustomScorerSpec, d: &NormDefinition) -> VersionBody {
    if spec.scorer_type == CustomScorerType::Code {
        return VersionBody::Code {
            code: d.code.clone().unwrap_or_default(),
        };
    }
    let chain = d.template.as_ref().map(|template| ChainPollBody {
        template: template.clone(),
        metric_system_prompt: d.metric_system_prompt.clone(),
        metric_description: d.metric_description.clone(),
        value_field_name: d.value_field_name.clone(),
        explanation_field_name: d.explanation_field_name.clone(),
        metric_few_shot_examples: d.metric_few_shot_examples.as_ref().map(|examples| {
            examples
                .iter()
                .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
                .collect()
        }),
        response_schema: d.response_schema.clone(),
    });
    VersionBody::Llm(Box::new(LlmVersionBody {
        model_name: d.model_name.clone(),
        num_judges: d.num_judges,
        scoreable_node_types: d.scoreable_node_types.clone(),
        cot_enabled: d.cot_enabled,
        output_type: d.output_type.clone(),
        input_type: d.input_type.clone(),
        instructions: d.instructions.clone(),
        chain_poll_template: chain,
        user_prompt: d.user_prompt.clone(),
    }))
}

/// Plans the custom scorers the manifests declare, against `live`.
pub(crate) fn plan_custom_scorers(
    planner: &mut Planner<'_>,
    wanted: &[Located<CustomScorerSpec>],
    live: &[CustomScorerState],
    uses: &super::uses::Uses,
) {
    let mut used = vec![false; live.len()];
    for (i, doc) in wanted.iter().enumerate() {
        let (origin, spec) = (&doc.origin, &doc.spec);
        if let Some(first) = wanted[..i].iter().find(|d| d.spec.name == spec.name) {
            planner.problem_at(
                origin,
                FieldPath::root().key("name"),
                format!(
                    "a second Scorer document named `{}` (the first is at {}); a scorer is declared once",
                    spec.name, first.origin
                ),
            );
            continue;
        }
        let address = Address::CustomScorer(CustomScorerAddress::scorer(&spec.name));
        if !planner.options.selects(&address) {
            // Still claim the live one, so it is not seen as undeclared.
            if let Some(i) = find_by_name(live, &used, |s| &s.name, &spec.name, &spec.renamed_from)
            {
                used[i] = true;
            }
            continue;
        }
        let declared = NormDefinition::declared(spec);
        let meta = NormMeta::declared(spec);
        let found = find_by_name(live, &used, |s| &s.name, &spec.name, &spec.renamed_from);
        let Some(index) = found else {
            if spec.scorer_type == CustomScorerType::Llm && declared.template.is_none() {
                planner.problem_at(
                    origin,
                    FieldPath::root().key("chain_poll_template"),
                    format!(
                        "scorer `{}` does not exist yet: its first version needs `chain_poll_template` with `template` or `template_file`",
                        spec.name
                    ),
                );
                continue;
            }
            if let Some(n) = spec.default_version.filter(|n| *n != 1) {
                planner.problem_at(
                    origin,
                    FieldPath::root().key("default_version"),
                    format!(
                        "scorer `{}` does not exist yet: its first version is 1, so version {n} cannot be pinned",
                        spec.name
                    ),
                );
                continue;
            }
            let target = ScorerRef::named(&spec.name);
            let mut then = vec![CustomScorerOp::CreateScorerVersion {
                scorer: target.clone(),
                base_version: None,
                declared: Box::new(declared.clone()),
                body: Box::new(version_body(spec, &declared)),
            }];
            if let Some(scope) = &spec.scope {
                then.push(CustomScorerOp::SetScorerScope {
                    scorer: target.clone(),
                    scope: scope_body(scope),
                });
            }
            if let Some(n) = spec.default_version {
                then.push(CustomScorerOp::PinScorerVersion {
                    scorer: target,
                    version: n,
                });
            }
            let operations = vec![Operation::Kind(KindOp::CustomScorer(
                CustomScorerOp::CreateCustomScorer {
                    body: CreateScorerBody {
                        name: spec.name.clone(),
                        scorer_type: spec.scorer_type.as_str().to_owned(),
                        description: spec.description.clone(),
                        tags: meta.tags.clone().unwrap_or_default(),
                        defaults: meta.defaults.clone(),
                    },
                    then,
                },
            ))];
            let after = NormWhole {
                scorer_type: spec.scorer_type.as_str(),
                meta,
                definition: declared,
            };
            let draft = Draft {
                address,
                action: Action::Create,
                reason: "declared, does not exist; created with its version 1".to_owned(),
                live_fingerprint: fingerprint::of::<CustomScorerState>(None),
                operations,
            };
            planner
                .changes
                .push(draft.change::<NormWhole, _>(None, Some(&after)));
            continue;
        };
        used[index] = true;
        let current = &live[index];
        let target = ScorerRef::of(&current.id, &current.name);
        if current.scorer_type != spec.scorer_type {
            planner.problem_at(
                origin,
                FieldPath::root().key("scorer_type"),
                format!(
                    "scorer `{}` is a `{}` scorer; its type cannot change (declare a new scorer under another name)",
                    current.name,
                    current.scorer_type.as_str()
                ),
            );
            continue;
        }
        let latest = current.latest.as_ref();
        let new_version = match latest {
            Some(v) => !v.definition.holds(&declared),
            None => true,
        };
        if new_version
            && latest.is_none()
            && spec.scorer_type == CustomScorerType::Llm
            && declared.template.is_none()
        {
            planner.problem_at(
                origin,
                FieldPath::root().key("chain_poll_template"),
                format!(
                    "scorer `{}` has no version yet: its first version needs `chain_poll_template` with `template`",
                    spec.name
                ),
            );
            continue;
        }
        let latest_number = latest.map_or(0, |v| v.version);
        let max = latest_number + u32::from(new_version);
        if let Some(n) = spec.default_version.filter(|n| *n > max || *n == 0) {
            planner.problem_at(
                origin,
                FieldPath::root().key("default_version"),
                format!(
                    "scorer `{}` has no version {n}: its latest {} {max}",
                    spec.name,
                    if new_version { "will be" } else { "is" },
                ),
            );
            continue;
        }
        let pin = spec
            .default_version
            .filter(|n| current.default_version != Some(*n));
        // Metadata, scope and a pin of an existing version: one update.
        let before_meta = NormMeta::live(current, &meta);
        let mut after_meta = meta.clone();
        let pin_new = new_version && pin == Some(max);
        if pin_new {
            // Set with the version, once it exists.
            after_meta.default_version = before_meta.default_version;
        }
        if before_meta != after_meta {
            let mut operations = Vec::new();
            let mut body = UpdateScorerBody::default();
            if before_meta.name != after_meta.name {
                body.name = Some(spec.name.clone());
            }
            if before_meta.description != after_meta.description {
                body.description = spec.description.clone();
            }
            if before_meta.tags != after_meta.tags {
                body.tags = after_meta.tags.clone();
            }
            if before_meta.defaults != after_meta.defaults {
                body.defaults = after_meta.defaults.clone();
            }
            if !body.is_empty() {
                operations.push(Operation::Kind(KindOp::CustomScorer(
                    CustomScorerOp::UpdateCustomScorer {
                        scorer: target.clone(),
                        body,
                    },
                )));
            }
            if before_meta.scope != after_meta.scope
                && let Some(scope) = &spec.scope
            {
                operations.push(Operation::Kind(KindOp::CustomScorer(
                    CustomScorerOp::SetScorerScope {
                        scorer: target.clone(),
                        scope: scope_body(scope),
                    },
                )));
            }
            if !pin_new && let Some(n) = pin {
                operations.push(Operation::Kind(KindOp::CustomScorer(
                    CustomScorerOp::PinScorerVersion {
                        scorer: target.clone(),
                        version: n,
                    },
                )));
            }
            let reason = if before_meta.name != after_meta.name {
                format!("renamed from `{}`", current.name)
            } else {
                "its metadata differs; no new version".to_owned()
            };
            let draft = Draft {
                address: address.clone(),
                action: Action::Update,
                reason,
                live_fingerprint: fingerprint::of(Some(current)),
                operations,
            };
            let mut c = draft.change(Some(&before_meta), Some(&after_meta));
            c.created_by = current.created_by.clone();
            planner.changes.push(c);
        }
        if new_version {
            let mut operations = vec![Operation::Kind(KindOp::CustomScorer(
                CustomScorerOp::CreateScorerVersion {
                    scorer: target.clone(),
                    base_version: latest.map(|v| v.version),
                    declared: Box::new(declared.clone()),
                    body: Box::new(version_body(spec, &declared)),
                },
            ))];
            let mut reason = match latest {
                Some(v) => format!(
                    "the definition differs from the latest version, {}",
                    v.version
                ),
                None => "the scorer has no version yet".to_owned(),
            };
            if pin_new {
                operations.push(Operation::Kind(KindOp::CustomScorer(
                    CustomScorerOp::PinScorerVersion {
                        scorer: target,
                        version: max,
                    },
                )));
                reason.push_str(&format!(
                    "; pinned as the default version (`default_version: {max}`)"
                ));
            } else if let Some(n) = spec.default_version.or(current.default_version) {
                reason.push_str(&format!("; version {n} stays pinned"));
            }
            let runs = uses.get(&spec.name).map(Vec::as_slice).unwrap_or_default();
            for line in super::uses::what_runs(runs, max) {
                planner.note(
                    Some(Address::CustomScorer(CustomScorerAddress::version(
                        &spec.name, max,
                    ))),
                    NoteKind::Info,
                    line,
                );
            }
            let before = latest.map(|v| v.definition.only(&declared));
            let draft = Draft {
                address: Address::CustomScorer(CustomScorerAddress::version(&spec.name, max)),
                action: Action::Create,
                reason,
                live_fingerprint: fingerprint::of(Some(current)),
                operations,
            };
            let mut c = draft.change(before.as_ref(), Some(&declared));
            c.created_by = current.created_by.clone();
            planner.changes.push(c);
        }
    }
    for (index, scorer) in live.iter().enumerate() {
        if used[index] {
            continue;
        }
        let address = Address::CustomScorer(CustomScorerAddress::scorer(&scorer.name));
        if !planner.options.selects(&address) {
            continue;
        }
        if planner.options.prune {
            let before = NormWhole {
                scorer_type: scorer.scorer_type.as_str(),
                meta: NormMeta {
                    name: Some(scorer.name.clone()),
                    ..NormMeta::default()
                },
                definition: scorer
                    .latest
                    .as_ref()
                    .map(|v| v.definition.clone())
                    .unwrap_or_default(),
            };
            let draft = Draft {
                address,
                action: Action::Delete,
                reason: "not declared (--prune); every version goes with it (the service refuses while metric settings use it)".to_owned(),
                live_fingerprint: fingerprint::of(Some(scorer)),
                operations: vec![Operation::Kind(KindOp::CustomScorer(CustomScorerOp::DeleteCustomScorer {
                    scorer_id: scorer.id.clone(),
                    name: scorer.name.clone(),
                }))],
            };
            let mut c = draft.change::<_, NormWhole>(Some(&before), None);
            c.created_by = scorer.created_by.clone();
            planner.changes.push(c);
        } else {
            planner.note_by(
                scorer.created_by.clone(),
                Some(address),
                NoteKind::Unmanaged,
                format!(
                    "custom scorer `{}` exists but is not declared (delete it with --prune)",
                    scorer.name
                ),
            );
        }
    }
}

/// Plans the custom scorers `wanted` declares against `live` (`None`: not
/// read, as none is in reach).
pub(crate) fn plan_global(
    planner: &mut Planner<'_>,
    wanted: &[Located<CustomScorerSpec>],
    live: Option<&[CustomScorerState]>,
    uses: &super::uses::Uses,
) {
    if let Some(live) = live {
        plan_custom_scorers(planner, wanted, live, uses);
    }
}

/// The targets of the custom scorers `declared` declares.
pub(crate) fn declared_global(
    declared: &[Located<CustomScorerSpec>],
    out: &mut Vec<crate::plan::target::Target>,
) {
    for scorer in declared {
        out.push(crate::plan::target::Target::of(&Address::CustomScorer(
            CustomScorerAddress::scorer(&scorer.spec.name),
        )));
    }
}
