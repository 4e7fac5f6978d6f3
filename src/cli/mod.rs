//! The command line: clap definitions of every command and flag.
//!
//! Thin by design: each command's behaviour lives in `commands/`. A test calls
//! `Cli::command().debug_assert()` so a broken definition fails CI, not users.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use connection::ConnectionArgs;
pub use sandbox::SandboxArgs;

pub mod connection;
pub mod sandbox;
mod value_enums;

use crate::output::ColorChoice;
use crate::plan::Target;
use crate::render::Format;

/// Declarative configuration for the evaluation service, GitOps style.
///
/// Manifests (YAML) in a config repo describe the desired configuration of
/// projects: scorers and sampling rules per log stream and experiment, trends
/// sections and favorites, templates, and the calling user's model-provider
/// integrations. evalctl shows what would change (`plan`), makes it so
/// (`apply`), and reports drift (`drift`).
#[derive(Debug, Parser)]
#[command(
    name = "evalctl",
    version,
    propagate_version = true,
    max_term_width = 100
)]
#[command(
    after_help = "Exit status: 0 success/no changes, 1 error, 2 changes present \
(plan --detailed-exitcode, drift), 3 apply incomplete or not converged, 4 a three-way plan \
has a change --fail-on names (a conflict, drift), 64 usage error, 65 invalid manifests, \
130 interrupted (SIGINT, SIGTERM).\n\nDocumentation: README.md and docs/ (docs/commands.md \
for every command)."
)]
pub struct Cli {
    /// Options of every command.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The long help of `-v`.
const VERBOSE_LONG_HELP: &str = "More logging on stderr. -v: each request to the service \
(method, path with the base URL's prefix, status, attempt, milliseconds). -vv: also each retry \
with its cause and wait (Retry-After included) and each change of the in-flight limit. -vvv: also \
request and response bodies, secrets redacted. Secrets (API keys, passwords, tokens, integration \
credentials) are never logged, at any level. EVALCTL_LOG takes RUST_LOG-style filters and \
replaces -v/-q, e.g. EVALCTL_LOG=evalctl::client=debug or EVALCTL_LOG=info,evalctl::sandbox=warn.";

/// Options of every command.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// More logging on stderr: -v info, -vv debug, -vvv trace. Secrets are never logged.
    #[arg(short, long, action = clap::ArgAction::Count, global = true, long_help = VERBOSE_LONG_HELP)]
    pub verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// When to use colour (auto: a terminal whose TERM is not dumb, unless NO_COLOR or CLICOLOR=0; CLICOLOR_FORCE forces it).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true, value_name = "WHEN")]
    pub color: ColorChoice,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check manifests offline: syntax, fields, the service's rules, environment references.
    #[command(
        after_help = "Example:\n  evalctl validate config/\n\nDocumentation: docs/manifests.md in the evalctl repository."
    )]
    Validate(ValidateArgs),
    /// Write the JSON Schemas of the manifest format (for editors and CI) and of `-o json`
    /// output (plan, apply report), and the manifest reference.
    #[command(
        after_help = "Example:\n  evalctl schema --out schemas/\n\nDocumentation: schemas/REFERENCE.md in the evalctl repository."
    )]
    Schema(SchemaArgs),
    /// Show what apply would change, without changing anything.
    #[command(
        after_help = "Examples:\n  evalctl plan config/\n  evalctl plan config/ -o markdown --out plan.json --detailed-exitcode\n  evalctl plan examples/quickstart --sandbox\n\nDocumentation: docs/commands.md#plans in the evalctl repository."
    )]
    Plan(PlanArgs),
    /// Make live state match the manifests (or execute a saved plan).
    #[command(
        after_help = "Examples:\n  evalctl apply config/\n  evalctl apply --plan plan.json --auto-approve\n  evalctl apply examples/quickstart --sandbox --auto-approve\n\nDocumentation: docs/commands.md#apply in the evalctl repository."
    )]
    Apply(ApplyArgs),
    /// Report drift: exit 0 when live matches, 2 when it drifted, 1 on error.
    #[command(
        after_help = "Example:\n  evalctl drift config/ -o markdown\n\nDocumentation: docs/commands.md#three-way-plans in the evalctl repository."
    )]
    Drift(DriftArgs),
    /// Write live configuration as manifests: one file per project, and integrations.yaml.
    #[command(
        after_help = "Examples:\n  evalctl export --dir config/ --verify\n  evalctl export --project demo-project --dir config/ --force\n  evalctl export --sandbox --dir /tmp/demo\n\nDocumentation: docs/commands.md#secrets (export) in the evalctl repository."
    )]
    Export(ExportArgs),
    /// Run the local sandbox: a faithful implementation of the service.
    #[command(
        after_help = "Example:\n  evalctl sandbox --listen 127.0.0.1:8080 --state sandbox.json\n\nDocumentation: docs/sandbox.md in the evalctl repository."
    )]
    Sandbox(SandboxArgs),
    /// Show who the credentials resolve to: user, role, organization.
    #[command(
        after_help = "Example:\n  EVALCTL_API_KEY=... evalctl whoami --base-url https://api.example.com\n\nDocumentation: docs/connecting.md in the evalctl repository."
    )]
    Whoami(WhoamiArgs),
    /// Scorer catalog tools.
    #[command(
        subcommand,
        after_help = "Examples:\n  evalctl scorers list\n  evalctl scorers usage correctness@3\n\nDocumentation: docs/commands.md#plans (blast radius) in the evalctl repository."
    )]
    Scorers(ScorersCommand),
    /// Print shell completions for bash, zsh, fish, elvish or powershell.
    #[command(
        after_help = "Example:\n  evalctl completions bash > /etc/bash_completion.d/evalctl\n\nDocumentation: README.md#commands in the evalctl repository."
    )]
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per command into a directory.
    #[command(
        after_help = "Examples:\n  evalctl man | man -l -\n  evalctl man --out-dir target/man\n\nDocumentation: README.md#commands in the evalctl repository."
    )]
    Man(ManArgs),
}

