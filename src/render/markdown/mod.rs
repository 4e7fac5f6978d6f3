//! The markdown format: a pull-request comment (GitHub-flavoured).
//!
//! - [`plan`]: a plan or drift report: the counts by project and action, what
//!   needs a reviewer's attention, notes, and per change a collapsed
//!   `<details>` with a ```diff block GitHub colours.
//! - [`apply`]: what an apply did.
//!
//! The whole comment stays under [`MARKDOWN_BUDGET`] characters: what does
//! not fit is folded into a line saying how much was left out and where it
//! is (the saved plan, when there is one); the summary always appears.
//! Field names are shown as the manifests write them (`include_explanation`),
//! in code spans or diff blocks. Text from the manifests or the service is
//! escaped for where it lands (table cell, code span, HTML), so a name
//! holding `|`, `<` or a backtick cannot break the comment.

mod apply;
mod forecast;
mod plan;

pub(crate) use apply::apply;
pub(crate) use plan::plan;

use std::fmt::Write as _;

use super::entries::{Entry, Wording, display_path, secret_sent};
use super::values::{DiffLine, Shown, is_bare_entry, sanitize, sanitize_lines, show, text_diff};
use crate::plan::Action;

/// Most characters a rendered comment may have (GitHub refuses comments over
/// 65,536; the rest is headroom for what CI wraps around it).
pub const MARKDOWN_BUDGET: usize = 60_000;

/// Room kept free for the fold lines and the footer while filling the budget.
const RESERVE: usize = 1_500;

/// `60,000`.
fn budget_text() -> String {
    let s = MARKDOWN_BUDGET.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The comment being built, measured in bytes (never fewer than characters,
/// so a comment within the budget in bytes is within it in characters).
struct Doc {
    out: String,
}

impl Doc {
    fn new() -> Self {
        Doc { out: String::new() }
    }

    fn push(&mut self, s: &str) {
        self.out.push_str(s);
    }

    /// Pushes `render(item)` for `items` in order while they fit; returns
    /// how many did not (those after the first that did not are not rendered).
    fn push_while_fits<T>(&mut self, items: &[T], render: impl Fn(&T) -> String) -> usize {
        self.push_while_within(items, MARKDOWN_BUDGET, render)
    }

    /// Like [`Doc::push_while_fits`], stopping where the comment would pass
    /// `limit` characters (a section's share, leaving room for the next).
    fn push_while_within<T>(
        &mut self,
        items: &[T],
        limit: usize,
        render: impl Fn(&T) -> String,
    ) -> usize {
        let rendered = self.try_push_while_within(items, limit, |item| {
            Ok::<_, std::convert::Infallible>(render(item))
        });
        match rendered {
            Ok(left_out) => left_out,
        }
    }

    /// Like [`Doc::push_while_within`], for items rendered by reading them
    /// (a change read back from a plan's temporary file): stops at the
    /// first that cannot be rendered, with its error.
    fn try_push_while_within<T, E>(
        &mut self,
        items: &[T],
        limit: usize,
        render: impl Fn(&T) -> Result<String, E>,
    ) -> Result<usize, E> {
        let limit = limit.min(MARKDOWN_BUDGET);
        for (i, item) in items.iter().enumerate() {
            let text = render(item)?;
            if self.out.len() + text.len() + RESERVE > limit {
                return Ok(items.len() - i);
            }
            self.push(&text);
        }
        Ok(0)
    }

    fn fold_line(&mut self, left_out: usize, what: &str, how: &str) {
        if left_out > 0 {
            let _ = writeln!(
                self.out,
                "\n… {left_out} more {what} (the comment is limited to {} characters); {how}.\n",
                budget_text()
            );
        }
    }
}

// ---------------------------------------------------------------- escaping

/// Text on one line: lines of `s`, made safe and trimmed, joined by spaces.
fn one_line(s: &str) -> String {
    let lines: Vec<String> = sanitize_lines(s)
        .iter()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" ")
}

/// Text for a table cell or a list item: control characters escaped,
/// markdown and HTML specials backslash-escaped, on one line.
fn escape(s: &str) -> String {
    escape_line(&one_line(s))
}

fn escape_line(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::with_capacity(line.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        // An underscore inside a word (`include_explanation`) cannot start or
        // end emphasis in GFM: it stays as written.
        let inside_word = |at: Option<&char>| at.is_some_and(|c| c.is_alphanumeric());
        let intraword = c == '_'
            && inside_word(i.checked_sub(1).and_then(|j| chars.get(j)))
            && inside_word(chars.get(i + 1));
        if !intraword
            && matches!(
                c,
                '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '#' | '!'
            )
        {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Messages quote names in backticks (`` section `Latency` exists ``): such
/// pairs become code spans, the rest is escaped. Unpaired backticks are
/// escaped like any other character.
fn prose(s: &str, in_table: bool) -> String {
    let flat = one_line(s);
    let parts: Vec<&str> = flat.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return escape_line(&flat);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 1 {
                code(p, in_table)
            } else {
                escape_line(p)
            }
        })
        .collect()
}

/// Like [`prose`], inside an HTML element: pairs of backticks become `<code>`.
fn html_prose(s: &str) -> String {
    let flat = one_line(s);
    let parts: Vec<&str> = flat.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return html(&flat);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", html(p))
            } else {
                html(p)
            }
        })
        .collect()
}

