//! Diagnostics: the one shape every manifest problem takes, and its renderer.
//!
//! A [`Diagnostic`] names a file, optionally a [`Span`] in it (line and column, 1-based, the
//! column counted in characters; a byte offset and length), a message and an optional help
//! line. Loading ([`super::files`], [`super::yaml`]), schema validation and semantic checks all
//! report through it, so `evalctl validate` can sort them ([`sort`]), print them the way rustc
//! does ([`Diagnostic::render`]), list them as JSON (the type is `Serialize`) or as GitHub
//! Actions annotations ([`github`]).
//!
//! The text is drawn by [`annotate_snippets`], the renderer rustc uses (gutter, quoted line,
//! carets under wide and combining text, long lines cut around the span, help lines). What
//! stays here is what it cannot know: the line quoted is the file's masked copy
//! ([`super::mask`]), cut to a window around the span, so the `file:line:column` header is
//! set to the place in the file as written; and user text (messages, file names, source
//! lines) has every control character and bidirectional override escaped before it is
//! handed over (the renderer replaces only some of them), so a manifest cannot drive the
//! terminal. Rendering never decides about colour: the caller says whether to colour, and
//! this module picks the renderer's plain or styled mode accordingly.

use std::cmp::Ordering;
use std::ops::Range;

use annotate_snippets::{AnnotationKind, Level, Origin, Renderer, Snippet};
use serde::Serialize;

pub mod github;
mod lines;

pub(crate) use lines::char_floor;
pub use lines::{LineIndex, lines};
use lines::{line_breaks, saturate, text_start};

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The manifests cannot be used as they are.
    Error,
    /// The manifests can be used, but something is probably not what the author meant.
    Warning,
}

impl Severity {
    /// The word rustc-style output starts the diagnostic with.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// A place in a source text.
///
/// `line` and `column` are 1-based and the column counts characters (Unicode scalar values),
/// as editors show them. `offset` and `len` are in bytes of the UTF-8 text: `offset` is where
/// the spanned token starts, `len` how long it is (0 for a position between tokens, such as
/// the start of a block mapping).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Span {
    /// 1-based line number.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// 0-based byte offset of the start in the source text (after a UTF-8 byte order mark,
    /// which the loader drops: line and column are the same either way).
    pub offset: usize,
    /// Length of the spanned text in bytes (may be 0, and may run over several lines).
    pub len: usize,
}

impl Span {
    /// The position of byte `offset` in `source`, spanning `len` bytes.
    ///
    /// An offset past the end, or inside a multi-byte character, is moved back to the nearest
    /// character boundary, so any input gives a valid span.
    #[must_use]
    pub fn from_offset(source: &str, offset: usize, len: usize) -> Span {
        let offset = char_floor(source, offset);
        let before = &source[..offset];
        // Between the two bytes of a `\r\n` the line has not ended yet.
        let ended = match before.strip_suffix('\r') {
            Some(rest) if source[offset..].starts_with('\n') => rest,
            _ => before,
        };
        let line_start = memchr::memrchr2(b'\n', b'\r', ended.as_bytes())
            .map_or_else(|| text_start(before), |i| i + 1);
        let line = line_breaks(ended) + 1;
        let column = before[line_start..].chars().count() + 1;
        Span {
            line: saturate(line),
            column: saturate(column),
            offset,
            len,
        }
    }

    /// The span of `len_chars` characters starting at `line`:`column` (1-based, characters)
    /// in `source`, with byte offset and length computed from the text.
    ///
    /// A line or column past the end is clamped to the end of the text or of the line.
    #[must_use]
    pub fn from_line_column(source: &str, line: u32, column: u32, len_chars: usize) -> Span {
        let column = column.max(1);
        // `lines` yields at least one line, so the last one reached always exists.
        let (index, (line_start, line_text)) = lines(source)
            .take(line.max(1) as usize)
            .enumerate()
            .last()
            .unwrap_or((0, (0, "")));
        let line = saturate(index + 1);
        let start = char_byte_index(line_text, column as usize - 1);
        let column = saturate(line_text[..start].chars().count() + 1);
        let len = line_text[start..]
            .char_indices()
            .nth(len_chars)
            .map_or(line_text.len() - start, |(i, _)| i);
        Span {
            line,
            column,
            offset: line_start + start,
            len,
        }
    }
}

