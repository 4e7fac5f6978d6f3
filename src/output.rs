//! All user-facing output goes through here: stdout for results (plans,
//! reports, JSON), stderr for diagnostics and progress.
//!
//! This module decides colour (`--color`; for `auto`, anstream's reading of
//! `NO_COLOR`, `CLICOLOR_FORCE`, `CLICOLOR`, the terminal and `TERM`), and treats a closed pipe (`evalctl plan | head`) as success,
//! not a panic. Everything it writes is masked ([`crate::scrub`]): a secret
//! evalctl holds is printed as `********`, whatever text carried it.

use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};

use crate::scrub::{self, MaskingWriter};

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorChoice {
    /// Colour on a terminal whose `TERM` is not `dumb`, unless `NO_COLOR` or
    /// `CLICOLOR=0`; `CLICOLOR_FORCE` forces it.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Where results and diagnostics go, and whether they are coloured.
#[derive(Debug, Clone, Copy)]
pub struct Printer {
    color_stdout: bool,
    color_stderr: bool,
    quiet: bool,
}

impl Printer {
    /// A printer for this process's stdout and stderr.
    pub fn new(choice: ColorChoice, quiet: bool) -> Self {
        // `auto` is anstream's decision (clap's own): `NO_COLOR`, then
        // `CLICOLOR_FORCE`, then `CLICOLOR=0`, then a terminal whose `TERM`
        // is not `dumb`.
        let decide = |auto: anstream::ColorChoice| match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => auto == anstream::ColorChoice::Always,
        };
        Printer {
            color_stdout: decide(anstream::AutoStream::choice(&io::stdout())),
            color_stderr: decide(anstream::AutoStream::choice(&io::stderr())),
            quiet,
        }
    }

    /// A printer that never colours (tests, files).
    pub fn plain() -> Self {
        Printer {
            color_stdout: false,
            color_stderr: false,
            quiet: false,
        }
    }

    /// Whether results on stdout are coloured.
    pub fn color_stdout(&self) -> bool {
        self.color_stdout
    }

    /// Whether diagnostics on stderr are coloured.
    pub fn color_stderr(&self) -> bool {
        self.color_stderr
    }

    /// Whether `-q` was given.
    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    /// Whether stderr is a terminal (progress indicators show only then).
    pub fn stderr_is_terminal(&self) -> bool {
        io::stderr().is_terminal()
    }

    /// Writes a result to stdout. A closed pipe is not an error.
    pub fn out(&self, text: &str) {
        write_ignoring_broken_pipe(&mut io::stdout().lock(), &[&scrub::mask(text)]);
    }

    /// Writes a result to stdout as `write` produces it, through a buffer:
    /// a large document (a large plan as JSON is tens of megabytes) is never
    /// held whole. A closed pipe is not an error (a reader that went away
    /// has all it wanted); any other error is, whether writing
    /// failed (a full disk behind `> plan.txt`) or producing what to write
    /// did (a plan's change that cannot be read back). Masked as it streams: a
    /// secret split between two writes is masked whole.
    pub fn out_streamed(
        &self,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut out = MaskingWriter::new(io::BufWriter::new(io::stdout().lock()));
        match write(&mut out).and_then(|()| out.finish().map(drop)) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            written => written,
        }
    }

    /// Writes a diagnostic line to stderr (suppressed by `-q` unless an error).
    pub fn info(&self, text: &str) {
        if !self.quiet {
            write_line(&mut io::stderr().lock(), text);
        }
    }

    /// Writes diagnostics (already rendered) to stderr, always: `-q` quiets
    /// progress and chatter, never the reasons a command failed.
    pub fn diagnostics(&self, text: &str) {
        write_line(&mut io::stderr().lock(), text);
    }

    /// Writes an error to stderr, always.
    pub fn error(&self, text: &str) {
        let prefix = if self.color_stderr {
            "\x1b[1;31merror\x1b[0m"
        } else {
            "error"
        };
        write_line(&mut io::stderr().lock(), &format!("{prefix}: {text}"));
    }

    /// Writes a warning to stderr (suppressed by `-q`).
    pub fn warn(&self, text: &str) {
        if !self.quiet {
            let prefix = if self.color_stderr {
                "\x1b[1;33mwarning\x1b[0m"
            } else {
                "warning"
            };
            write_line(&mut io::stderr().lock(), &format!("{prefix}: {text}"));
        }
    }
}

/// Writes `text`, masked, and a line break unless it ends in one, without copying it
/// when there is nothing to mask (diagnostics of a large repo can be megabytes).
fn write_line(w: &mut impl Write, text: &str) {
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    let masked: Cow<'_, str> = scrub::mask(text);
    write_ignoring_broken_pipe(w, &[&masked, newline]);
}

fn write_ignoring_broken_pipe(w: &mut impl Write, parts: &[&str]) {
    // A reader that went away (`| head`) has all it wanted; any other write
    // error on a terminal stream has nowhere to be reported.
    let _ = parts
        .iter()
        .try_for_each(|part| w.write_all(part.as_bytes()))
        .and_then(|()| w.flush());
}
