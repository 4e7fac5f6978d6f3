//! Pointing at a field of a loaded document after loading, for problems found later (an
//! unknown scorer or project at plan time): [`locate`] takes the document's [`Origin`]
//! and a [`FieldPath`] within it and returns the field's [`Location`]: file, line,
//! column and the source line, ready to render as a rustc-like diagnostic or a GitHub
//! annotation.
//!
//! Nothing is kept from loading for this: a loaded set holds typed specs and origins
//! only. `locate` reads the document's file again and parses it, on the error path
//! alone, so a plan that finds nothing wrong costs no memory for it. The file is read as
//! it is now; when it changed since loading so that the document is gone, there is no
//! location (`None`), and the caller names the origin instead.
//!
//! ```
//! # use evalctl::manifest::locate::FieldPath;
//! let path: FieldPath = "log_streams[3].metric_settings.scorers[1].name".parse().unwrap();
//! assert_eq!(path.to_pointer(), "/log_streams/3/metric_settings/scorers/1/name");
//! let built = FieldPath::root()
//!     .key("log_streams").index(3).key("metric_settings").key("scorers").index(1).key("name");
//! assert_eq!(built, path);
//! assert_eq!(FieldPath::root().key("headers").key("X.Team").to_string(), r#"headers["X.Team"]"#);
//! ```

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use thiserror::Error;

use super::check::{self, Input};
use super::diagnostic::{Diagnostic, LineIndex, Severity, Span, char_floor, lines};
use super::files::ManifestFile;
use super::mask;
use super::set::Origin;
use super::yaml::{Limits, escape_token};

/// A path to a field within one document, from the document's top (where `kind` is):
/// mapping keys and list indices, as the manifest's YAML nests them.
///
/// Written (by [`fmt::Display`], read by [`FromStr`]) the way diagnostics name fields:
/// keys joined by `.`, indices in brackets, e.g.
/// `log_streams[3].metric_settings.scorers[1].name`. A key that is empty or holds
/// anything but ASCII letters, digits, `_` and `-` is written as a JSON string in
/// brackets: `headers["X.Team"]`. The empty path is the document itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath {
    segments: Vec<Segment>,
}

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// A mapping key.
    Key(String),
    /// A list index, from 0.
    Index(usize),
}

impl FieldPath {
    /// The document itself.
    #[must_use]
    pub fn root() -> Self {
        FieldPath::default()
    }

    /// This path, then the mapping key `key`.
    #[must_use]
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.segments.push(Segment::Key(key.into()));
        self
    }

    /// This path, then list index `index` (from 0).
    #[must_use]
    pub fn index(mut self, index: usize) -> Self {
        self.segments.push(Segment::Index(index));
        self
    }

    /// The steps, from the document's top.
    #[must_use]
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The same path as a JSON pointer (`/log_streams/3/name`; `""` for the document).
    #[must_use]
    pub fn to_pointer(&self) -> String {
        let mut out = String::new();
        for segment in &self.segments {
            out.push('/');
            match segment {
                Segment::Key(key) => out.push_str(&escape_token(key)),
                Segment::Index(index) => out.push_str(&index.to_string()),
            }
        }
        out
    }
}

/// Whether `key` is written bare in a [`FieldPath`].
fn bare(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, segment) in self.segments.iter().enumerate() {
            match segment {
                Segment::Key(key) if bare(key) => {
                    if n > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                Segment::Key(key) => {
                    let quoted = serde_json::to_string(key).map_err(|_| fmt::Error)?;
                    write!(f, "[{quoted}]")?;
                }
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// Why a text is not a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("not a field path at character {position}: {reason}")]
pub struct FieldPathError {
    /// Where the text stops making sense (0-based, in characters).
    pub position: usize,
    /// What was expected there.
    pub reason: &'static str,
}

impl FromStr for FieldPath {
    type Err = FieldPathError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let chars: Vec<char> = text.chars().collect();
        let error = |position, reason| FieldPathError { position, reason };
        let mut path = FieldPath::root();
        let mut at = 0;
        while at < chars.len() {
            match chars[at] {
                '[' => {
                    let (segment, next) = bracketed(&chars, at + 1)?;
                    path.segments.push(segment);
                    at = next;
                }
                '.' if at > 0 => {
                    let (key, next) = bare_key(&chars, at + 1);
                    if key.is_empty() {
                        return Err(error(at + 1, "a key after `.`"));
                    }
                    path.segments.push(Segment::Key(key));
                    at = next;
                }
                _ if at == 0 => {
                    let (key, next) = bare_key(&chars, 0);
                    if key.is_empty() {
                        return Err(error(0, "a key or `[`"));
                    }
                    path.segments.push(Segment::Key(key));
                    at = next;
                }
                _ => return Err(error(at, "`.` or `[`")),
            }
        }
        Ok(path)
    }
}

/// The bare key starting at `from`, and where it ends.
fn bare_key(chars: &[char], from: usize) -> (String, usize) {
    let end = chars[from..]
        .iter()
        .position(|&c| matches!(c, '.' | '[' | ']' | '"'))
        .map_or(chars.len(), |n| from + n);
    (chars[from..end].iter().collect(), end)
}

/// The index or quoted key after a `[` at `from - 1`, and where it ends (after the `]`).
fn bracketed(chars: &[char], from: usize) -> Result<(Segment, usize), FieldPathError> {
    let error = |position, reason| FieldPathError { position, reason };
    if chars.get(from) == Some(&'"') {
        // A JSON string: find its closing quote, skipping escapes.
        let mut at = from + 1;
        while at < chars.len() && chars[at] != '"' {
            at += if chars[at] == '\\' { 2 } else { 1 };
        }
        if at >= chars.len() {
            return Err(error(from, "a closing `\"`"));
        }
        let literal: String = chars[from..=at].iter().collect();
        let key: String =
            serde_json::from_str(&literal).map_err(|_| error(from, "a JSON string"))?;
        if chars.get(at + 1) != Some(&']') {
            return Err(error(at + 1, "`]`"));
        }
        return Ok((Segment::Key(key), at + 2));
    }
    let end = chars[from..]
        .iter()
        .position(|&c| c == ']')
        .map(|n| from + n)
        .ok_or_else(|| error(from, "`]`"))?;
    let digits: String = chars[from..end].iter().collect();
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(error(from, "an index or a quoted key"));
    }
    let index = digits
        .parse()
        .map_err(|_| error(from, "an index that fits"))?;
    Ok((Segment::Index(index), end + 1))
}

/// Where a field is: what [`locate`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file, as the document's [`Origin`] names it.
    pub file: PathBuf,
    /// The field's value in the file (line, column in characters, byte offset, length). For a
    /// path that goes further than the document does, the deepest value it reaches.
    pub span: Span,
    /// Whether the whole path was found (false: `span` is its nearest existing ancestor,
    /// at worst the document's first line).
    pub exact: bool,
    /// The field's line, literal secrets masked, cut to at most [`WINDOW`] characters each
    /// side of the field.
    pub excerpt: String,
    /// Where `excerpt` starts in the masked text, in bytes.
    excerpt_offset: usize,
    /// `span` in the masked text (a masked value before it may have shrunk or grown).
    shown: Span,
}

