//! What an apply did: per change, whether it succeeded, failed or was skipped,
//! and after the re-read, any field that did not stick.

use serde::{Deserialize, Serialize};

use crate::plan::{Action, Address, AddressKey, FieldChange};

/// The outcome of one apply run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ApplyReport {
    /// One entry per planned change, in plan order.
    pub outcomes: Vec<ChangeOutcome>,
    /// Objects that, re-read after applying, still differ from the plan.
    pub unconverged: Vec<Unconverged>,
}

impl ApplyReport {
    /// How many changes ended in each status.
    pub fn counts(&self) -> OutcomeCounts {
        let mut c = OutcomeCounts::default();
        for o in &self.outcomes {
            match o.status {
                OutcomeStatus::Succeeded => c.succeeded += 1,
                OutcomeStatus::Failed => c.failed += 1,
                OutcomeStatus::Skipped => c.skipped += 1,
            }
        }
        c
    }

    /// Changes that failed or were skipped, as (transient, lasting): see
    /// [`ChangeOutcome::transient`].
    pub fn incomplete(&self) -> (usize, usize) {
        self.outcomes
            .iter()
            .filter(|o| o.status != OutcomeStatus::Succeeded)
            .fold(
                (0, 0),
                |(t, l), o| {
                    if o.transient { (t + 1, l) } else { (t, l + 1) }
                },
            )
    }

    /// Whether a change failed because the service found what the
    /// manifests declare invalid ([`ChangeOutcome::invalid_input`]).
    pub fn has_invalid_input(&self) -> bool {
        self.outcomes
            .iter()
            .any(|o| o.status == OutcomeStatus::Failed && o.invalid_input)
    }

    /// Whether every change succeeded and live state converged.
    pub fn is_complete(&self) -> bool {
        let c = self.counts();
        c.failed == 0 && c.skipped == 0 && self.unconverged.is_empty()
    }
}

/// Counts of outcomes.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct OutcomeCounts {
    /// Changes applied.
    pub succeeded: usize,
    /// Changes that failed.
    pub failed: usize,
    /// Changes not attempted (part of the report format; this version
    /// attempts every change).
    pub skipped: usize,
}

/// What happened to one change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChangeOutcome {
    /// The object.
    // Its key, not the address: an apply holds an outcome per change, a
    // few per log stream, and a key is one small allocation where an
    // address is several larger ones (measured: docs/performance.md,
    // Memory and time from 2,000 to 20,000 log streams).
    pub address: AddressKey,
    /// The planned action.
    pub action: Action,
    /// How it ended.
    pub status: OutcomeStatus,
    /// Why it failed or was skipped, or how an ambiguous result was settled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// For a change that failed or was skipped: whether the cause passes (a
    /// timeout, a lost connection, 429, 5xx, an interrupt, a race), so that
    /// a second apply is expected to complete it. A change the service
    /// refused (4xx other than 404/409, refused credentials) or one missing
    /// an environment variable fails the same way until something changes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub transient: bool,
    /// For a change that failed: the service found what the manifests
    /// declare invalid (a code scorer's file failed its validation), so the
    /// manifests must change; `apply` exits 1 then, as for any error of its
    /// input, not 3.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub invalid_input: bool,
}

/// How a change ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    /// Applied (or found already applied).
    Succeeded,
    /// Failed; live state for this object is as it was, or as the detail says.
    Failed,
    /// Not attempted: the service had refused an earlier write for these
    /// credentials (401 or 403), so this one would have been refused too.
    Skipped,
}

/// An object whose live state, re-read after applying, differs from the plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Unconverged {
    /// The object.
    pub address: Address,
    /// The fields that did not stick: `before` is what the plan wanted, `after` what live holds.
    pub fields: Vec<FieldChange>,
}
