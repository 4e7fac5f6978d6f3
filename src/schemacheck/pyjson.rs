//! Request-body decoding that fails the way the service fails. FastAPI reads
//! bodies with Python's `json.loads` and reports its `JSONDecodeError`
//! (message and character offset) in the 422 `json_invalid` detail; serde_json
//! words and places errors differently. [`decode_body`] first scans the text
//! with Python's grammar and error rules (CPython 3.11 `_json.c`: which
//! message, at which character), then parses it with serde_json.
//!
//! The scanner is iterative: nesting depth costs heap, not stack.

use serde_json::Value;

/// Why a request body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// Python's `JSONDecodeError`: its message and position.
    #[error("{msg}: line {line} column {column} (char {pos})")]
    Syntax {
        /// Python's message, e.g. `Expecting value`.
        msg: &'static str,
        /// Offset in characters (code points) from the start of the text.
        pos: usize,
        /// 1-based line of `pos`.
        line: usize,
        /// 1-based column of `pos`, in characters.
        column: usize,
    },
    /// The bytes are not UTF-8 (FastAPI answers 400, not 422).
    #[error("body is not valid UTF-8 (valid up to byte {valid_up_to})")]
    NotUtf8 {
        /// Bytes that were valid before the first bad one.
        valid_up_to: usize,
    },
    /// Valid to Python but not representable here: `NaN`/`Infinity`, numbers
    /// beyond `f64`, lone surrogate escapes, nesting beyond serde_json's
    /// limit of 128.
    #[error("{reason} (char {pos})")]
    Unrepresentable {
        /// Approximate offset in characters.
        pos: usize,
        /// serde_json's message.
        reason: String,
    },
}

/// Decodes a request body as Python's `json.loads(bytes)` would accept it
/// (a leading UTF-8 byte-order mark is skipped), reporting Python's error
/// for malformed JSON.
pub fn decode_body(bytes: &[u8]) -> Result<Value, BodyError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| BodyError::NotUtf8 {
        valid_up_to: e.valid_up_to(),
    })?;
    let chars: Vec<char> = text.chars().collect();
    if let Err((msg, pos)) = (Scanner { s: &chars }).document() {
        let before = chars.get(..pos).unwrap_or(&chars);
        let line = before.iter().filter(|c| **c == '\n').count() + 1;
        let line_start = before.iter().rposition(|c| *c == '\n').map_or(0, |i| i + 1);
        return Err(BodyError::Syntax {
            msg,
            pos,
            line,
            column: pos - line_start + 1,
        });
    }
    serde_json::from_str(text).map_err(|e| {
        let line_offset: usize = text
            .split_inclusive('\n')
            .take(e.line().saturating_sub(1))
            .map(|l| l.chars().count())
            .sum();
        BodyError::Unrepresentable {
            pos: line_offset + e.column().saturating_sub(1),
            reason: e.to_string(),
        }
    })
}

type ScanResult<T> = Result<T, (&'static str, usize)>;

/// What is open while scanning.
#[derive(Clone, Copy)]
enum Open {
    Array,
    Object,
}

struct Scanner<'a> {
    s: &'a [char],
}