/// Characters of the field's line kept each side of the field: more than a rendered
/// excerpt shows, so it knows when to mark a cut.
pub const WINDOW: usize = 320;

impl Location {
    /// A diagnostic of `severity` at this location: `file:line:column` and `message`
    /// (add advice with [`Diagnostic::with_help`]).
    #[must_use]
    pub fn diagnostic(&self, severity: Severity, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(
            severity,
            self.file.display().to_string(),
            Some(self.span),
            message,
        )
    }

    /// `diagnostic` rendered rustc-like, quoting this location's line (see
    /// [`Diagnostic::render`]); `diagnostic` should be one [`Location::diagnostic`] made.
    #[must_use]
    pub fn render(&self, diagnostic: &Diagnostic, color: bool) -> String {
        // Quoted only at this location's span: the excerpt holds its line alone.
        let rebased = diagnostic
            .span
            .filter(|span| *span == self.span)
            .and_then(|_| {
                let offset = self.shown.offset.checked_sub(self.excerpt_offset)?;
                (offset <= self.excerpt.len()).then_some(Span {
                    offset,
                    ..self.shown
                })
            });
        diagnostic.render_quoting(rebased.map(|place| (self.excerpt.as_str(), place)), color)
    }
}

/// Where the field at `path` of the document loaded from `origin` is, read from the file
/// as it is now. `None` when the file cannot be read or parsed, or holds no document
/// starting at `origin`'s line any more.
#[must_use]
pub fn locate(origin: &Origin, path: &FieldPath) -> Option<Location> {
    let file = ManifestFile::read(&origin.file, &Limits::default()).ok()?;
    let document = file
        .documents()
        .iter()
        .find(|d| d.root().value.line as usize == origin.line)?;
    let pointer = path.to_pointer();
    let exact = document.span(&pointer).is_some();
    let span = document.locate(&pointer).value;
    // Quote the line as loading would: literal secrets masked.
    let index = LineIndex::new(&file.text);
    let input = Input {
        file: &file.name,
        lines: &index,
        document,
    };
    let hidden = check::check(&input, document.value.clone(), &|_| None).hidden;
    let masked = mask::mask_spans(&file.text, &hidden);
    let shown = masked.shown(span);
    let (excerpt_offset, excerpt) = window(masked.text(), shown);
    Some(Location {
        file: origin.file.clone(),
        span,
        exact,
        excerpt,
        excerpt_offset,
        shown,
    })
}

/// The line of `span` in `text`, cut to [`WINDOW`] characters each side of it, with the
/// byte offset it starts at.
fn window(text: &str, span: Span) -> (usize, String) {
    let offset = char_floor(text, span.offset);
    let (line_start, line) = lines(text)
        .take_while(|&(start, _)| start <= offset)
        .last()
        .unwrap_or((0, ""));
    let within = offset.saturating_sub(line_start).min(line.len());
    let before = line[..within]
        .char_indices()
        .rev()
        .nth(WINDOW.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    let after = line[within..]
        .char_indices()
        .nth(WINDOW + span.len)
        .map_or(line.len(), |(i, _)| within + i);
    (line_start + before, line[before..after].to_owned())
}

#[cfg(test)]
mod tests;