/// `evalctl whoami`.
#[derive(Debug, Clone, Args)]
pub struct WhoamiArgs {
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// Live state.
    #[command(flatten)]
    pub live: LiveArgs,
}

/// `evalctl scorers …`.
#[derive(Debug, Subcommand)]
pub enum ScorersCommand {
    /// List the scorer catalog: names, types, latest versions (and every version with --versions).
    #[command(
        after_help = "Examples:\n  evalctl scorers list\n  evalctl scorers list --versions -o json"
    )]
    List(ScorerListArgs),
    /// List the projects that use a scorer version (its blast radius).
    #[command(
        after_help = "Examples:\n  evalctl scorers usage correctness          # its latest version\n  evalctl scorers usage correctness@3\n  evalctl scorers usage 6f1c2d3e-0000-4000-8000-000000000000"
    )]
    Usage(ScorerUsageArgs),
}

/// `evalctl scorers list`.
#[derive(Debug, Clone, Args)]
pub struct ScorerListArgs {
    /// Also list every version of each scorer, with its id (one more request per scorer).
    #[arg(long)]
    pub versions: bool,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// Live state.
    #[command(flatten)]
    pub live: LiveArgs,
}

/// `evalctl scorers usage`.
#[derive(Debug, Clone, Args)]
pub struct ScorerUsageArgs {
    /// The scorer version: `NAME` (its latest version), `NAME@VERSION` (e.g.
    /// `correctness@3`), or an id (a version's, or a scorer's for its latest version).
    #[arg(value_name = "SCORER", value_parser = parse_scorer)]
    pub scorer: ScorerSelector,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// Live state.
    #[command(flatten)]
    pub live: LiveArgs,
}