impl Scanner<'_> {
    fn at(&self, i: usize) -> Option<char> {
        self.s.get(i).copied()
    }

    fn ws(&self, mut i: usize) -> usize {
        while matches!(self.at(i), Some(' ' | '\t' | '\n' | '\r')) {
            i += 1;
        }
        i
    }

    fn document(&self) -> ScanResult<()> {
        let mut stack: Vec<Open> = Vec::new();
        let mut i = self.ws(0);
        'value: loop {
            // A value starts at `i`.
            match self.at(i) {
                Some('"') => i = self.string(i + 1)?,
                Some('{') => {
                    i = self.ws(i + 1);
                    if self.at(i) == Some('}') {
                        i += 1;
                    } else {
                        i = self.key(i)?;
                        stack.push(Open::Object);
                        continue 'value;
                    }
                }
                Some('[') => {
                    i = self.ws(i + 1);
                    if self.at(i) == Some(']') {
                        i += 1;
                    } else {
                        stack.push(Open::Array);
                        continue 'value;
                    }
                }
                _ => i = self.scalar(i)?,
            }
            // A value ended at `i`: close what it completes.
            loop {
                let Some(&open) = stack.last() else {
                    let end = self.ws(i);
                    return if end == self.s.len() {
                        Ok(())
                    } else {
                        Err(("Extra data", end))
                    };
                };
                i = self.ws(i);
                let close = match open {
                    Open::Array => ']',
                    Open::Object => '}',
                };
                match self.at(i) {
                    Some(c) if c == close => {
                        stack.pop();
                        i += 1;
                    }
                    Some(',') => {
                        i = self.ws(i + 1);
                        if let Open::Object = open {
                            i = self.key(i)?;
                        }
                        continue 'value;
                    }
                    _ => return Err(("Expecting ',' delimiter", i)),
                }
            }
        }
    }

    /// A member's key and its `:` at `i`; returns where the value starts.
    fn key(&self, i: usize) -> ScanResult<usize> {
        if self.at(i) != Some('"') {
            return Err(("Expecting property name enclosed in double quotes", i));
        }
        let i = self.ws(self.string(i + 1)?);
        if self.at(i) != Some(':') {
            return Err(("Expecting ':' delimiter", i));
        }
        Ok(self.ws(i + 1))
    }

    /// A string whose opening quote is at `start - 1`; returns the index
    /// after the closing quote.
    fn string(&self, start: usize) -> ScanResult<usize> {
        let begin = start - 1;
        let unterminated = ("Unterminated string starting at", begin);
        let mut i = start;
        loop {
            let c = self.at(i).ok_or(unterminated)?;
            match c {
                '"' => return Ok(i + 1),
                '\\' => {}
                c if (c as u32) < 0x20 => return Err(("Invalid control character at", i)),
                _ => {
                    i += 1;
                    continue;
                }
            }
            // A backslash at `i`.
            let escaped = self.at(i + 1).ok_or(unterminated)?;
            if escaped != 'u' {
                if !matches!(escaped, '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') {
                    return Err(("Invalid \\escape", i));
                }
                i += 2;
                continue;
            }
            let u = i + 1;
            let bad_u = ("Invalid \\uXXXX escape", u);
            let first = u + 1;
            let end = first + 4;
            if end >= self.s.len() {
                return Err(bad_u);
            }
            let code = self.hex4(first).ok_or(bad_u)?;
            i = end;
            if (0xD800..0xDC00).contains(&code)
                && end + 6 < self.s.len()
                && self.at(end) == Some('\\')
                && self.at(end + 1) == Some('u')
            {
                let low = self
                    .hex4(end + 2)
                    .ok_or(("Invalid \\uXXXX escape", end + 1))?;
                if (0xDC00..0xE000).contains(&low) {
                    i = end + 6;
                }
            }
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        (at..at + 4).try_fold(0u32, |acc, j| Some(acc * 16 + self.at(j)?.to_digit(16)?))
    }

    /// A literal or number at `i`; returns the index after it.
    fn scalar(&self, i: usize) -> ScanResult<usize> {
        for word in ["null", "true", "false", "NaN", "Infinity", "-Infinity"] {
            if self.matches_word(i, word) {
                return Ok(i + word.chars().count());
            }
        }
        self.number(i).ok_or(("Expecting value", i))
    }

    fn matches_word(&self, i: usize, word: &str) -> bool {
        word.chars()
            .enumerate()
            .all(|(k, c)| self.at(i + k) == Some(c))
    }

    /// Python's number pattern `-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?`.
    fn number(&self, start: usize) -> Option<usize> {
        let digit = |i: usize| self.at(i).is_some_and(|c| c.is_ascii_digit());
        let mut i = start;
        if self.at(i) == Some('-') {
            i += 1;
        }
        match self.at(i) {
            Some('0') => i += 1,
            Some('1'..='9') => {
                while digit(i) {
                    i += 1;
                }
            }
            _ => return None,
        }
        if self.at(i) == Some('.') && digit(i + 1) {
            i += 1;
            while digit(i) {
                i += 1;
            }
        }
        if matches!(self.at(i), Some('e' | 'E')) {
            let mut j = i + 1;
            if matches!(self.at(j), Some('+' | '-')) {
                j += 1;
            }
            if digit(j) {
                while digit(j) {
                    j += 1;
                }
                i = j;
            }
        }
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (input, Python 3.11's message, Python's `pos`), from `json.loads` on
    /// the UTF-8 bytes; `None` means Python accepts it.
    const PYTHON: &[(&str, Option<(&str, usize)>)] = &[
        ("", Some(("Expecting value", 0))),
        (" ", Some(("Expecting value", 1))),
        (
            "{",
            Some(("Expecting property name enclosed in double quotes", 1)),
        ),
        ("}", Some(("Expecting value", 0))),
        ("[", Some(("Expecting value", 1))),
        ("{\"a\": }", Some(("Expecting value", 6))),
        (
            "{\"a\": 1,}",
            Some(("Expecting property name enclosed in double quotes", 8)),
        ),
        ("[1,]", Some(("Expecting value", 3))),
        ("{\"a\" 1}", Some(("Expecting ':' delimiter", 5))),
        ("{\"a\": 1 \"b\": 2}", Some(("Expecting ',' delimiter", 8))),
        ("[1 2]", Some(("Expecting ',' delimiter", 3))),
        ("{} x", Some(("Extra data", 3))),
        ("\"abc", Some(("Unterminated string starting at", 0))),
        ("tru", Some(("Expecting value", 0))),
        ("{\"a\": 01}", Some(("Expecting ',' delimiter", 7))),
        ("01", Some(("Extra data", 1))),
        ("-", Some(("Expecting value", 0))),
        ("1.", Some(("Extra data", 1))),
        ("1e+", Some(("Extra data", 1))),
        ("[1e]", Some(("Expecting ',' delimiter", 2))),
        ("\"\\x\"", Some(("Invalid \\escape", 1))),
        ("\"\\u12\"", Some(("Invalid \\uXXXX escape", 2))),
        ("\"\\u12", Some(("Invalid \\uXXXX escape", 2))),
        ("\"\\u123g\"", Some(("Invalid \\uXXXX escape", 2))),
        ("\"a\nb\"", Some(("Invalid control character at", 2))),
        ("\"\\ud800\\uzzzz\"", Some(("Invalid \\uXXXX escape", 8))),
        ("{\"a\":1}}", Some(("Extra data", 7))),
        ("[[[", Some(("Expecting value", 3))),
        ("{\"a\":{\"b\":[1,2,}]}}", Some(("Expecting value", 15))),
        (
            "{'a': 1}",
            Some(("Expecting property name enclosed in double quotes", 1)),
        ),
        ("{\"é\": x}", Some(("Expecting value", 6))),
        ("{\"a\":\"b\"", Some(("Expecting ',' delimiter", 8))),
        ("[1,2", Some(("Expecting ',' delimiter", 4))),
        ("  \n [1,\n 2,,]", Some(("Expecting value", 11))),
        ("\"\\", Some(("Unterminated string starting at", 0))),
        ("\"\\u\"", Some(("Invalid \\uXXXX escape", 2))),
        ("\t{\"x\": tru}", Some(("Expecting value", 7))),
        (
            "{\"a\":1 ,}",
            Some(("Expecting property name enclosed in double quotes", 8)),
        ),
        ("[,1]", Some(("Expecting value", 1))),
        ("\"\u{1f}\"", Some(("Invalid control character at", 1))),
        ("\"\u{7f}\"", None),
        ("{\"a\":1,\"a\":2}", None),
        ("[NaN, -Infinity, Infinity]", None),
        ("\"\\ud800\"", None),
        ("1e999", None),
    ];

    #[test]
    fn errors_match_python() {
        for (input, expected) in PYTHON {
            let got = Scanner {
                s: &input.chars().collect::<Vec<_>>(),
            }
            .document()
            .err();
            assert_eq!(got, *expected, "input {input:?}");
        }
    }

    #[test]
    fn decode_reports_python_positions_and_parses_values() {
        assert_eq!(
            decode_body(b"{\"a\": 1}").ok(),
            Some(serde_json::json!({"a": 1}))
        );
        assert_eq!(
            decode_body(b"\xEF\xBB\xBF[]").ok(),
            Some(serde_json::json!([]))
        );
        match decode_body("{\"é\":\n x}".as_bytes()) {
            Err(BodyError::Syntax {
                msg,
                pos,
                line,
                column,
            }) => {
                assert_eq!((msg, pos, line, column), ("Expecting value", 7, 2, 2));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(
            decode_body(b"[\xff]"),
            Err(BodyError::NotUtf8 { valid_up_to: 1 })
        ));
        assert!(matches!(
            decode_body(b"NaN"),
            Err(BodyError::Unrepresentable { .. })
        ));
        assert!(matches!(
            decode_body(b"\"\\ud800\""),
            Err(BodyError::Unrepresentable { .. })
        ));
    }

    #[test]
    fn deep_nesting_costs_no_stack() {
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        // Python's grammar accepts it; serde_json's depth limit does not.
        assert!(
            Scanner {
                s: &deep.chars().collect::<Vec<_>>()
            }
            .document()
            .is_ok()
        );
        assert!(matches!(
            decode_body(deep.as_bytes()),
            Err(BodyError::Unrepresentable { .. })
        ));
        let open = "[".repeat(100_000);
        assert!(matches!(
            decode_body(open.as_bytes()),
            Err(BodyError::Syntax {
                msg: "Expecting value",
                pos: 100_000,
                ..
            })
        ));
    }
}
