//! Renderers: pure functions from a [`Plan`] or an [`ApplyReport`] to text.
//!
//! Three formats: [`Format::Text`] for terminals and CI logs (Terraform-like,
//! optionally coloured), [`Format::Json`] for machines (versioned; a rendered
//! plan reads back as a [`Plan`]) and [`Format::Markdown`] for pull-request
//! comments (summary first, details folded to stay under GitHub's comment
//! limit). [`Mode::Drift`] phrases the same plan as a drift report.
//!
//! Renderers never print and never look at the terminal: the caller decides
//! colour (terminal, `NO_COLOR`) and passes it in [`RenderOptions`]. Output is
//! deterministic (the plan's own order is kept), ends with one newline and has
//! no trailing spaces. Text read from the manifests or the service (names,
//! reasons, error details) has its control characters escaped, so it cannot
//! move the cursor or recolour a terminal; markdown escapes it for GitHub.
//! Secrets cannot appear: a plan holds only `${ENV}` references.

mod entries;
mod forecast;
mod json;
mod markdown;
pub mod schema;
mod style;
mod text;
pub(crate) mod values;

pub use json::APPLY_FORMAT_VERSION;
pub use markdown::MARKDOWN_BUDGET;

use crate::plan::{ApplyReport, ChangeOutcome, ChangesError, Enrichment, Plan};

/// An output format, chosen with `-o text|json|markdown`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// Human-readable, Terraform-like; the default.
    #[default]
    Text,
    /// One pretty-printed JSON document, versioned.
    Json,
    /// GitHub-flavoured markdown for a pull-request comment.
    Markdown,
}

/// How a plan is phrased.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// What `evalctl plan` would change: "before → after".
    #[default]
    Plan,
    /// What `evalctl drift` found: "configured X, live Y".
    Drift,
}

impl Mode {
    /// `plan` or `drift`, as written in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Plan => "plan",
            Mode::Drift => "drift",
        }
    }
}

/// Choices the caller makes for a rendering.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOptions<'a> {
    /// Colour text output with ANSI escape codes. Ignored by JSON and markdown.
    pub color: bool,
    /// Plan or drift wording.
    pub mode: Mode,
    /// Where the plan was saved (`plan --out FILE`): a markdown comment that
    /// leaves changes out says they are all there.
    pub saved_plan: Option<&'a str>,
    /// The CI artifact that keeps the saved plan (`plan --artifact NAME`),
    /// named beside it.
    pub artifact: Option<&'a str>,
}

/// Renders a plan (or, with [`Mode::Drift`], a drift report) in `format`,
/// with what was read beside it (blast radius, people). Fails only when a
/// change of a large plan cannot be read back from its temporary file.
pub fn render_plan(
    plan: &Plan,
    enrichment: &Enrichment,
    format: Format,
    opts: &RenderOptions,
) -> Result<String, ChangesError> {
    let out = match format {
        Format::Text => text::plan(plan, enrichment, opts)?,
        Format::Json => json::plan(plan, enrichment, opts.mode)?,
        Format::Markdown => markdown::plan(plan, enrichment, opts)?,
    };
    Ok(finish(out))
}

/// Writes a plan as [`render_plan`] renders it to `out`; JSON and text are
/// streamed (never held whole), markdown (a comment of bounded size) is
/// written once rendered. A change that cannot be read back is an
/// [`std::io::Error`] holding the [`ChangesError`].
pub fn write_plan(
    plan: &Plan,
    enrichment: &Enrichment,
    format: Format,
    opts: &RenderOptions,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Format::Json => json::write_plan(plan, enrichment, opts.mode, out),
        Format::Text => {
            // Written as rendered, each piece trimmed as `finish` would; the
            // last one is held back, for `finish` to end the text.
            let mut held: Option<String> = None;
            let mut written = Ok(());
            text::write_plan(plan, enrichment, opts, &mut |chunk: &str| {
                if let Some(previous) = held.replace(chunk.to_owned())
                    && written.is_ok()
                {
                    written = write_trimmed_lines(out, &previous);
                }
            })?;
            written?;
            out.write_all(finish(held.unwrap_or_default()).as_bytes())
        }
        Format::Markdown => out.write_all(render_plan(plan, enrichment, format, opts)?.as_bytes()),
    }
}

