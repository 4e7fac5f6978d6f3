//! Ambiguous creates of custom scorers and of their versions under the
//! sandbox's faults (issue 20, item 5): the create of a scorer, of an LLM
//! version or of a code version lands and its answer is lost (the connection
//! dropped after processing, or a 5xx after processing: 500, 502, 503 and
//! 504). Apply settles each by reading back: nothing is sent twice, and
//! afterwards there is exactly one scorer with one version, used by the
//! metric settings declared beside it (created in the same apply), and the
//! next plan is empty.
//!
//! The fault's path filter is precise: `/v2/scorers$` is the scorer's create
//! only (`POST /v2/scorers/list`, the listing the read-back uses, and the
//! versions' creates are not hit), and the test asserts the fault hit the
//! create it is about and nothing else.

use crate::e2e_support;

use e2e_support::TestContext;
use evalctl::plan::{ApplyReport, OutcomeStatus};
use evalctl::sandbox::{Fault, Faults};

const REPO: &str = r#"
kind: Scorer
name: politeness-judge
scorer_type: llm
scope: [demo-project]
chain_poll_template:
  template_file: prompts/politeness.txt
num_judges: 3
---
kind: Scorer
name: short-answer
scorer_type: code
scope: global
code_file: scorers/short_answer.py
---
kind: Project
name: demo-project
log_streams:
  - name: staging
    metric_settings:
      scorers:
        - name: politeness-judge
experiments:
  - name: baseline-eval
    metric_settings:
      scorers:
        - name: short-answer
          scorer_version: 1
"#;

const PROMPT: &str = "Question: {{ input }}\nAnswer: {{ output }}\nIs the answer polite?\n";

const CODE: &str = "def scorer_fn(*, index: int, node_input: str, node_output: str, **kwargs) -> bool:\n    return len(node_output) <= 2000\n";

/// The fault: which create it hits, and how its answer is lost.
#[derive(Debug, Clone, Copy)]
enum Lost {
    /// The connection closed once the service processed it.
    Dropped,
    /// Answered with this 5xx once processed.
    Status(u16),
}

fn faults(path: &str, lost: Lost, seed: u64) -> Faults {
    let (fail_after_rate, drop_after_rate, fail_statuses) = match lost {
        Lost::Dropped => (0.0, 1.0, Vec::new()),
        Lost::Status(s) => (1.0, 0.0, vec![s]),
    };
    Faults {
        fail_after_rate,
        drop_after_rate,
        fail_statuses,
        seed,
        path_contains: Some(path.into()),
        method: Some("POST".into()),
        ..Faults::none()
    }
}

/// POSTs whose path ends with `suffix`.
fn posts(ctx: &TestContext, suffix: &str) -> usize {
    ctx.sandbox
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with(suffix))
        .count()
}

/// Runs one apply of the repo with every POST whose path ends with `path`
/// processed and its answer lost; checks it settled.
fn settles(path: &str, lost: Lost, seed: u64) {
    let ctx = TestContext::new();
    ctx.write("repo/scorers.yaml", REPO);
    ctx.write("repo/prompts/politeness.txt", PROMPT);
    ctx.write("repo/scorers/short_answer.py", CODE);
    ctx.faults(faults(&format!("{path}$"), lost, seed));
    let run = ctx.evalctl(&["apply", "repo", "--auto-approve", "-o", "json"]);
    let hit: Vec<String> = ctx
        .sandbox
        .requests()
        .iter()
        .filter(|r| matches!(r.fault, Some(Fault::FailAfter(_) | Fault::DropAfter)))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    ctx.faults(Faults::none());
    let case = format!("{path} {lost:?}");
    assert_eq!(run.status, 0, "{case}\n{}", run.all_output());
    let report: ApplyReport = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("{case}: no JSON report ({e})\n{}", run.all_output()));
    assert!(
        report
            .outcomes
            .iter()
            .all(|o| o.status == OutcomeStatus::Succeeded),
        "{case}: {report:?}"
    );
    let settled = report.outcomes.iter().any(|o| {
        o.detail
            .as_deref()
            .is_some_and(|d| d.contains("a re-read found the"))
    });
    assert!(
        settled,
        "{case}: no outcome says it was settled by a read: {report:?}"
    );
    // The fault hit the create it is about, and only that.
    assert!(!hit.is_empty(), "{case}: the fault never hit");
    assert!(
        hit.iter().all(|h| h.ends_with(path)),
        "{case}: the fault hit other requests: {hit:?}"
    );
    // Sent once each, landed once each.
    assert_eq!(
        posts(&ctx, "/v2/scorers"),
        2,
        "{case}: one create per scorer"
    );
    assert_eq!(posts(&ctx, "/version/llm"), 1, "{case}: one LLM version");
    assert_eq!(posts(&ctx, "/version/code"), 1, "{case}: one code version");
    let client = ctx.client();
    let all = ctx.block_on(async { client.list_custom_scorers().await.expect("listed") });
    for name in ["politeness-judge", "short-answer"] {
        let named: Vec<_> = all.iter().filter(|s| s.name == name).collect();
        assert_eq!(named.len(), 1, "{case}: one scorer {name}");
        let latest = named[0].latest_version.as_ref().map_or(0, |v| v.version);
        assert_eq!(latest, 1, "{case}: {name} has one version");
    }
    let plan = ctx.evalctl(&["plan", "repo", "--detailed-exitcode"]);
    assert_eq!(plan.status, 0, "{case}\n{}", plan.all_output());
}

#[test]
fn a_scorer_create_whose_answer_is_lost_is_settled_by_reading_back() {
    for (seed, lost) in [
        (1, Lost::Dropped),
        (2, Lost::Status(500)),
        (3, Lost::Status(502)),
        (4, Lost::Status(503)),
        (5, Lost::Status(504)),
    ] {
        settles("/v2/scorers", lost, seed);
    }
}

#[test]
fn version_creates_whose_answers_are_lost_are_settled_by_reading_back() {
    for (seed, lost) in [
        (11, Lost::Dropped),
        (12, Lost::Status(500)),
        (13, Lost::Status(502)),
        (14, Lost::Status(503)),
        (15, Lost::Status(504)),
    ] {
        settles("/version/llm", lost, seed);
        settles("/version/code", lost, seed);
    }
}
