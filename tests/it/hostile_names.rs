//! Commands print the names they read from the service as plans do: a name
//! holding ESC, BEL, NUL, a line break or a bidirectional override reaches the
//! terminal escaped (`export`'s summary and warnings, `whoami`, `scorers list`).

use crate::e2e_support::{Run, TestContext};

/// `run` wrote none of the hostile characters as is, and `escaped` somewhere.
#[track_caller]
fn assert_escaped(run: &Run, escaped: &str) {
    let all = run.all_output();
    for raw in ['\u{1b}', '\u{7}', '\u{0}', '\u{202e}'] {
        assert!(!all.contains(raw), "{raw:?} reached the terminal:\n{all}");
    }
    assert!(all.contains(escaped), "{all}");
}

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

#[test]
fn whoami_and_scorers_list_escape_the_names_they_print() {
    let ctx = TestContext::new();
    ctx.sandbox
        .with_state(|s| {
            let user = s
                .users
                .iter_mut()
                .find(|u| u.email == "demo@example.com")
                .expect("the demo user");
            user.first_name = HOSTILE.to_owned();
            let scorer = s.scorers.iter_mut().next().expect("a scorer");
            scorer.name = HOSTILE.to_owned();
        })
        .expect("the state is changed");
    let escaped = "evil\\u{1b}[31mred\\u{7}bell\\u{0}nul\\u{a}line\\u{202e}rtl";
    let run = ctx.evalctl(&["whoami"]);
    run.expect(0);
    assert_escaped(&run, escaped);
    let run = ctx.evalctl(&["scorers", "list", "--versions"]);
    run.expect(0);
    assert_escaped(&run, escaped);
}