/// One problem found in the manifests.
///
/// Construct with [`Diagnostic::error`] or [`Diagnostic::warning`], add advice with
/// [`Diagnostic::with_help`]. The JSON form has the fields `severity`, `file`, then (when the
/// problem has a place) `line`, `column`, `offset`, `len`, then `message` and `help` (omitted
/// when there is none).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The file, as the user named it (relative paths stay relative).
    pub file: String,
    /// Where in the file, when the problem has a place (a missing file has none).
    #[serde(flatten)]
    pub span: Option<Span>,
    /// What is wrong, in one line, without a trailing period.
    pub message: String,
    /// What to do about it, e.g. "did you mean `scorers`?".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<String>,
    /// For the warning that a write-only secret's variable is not set: the variable.
    /// Only `apply` needs it; `plan` and `drift` say so once for all of them instead
    /// of showing each.
    #[serde(skip)]
    pub unset_secret: Option<String>,
}

impl Diagnostic {
    /// An error in `file` at `span`.
    #[must_use]
    pub fn error(file: impl Into<String>, span: Option<Span>, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, file, span, message)
    }

    /// A warning in `file` at `span`.
    #[must_use]
    pub fn warning(
        file: impl Into<String>,
        span: Option<Span>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Severity::Warning, file, span, message)
    }

    /// A diagnostic of any severity.
    #[must_use]
    pub fn new(
        severity: Severity,
        file: impl Into<String>,
        span: Option<Span>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity,
            file: file.into(),
            span,
            message: message.into(),
            help: None,
            unset_secret: None,
        }
    }

    /// The same diagnostic, marked as the warning that the write-only secret of
    /// variable `name` is not set.
    #[must_use]
    pub fn with_unset_secret(mut self, name: impl Into<String>) -> Self {
        self.unset_secret = Some(name.into());
        self
    }

    /// The same diagnostic with a help line.
    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// With `help`, when there is one.
    #[must_use]
    pub fn with_help_opt(mut self, help: Option<impl Into<String>>) -> Self {
        if let Some(help) = help {
            self.help = Some(help.into());
        }
        self
    }

    /// Whether this is an error (as opposed to a warning).
    #[must_use]
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The rustc-like text of this diagnostic, ending in a newline.
    ///
    /// `source` is the text of [`Diagnostic::file`] when the caller has it; with it the
    /// offending line is shown and underlined, without it only `file:line:column` is. With
    /// `color` the text carries ANSI escape codes (the caller decides, e.g. from
    /// `anstream`'s detection; nothing here looks at the terminal).
    ///
    /// ```text
    /// error: sample_rate must be between 0 and 1, got 1.5
    ///   --> team-a/project.yaml:12:24
    ///    |
    /// 12 |         - sample_rate: 1.5
    ///    |                        ^^^
    ///    |
    ///    = help: ...
    /// ```
    #[must_use]
    pub fn render(&self, source: Option<&str>, color: bool) -> String {
        self.render_quoting(source.zip(self.span), color)
    }

    /// As [`Diagnostic::render`], quoting the line at `place` in `text`, a copy of the
    /// file that may differ from it (literal secrets masked: see
    /// [`super::mask::Masked::shown`]); the position printed is still the span's.
    #[must_use]
    pub fn render_quoting(&self, quote: Option<(&str, Span)>, color: bool) -> String {
        let renderer = if color {
            Renderer::styled()
        } else {
            Renderer::plain()
        };
        let level = match self.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        let file = sanitize(&self.file);
        let help = self.help.as_deref().map(sanitize);
        let quoted = self
            .span
            .zip(quote)
            .map(|(span, (text, place))| (span, Quoted::new(text, place)));
        let title = level.primary_title(sanitize(&self.message));
        let mut group = match (&quoted, self.span) {
            (Some((span, quoted)), _) => title.element(
                Snippet::source(quoted.line.as_str())
                    .path(file.as_str())
                    .line_start(span.line as usize)
                    .annotation(AnnotationKind::Primary.span(quoted.carets.clone())),
            ),
            (None, Some(span)) => title.element(
                Origin::path(file.as_str())
                    .line(span.line as usize)
                    .char_column(span.column as usize),
            ),
            (None, None) => title.element(Origin::path(file.as_str())),
        };
        if let Some(help) = &help {
            group = group.element(Level::HELP.message(help.as_str()));
        }
        let mut out = renderer.render(&[group]);
        if let Some((span, quoted)) = &quoted {
            out = quoted.with_column(out, *span);
        }
        out.push('\n');
        out
    }
}