/// A code span that holds `s` verbatim, whatever backticks it contains; in a
/// table, its pipes are escaped (GitHub splits cells before code spans).
fn code(s: &str, in_table: bool) -> String {
    let mut s = sanitize(s);
    if in_table {
        s = s.replace('|', "\\|");
    }
    let fence = "`".repeat(longest_run(&s, '`') + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for x in s.chars() {
        run = if x == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// Text inside an HTML element, on one line.
fn html(s: &str) -> String {
    sanitize(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A fenced block of `lang` that `lines` cannot close early.
fn fenced(lang: &str, lines: &[String]) -> String {
    let run = lines.iter().map(|l| longest_run(l, '`')).max().unwrap_or(0);
    let fence = "`".repeat(run.max(2) + 1);
    let mut out = format!("{fence}{lang}\n");
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
    out
}

fn section(summary: &str, intro: &str, lines: &[String]) -> String {
    let body = if lines.is_empty() {
        "No field-level differences.\n".to_owned()
    } else {
        fenced("diff", lines)
    };
    format!("<details><summary>{summary}</summary>\n\n{intro}{body}\n</details>\n\n")
}

/// `sign head: value`, a block under it, or a literal, each line signed.
fn signed(lines: &mut Vec<String>, sign: char, head: &str, shown: &Shown) {
    match shown {
        Shown::Inline(s) => lines.push(format!("{sign} {head}: {s}")),
        Shown::Block(block) | Shown::Literal(block) => {
            let bar = if matches!(shown, Shown::Literal(_)) {
                " |"
            } else {
                ""
            };
            lines.push(format!("{sign} {head}:{bar}"));
            lines.extend(block.iter().map(|l| format!("{sign}     {l}")));
        }
    }
}

fn entry_lines(lines: &mut Vec<String>, entry: &Entry, wording: Wording, action: Action) {
    let (old_label, new_label) = wording.labels();
    let head = |path: &str, label: &str| {
        let path = display_path(path);
        match wording {
            Wording::Plan => path,
            _ => format!("{path} ({label})"),
        }
    };
    match entry {
        Entry::Changed {
            path,
            before,
            after,
        } => {
            signed(lines, '-', &head(path, old_label), &show(before));
            signed(lines, '+', &head(path, new_label), &show(after));
        }
        Entry::Added { path, value } if wording == Wording::Plan && is_bare_entry(path, value) => {
            lines.push(format!("+ {}", display_path(path)));
        }
        Entry::Added { path, value } => signed(lines, '+', &head(path, new_label), &show(value)),
        Entry::Removed { path, value } => {
            signed(lines, '-', &head(path, old_label), &show(value));
        }
        Entry::Text {
            path,
            before,
            after,
        } => {
            let path = display_path(path);
            match wording {
                Wording::Plan => lines.push(format!("  {path}:")),
                _ => lines.push(format!("  {path} (- {old_label}, + {new_label}):")),
            }
            for line in text_diff(before, after) {
                lines.push(match line {
                    DiffLine::Hunk(h) => h,
                    DiffLine::Same(s) => format!("     {s}"),
                    DiffLine::Old(s) => format!("-    {s}"),
                    DiffLine::New(s) => format!("+    {s}"),
                });
            }
        }
        Entry::Secret { path, reference } => {
            if wording != Wording::Apply {
                lines.push(format!(
                    "+ {}: {} (write-only secret, {} from the environment at apply)",
                    display_path(path),
                    sanitize(reference),
                    secret_sent(action)
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_cannot_break_tables_code_or_html() {
        assert_eq!(escape("a|b <x> `c` *d*"), r"a\|b \<x\> \`c\` \*d\*");
        assert_eq!(
            escape("include_explanation _x_ a_"),
            r"include_explanation \_x\_ a\_"
        );
        assert_eq!(prose("see `a|b` *now*", true), r"see `a\|b` \*now\*");
        assert_eq!(prose("odd ` tick", false), r"odd \` tick");
        assert_eq!(html_prose("from `<x>`"), "from <code>&lt;x&gt;</code>");
        assert_eq!(escape("line one\n   line two\n"), "line one line two");
        assert_eq!(code("a|b", true), r"`a\|b`");
        assert_eq!(code("a`b", false), "``a`b``");
        assert_eq!(code("`a", false), "`` `a ``");
        assert_eq!(html("<b>&\"x\""), "&lt;b&gt;&amp;&quot;x&quot;");
        assert_eq!(fenced("diff", &["```".into()]), "````diff\n```\n````\n");
        assert_eq!(budget_text(), "60,000");
    }

    #[test]
    fn a_text_diff_of_the_whole_object_names_it() {
        let entry = Entry::Text {
            path: String::new(),
            before: "one\n".into(),
            after: "two\n".into(),
        };
        let mut lines = Vec::new();
        entry_lines(&mut lines, &entry, Wording::Plan, Action::Update);
        assert_eq!(lines.first().map(String::as_str), Some("  (the object):"));
    }
}
