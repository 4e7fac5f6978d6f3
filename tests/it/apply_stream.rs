//! `evalctl apply` streams: each change's outcome is printed when it is known,
//! off a terminal too (a CI log), not all at once at the end; the end of the
//! report (failures again, counts) follows. With `-o json` the outcomes stream
//! on stderr and stdout holds one document.

use crate::e2e_support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use e2e_support::{Run, TestContext};
use evalctl::sandbox::Faults;

/// How many sections the config creates.
const SECTIONS: usize = 8;

/// A config that creates [`SECTIONS`] sections on one dashboard: one change each.
fn sections_config(ctx: &TestContext) {
    let mut yaml = String::from(
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n    trends:\n      sections:\n",
    );
    for i in 1..=SECTIONS {
        yaml.push_str(&format!("        - name: Streamed {i}\n"));
    }
    ctx.write("config/project.yaml", &yaml);
}

/// Section creates (and only they) take `latency` each.
fn slow_section_writes(ctx: &TestContext, latency: Duration) {
    ctx.faults(Faults {
        latency,
        path_contains: Some("/trends/sections".to_owned()),
        ..Faults::none()
    });
}

fn section_creates(ctx: &TestContext) -> usize {
    ctx.sandbox
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.contains("/trends/sections"))
        .count()
}

#[test]
fn outcomes_reach_a_pipe_while_later_changes_are_still_being_made() {
    let ctx = TestContext::new();
    sections_config(&ctx);
    slow_section_writes(&ctx, Duration::from_millis(400));
    // One change at a time, so each outcome is known well before the next.
    let mut child = ctx
        .evalctl_command(
            &[],
            &["apply", "config", "--auto-approve", "--concurrency", "1"],
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run evalctl");
    let stdout = child.stdout.take().expect("piped stdout");
    let (lines, received) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    // The first outcome line, and how many creates the sandbox had received
    // when it arrived.
    let mut seen = Vec::new();
    let mut creates_then = None;
    while let Ok(line) = received.recv_timeout(Duration::from_secs(60)) {
        let first = line.starts_with("  ✓ ");
        seen.push(line);
        if first {
            creates_then = Some(section_creates(&ctx));
            break;
        }
    }
    let still_running = child.try_wait().expect("poll evalctl").is_none();
    seen.extend(received.iter());
    let status = child.wait().expect("wait for evalctl");
    let _ = reader.join();
    let log = seen.join("\n");
    assert_eq!(status.code(), Some(0), "{log}");
    let creates_then = creates_then.unwrap_or_else(|| panic!("no outcome line:\n{log}"));
    assert!(
        creates_then < SECTIONS && still_running,
        "the first outcome came after {creates_then} of {SECTIONS} creates (running: {still_running}): not streamed\n{log}"
    );
    assert_eq!(
        log.matches("  ✓ project[demo-project].log_stream[production].trends.section[Streamed ")
            .count(),
        SECTIONS,
        "{log}"
    );
    assert!(
        log.ends_with("Apply: 8 succeeded, 0 failed, 0 skipped."),
        "{log}"
    );
}

/// What a CI log shows: the plan, each outcome, the counts (one change at a
/// time, so the order is the plan's).
#[test]
fn a_ci_log_of_an_apply() {
    let ctx = TestContext::new();
    sections_config(&ctx);
    let run = ctx.evalctl(&["apply", "config", "--auto-approve", "--concurrency", "1"]);
    run.expect(0);
    ctx.insta_settings()
        .bind(|| insta::assert_snapshot!(run.stdout));
}

#[test]
fn with_json_the_outcomes_stream_on_stderr_and_stdout_is_one_document() {
    let ctx = TestContext::new();
    sections_config(&ctx);
    let run: Run = ctx.evalctl(&[
        "apply",
        "config",
        "--auto-approve",
        "--concurrency",
        "1",
        "-o",
        "json",
    ]);
    run.expect(0);
    let document: serde_json::Value =
        serde_json::from_str(&run.stdout).expect("stdout is one JSON document");
    assert_eq!(document["counts"]["succeeded"], SECTIONS);
    assert_eq!(
        run.stderr.matches("  ✓ project[demo-project]").count(),
        SECTIONS,
        "{}",
        run.stderr
    );
    // -q quiets the stream, never the document.
    let ctx = TestContext::new();
    sections_config(&ctx);
    let quiet = ctx.evalctl(&["apply", "config", "--auto-approve", "-o", "json", "-q"]);
    quiet.expect(0);
    assert!(!quiet.stderr.contains('✓'), "{}", quiet.stderr);
    let document: serde_json::Value = serde_json::from_str(&quiet.stdout).expect("one document");
    assert_eq!(document["counts"]["succeeded"], SECTIONS);
}

#[test]
fn a_failed_change_is_streamed_and_recalled_at_the_end() {
    let ctx = TestContext::new();
    sections_config(&ctx);
    // Every section create fails (503 without processing; creates are not retried).
    ctx.faults(Faults {
        fail_rate: 1.0,
        path_contains: Some("/trends/sections".to_owned()),
        ..Faults::none()
    });
    let run = ctx.evalctl(&["apply", "config", "--auto-approve", "--concurrency", "1"]);
    run.expect(3);
    let out = &run.stdout;
    let recap = out
        .find("8 changes failed:")
        .unwrap_or_else(|| panic!("no recap\n{out}"));
    // Each failure once as it happened, once in the recap at the end.
    assert_eq!(out.matches("  ✗ ").count(), 2 * SECTIONS, "{out}");
    assert_eq!(out[recap..].matches("  ✗ ").count(), SECTIONS, "{out}");
    assert!(
        out.contains("Apply: 0 succeeded, 8 failed, 0 skipped."),
        "{out}"
    );
    // A 503 passes: the report advises a second apply, for all eight.
    assert!(
        out.contains("completes the rest")
            && out.contains("8 change(s) did not complete, for a reason that passes"),
        "{out}"
    );
    assert!(!out.contains("reason that stays"), "{out}");
}
