//! Colour for text output: one place maps a role (create, warning, ...) to
//! an ANSI style, and paints nothing when colour is off.

use anstyle::{AnsiColor, Style};

use crate::plan::Action;

/// What a piece of text is, for colouring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Something created or added (green).
    Add,
    /// Something changed in place (yellow).
    Change,
    /// Something replaced (magenta).
    Replace,
    /// Something deleted or removed (red).
    Remove,
    /// A hunk header of a text diff (cyan).
    Hunk,
    /// A warning a reviewer must see (bold yellow).
    Warning,
    /// A heading or address (bold).
    Strong,
    /// Secondary information (dimmed).
    Dim,
}

impl Role {
    /// The role of an action's symbol.
    pub(crate) fn of(action: Action) -> Role {
        match action {
            Action::Create => Role::Add,
            Action::Update => Role::Change,
            Action::Replace => Role::Replace,
            Action::Delete => Role::Remove,
        }
    }

    fn style(self) -> Style {
        let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
        match self {
            Role::Add => fg(AnsiColor::Green),
            Role::Change => fg(AnsiColor::Yellow),
            Role::Replace => fg(AnsiColor::Magenta),
            Role::Remove => fg(AnsiColor::Red),
            Role::Hunk => fg(AnsiColor::Cyan),
            Role::Warning => fg(AnsiColor::Yellow).bold(),
            Role::Strong => Style::new().bold(),
            Role::Dim => Style::new().dimmed(),
        }
    }
}

/// Paints text when colour is on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Painter {
    color: bool,
}

impl Painter {
    /// A painter; `color: false` returns text unchanged.
    pub(crate) fn new(color: bool) -> Self {
        Painter { color }
    }

    /// `text` in the style of `role`. Text of one line only: the style is
    /// reset at its end, so a newline inside would carry no colour over.
    pub(crate) fn paint(self, role: Role, text: &str) -> String {
        if !self.color || text.is_empty() {
            return text.to_owned();
        }
        let style = role.style();
        format!("{}{text}{}", style.render(), style.render_reset())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paints_only_when_colour_is_on() {
        assert_eq!(Painter::new(false).paint(Role::Add, "x"), "x");
        let painted = Painter::new(true).paint(Role::Add, "x");
        assert!(painted.starts_with("\u{1b}[") && painted.contains('x'));
        assert!(painted.ends_with("\u{1b}[0m"));
    }
}