/// A scorer version as the command line names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScorerSelector {
    /// A UUID: a scorer version's id, or a scorer's.
    Id(String),
    /// A scorer by name, at a version number or its latest.
    Name {
        /// The scorer's name.
        name: String,
        /// The version number (`None`: the latest).
        version: Option<i64>,
    },
}

/// Why a `SCORER` argument is not a scorer version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScorerSelectorError {
    /// The part after the last `@` is not a version number (1 or more,
    /// optionally prefixed by `v`).
    #[error("`{version}` is not a version number: write NAME@VERSION, e.g. correctness@3")]
    NotAVersion {
        /// The text after the `@`, as given.
        version: String,
    },
    /// No name before the `@` (or nothing at all).
    #[error("a scorer name, NAME@VERSION or a version id is needed")]
    NoName,
}

/// Parses `NAME`, `NAME@VERSION` (`3` or `v3`) or a UUID.
fn parse_scorer(text: &str) -> Result<ScorerSelector, ScorerSelectorError> {
    let text = text.trim();
    let is_uuid = text.len() == 36
        && text.chars().enumerate().all(|(i, c)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                c == '-'
            } else {
                c.is_ascii_hexdigit()
            }
        });
    if is_uuid {
        return Ok(ScorerSelector::Id(text.to_ascii_lowercase()));
    }
    let (name, version) = match text.rsplit_once('@') {
        Some((name, version)) => {
            let digits = version.strip_prefix('v').unwrap_or(version);
            let number = digits
                .parse::<i64>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| ScorerSelectorError::NotAVersion {
                    version: version.to_owned(),
                })?;
            (name, Some(number))
        }
        None => (text, None),
    };
    if name.is_empty() {
        return Err(ScorerSelectorError::NoName);
    }
    Ok(ScorerSelector::Name {
        name: name.to_owned(),
        version,
    })
}

/// `evalctl completions`.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `evalctl man`.
#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// Write `evalctl.1` and one page per command (`evalctl-plan.1`, …) into DIR.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// Where manifests are.
#[derive(Debug, Clone, Args)]
pub struct ManifestArgs {
    /// Manifest files or directories (searched recursively for *.yaml, *.yml).
    #[arg(value_name = "PATH", default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Also print each manifest problem (found loading, or at plan time: an unknown
    /// project, run, scorer or version) as a GitHub Actions annotation on stderr,
    /// `::error file=…,line=…,col=…::…`, so it shows inline on the pull request.
    #[arg(long)]
    pub github_annotations: bool,
}

/// The long help of `--concurrency`.
const CONCURRENCY_LONG_HELP: &str = "The most requests in flight at once, for the whole run: the \
one cap on concurrency. Within it the client adapts: it starts at 8, doubles while answers stay \
as fast as before and no 429 comes, halves on a 429 (and waits out its Retry-After), and shrinks \
when the service's latency rises to twice its baseline; then it grows back by about one request \
per round trip.";

/// How to reach live state.
#[derive(Debug, Clone, Args)]
pub struct LiveArgs {
    /// Use an in-process sandbox with the built-in demo fixture instead of a
    /// service (no account needed; state is discarded at exit).
    #[arg(long, help_heading = "Sandbox")]
    pub sandbox: bool,
    /// Like --sandbox, keeping the sandbox's state in FILE between runs.
    #[arg(long, value_name = "FILE", help_heading = "Sandbox")]
    pub sandbox_state: Option<PathBuf>,
    /// The most requests in flight at once, for the whole run.
    #[arg(
        long,
        value_name = "N",
        default_value_t = crate::client::config::DEFAULT_CONCURRENCY,
        value_parser = clap::value_parser!(u16).range(1..=256),
        long_help = CONCURRENCY_LONG_HELP
    )]
    pub concurrency: u16,
    /// Connection to the service.
    #[command(flatten)]
    pub connection: ConnectionArgs,
}

