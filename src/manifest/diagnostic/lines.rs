//! Lines and columns of a source text, the way YAML counts them, found in time linear in
//! the text however its lines are laid out.
//!
//! [`lines`] splits a text into lines; [`LineIndex`] turns byte offsets into [`Span`]s
//! (and lines and columns back into offsets) without rescanning the text: line starts are
//! found once, and a column (counted in characters) is the difference of two character
//! counts, each read from a table of counts at byte checkpoints plus at most one
//! checkpoint's worth of bytes. A file of one 8 MiB line spans each of its 250,000 values
//! as fast as a file of short lines.

use super::Span;

/// The lines of `source` as YAML counts them: a line ends at `\r\n`, `\n` or a lone `\r`
/// (YAML 1.2, section 5.4), so a line number means what the parser meant by it. Yields each
/// line's byte offset and its text without the break (and the first line without a byte
/// order mark that starts the text); text ending in a break has an empty last line, as an
/// editor shows it.
pub fn lines(source: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = Some(text_start(source));
    std::iter::from_fn(move || {
        let from = start?;
        let rest = &source[from..];
        match memchr::memchr2(b'\n', b'\r', rest.as_bytes()) {
            Some(i) => {
                let width = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                start = Some(from + i + width);
                Some((from, &rest[..i]))
            }
            None => {
                start = None;
                Some((from, rest))
            }
        }
    })
}

/// Where the text of `source` starts: after a byte order mark that starts it, which editors
/// do not show as a column (any other U+FEFF is a character like any other).
pub(super) fn text_start(source: &str) -> usize {
    if source.starts_with('\u{feff}') { 3 } else { 0 }
}

/// Bytes between two checkpoints of [`LineIndex`]'s character counts: finding a column
/// counts at most this many bytes (the table takes 64 KiB per MiB of non-ASCII text).
const CHECKPOINT: usize = 128;

/// Spans of one source text from byte offsets (and offsets from lines and columns), each in
/// logarithmic time plus at most [`CHECKPOINT`] bytes counted: line starts and character
/// counts are found once, in one pass, so a parser that spans every value of a large file
/// stays linear in the file, whatever the length of its lines.
pub struct LineIndex<'s> {
    source: &'s str,
    /// The byte offset of each line's first character, as [`lines`] counts lines (never
    /// empty: a text has at least one line).
    starts: Vec<usize>,
    /// For a text that is not all ASCII, the number of characters that start before byte
    /// `k * CHECKPOINT`, for each `k` (the first is 0). `None` for ASCII text, where a
    /// character is a byte.
    chars_before: Option<Vec<usize>>,
}

impl<'s> LineIndex<'s> {
    /// Indexes `source`: its line starts and, unless it is ASCII, its character counts.
    #[must_use]
    pub fn new(source: &'s str) -> Self {
        let starts = lines(source).map(|(start, _)| start).collect();
        let chars_before = (!source.is_ascii()).then(|| {
            let mut count = 0;
            source
                .as_bytes()
                .chunks(CHECKPOINT)
                .map(|chunk| {
                    let before = count;
                    count += char_starts(chunk);
                    before
                })
                .collect()
        });
        LineIndex {
            source,
            starts,
            chars_before,
        }
    }

