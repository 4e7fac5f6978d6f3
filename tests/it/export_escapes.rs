//! `export` prints the names it read from the service as plans do: a project
//! name holding ESC, BEL, NUL or a line break reaches the terminal escaped.

use crate::e2e_support::TestContext;

const HOSTILE: &str = "evil\u{1b}[31mred\u{7}bell\u{0}nul\nline\u{202e}rtl";

#[test]
fn export_escapes_the_project_names_it_prints() {
    let ctx = TestContext::new();
    ctx.sandbox
        .with_state(|s| {
            let project = s
                .projects
                .iter_mut()
                .find(|p| p.name == "demo-project")
                .expect("the demo project");
            project.name = HOSTILE.to_owned();
        })
        .expect("the state is changed");
    let run = ctx.evalctl(&["export", "--dir", "exported"]);
    for raw in ['\u{1b}', '\u{7}', '\u{0}', '\u{202e}'] {
        assert!(
            !run.stderr.contains(raw),
            "{raw:?} reached stderr:\n{}",
            run.stderr
        );
    }
    assert!(
        run.stderr
            .contains("evil\\u{1b}[31mred\\u{7}bell\\u{0}nul\\u{a}line\\u{202e}rtl"),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains('\u{1b}'), "{}", run.stdout);
}
