//! What can go wrong turning YAML text into documents, and how the parser's errors map to
//! it. Every error keeps the place it is about, so it becomes a `file:line:column` diagnostic.

use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::granit_parser::ErrorKind;
use serde_saphyr::{ExternalMessageSource, MessageFormatter, UserMessageFormatter};
use thiserror::Error;

use super::{Limits, to_span};
use crate::manifest::diagnostic::{Diagnostic, LineIndex, Span};

/// Why a source text could not be turned into documents.
#[derive(Clone, Debug, PartialEq, Error)]
#[non_exhaustive]
pub enum YamlError {
    /// The text is larger than [`Limits::max_file_bytes`]; it was not parsed.
    #[error("file is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// Size of the text in bytes.
        size: usize,
        /// The limit in force.
        limit: usize,
    },
    /// The text is not valid YAML, or uses YAML that manifests do not allow.
    #[error("{message}")]
    Syntax {
        /// The parser's description.
        message: String,
        /// Where the parser stopped.
        at: Option<Span>,
    },
    /// Mappings and sequences nest deeper than [`Limits::max_depth`].
    #[error("nesting is deeper than the limit of {limit} levels")]
    TooDeep {
        /// The limit in force.
        limit: usize,
        /// Where the limit was passed.
        at: Option<Span>,
    },
    /// More nodes than [`Limits::max_nodes`], counting alias expansions.
    #[error("more than {limit} values in one file (counting those aliases expand to)")]
    TooManyNodes {
        /// The limit in force.
        limit: usize,
        /// Where the limit was passed.
        at: Option<Span>,
    },
    /// More documents than [`Limits::max_documents`].
    #[error("more than {limit} documents in one file")]
    TooManyDocuments {
        /// The limit in force.
        limit: usize,
        /// Where the limit was passed.
        at: Option<Span>,
    },
    /// More alias references than [`Limits::max_aliases`].
    #[error("more than {limit} aliases (`*name`) in one file")]
    TooManyAliases {
        /// The limit in force.
        limit: usize,
        /// Where the limit was passed.
        at: Option<Span>,
    },
    /// Aliases expand to more than [`Limits::max_alias_expanded_nodes`].
    #[error("aliases expand to more than {limit} values")]
    AliasExpansionTooLarge {
        /// The limit in force.
        limit: usize,
        /// The alias being expanded when the limit was passed.
        at: Option<Span>,
    },
    /// Another resource bound of the parser was passed (total text, anchors, ...).
    #[error("{what} is over its limit")]
    LimitExceeded {
        /// What was counted, with the count.
        what: String,
        /// Where the limit was passed.
        at: Option<Span>,
    },
    /// A mapping has the same key twice.
    #[error("duplicate key `{key}` (first at line {}, column {})", first.line, first.column)]
    DuplicateKey {
        /// The key.
        key: String,
        /// The second occurrence.
        at: Span,
        /// The first occurrence.
        first: Span,
    },
    /// A mapping key is not a string.
    #[error("mapping keys must be strings, found {kind}")]
    NonStringKey {
        /// What the key is: "an integer", "a boolean", "null", "a sequence", ...
        kind: &'static str,
        /// The key.
        at: Span,
    },
    /// An integer does not fit in 64 bits. The message does not quote it: it may be a
    /// secret (the quoted line masks it then).
    #[error("integer out of range: it does not fit in 64 bits")]
    IntegerOutOfRange {
        /// The integer as written.
        text: String,
        /// The integer.
        at: Span,
    },
    /// The parser could not run (no thread could be started for it), or failed inside.
    #[error("internal error: {0}")]
    Internal(String),
    /// A float that JSON cannot hold (`.inf`, `.nan`, `1e999`). The message does not quote
    /// it: it may be a secret (the quoted line masks it then).
    #[error("number out of range: not finite, or too large for a 64-bit float")]
    NonFiniteNumber {
        /// The number as written.
        text: String,
        /// The number.
        at: Option<Span>,
    },
}