    /// The text this index is of.
    #[must_use]
    pub fn source(&self) -> &'s str {
        self.source
    }

    /// The same as [`Span::from_offset`] on this index's source.
    #[must_use]
    pub fn span(&self, offset: usize, len: usize) -> Span {
        let offset = char_floor(self.source, offset);
        let line = self.starts.partition_point(|&start| start <= offset).max(1);
        let line_start = self.starts[line - 1].min(offset);
        let column = self.chars_between(line_start, offset) + 1;
        Span {
            line: saturate(line),
            column: saturate(column),
            offset,
            len,
        }
    }

    /// The same as [`Span::from_line_column`] on this index's source: the span of
    /// `len_chars` characters from `line`:`column` (1-based, characters), clamped to the
    /// end of the text or of the line.
    #[must_use]
    pub fn span_at(&self, line: u32, column: u32, len_chars: usize) -> Span {
        let index = (line.max(1) as usize).min(self.starts.len()) - 1;
        let line_start = self.starts[index];
        let line_end = self.line_end(index);
        let start = self.advance(line_start, line_end, column.max(1) as usize - 1);
        let end = self.advance(start, line_end, len_chars);
        Span {
            line: saturate(index + 1),
            column: saturate(self.chars_between(line_start, start) + 1),
            offset: start,
            len: end - start,
        }
    }

    /// Where the text of line `index` (0-based) ends: before its line break.
    fn line_end(&self, index: usize) -> usize {
        match self.starts.get(index + 1) {
            Some(&next) if self.source[..next].ends_with("\r\n") => next - 2,
            Some(&next) => next - 1,
            None => self.source.len(),
        }
    }

    /// How many characters start in bytes `from..to` (`from` at most `to`).
    fn chars_between(&self, from: usize, to: usize) -> usize {
        if self.chars_before.is_none() {
            to - from
        } else if to - from <= CHECKPOINT {
            char_starts(&self.source.as_bytes()[from..to])
        } else {
            self.chars_before(to) - self.chars_before(from)
        }
    }

    /// How many characters start before byte `offset` (at most the length of the text).
    fn chars_before(&self, offset: usize) -> usize {
        let offset = offset.min(self.source.len());
        let Some(table) = &self.chars_before else {
            return offset;
        };
        let checkpoint = (offset / CHECKPOINT).min(table.len().saturating_sub(1));
        let from = checkpoint * CHECKPOINT;
        table.get(checkpoint).copied().unwrap_or(0)
            + char_starts(&self.source.as_bytes()[from.min(offset)..offset])
    }

    /// The offset `n` characters after `from` (a character boundary), or `limit` when
    /// that is reached first.
    fn advance(&self, from: usize, limit: usize, n: usize) -> usize {
        let Some(table) = &self.chars_before else {
            return from.saturating_add(n).min(limit);
        };
        let target = self.chars_before(from) + n;
        if target >= self.chars_before(limit) {
            return limit;
        }
        // The target character starts in the last chunk that starts with fewer characters
        // before it than the target, or at `from` itself.
        let checkpoint = table.partition_point(|&before| before <= target).max(1) - 1;
        let base = (checkpoint * CHECKPOINT).max(from);
        let bytes = self.source.as_bytes();
        let mut count = self.chars_before(base);
        for (at, &byte) in bytes.iter().enumerate().take(limit).skip(base) {
            if is_char_start(byte) {
                if count == target {
                    return at;
                }
                count += 1;
            }
        }
        limit
    }
}

/// Whether `byte` starts a character of UTF-8 text (is not a continuation byte).
fn is_char_start(byte: u8) -> bool {
    byte & 0xC0 != 0x80
}

/// How many characters start in `bytes` (a slice of UTF-8 text, cut anywhere).
fn char_starts(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| is_char_start(b)).count()
}

/// `offset`, moved back to the end of `source` or to the start of the character it falls
/// inside (`str::floor_char_boundary`, which needs a newer Rust than the crate's minimum).
pub(crate) fn char_floor(source: &str, offset: usize) -> usize {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// How many line breaks `text` holds, counting `\r\n` once (see [`lines`]).
pub(super) fn line_breaks(text: &str) -> usize {
    let bytes = text.as_bytes();
    memchr::memchr2_iter(b'\n', b'\r', bytes)
        .filter(|&i| bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n'))
        .count()
}

/// `n` as a line or column number, saturating.
pub(super) fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every offset and every line and column of texts with long lines of multi-byte
    /// characters, line breaks of every kind and a byte order mark: the index agrees with
    /// the definitions (`Span::from_offset`, `Span::from_line_column`), across checkpoints.
    #[test]
    fn the_index_agrees_with_the_definitions_on_long_lines() {
        let long: String = (0..700).map(|i| ["a", "é", "€", "𝄞"][i % 4]).collect();
        let sources = [
            String::new(),
            "plain ascii\nlines\r\nand\rbreaks".to_owned(),
            format!("\u{feff}{long}\n{long}\r\n\r{long}"),
            format!("k: [{long}, x]\n"),
            "é".repeat(CHECKPOINT + 3),
        ];
        for source in &sources {
            let index = LineIndex::new(source);
            for offset in 0..=source.len() + 1 {
                assert_eq!(
                    index.span(offset, 1),
                    Span::from_offset(source, offset, 1),
                    "offset {offset}"
                );
            }
            let line_count = lines(source).count() as u32;
            for line in 0..=line_count + 1 {
                for column in [0, 1, 2, 100, 511, 512, 513, 699, 700, 701, 5000] {
                    for len in [0, 1, 3, 600] {
                        assert_eq!(
                            index.span_at(line, column, len),
                            Span::from_line_column(source, line, column, len),
                            "{line}:{column} +{len}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn characters_are_counted_from_any_byte() {
        assert_eq!(char_starts("a€b".as_bytes()), 3);
        assert_eq!(char_starts(&"€b".as_bytes()[1..]), 1);
        assert!(!is_char_start("€".as_bytes()[2]));
    }
}