/// `evalctl validate`.
#[derive(Debug, Clone, Args)]
pub struct ValidateArgs {
    /// Manifests.
    #[command(flatten)]
    pub manifests: ManifestArgs,
    /// Output format: diagnostics and a summary (text), one JSON document (json), or GitHub Actions annotations (github).
    #[arg(short, long, value_enum, default_value_t = crate::commands::validate::DiagnosticsFormat::Text)]
    pub output: crate::commands::validate::DiagnosticsFormat,
}

/// `evalctl schema`.
#[derive(Debug, Clone, Args)]
pub struct SchemaArgs {
    /// Directory to write the schemas and the reference (REFERENCE.md) into.
    #[arg(long, value_name = "DIR", default_value = "schemas")]
    pub out: PathBuf,
    /// Only check that the files in DIR are up to date (exit 1 when stale).
    #[arg(long)]
    pub check: bool,
}

/// What narrows and shapes a plan.
#[derive(Debug, Clone, Args)]
pub struct PlanShapeArgs {
    /// Only objects at or under this address, as the plan prints it, e.g.
    /// `project[demo].log_stream[production]` (repeatable); only they are read.
    #[arg(long, value_name = "ADDRESS", value_parser = parse_target)]
    pub target: Vec<Target>,
    /// Delete live objects of managed scopes that the manifests do not declare.
    #[arg(long)]
    pub prune: bool,
    /// With --prune, also delete the log streams of a project that manages
    /// them (`prune_log_streams: true`) and the manifests do not declare,
    /// with all their traces; without it, the plan says what it would delete.
    #[arg(long)]
    pub allow_destroy: bool,
    /// Re-send every integration's secrets (they cannot be read back to compare).
    #[arg(long)]
    pub rotate_secrets: bool,
}

/// What a three-way plan fails on (`--fail-on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum FailOn {
    /// A change that this PR makes where live also moved away from the base.
    Conflict,
    /// A change that reverts an out-of-band change (drift).
    Drift,
}

/// The other manifests of a three-way plan.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Three-way plan")]
pub struct ThreeWayArgs {
    /// The base branch's manifests (e.g. a `git worktree` of the target
    /// branch): every change, and every field in it, is attributed as
    /// proposed (this PR), drift (out of band, this apply reverts it),
    /// conflict (both) or pending. One path each (repeatable: `--base a
    /// --base b`); the manifests are the PATH arguments, so
    /// `plan --base base/config config` plans `config` against `base/config`.
    #[arg(long, value_name = "BASE_PATH", num_args = 1)]
    pub base: Vec<PathBuf>,
    /// The manifests as last applied (e.g. the commit the last apply ran
    /// from): where live still holds their value, the base was never applied
    /// (pending), rather than changed out of band (drift). With --base; one
    /// path each (repeatable).
    #[arg(long, value_name = "APPLIED_PATH", num_args = 1, requires = "base")]
    pub applied: Vec<PathBuf>,
    /// Exit 4 when the plan has a change of this attribution (repeatable:
    /// `conflict`, `drift`), for teams that want a human to look. With --base.
    #[arg(long, value_name = "ATTRIBUTION", value_enum, requires = "base")]
    pub fail_on: Vec<FailOn>,
}

/// `evalctl plan`.
#[derive(Debug, Clone, Args)]
pub struct PlanArgs {
    /// Manifests.
    #[command(flatten)]
    pub manifests: ManifestArgs,
    /// Targets, prune, rotation.
    #[command(flatten)]
    pub shape: PlanShapeArgs,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// Save the plan to FILE, for `evalctl apply --plan FILE`. Holds no secrets.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The name of the CI artifact that keeps the saved plan (--out): a markdown
    /// comment that leaves changes out names it as where they all are.
    #[arg(long, value_name = "NAME", requires = "out")]
    pub artifact: Option<String>,
    /// Exit 2 when the plan has changes (0 when none, 1 on error).
    #[arg(long)]
    pub detailed_exitcode: bool,
    /// Base branch, attribution.
    #[command(flatten)]
    pub three_way: ThreeWayArgs,
    /// Live state.
    #[command(flatten)]
    pub live: LiveArgs,
}