/// Renders every diagnostic, each followed by a blank line, quoting the line `quote`
/// gives for it: a text and the diagnostic's place in it (return `None` when the file's
/// text is not at hand). See [`Diagnostic::render_quoting`].
#[must_use]
pub fn render_all<'a>(
    diagnostics: &[Diagnostic],
    quote: impl Fn(&Diagnostic) -> Option<(&'a str, Span)>,
    color: bool,
) -> String {
    let mut out = String::new();
    for diagnostic in diagnostics {
        out.push_str(&diagnostic.render_quoting(quote(diagnostic), color));
        out.push('\n');
    }
    out
}

/// Orders diagnostics deterministically: by file, then position (diagnostics without one
/// first), then severity (errors first), then message. Exact duplicates are removed.
pub fn sort(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.sort_by(compare);
    diagnostics.dedup();
}

/// The order [`sort`] uses.
#[must_use]
pub fn compare(a: &Diagnostic, b: &Diagnostic) -> Ordering {
    let position = |d: &Diagnostic| d.span.map(|s| (s.line, s.column, s.offset));
    a.file
        .cmp(&b.file)
        .then_with(|| position(a).cmp(&position(b)))
        .then_with(|| a.severity.cmp(&b.severity))
        .then_with(|| a.message.cmp(&b.message))
        .then_with(|| a.help.cmp(&b.help))
        .then_with(|| a.span.map(|s| s.len).cmp(&b.span.map(|s| s.len)))
}

/// Characters of the offending line handed to the renderer before the span (and twice as
/// many from its start): more than the renderer shows of a line
/// ([`annotate_snippets::renderer::DEFAULT_TERM_WIDTH`], 140 columns with the gutter), so
/// it still cuts the line around the span (with `...`) as it would the whole line, while
/// quoting thousands of problems of one huge line costs no more than the window each.
const QUOTE_WINDOW: usize = 160;

/// The offending line as the renderer gets it: a window of the line around the span, with
/// control characters and bidirectional overrides escaped, and the span's bytes in it.
struct Quoted {
    /// The line (or the window of it), unsafe characters escaped (a tab is left to the
    /// renderer, which shows it as four spaces).
    line: String,
    /// The span in `line`: at most to its end (a span over several lines is underlined
    /// on its first), empty for a position between characters.
    carets: Range<usize>,
    /// The column the renderer counts for the span in `line` (1-based, characters).
    column: usize,
}

impl Quoted {
    /// The line of `text` holding `place`, cut to [`QUOTE_WINDOW`] characters before it
    /// and twice as many from it.
    ///
    /// The line is found from the place's byte offset, looking no further than the
    /// window, so quoting thousands of problems of one huge file costs no more than the file.
    fn new(text: &str, place: Span) -> Quoted {
        let offset = char_floor(text, place.offset);
        let text_begins = text_start(text).min(offset);
        let on_line = |&(_, c): &(usize, char)| c != '\n' && c != '\r';
        let from = text[text_begins..offset]
            .char_indices()
            .rev()
            .take_while(on_line)
            .take(QUOTE_WINDOW)
            .last()
            .map_or(offset, |(i, _)| text_begins + i);
        let to = text[offset..]
            .char_indices()
            .take_while(on_line)
            .take(2 * QUOTE_WINDOW)
            .last()
            .map_or(offset, |(i, c)| offset + i + c.len_utf8());
        let end = char_floor(text, offset.saturating_add(place.len).min(to));
        let mut line = String::with_capacity(to - from);
        let mut carets = 0..0;
        let mut column = 1;
        for (i, c) in text[from..to].char_indices() {
            if from + i == offset {
                carets.start = line.len();
                column = line.chars().count() + 1;
            }
            if from + i == end {
                carets.end = line.len();
            }
            if c != '\t' && is_unsafe(c) {
                line.extend(c.escape_default());
            } else {
                line.push(c);
            }
        }
        if offset == to {
            carets.start = line.len();
            column = line.chars().count() + 1;
        }
        if end == to {
            carets.end = line.len();
        }
        Quoted {
            line,
            carets,
            column,
        }
    }

    /// `rendered` with the column of its `file:line:column` header set to `span`'s. The
    /// renderer counts the column in the quoted text, which is not the file as written
    /// when the window leaves the start of the line out or a masked value before the span
    /// is shorter or longer than the secret it hides.
    fn with_column(&self, rendered: String, span: Span) -> String {
        if self.column == span.column as usize {
            return rendered;
        }
        // The header is the second line (the message is one line: its breaks are escaped).
        let header_end = rendered
            .match_indices('\n')
            .nth(1)
            .map_or(rendered.len(), |(i, _)| i);
        let shown = format!(":{}:{}", span.line, self.column);
        match rendered[..header_end].strip_suffix(shown.as_str()) {
            Some(before) => format!(
                "{before}:{}:{}{}",
                span.line,
                span.column,
                &rendered[header_end..]
            ),
            None => rendered,
        }
    }
}

