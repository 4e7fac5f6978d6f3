//! Diagnostics as GitHub Actions workflow commands, so a CI job shows each problem inline
//! on the pull request's diff: `::error file=<file>,line=<line>,col=<column>::<message>`
//! (`::warning` for warnings), one line per diagnostic.
//!
//! Escaping follows the runner's rules for workflow commands: in the message, `%`, `\r`
//! and `\n` become `%25`, `%0D` and `%0A`; in a property value (the file name) `:` and
//! `,` also become `%3A` and `%2C`. A help line follows the message on a line of its
//! own (an escaped line break). Other control characters are written escaped
//! (`\u{1b}`), as in every other rendering, so a manifest cannot inject a command or
//! drive the log's terminal. File names are as the user named them: run evalctl from
//! the repository's root, with relative paths, for GitHub to match them to the diff.

use std::fmt::Write as _;

use super::Diagnostic;

/// The workflow command of one diagnostic, ending in a line break.
#[must_use]
pub fn annotation(diagnostic: &Diagnostic) -> String {
    let mut out = format!(
        "::{} file={}",
        diagnostic.severity.label(),
        property(&diagnostic.file)
    );
    if let Some(span) = diagnostic.span {
        // Writing to a String cannot fail.
        let _ = write!(out, ",line={},col={}", span.line, span.column);
    }
    let mut message = diagnostic.message.clone();
    if let Some(help) = &diagnostic.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    out.push_str("::");
    out.push_str(&data(&message));
    out.push('\n');
    out
}

/// The workflow commands of every diagnostic, in order.
#[must_use]
pub fn annotations(diagnostics: &[Diagnostic]) -> String {
    diagnostics.iter().map(annotation).collect()
}

/// A message escaped as workflow-command data.
fn data(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

/// A value escaped as a workflow-command property.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::diagnostic::Span;

    #[test]
    fn errors_and_warnings_become_workflow_commands() {
        let at = |line, column| {
            Some(Span {
                line,
                column,
                offset: 0,
                len: 1,
            })
        };
        let diagnostics = [
            Diagnostic::error(
                "config/team-a.yaml",
                at(12, 24),
                "log_streams[0].metric_settings.segment_filters[0].sample_rate: must be less than or equal to 1, found 1.5",
            ),
            Diagnostic::error("config/team-a.yaml", at(3, 1), "unknown field `scorer`")
                .with_help("did you mean `scorers`?"),
            Diagnostic::warning(
                "config/shared.yaml",
                at(7, 10),
                "variable `TEAM` is not set",
            ),
            Diagnostic::error("missing", None, "path `missing` does not exist"),
            Diagnostic::error(
                "odd,dir/a:b%.yaml",
                at(1, 2),
                "100% sure\r\nline two \u{1b}[31m::error::injected",
            )
            .with_help("a, b: c"),
        ];
        insta::assert_snapshot!(annotations(&diagnostics), @r"
        ::error file=config/team-a.yaml,line=12,col=24::log_streams[0].metric_settings.segment_filters[0].sample_rate: must be less than or equal to 1, found 1.5
        ::error file=config/team-a.yaml,line=3,col=1::unknown field `scorer`%0Ahelp: did you mean `scorers`?
        ::warning file=config/shared.yaml,line=7,col=10::variable `TEAM` is not set
        ::error file=missing::path `missing` does not exist
        ::error file=odd%2Cdir/a%3Ab%25.yaml,line=1,col=2::100%25 sure%0D%0Aline two \u{1b}[31m::error::injected%0Ahelp: a, b: c
        ");
    }
}
