//! Interrupts (issue 10 §3), with real signals sent to the real binary.
//!
//! The first SIGINT or SIGTERM during an apply stops new changes from
//! starting, lets the ones in flight finish, prints the report of what
//! succeeded, failed and was not started, and exits 130; what the report
//! says is what the sandbox's request log and live state show, and the next
//! apply completes the rest. A second signal exits at once. During planning,
//! an interrupt exits 130 with nothing printed on stdout and nothing written.

use crate::e2e_support;
use evalctl::kinds::templates::TemplateAddress;
use evalctl::plan::address::SectionAddress;

use std::collections::BTreeSet;
use std::io::Read;
use std::process::{Child, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use e2e_support::TestContext;
use evalctl::plan::{Address, ApplyReport, OutcomeStatus};
use evalctl::sandbox::{Faults, RequestRecord};

/// Templates of each kind the repo creates.
const TEMPLATES: usize = 150;
/// Sections it creates (a later stage than templates).
const SECTIONS: usize = 10;

/// A config repo of 310 creates: 150 annotation and 150 feedback templates
/// in `demo-project`, and 10 sections on `staging`'s dashboard.
fn big_repo() -> String {
    let mut yaml = String::from(
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: staging\n    trends:\n      sections:\n",
    );
    for i in 0..SECTIONS {
        yaml.push_str(&format!("        - {{name: interrupt-section-{i:02}}}\n"));
    }
    yaml.push_str("annotation_templates:\n");
    for i in 0..TEMPLATES {
        yaml.push_str(&format!(
            "  - {{name: interrupt-a-{i:03}, constraints: {{annotation_type: like_dislike}}}}\n"
        ));
    }
    yaml.push_str("feedback_templates:\n");
    for i in 0..TEMPLATES {
        yaml.push_str(&format!(
            "  - {{name: interrupt-f-{i:03}, constraints: {{feedback_type: star}}}}\n"
        ));
    }
    yaml
}

/// `evalctl ARGS` running in the background, its output drained.
struct Running {
    child: Child,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
}

/// What a background run printed and how it ended.
struct Ended {
    status: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Ended {
    fn all(&self) -> String {
        format!(
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.status, self.stdout, self.stderr
        )
    }
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> Option<JoinHandle<String>> {
    let mut pipe = pipe?;
    Some(std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    }))
}

impl Running {
    fn start(ctx: &TestContext, args: &[&str]) -> Running {
        let mut child = ctx
            .evalctl_command(&[], args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start evalctl");
        let stdout = drain(child.stdout.take());
        let stderr = drain(child.stderr.take());
        Running {
            child,
            stdout,
            stderr,
        }
    }

    /// Sends a real signal (`INT`, `TERM`) with kill(1).
    fn signal(&self, name: &str) {
        let sent = std::process::Command::new("kill")
            .arg("-s")
            .arg(name)
            .arg(self.child.id().to_string())
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -s {name} failed");
    }

    fn is_running(&mut self) -> bool {
        self.child.try_wait().expect("wait").is_none()
    }

    /// Waits for the end, at most `limit` (then kills it and fails).
    fn wait(mut self, limit: Duration) -> Ended {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break Some(status);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let take =
            |h: Option<JoinHandle<String>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
        let ended = Ended {
            status: status.and_then(|s| s.code()),
            stdout: take(self.stdout.take()),
            stderr: take(self.stderr.take()),
        };
        assert!(
            status.is_some(),
            "still running after {limit:?}: killed\n{}",
            ended.all()
        );
        ended
    }
}

fn is_create(r: &RequestRecord) -> bool {
    r.method == "POST" && (r.path.ends_with("/templates") || r.path.ends_with("/trends/sections"))
}

fn is_write(r: &RequestRecord) -> bool {
    r.method != "GET"
        && !r.path.ends_with("/search")
        && !r.path.ends_with("/paginated")
        && !r.path.ends_with("/list")
}

/// Waits until `enough` holds of the sandbox's request log (requests are
/// logged when answered), while `run` is still running.
fn wait_for(
    ctx: &TestContext,
    run: &mut Running,
    what: &str,
    enough: impl Fn(&[RequestRecord]) -> bool,
) {
    let deadline = Instant::now() + Duration::from_secs(90);
    while !enough(&ctx.sandbox.requests()) {
        assert!(run.is_running(), "evalctl ended before {what}");
        assert!(Instant::now() < deadline, "no {what} within 90 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The names of `demo-project`'s templates and of `staging`'s sections that
/// the big repo declares.
fn live_names(ctx: &TestContext) -> BTreeSet<String> {
    let read = ctx.demo_dashboard("staging");
    let mut names: Vec<String> = read
        .dashboard
        .sections
        .into_iter()
        .map(|s| s.name)
        .collect();
    let client = ctx.client();
    ctx.block_on(async {
        let a = client
            .list_annotation_templates(&read.project_id)
            .await
            .expect("read");
        names.extend(a.into_iter().map(|t| t.name));
        let f = client
            .list_feedback_templates(&read.project_id)
            .await
            .expect("read");
        names.extend(f.into_iter().map(|t| t.name));
    });
    names
        .into_iter()
        .filter(|n| n.starts_with("interrupt-"))
        .collect()
}

fn name_of(address: &Address) -> String {
    match address {
        Address::Template(TemplateAddress { name, .. })
        | Address::Section(SectionAddress { name, .. }) => name.clone(),
        other => other.to_string(),
    }
}

/// Interrupts an apply of 310 creates a little way in with `signal`, and
/// checks the report against the request log and live state; then the
/// next apply completes the rest.
fn interrupt_mid_apply(signal: &str, cause: &str) {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", &big_repo());
    ctx.faults(Faults {
        latency: Duration::from_millis(200),
        ..Faults::none()
    });
    let mut run = Running::start(
        &ctx,
        &[
            "apply",
            "repo",
            "--auto-approve",
            "-o",
            "json",
            "--concurrency",
            "8",
        ],
    );
    wait_for(&ctx, &mut run, "16 answered creates", |log| {
        log.iter().filter(|r| is_create(r)).count() >= 16
    });
    run.signal(signal);
    let ended = run.wait(Duration::from_secs(60));
    let all = ended.all();
    assert_eq!(ended.status, Some(130), "{all}");
    assert!(
        ended
            .stderr
            .contains(&format!("{cause}: stopping; changes in flight")),
        "{all}"
    );
    let report: ApplyReport = serde_json::from_str(ended.stdout.trim())
        .unwrap_or_else(|e| panic!("no JSON report on stdout ({e})\n{all}"));
    assert_eq!(report.outcomes.len(), 2 * TEMPLATES + SECTIONS, "{all}");
    let counts = report.counts();
    // In flight at 200 ms a request: everything started finished.
    assert_eq!(counts.failed, 0, "{all}");
    assert!(counts.succeeded >= 16, "{all}");
    assert!(
        counts.skipped > 0,
        "the signal came too late to test anything\n{all}"
    );
    for o in &report.outcomes {
        if o.status == OutcomeStatus::Skipped {
            let detail = o.detail.as_deref().unwrap_or_default();
            assert!(
                detail.contains(&format!("not started: the apply was interrupted ({cause})")),
                "{}: {detail}",
                o.address
            );
        }
    }
    // The report agrees with the service: one answered create per change
    // reported as succeeded, none for the others, and live holds exactly
    // the objects reported as made.
    std::thread::sleep(Duration::from_millis(300));
    let log = ctx.sandbox.requests();
    let answered = log
        .iter()
        .filter(|r| is_create(r) && r.status == Some(200))
        .count();
    let other_creates: Vec<&RequestRecord> = log
        .iter()
        .filter(|r| is_create(r) && r.status != Some(200))
        .collect();
    assert!(other_creates.is_empty(), "{other_creates:?}");
    assert_eq!(answered, counts.succeeded, "{all}");
    let made: BTreeSet<String> = report
        .outcomes
        .iter()
        .filter(|o| o.status == OutcomeStatus::Succeeded)
        .map(|o| name_of(&o.address.address()))
        .collect();
    assert_eq!(live_names(&ctx), made, "{all}");

    // The next apply completes the rest.
    ctx.faults(Faults::none());
    let second = ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"]);
    second.expect(0);
    let second: ApplyReport = serde_json::from_str(second.stdout.trim()).expect("a report");
    assert_eq!(second.outcomes.len(), 2 * TEMPLATES + SECTIONS - made.len());
    ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
        .expect(0);
    assert_eq!(live_names(&ctx).len(), 2 * TEMPLATES + SECTIONS);
}

#[test]
fn sigint_mid_apply_reports_what_was_done_and_exits_130() {
    interrupt_mid_apply("INT", "SIGINT");
}

#[test]
fn sigterm_mid_apply_reports_what_was_done_and_exits_130() {
    interrupt_mid_apply("TERM", "SIGTERM");
}

#[test]
fn a_second_signal_exits_at_once() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", &big_repo());
    // Slow enough that changes are in flight for seconds.
    ctx.faults(Faults {
        latency: Duration::from_millis(2000),
        ..Faults::none()
    });
    let mut run = Running::start(
        &ctx,
        &[
            "apply",
            "repo",
            "--auto-approve",
            "-o",
            "json",
            "--concurrency",
            "8",
        ],
    );
    // The first wave of creates answered: the second is in flight.
    wait_for(&ctx, &mut run, "8 answered creates", |log| {
        log.iter().filter(|r| is_create(r)).count() >= 8
    });
    run.signal("INT");
    std::thread::sleep(Duration::from_millis(200));
    run.signal("INT");
    let ended = run.wait(Duration::from_secs(60));
    let all = ended.all();
    assert_eq!(ended.status, Some(130), "{all}");
    assert!(
        ended.stderr.contains("SIGINT again: exiting at once"),
        "{all}"
    );
    // It did not wait for the changes in flight to print a report.
    assert!(ended.stdout.trim().is_empty(), "{all}");
}

#[test]
fn an_interrupt_while_planning_prints_nothing_and_writes_nothing() {
    let ctx = TestContext::new();
    ctx.write("repo/project.yaml", &big_repo());
    ctx.faults(Faults {
        latency: Duration::from_millis(700),
        ..Faults::none()
    });
    let mut run = Running::start(&ctx, &["apply", "repo", "--auto-approve"]);
    // Planning has begun (the first read was answered) and is not over.
    wait_for(&ctx, &mut run, "a first read", |log| !log.is_empty());
    run.signal("INT");
    let ended = run.wait(Duration::from_secs(60));
    let all = ended.all();
    assert_eq!(ended.status, Some(130), "{all}");
    assert!(
        ended.stdout.is_empty(),
        "nothing half-done on stdout\n{all}"
    );
    assert!(
        ended
            .stderr
            .contains("interrupted (SIGINT) before anything was applied"),
        "{all}"
    );
    std::thread::sleep(Duration::from_millis(1500));
    let writes: Vec<RequestRecord> = ctx
        .sandbox
        .requests()
        .into_iter()
        .filter(is_write)
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
    assert!(live_names(&ctx).is_empty());
}