impl YamlError {
    /// Where in the text the problem is, when it has a place.
    #[must_use]
    pub fn span(&self) -> Option<Span> {
        match self {
            YamlError::TooLarge { .. } | YamlError::Internal(_) => None,
            YamlError::Syntax { at, .. }
            | YamlError::TooDeep { at, .. }
            | YamlError::TooManyNodes { at, .. }
            | YamlError::TooManyDocuments { at, .. }
            | YamlError::TooManyAliases { at, .. }
            | YamlError::AliasExpansionTooLarge { at, .. }
            | YamlError::LimitExceeded { at, .. }
            | YamlError::NonFiniteNumber { at, .. } => *at,
            YamlError::DuplicateKey { at, .. }
            | YamlError::NonStringKey { at, .. }
            | YamlError::IntegerOutOfRange { at, .. } => Some(*at),
        }
    }

    /// What the user can do about it.
    #[must_use]
    pub fn help(&self) -> Option<String> {
        let text = match self {
            YamlError::TooLarge { .. } => "split the manifests over several smaller files",
            YamlError::Syntax { .. } => return None,
            YamlError::Internal(_) => "this is a bug in evalctl; please report it",
            YamlError::TooDeep { .. } => {
                "manifests need only a few levels; look for runaway indentation or unclosed brackets"
            }
            YamlError::TooManyNodes { .. } => {
                "split the manifests over several files, or use fewer aliases"
            }
            YamlError::TooManyDocuments { .. } => {
                "split the documents (separated by `---`) over several files"
            }
            YamlError::TooManyAliases { .. } | YamlError::LimitExceeded { .. } => {
                "split the manifests over several files"
            }
            YamlError::AliasExpansionTooLarge { .. } => {
                "aliases of anchors that hold aliases multiply; write the repeated values out instead"
            }
            YamlError::DuplicateKey { .. } => "remove or rename one of the two entries",
            YamlError::NonStringKey { kind, .. } => {
                if matches!(*kind, "a sequence" | "a mapping") {
                    "use a plain name as the key"
                } else {
                    "quote the key to make it a string, e.g. `\"1\": ...`"
                }
            }
            YamlError::IntegerOutOfRange { .. } => {
                "integers must fit in 64 bits; quote the value if it is an identifier"
            }
            YamlError::NonFiniteNumber { .. } => {
                "write a finite number, or quote the value to make it a string"
            }
        };
        Some(text.to_owned())
    }

    /// This error as a diagnostic about `file`.
    #[must_use]
    pub fn to_diagnostic(&self, file: &str) -> Diagnostic {
        Diagnostic::error(file, self.span(), self.to_string()).with_help_opt(self.help())
    }
}

/// Maps a parser error to ours, keeping its location.
pub(super) fn convert_error(err: &serde_saphyr::Error, source: &str, limits: &Limits) -> YamlError {
    let at = err
        .location()
        .and_then(|l| to_span(&l, &LineIndex::new(source)));
    let mut inner = err;
    while let serde_saphyr::Error::AliasError { error, .. }
    | serde_saphyr::Error::WithSnippet { error, .. } = inner
    {
        inner = error;
    }
    let depth = limits.depth();
    match inner {
        serde_saphyr::Error::Budget { breach, .. } => match breach {
            BudgetBreach::Depth { .. } => YamlError::TooDeep { limit: depth, at },
            BudgetBreach::Nodes { .. } | BudgetBreach::Events { .. } => YamlError::TooManyNodes {
                limit: limits.max_nodes,
                at,
            },
            BudgetBreach::Documents { .. } => YamlError::TooManyDocuments {
                limit: limits.max_documents,
                at,
            },
            BudgetBreach::Aliases { .. } => YamlError::TooManyAliases {
                limit: limits.max_aliases,
                at,
            },
            other => YamlError::LimitExceeded {
                what: breach_name(other),
                at,
            },
        },
        serde_saphyr::Error::AliasReplayLimitExceeded { .. }
        | serde_saphyr::Error::AliasReplayCounterOverflow { .. }
        | serde_saphyr::Error::AliasExpansionLimitExceeded { .. } => {
            YamlError::AliasExpansionTooLarge {
                limit: limits.max_alias_expanded_nodes,
                at,
            }
        }
        serde_saphyr::Error::AliasReplayStackDepthExceeded { .. } => {
            YamlError::TooDeep { limit: depth, at }
        }
        serde_saphyr::Error::ExternalMessage { source: parser, .. }
            if matches!(
                parser.as_ref(),
                ExternalMessageSource::Parser(scan)
                    if matches!(scan.kind(), ErrorKind::RecursionLimitExceeded)
            ) =>
        {
            YamlError::TooDeep { limit: depth, at }
        }
        serde_saphyr::Error::NonFiniteFloat { value, .. } => YamlError::NonFiniteNumber {
            text: value.clone(),
            at,
        },
        other => {
            let message = UserMessageFormatter.format_message(other).into_owned();
            // The parser reports a quoted string left open where it gave up on it, often
            // lines later (or past the end): point at the quote that opened it.
            let opened = message
                .contains("quoted scalar")
                .then(|| unclosed_quote(source, at.map_or(source.len(), |a| a.offset)))
                .flatten();
            match (opened, at) {
                (Some(offset), Some(stopped)) => YamlError::Syntax {
                    message: format!(
                        "quoted string not closed: the parser read on to line {} ({message})",
                        stopped.line
                    ),
                    at: Some(LineIndex::new(source).span(offset, 1)),
                },
                _ => YamlError::Syntax { message, at },
            }
        }
    }
}