/// Writes `text` (whole lines) with the trailing whitespace of each line dropped.
fn write_trimmed_lines(out: &mut dyn std::io::Write, text: &str) -> std::io::Result<()> {
    for line in text.split_inclusive('\n') {
        out.write_all(line.trim_end().as_bytes())?;
        if line.ends_with('\n') {
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// What an apply did, with the plan it executed.
#[derive(Debug, Clone, Copy)]
pub struct Applied<'a> {
    /// The plan that was executed.
    pub plan: &'a Plan,
    /// What was read beside it (blast radius, people).
    pub enrichment: &'a Enrichment,
    /// How each change ended.
    pub report: &'a ApplyReport,
    /// With an in-process sandbox, discarded at exit: the plan against it
    /// after the apply.
    pub plan_after_apply: Option<(&'a Plan, &'a Enrichment)>,
}

/// Renders what an apply did in `format`: a text or markdown report (and the
/// plan after apply, when there is one), or one JSON document holding the
/// plan, the outcomes and the plan after apply. The mode is not used.
pub fn render_apply(
    applied: &Applied<'_>,
    format: Format,
    opts: &RenderOptions,
) -> Result<String, ChangesError> {
    let out = match format {
        Format::Text => text::apply(applied.report, opts) + &text_after(applied, opts)?,
        Format::Json => json::apply(applied)?,
        Format::Markdown => markdown::apply(applied.report) + &markdown_after(applied)?,
    };
    Ok(finish(out))
}

/// Writes what an apply did as [`render_apply`] renders it to `out`; JSON is
/// streamed (never held whole), the other formats are written once rendered.
pub fn write_apply(
    applied: &Applied<'_>,
    format: Format,
    opts: &RenderOptions,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Format::Json => json::write_apply(applied, out),
        _ => out.write_all(render_apply(applied, format, opts)?.as_bytes()),
    }
}

/// The plan after apply against an in-process sandbox, as text.
fn text_after(applied: &Applied<'_>, opts: &RenderOptions) -> Result<String, ChangesError> {
    let Some((plan, enrichment)) = applied.plan_after_apply else {
        return Ok(String::new());
    };
    let opts = RenderOptions {
        mode: Mode::Plan,
        ..*opts
    };
    Ok(format!(
        "\nPlan after apply, against the same sandbox:\n\n{}",
        text::plan(plan, enrichment, &opts)?
    ))
}

/// The plan after apply against an in-process sandbox, as markdown.
fn markdown_after(applied: &Applied<'_>) -> Result<String, ChangesError> {
    let Some((plan, enrichment)) = applied.plan_after_apply else {
        return Ok(String::new());
    };
    Ok(format!(
        "\n---\n\nPlan after apply, against the same sandbox:\n\n{}",
        markdown::plan(plan, enrichment, &RenderOptions::default())?
    ))
}

/// Renders one outcome of an apply as text, as soon as it is known: the
/// line the report has for it (`  ✓ address: created`) and its detail.
/// Whatever the format of the report, outcomes stream as text (on stdout for
/// a text report, on stderr beside a JSON or markdown document).
pub fn render_outcome(outcome: &ChangeOutcome, opts: &RenderOptions) -> String {
    text::outcome(outcome, opts)
}

/// Renders the end of a text apply report whose outcomes were streamed with
/// [`render_outcome`]: the failed changes again (a long log ends with them),
/// what did not converge, the counts, and the plan after apply when there is
/// one.
pub fn render_apply_summary(
    applied: &Applied<'_>,
    opts: &RenderOptions,
) -> Result<String, ChangesError> {
    // A blank line between the last outcome and what follows.
    Ok(finish(format!(
        "\n{}{}",
        text::summary(applied.report, opts, true),
        text_after(applied, opts)?
    )))
}

/// Drops trailing whitespace from every line and ends the text with exactly
/// one newline. The renderers rarely leave any: the text is copied only
/// when a line needs trimming (a large plan is not held twice).
fn finish(mut out: String) -> String {
    let clean = !out.is_empty()
        && out.ends_with('\n')
        && !out.ends_with("\n\n")
        && out
            .split('\n')
            .all(|line| line.len() == line.trim_end().len());
    if clean {
        out.shrink_to_fit();
        return out;
    }
    let mut result = String::with_capacity(out.len() + 1);
    for line in out.trim_end().lines() {
        result.push_str(line.trim_end());
        result.push('\n');
    }
    if result.is_empty() {
        result.push('\n');
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_trims_lines_and_ends_with_one_newline() {
        assert_eq!(finish("a  \n b \n\n\n".to_owned()), "a\n b\n");
        assert_eq!(finish(String::new()), "\n");
    }
}
