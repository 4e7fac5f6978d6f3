//! The one error of the command line: every way a command can fail, with the
//! data each needs, rendered in one place (its `Display`, printed by
//! `commands::run`) and mapped to an exit status in one place
//! ([`Error::exit_status`]). Layers below keep their own typed errors
//! (`ReadError`, `ApiError`, `PlanError`, ...), which convert into this one.

use std::path::PathBuf;

use crate::client::ApiError;
use crate::commands::connect::ConnectError;
use crate::commands::saved_plan::SavedPlanError;
use crate::exit::ExitStatus;
use crate::export::files::FilesError;
use crate::plan::PlanError;
use crate::plan::target::UnmatchedTargets;
use crate::reconcile::ReadError;
use crate::reconcile::collect::CollectError;
use crate::reconcile::confirm::Moved;

/// Every way a command can fail.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The manifests are invalid; their diagnostics were printed as they were found.
    #[error("the manifests are invalid ({count} error(s)); `evalctl validate` checks them offline")]
    InvalidManifests {
        /// How many errors.
        count: usize,
    },
    /// The manifests refer to objects that do not exist.
    #[error(transparent)]
    UnknownReferences(#[from] PlanError),
    /// The manifests refer to objects that do not exist; each was printed as a
    /// diagnostic at the field that names it.
    #[error(
        "the manifests refer to {count} object(s) that do not exist in the service (shown above, each at the field that names it)"
    )]
    UnresolvedReferences {
        /// How many references.
        count: usize,
    },
    /// A `--target` selects nothing the manifests declare.
    #[error(transparent)]
    UnmatchedTargets(#[from] UnmatchedTargets),
    /// A scorer named on the command line is not in the catalog (or is ambiguous).
    #[error(transparent)]
    UnknownScorer(crate::plan::resolve::ResolveError),
    /// Flags that cannot go together.
    #[error("{0}")]
    Usage(&'static str),
    /// The manifests hold a path given to `--base` or `--applied`, so every
    /// project would be declared twice.
    #[error(
        "the manifests `{}` hold the {flag} path `{}`, so each project would be declared twice; {}",
        .manifests.display(),
        .other.display(),
        if *.defaulted {
            format!("no manifest path was given, so the manifests default to `.`: name them after the options, e.g. `{flag} {} config/`", .other.display())
        } else {
            format!("give {flag} and the manifests separate directories, e.g. `{flag} base/config config/`")
        }
    )]
    PathsOverlap {
        /// `--base` or `--applied`.
        flag: &'static str,
        /// The manifests' path.
        manifests: PathBuf,
        /// The path given to `flag`.
        other: PathBuf,
        /// Whether the manifests' path is the default `.` (none was given).
        defaulted: bool,
    },
    /// No connection could be set up (configuration, or the sandbox).
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// Reading live state failed.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The service answered a request with an error.
    #[error(transparent)]
    Api(#[from] ApiError),
    /// A saved plan could not be written or read.
    #[error(transparent)]
    SavedPlan(#[from] SavedPlanError),
    /// The plan's changes could not be read back from its temporary file.
    #[error(transparent)]
    Changes(#[from] crate::plan::ChangesError),
    /// A saved plan was made against another service.
    #[error(
        "the plan was made against {planned}, but this run targets {current}; plan again against this service"
    )]
    ServiceMismatch {
        /// The service of the plan.
        planned: String,
        /// The service of this run.
        current: String,
    },
    /// The objects of a saved plan could not be read to check them.
    #[error("nothing was applied: {0}")]
    Unchecked(ReadError),
    /// Objects of a saved plan moved since it was made.
    #[error(
        "refusing to apply {}: {} object(s) changed since the plan was made:\n{}\nRun `evalctl plan` again and review the new plan.",
        .path.display(),
        .moved.len(),
        .moved.iter().map(|m| format!("  - {}: {}", m.address, m.detail)).collect::<Vec<_>>().join("\n")
    )]
    PlanMoved {
        /// The saved plan.
        path: PathBuf,
        /// What moved.
        moved: Vec<Moved>,
    },
    /// Variables holding integration secrets are not set, or empty.
    #[error(
        "nothing was applied: these environment variables hold integration secrets and are not set, or empty: {}",
        .missing.join(", ")
    )]
    MissingSecrets {
        /// `NAME (for ADDRESS)` of each.
        missing: Vec<String>,
    },
    /// The plan deletes or replaces too much of some collections.
    #[error(
        "nothing was applied: the plan deletes or replaces a large share of {} collection{} \
         (more than {}% of one holding at least {} objects):\n{}\nIf that is intended, \
         apply again with --allow-mass-changes",
        .changes.len(),
        if .changes.len() == 1 { "" } else { "s" },
        .limits.max_share_percent,
        .limits.min_objects,
        .changes.iter().map(|c| format!("  - {c}")).collect::<Vec<_>>().join("\n")
    )]
    MassChanges {
        /// The collections, each with its counts.
        changes: Vec<crate::plan::MassChange>,
        /// The limits they pass.
        limits: crate::plan::GuardLimits,
    },
    /// A saved plan deletes projects or log streams (their traces with them)
    /// but was not made with `--allow-destroy`.
    #[error(
        "{} deletes {} (with their traces) but was not made with --allow-destroy; make it again with `evalctl plan --prune --allow-destroy --out`:\n{}",
        .path.display(),
        .addresses.len(),
        .addresses.iter().map(|a| format!("  - {a}")).collect::<Vec<_>>().join("\n")
    )]
    DestroyNotAllowed {
        /// The saved plan.
        path: std::path::PathBuf,
        /// What it would delete.
        addresses: Vec<String>,
    },
    /// Apply would need confirmation and cannot ask for it.
    #[error(
        "stdin is not a terminal, so apply cannot ask for confirmation; pass --auto-approve to apply"
    )]
    NeedsApproval,
    /// The user did not confirm.
    #[error("Apply cancelled; nothing was changed.")]
    Cancelled,
    /// An export could not read what it exports.
    #[error(transparent)]
    Export(#[from] CollectError),
    /// Exported files could not be written.
    #[error(transparent)]
    Files(#[from] FilesError),
    /// Exported files do not load back (a bug of export).
    #[error(
        "the exported files do not load as manifests: this is a bug in evalctl export; please report it with the diagnostics above"
    )]
    ExportUnloadable,
    /// Planning the exported files against live state is not empty.
    #[error(
        "verification failed: planning the exported files shows {0}; this is a bug in evalctl export (or live state changed during the export); please report it with this output"
    )]
    ExportUnverified(#[source] Unverified),
    /// A signal (SIGINT, SIGTERM) interrupted the command before it changed anything.
    #[error("interrupted ({signal}) before anything was applied")]
    Interrupted {
        /// The signal.
        signal: String,
    },
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The result could not be written to stdout.
    #[error("cannot write the output: {0}")]
    Output(#[source] std::io::Error),
}

/// What planning the exported files against live state showed (see
/// [`Error::ExportUnverified`]).
#[derive(Debug, thiserror::Error)]
pub enum Unverified {
    /// Changes, rendered above the error.
    #[error("{0} change(s) (above)")]
    Changes(usize),
    /// The exported files refer to objects that do not exist.
    #[error("{0}")]
    Unplannable(#[source] PlanError),
}

impl Error {
    /// The error of writing a result: a plan's change that could not be
    /// read back ([`Error::Changes`]), or the write itself ([`Error::Output`]).
    pub fn output(error: std::io::Error) -> Self {
        match error.downcast::<crate::plan::ChangesError>() {
            Ok(unread) => Error::Changes(unread),
            Err(error) => Error::Output(error),
        }
    }

    /// The exit status this error ends the process with.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            Error::InvalidManifests { .. }
            | Error::UnknownReferences(_)
            | Error::UnresolvedReferences { .. } => ExitStatus::InvalidManifests,
            Error::UnmatchedTargets(_)
            | Error::Export(CollectError::UnknownProjects(_))
            | Error::UnknownScorer(_)
            | Error::Usage(_)
            | Error::PathsOverlap { .. }
            | Error::NeedsApproval => ExitStatus::Usage,
            Error::Connect(_)
            | Error::Read(_)
            | Error::Api(_)
            | Error::SavedPlan(_)
            | Error::Changes(_)
            | Error::ServiceMismatch { .. }
            | Error::Unchecked(_)
            | Error::PlanMoved { .. }
            | Error::MissingSecrets { .. }
            | Error::MassChanges { .. }
            | Error::DestroyNotAllowed { .. }
            | Error::Cancelled
            | Error::Export(_)
            | Error::Files(_)
            | Error::ExportUnloadable
            | Error::ExportUnverified(_)
            | Error::Runtime(_)
            | Error::Output(_) => ExitStatus::Failure,
            Error::Interrupted { .. } => ExitStatus::Interrupted,
        }
    }
}
