//! Two applies at once that create one project and its log stream (issue
//! 20 item 3): both exit 0 with every change succeeded, the organization
//! holds one project of that name with one log stream of that name, and the
//! loser said that it read the winner's back and adopted it (never a second
//! project, never an error). Each round starts a fresh sandbox, 30 ms a
//! request (`APPLY_RACE_ROUNDS`/2 rounds, default 10), like `apply_race`.

use crate::e2e_support;

use std::time::Duration;

use e2e_support::{Run, TestContext};
use evalctl::plan::{ApplyReport, OutcomeStatus};
use evalctl::sandbox::Faults;

const LIMIT: Duration = Duration::from_secs(120);

const NEW_TEAM: &str = r#"
kind: Project
name: new-team
description: Started from its repository
log_streams:
  - name: production
    metric_settings:
      scorers:
        - name: correctness
          num_judges: 3
"#;

fn rounds() -> usize {
    std::env::var("APPLY_RACE_ROUNDS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(10, |n| n.div_ceil(2))
}

/// Runs `args` twice at the same instant.
fn twice_at_once(ctx: &TestContext, args: &[&str]) -> (Run, Run) {
    let barrier = std::sync::Barrier::new(2);
    std::thread::scope(|s| {
        let run = || {
            barrier.wait();
            ctx.evalctl_bounded(&[], args, LIMIT)
        };
        let first = s.spawn(run);
        let second = s.spawn(run);
        (
            first.join().expect("the first apply"),
            second.join().expect("the second apply"),
        )
    })
}

#[track_caller]
fn succeeded(run: &Run) -> ApplyReport {
    assert_eq!(run.status, 0, "{}", run.all_output());
    let report: ApplyReport = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("no JSON report ({e})\n{}", run.all_output()));
    for o in &report.outcomes {
        assert_eq!(o.status, OutcomeStatus::Succeeded, "{}", run.all_output());
    }
    report
}

/// How the report says `address` was settled: `None` when it holds no such
/// change, `Some(None)` when it was created as planned, `Some(Some(note))`
/// when it was found made by another run.
fn settled(report: &ApplyReport, address: &str) -> Option<Option<String>> {
    let outcome = report
        .outcomes
        .iter()
        .find(|o| o.address.to_string() == address)?;
    let detail = outcome.detail.clone().unwrap_or_default();
    let adopted = detail.contains("another run created the")
        || detail.contains("exists already (created since the plan was read, by another run)");
    Some(adopted.then_some(detail))
}

#[test]
fn two_applies_creating_one_project_at_once_leave_one_project_and_one_log_stream() {
    let mut adopted = 0;
    for round in 0..rounds() {
        let ctx = TestContext::new();
        ctx.write("repo/project.yaml", NEW_TEAM);
        ctx.faults(Faults {
            latency: Duration::from_millis(30),
            ..Faults::none()
        });
        let (a, b) = twice_at_once(
            &ctx,
            &["apply", "repo", "--auto-approve", "-o", "json", "--quiet"],
        );
        let reports = [succeeded(&a), succeeded(&b)];
        ctx.faults(Faults::none());
        for address in [
            "project[new-team]",
            "project[new-team].log_stream[production]",
        ] {
            let outcomes: Vec<Option<String>> =
                reports.iter().filter_map(|r| settled(r, address)).collect();
            let created = outcomes.iter().filter(|o| o.is_none()).count();
            assert_eq!(
                created,
                1,
                "round {round}: {address} created by exactly one apply: {outcomes:?}\n{}\n{}",
                a.all_output(),
                b.all_output()
            );
            adopted += outcomes.len() - created;
        }

        let client = ctx.client();
        let (projects, streams, description) = ctx.block_on(async {
            let projects: Vec<String> = client
                .list_projects(Default::default())
                .await
                .expect("listed")
                .into_iter()
                .filter(|p| p.name == "new-team")
                .map(|p| p.id)
                .collect();
            let Some(id) = projects.first() else {
                return (projects, Vec::new(), None);
            };
            let streams: Vec<String> = client
                .search_log_streams_all(id, Default::default())
                .await
                .expect("listed")
                .into_iter()
                .map(|l| l.name)
                .collect();
            let description = client
                .get_project(id)
                .await
                .expect("read")
                .and_then(|p| p.description);
            (projects, streams, description)
        });
        assert_eq!(projects.len(), 1, "round {round}: one project");
        assert_eq!(streams, vec!["production".to_owned()], "round {round}");
        assert_eq!(
            description.as_deref(),
            Some("Started from its repository"),
            "round {round}"
        );
        ctx.evalctl(&["plan", "repo", "--detailed-exitcode"])
            .expect(0);
    }
    assert!(
        adopted > 0,
        "in no round did the loser find the winner's project or log stream"
    );
}