/// The byte index of the `n`th character of `text` (0-based), or its length when it has
/// fewer characters.
fn char_byte_index(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
}

/// Whether `c` is shown escaped: a control character (it could move the cursor or colour
/// the terminal) or a bidirectional override or isolate (it could reorder what is shown,
/// as in "Trojan Source").
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// User text with every unsafe character ([`is_unsafe`]) escaped.
fn sanitize(text: &str) -> String {
    if text.chars().any(is_unsafe) {
        text.chars()
            .map(|c| {
                if is_unsafe(c) {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect()
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "project: demo\nlog_streams:\n  - name: main\n    metric_settings:\n      scorers:\n        - name: correctness\n          sample_rate: 1.5\n";

    fn sample() -> Diagnostic {
        let span = Span::from_line_column(SOURCE, 7, 24, 3);
        Diagnostic::error(
            "team-a/project.yaml",
            Some(span),
            "sample_rate must be between 0 and 1, got 1.5",
        )
        .with_help("use a fraction such as 0.5")
    }

    #[test]
    fn renders_like_rustc() {
        insta::assert_snapshot!(sample().render(Some(SOURCE), false), @r"
        error: sample_rate must be between 0 and 1, got 1.5
         --> team-a/project.yaml:7:24
          |
        7 |           sample_rate: 1.5
          |                        ^^^
          |
          = help: use a fraction such as 0.5
        ");
    }

    #[test]
    fn renders_wide_gutter_tabs_and_multibyte() {
        let mut source = String::new();
        for _ in 0..11 {
            source.push_str("# filler\n");
        }
        source.push_str("\tnäme: \"ü\x1b[31m\"\n");
        let span = Span::from_line_column(&source, 12, 8, 8);
        let diagnostic = Diagnostic::warning("a.yaml", Some(span), "odd \u{1b}[2J value");
        insta::assert_snapshot!(diagnostic.render(Some(&source), false), @r#"
        warning: odd \u{1b}[2J value
          --> a.yaml:12:8
           |
        12 |     näme: "ü\u{1b}[31m"
           |           ^^^^^^^^^^^^^
        "#);
    }

    /// Carets stand under the span as a terminal shows it: wide characters take two
    /// columns, combining marks none; bidirectional overrides are escaped.
    #[test]
    fn renders_wide_and_combining_characters_and_bidi_overrides() {
        let source = "name: \"品質 e\u{301}\", colour: x\u{202E}y\n";
        let span = Span::from_offset(source, source.find("colour").unwrap_or(0), 6);
        let diagnostic = Diagnostic::error("a.yaml", Some(span), "bad \u{202E}key");
        assert_eq!(
            diagnostic.render(Some(source), false),
            "error: bad \\u{202e}key\n --> a.yaml:1:16\n  |\n1 | name: \"品質 e\u{301}\", colour: x\\u{202e}y\n  |                 ^^^^^^\n"
        );
        // A C1 control (U+009B, a one-byte CSI to some terminals) is escaped too: the
        // renderer would pass it through.
        let c1 = "k: \u{9b}31m\n";
        let span = Span::from_offset(c1, 3, 2);
        let out = Diagnostic::error("c.yaml", Some(span), "x\u{9b}").render(Some(c1), false);
        assert!(!out.contains('\u{9b}'), "{out:?}");
        assert!(out.contains("1 | k: \\u{9b}31m\n  |    ^^^^^^\n"), "{out}");
        let emoji = "- 🚀🚀: 1\n";
        let span = Span::from_offset(emoji, 2, "🚀🚀".len());
        let out = Diagnostic::error("b.yaml", Some(span), "x").render(Some(emoji), false);
        assert!(out.contains("1 | - 🚀🚀: 1\n  |   ^^^^\n"), "{out}");
    }

    #[test]
    fn renders_without_source_or_position() {
        insta::assert_snapshot!(sample().render(None, false), @r"
        error: sample_rate must be between 0 and 1, got 1.5
        --> team-a/project.yaml:7:24
         = help: use a fraction such as 0.5
        ");
        let missing = Diagnostic::error("nowhere", None, "path `nowhere` does not exist")
            .with_help("check the spelling");
        insta::assert_snapshot!(missing.render(Some(""), false), @r"
        error: path `nowhere` does not exist
        --> nowhere
         = help: check the spelling
        ");
    }

    /// The hard case of every part at once, on the last line of a file without a final
    /// newline: a tab, wide (CJK, emoji) and combining characters, and a literal secret
    /// before the span, masked in the quoted line (`********`, longer than the secret
    /// here). The header still gives the place in the file as written, and the carets stand
    /// under the span as a terminal shows the masked line.
    #[test]
    fn renders_wide_text_tabs_and_a_masked_value_before_the_end_of_a_file() {
        let source = "name: demo\nh: {token: sk-9x, 名前: \"品質 e\u{301}\"}\t🚀: ok";
        let secret = source.find("sk-9x").unwrap();
        let masked =
            crate::manifest::mask::mask_spans(source, &[Span::from_offset(source, secret, 5)]);
        assert!(masked.text().contains("{token: ********, "));
        let render_in = |span: Span, message: &str, color: bool| {
            Diagnostic::error("a.yaml", Some(span), message)
                .with_help("a help line")
                .render_quoting(Some((masked.text(), masked.shown(span))), color)
        };
        let render = |span: Span, message: &str| render_in(span, message, false);
        let rocket = Span::from_offset(source, source.find('🚀').unwrap(), '🚀'.len_utf8());
        assert_eq!((rocket.line, rocket.column), (2, 32));
        let end = Span::from_offset(source, source.len(), 0);
        assert_eq!((end.line, end.column), (2, 37));
        let both = format!(
            "{}{}",
            render(rocket, "a wide key"),
            render(end, "unexpected end of file")
        );
        assert!(!both.contains("sk-9x"), "{both}");
        // In colour the header's column is the file's too.
        let coloured = render_in(end, "unexpected end of file", true);
        assert!(coloured.contains('\x1b'));
        assert_eq!(
            anstream::adapter::strip_str(&coloured).to_string(),
            render(end, "unexpected end of file")
        );
        insta::assert_snapshot!(both, @r#"
        error: a wide key
         --> a.yaml:2:32
          |
        2 | h: {token: ********, 名前: "品質 é"}    🚀: ok
          |                                         ^^
          |
          = help: a help line
        error: unexpected end of file
         --> a.yaml:2:37
          |
        2 | h: {token: ********, 名前: "品質 é"}    🚀: ok
          |                                               ^
          |
          = help: a help line
        "#);
    }

    #[test]
    fn span_past_end_of_line_gets_one_caret() {
        let span = Span {
            line: 1,
            column: 5,
            offset: 4,
            len: 0,
        };
        let out =
            Diagnostic::error("x.yaml", Some(span), "unexpected end").render(Some("a: ["), false);
        assert!(out.ends_with("1 | a: [\n  |     ^\n"), "{out}");
    }

    #[test]
    fn long_lines_are_cut_around_the_span() {
        let source = format!(
            "k: [{}bad{}]\nnext: 1\n",
            "x,".repeat(500),
            ",y".repeat(500)
        );
        let span = Span::from_offset(&source, source.find("bad").unwrap(), 3);
        let out = Diagnostic::error("x.yaml", Some(span), "bad value").render(Some(&source), false);
        let lines: Vec<&str> = out.lines().collect();
        let shown = lines[3].split_once(" | ").unwrap().1;
        let carets = lines[4].split_once(" | ").unwrap().1;
        assert!(shown.starts_with("...") && shown.ends_with("..."), "{out}");
        assert!(
            lines[3].chars().count() <= 140,
            "cut to a terminal line: {out}"
        );
        let at = carets.find('^').unwrap();
        assert_eq!(carets[at..].trim_end(), "^^^");
        assert_eq!(
            shown.chars().skip(at).take(3).collect::<String>(),
            "bad",
            "{out}"
        );
        // Near the start of the line, the start is kept and only the end is cut.
        let early = Span::from_offset(&source, 4, 1);
        let out = Diagnostic::error("x.yaml", Some(early), "x").render(Some(&source), false);
        assert!(
            out.contains("1 | k: [x,x,") && out.contains(",x...\n"),
            "{out}"
        );
        // A short line is shown whole.
        let last = Span::from_line_column(&source, 2, 7, 1);
        let out = Diagnostic::error("x.yaml", Some(last), "x").render(Some(&source), false);
        assert!(out.contains("2 | next: 1\n"), "{out}");
    }

    #[test]
    fn colour_is_only_added_when_asked() {
        let plain = sample().render(Some(SOURCE), false);
        assert!(!plain.contains('\x1b'));
        let coloured = sample().render(Some(SOURCE), true);
        assert!(coloured.contains("\x1b["));
        let stripped = anstream::adapter::strip_str(&coloured).to_string();
        assert_eq!(stripped, plain);
    }

    #[test]
    fn sorts_by_file_then_position() {
        let at = |line, column| Some(Span::from_line_column("", line, column, 1));
        let mut diagnostics = vec![
            Diagnostic::error("b.yaml", at(1, 1), "b"),
            Diagnostic::warning("a.yaml", at(3, 1), "w"),
            Diagnostic::error("a.yaml", at(2, 9), "late"),
            Diagnostic::error("a.yaml", at(2, 1), "early"),
            Diagnostic::error("a.yaml", None, "whole file"),
            Diagnostic::error("a.yaml", at(2, 1), "early"),
        ];
        sort(&mut diagnostics);
        let order: Vec<_> = diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(order, ["whole file", "early", "late", "w", "b"]);
    }

    #[test]
    fn serializes_flat() {
        let json = serde_json::to_value(sample()).unwrap();
        insta::assert_json_snapshot!(json, @r#"
        {
          "severity": "error",
          "file": "team-a/project.yaml",
          "line": 7,
          "column": 24,
          "offset": 129,
          "len": 3,
          "message": "sample_rate must be between 0 and 1, got 1.5",
          "help": "use a fraction such as 0.5"
        }
        "#);
        let none = serde_json::to_value(Diagnostic::error("x", None, "m")).unwrap();
        assert_eq!(
            none,
            serde_json::json!({"severity": "error", "file": "x", "message": "m"})
        );
    }

    #[test]
    fn spans_from_offsets_and_lines_agree() {
        let source = "a: 1\nbé: ü2\n";
        let by_line = Span::from_line_column(source, 2, 5, 2);
        let by_offset = Span::from_offset(source, by_line.offset, by_line.len);
        assert_eq!(by_line, by_offset);
        assert_eq!(&source[by_line.offset..by_line.offset + by_line.len], "ü2");
        // Out of range input is clamped, never a panic.
        let clamped = Span::from_offset(source, 999, 0);
        assert_eq!((clamped.line, clamped.column), (3, 1));
        let inside_char = Span::from_offset(source, 7, 0);
        assert_eq!(inside_char.offset, 6);
        let past = Span::from_line_column(source, 99, 99, 5);
        assert_eq!(
            (past.line, past.column, past.offset, past.len),
            (3, 1, source.len(), 0)
        );
    }

    #[test]
    fn lines_end_where_yaml_ends_them() {
        // `\r\n`, `\n` and a lone `\r` each end a line; a byte order mark is no column.
        assert_eq!(
            lines("\u{feff}\u{feff}x").collect::<Vec<_>>(),
            [(3, "\u{feff}x")]
        );
        let source = "\u{feff}a: 1\r\nb: 2\rc: 3\nd: 4";
        let all: Vec<_> = lines(source).collect();
        assert_eq!(all, [(3, "a: 1"), (9, "b: 2"), (14, "c: 3"), (19, "d: 4")]);
        assert_eq!(lines("x\n").collect::<Vec<_>>(), [(0, "x"), (2, "")]);
        for (n, &(offset, text)) in all.iter().enumerate() {
            let line = u32::try_from(n + 1).unwrap();
            let by_line = Span::from_line_column(source, line, 4, 1);
            assert_eq!(
                (by_line.offset, &source[by_line.offset..][..1]),
                (offset + 3, &text[3..])
            );
            assert_eq!(Span::from_offset(source, by_line.offset, 1), by_line);
            assert_eq!(LineIndex::new(source).span(by_line.offset, 1), by_line);
        }
        // Every offset, even one between the bytes of a `\r\n`, gets the same span both ways.
        let index = LineIndex::new(source);
        for offset in 0..=source.len() {
            assert_eq!(
                Span::from_offset(source, offset, 0),
                index.span(offset, 0),
                "{offset}"
            );
        }
        let diagnostic = Diagnostic::error(
            "x.yaml",
            Some(Span::from_line_column(source, 3, 4, 1)),
            "bad",
        );
        assert!(
            diagnostic
                .render(Some(source), false)
                .contains("3 | c: 3\n")
        );
    }
}
