//! Every exit status the `evalctl` binary can return, in one enum.
//!
//! "Changes present" (2) is distinct from "failed" (1); clap's own usage error
//! status (2) is remapped to [`ExitStatus::Usage`] (64) so a typo on the command
//! line can never be mistaken for "the plan has changes".

use std::process::ExitCode;

/// The documented exit statuses of `evalctl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: success; for `plan` and `drift`, no changes.
    Success,
    /// 1: an error: the service could not be reached, credentials were refused, …
    Failure,
    /// 2: changes present (`plan --detailed-exitcode`, `drift`).
    Changes,
    /// 3: `apply` did not finish, or live state did not converge.
    Incomplete,
    /// 4: a three-way plan has a change of an attribution `--fail-on`
    /// names (a conflict, drift): a human should look before it is applied.
    NeedsReview,
    /// 64: the command line was wrong (unknown flag, missing argument).
    Usage,
    /// 65: the manifests are invalid.
    InvalidManifests,
    /// 130: interrupted (SIGINT or SIGTERM), as shells report a process
    /// ended by SIGINT: `apply` printed what succeeded, failed and was not
    /// started; the next apply completes the rest.
    Interrupted,
}

impl ExitStatus {
    /// The numeric status the process exits with.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Changes => 2,
            ExitStatus::Incomplete => 3,
            ExitStatus::NeedsReview => 4,
            ExitStatus::Usage => 64,
            ExitStatus::InvalidManifests => 65,
            ExitStatus::Interrupted => 130,
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        ExitCode::from(status.code())
    }
}