/// `evalctl apply`.
#[derive(Debug, Clone, Args)]
pub struct ApplyArgs {
    /// Manifests (not with --plan).
    #[command(flatten)]
    pub manifests: ManifestArgs,
    /// Execute this saved plan instead of planning again; refused when any
    /// object it touches changed since it was made.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Targets, prune, rotation (not with --plan).
    #[command(flatten)]
    pub shape: PlanShapeArgs,
    /// Apply without asking (required when stdin is not a terminal).
    #[arg(long)]
    pub auto_approve: bool,
    /// Apply a plan that deletes or replaces more than 25% of a collection
    /// of at least 8 objects (the sections or widgets of a dashboard, the
    /// dashboards of a log stream, a project's templates of one kind), which
    /// apply otherwise refuses before any write.
    #[arg(long)]
    pub allow_mass_changes: bool,
    /// Output format of the plan and the report.
    #[arg(short, long, value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// Live state.
    #[command(flatten)]
    pub live: LiveArgs,
}

/// `evalctl drift`.
#[derive(Debug, Clone, Args)]
pub struct DriftArgs {
    /// Manifests.
    #[command(flatten)]
    pub manifests: ManifestArgs,
    /// Only objects at or under this address, as the plan prints it (repeatable).
    #[arg(long, value_name = "ADDRESS", value_parser = parse_target)]
    pub target: Vec<Target>,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// Base branch, attribution.
    #[command(flatten)]
    pub three_way: ThreeWayArgs,
    /// Live state.
    #[command(flatten)]
    pub live: LiveArgs,
}

/// `evalctl export`.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// Export only this project (repeatable); without it, every project the
    /// credentials can see, and the caller's integrations.
    #[arg(long = "project", value_name = "NAME")]
    pub projects: Vec<String>,
    /// Directory to write into (created when missing).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// After writing, plan the written files against live state: exit 0 only
    /// when the plan is empty.
    #[arg(long)]
    pub verify: bool,
    /// Overwrite files that exist.
    #[arg(long)]
    pub force: bool,
    /// The schema for the files' `yaml-language-server` line (default: the
    /// relative path of schemas/evalctl-manifest.schema.json in DIR or an
    /// ancestor, when there is one).
    #[arg(long, value_name = "URL")]
    pub schema_url: Option<String>,
    /// Live state.
    #[command(flatten)]
    pub live: LiveArgs,
}

/// Parses a `--target` (the error, with its position, becomes clap's usage error).
fn parse_target(text: &str) -> Result<Target, crate::plan::target::TargetParseError> {
    Target::parse(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn scorers_are_named_by_name_name_at_version_or_id() {
        let name = |name: &str, version| ScorerSelector::Name {
            name: name.to_owned(),
            version,
        };
        assert_eq!(parse_scorer("correctness"), Ok(name("correctness", None)));
        assert_eq!(
            parse_scorer("correctness@3"),
            Ok(name("correctness", Some(3)))
        );
        assert_eq!(parse_scorer("my@team@v2"), Ok(name("my@team", Some(2))));
        assert_eq!(
            parse_scorer("6F1C2D3E-0000-4000-8000-000000000000"),
            Ok(ScorerSelector::Id(
                "6f1c2d3e-0000-4000-8000-000000000000".to_owned()
            ))
        );
        let not_a_version = |version: &str| {
            Err(ScorerSelectorError::NotAVersion {
                version: version.to_owned(),
            })
        };
        assert_eq!(parse_scorer("correctness@latest"), not_a_version("latest"));
        assert_eq!(parse_scorer("correctness@0"), not_a_version("0"));
        assert_eq!(parse_scorer("@3"), Err(ScorerSelectorError::NoName));
    }
}