/// Lines looked back at for the quote that opened a string left open.
const QUOTE_LOOKBACK_LINES: usize = 200;

/// The byte offset of the quote that opens a string not closed on its line, on the
/// nearest line at or before `before` that has one: a `"` or `'` where a value starts
/// (after `key: `, `- `, `[`, `{` or `,`, or at the start of a line).
fn unclosed_quote(source: &str, before: usize) -> Option<usize> {
    let before = crate::manifest::diagnostic::char_floor(source, before.min(source.len()));
    let head = &source[..before];
    let mut end = head.len();
    for _ in 0..QUOTE_LOOKBACK_LINES {
        let start = head[..end].rfind(['\n', '\r']).map_or(0, |i| i + 1);
        if let Some(at) = open_quote_in(&head[start..end]) {
            return Some(start + at);
        }
        if start == 0 {
            return None;
        }
        end = start - 1;
    }
    None
}

/// Where a quoted value that does not close on `line` opens, if one does.
fn open_quote_in(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut value_starts = true;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'"' | b'\'' if value_starts => {
                let mut j = i + 1;
                loop {
                    match bytes.get(j) {
                        None => return Some(i),
                        Some(b'\\') if b == b'"' => j += 2,
                        Some(&c) if c == b && b == b'\'' && bytes.get(j + 1) == Some(&b'\'') => {
                            j += 2;
                        }
                        Some(&c) if c == b => break,
                        Some(_) => j += 1,
                    }
                }
                i = j + 1;
                value_starts = false;
            }
            b'#' if i == 0 || bytes[i - 1] == b' ' || bytes[i - 1] == b'\t' => return None,
            b' ' | b'\t' => i += 1,
            b'[' | b'{' | b',' => {
                value_starts = true;
                i += 1;
            }
            b'-' if value_starts && matches!(bytes.get(i + 1), Some(b' ') | None) => i += 1,
            b':' if matches!(bytes.get(i + 1), Some(b' ' | b'\t') | None) => {
                value_starts = true;
                i += 1;
            }
            _ => {
                value_starts = false;
                i += 1;
            }
        }
    }
    None
}

fn breach_name(breach: &BudgetBreach) -> String {
    match breach {
        BudgetBreach::ScalarBytes { total_scalar_bytes } => {
            format!("the total text of all values ({total_scalar_bytes} bytes)")
        }
        BudgetBreach::Anchors { anchors } => format!("the number of anchors ({anchors})"),
        BudgetBreach::RecordedAnchorEvents {
            recorded_anchor_events,
        } => format!("the size of anchored values ({recorded_anchor_events} events)"),
        BudgetBreach::RecordedAnchorBytes {
            recorded_anchor_bytes,
        } => format!("the text of anchored values ({recorded_anchor_bytes} bytes)"),
        BudgetBreach::MergeKeys { merge_keys } => {
            format!("the number of merge keys ({merge_keys})")
        }
        other => format!("a parser budget ({other:?})"),
    }
}
