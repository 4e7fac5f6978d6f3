//! The reconciler's invariant, property-based (issue 5 §3): for a random
//! live state and a random desired state, applying the plan yields a state
//! whose plan is empty, and the apply reports itself complete.
//!
//! Each case starts an in-process sandbox's state from the demo fixture,
//! randomizes it (a random config repo applied by evalctl itself, then
//! random out-of-band changes through the API: duplicate sections, raw
//! metric settings, templates, favorites), then loads a random config repo
//! (`property_support`: names of the demo fixture, scorers of the catalog
//! with random fields and pins, segment filters, sections with renames,
//! favorites, templates of every kind, integrations), and runs the library
//! pipeline: fetch, plan, apply, fetch, plan.
//!
//! A failing case shrinks to a short one and prints as the repos to apply
//! and the changes to make, followed by the plan that was not empty.

use crate::property_support;

use std::sync::LazyLock;

use evalctl::api::{Secret, SectionCreateRequest, Visibility};
use evalctl::client::{Client, ClientConfig, Credentials};
use evalctl::kinds::templates::TemplateCreate;
use evalctl::manifest::set::ManifestSet;
use evalctl::plan::{ApplyReport, Enrichment, OutcomeStatus, Plan, PlanOptions, ResourceChange};
use evalctl::reconcile::apply::{ApplyOptions, Stop, apply};
use evalctl::reconcile::confirm::{Touched, replan_touched};
use evalctl::reconcile::read_and_plan;
use evalctl::render::{Applied, Format, RenderOptions, render_apply, render_plan};
use evalctl::sandbox::fixture::ids;
use evalctl::sandbox::{Fixture, Sandbox, SandboxHandle};
use property_support::desired::{Run, documents};
use property_support::live_ops::{Case, LiveOp, case};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestError, TestRunner};
use serde_json::{Value, json};

static SANDBOX: LazyLock<SandboxHandle> =
    LazyLock::new(|| Sandbox::builder().start().expect("the sandbox starts"));

fn env(name: &str) -> Option<String> {
    match name {
        "OPENAI_API_KEY" => Some("sk-property-openai".into()),
        "ANTHROPIC_API_KEY" => Some("sk-property-anthropic".into()),
        _ => None,
    }
}

fn client() -> Client {
    let config = ClientConfig::new(
        SANDBOX.base_url(),
        Credentials::ApiKey(Secret::new("demo-api-key")),
    );
    Client::new(config).expect("a client")
}

fn text(plan: &Plan) -> String {
    render_plan(
        plan,
        &Enrichment::default(),
        Format::Text,
        &RenderOptions::default(),
    )
    .expect("renders")
}

/// Loads `docs` as a config repo; `Err` is the rendered diagnostics.
fn load(docs: &[Value]) -> Result<ManifestSet, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    for (i, doc) in docs.iter().enumerate() {
        let text = serde_json::to_string_pretty(doc).map_err(|e| e.to_string())?;
        std::fs::write(dir.path().join(format!("doc{i}.yaml")), text).map_err(|e| e.to_string())?;
    }
    if docs.is_empty() {
        return Ok(ManifestSet::default());
    }
    let outcome = evalctl::manifest::load(&[dir.path().to_path_buf()], &env);
    if outcome.has_errors() {
        return Err(outcome.render_diagnostics(false));
    }
    Ok(outcome.set)
}

/// Fetch, plan, apply, fetch, plan. `Err` says which step failed and how.
async fn reconcile(client: &Client, desired: &ManifestSet, prune: bool) -> Result<(), String> {
    let options = PlanOptions {
        prune,
        ..PlanOptions::default()
    };
    let read = read_and_plan(client, desired, &options)
        .await
        .map_err(|e| format!("reading failed: {e}"))?;
    let (state, first) = (read.state, read.plan);
    let first = first.map_err(|e| format!("plan failed: {e}"))?;
    let stop = Stop::new(std::time::Duration::from_secs(30));
    let apply_options = ApplyOptions {
        concurrency: 4,
        env: &env,
        on_outcome: &|_| {},
        catalog: &state.catalog,
        stop: &stop,
    };
    let outcomes = apply(&first, client, &apply_options).await;
    let planned = first.changes.to_vec().expect("changes read back");
    let applied: Vec<&ResourceChange> = planned
        .iter()
        .zip(&outcomes)
        .filter(|(_, o)| o.status == OutcomeStatus::Succeeded)
        .map(|(c, _)| c)
        .collect();
    let unconverged = replan_touched(
        client,
        std::borrow::Cow::Borrowed(desired),
        prune,
        &Touched::of(&applied),
        Some(&state),
    )
    .await;
    let report = ApplyReport {
        outcomes,
        unconverged,
    };
    let second = read_and_plan(client, desired, &options)
        .await
        .map_err(|e| format!("reading after apply failed: {e}"))?
        .plan
        .map_err(|e| format!("plan after apply failed: {e}"))?;
    if report.is_complete() && second.is_empty() {
        return Ok(());
    }
    Err(format!(
        "--- the plan:\n{}\n--- the apply:\n{}\n--- the plan after apply (should be empty):\n{}",
        text(&first),
        render_apply(
            &Applied {
                plan: &first,
                enrichment: &Default::default(),
                report: &report,
                plan_after_apply: None,
            },
            Format::Text,
            &RenderOptions::default()
        )
        .expect("renders"),
        text(&second)
    ))
}

/// Ids of a log stream or experiment of the demo fixture.
fn run_ids(run: &Run) -> (String, String) {
    let (project, is_stream, name) = *run;
    let id = if is_stream {
        ids::log_stream(project, name)
    } else {
        ids::experiment(project, name)
    };
    (ids::project(project), id)
}

/// Makes one out-of-band change; errors (a 404 after a delete, a 409) are
/// part of the game and ignored.
async fn live_op(client: &Client, op: &LiveOp) {
    let scorer_type = |name: &str| {
        Fixture::demo()
            .state()
            .scorers
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.scorer_type.clone())
    };
    match op {
        LiveOp::CreateSection { run, name, color } => {
            let (pid, lid) = run_ids(run);
            let body = SectionCreateRequest {
                name: (*name).to_owned(),
                description: None,
                color: color.map(str::to_owned),
            };
            let _ = client.create_section(&pid, &lid, None, &body).await;
        }
        LiveOp::DeleteSection { run, name } => {
            let (pid, lid) = run_ids(run);
            if let Ok(Some(d)) = client.get_dashboard(&pid, &lid, None).await
                && let Some(s) = d.sections.iter().find(|s| s.name == *name)
            {
                let _ = client.delete_section(&pid, &lid, &s.id, None, false).await;
            }
        }
        LiveOp::Favorite { run, project_wide } => {
            let (pid, lid) = run_ids(run);
            let vis = if *project_wide {
                Visibility::Project
            } else {
                Visibility::User
            };
            if let Ok(Some(d)) = client.get_dashboard(&pid, &lid, None).await {
                let _ = client.favorite_dashboard(&pid, &lid, &d.id, &vis).await;
            }
        }
        LiveOp::Unfavorite { run, project_wide } => {
            let (pid, lid) = run_ids(run);
            let vis = if *project_wide {
                Visibility::Project
            } else {
                Visibility::User
            };
            let _ = client.unfavorite_dashboard(&pid, &lid, &vis).await;
        }
        LiveOp::Settings {
            run,
            scorers,
            segment_filters,
        } => {
            let (pid, rid) = run_ids(run);
            let configs: Vec<Value> = scorers
                .iter()
                .filter_map(|(name, pin)| {
                    let mut c = json!({
                        "id": ids::scorer_id(name),
                        "scorer_type": scorer_type(name)?.as_str(),
                    });
                    if let Some(n) = pin {
                        c["scorer_version"] = json!({
                            "id": ids::version_id(name, *n),
                            "version": n,
                            "scorer_id": ids::scorer_id(name),
                        });
                    }
                    Some(c)
                })
                .collect();
            let mut body = json!({"scorers": configs});
            if let Some(f) = segment_filters {
                body["segment_filters"] = json!(f);
            }
            // Sent raw: the wire types cannot express what some clients send
            // (a filter without an operator, which the service fills in).
            let kind = if run.1 { "log_streams" } else { "experiments" };
            let url = format!(
                "{}/v2/projects/{pid}/{kind}/{rid}/metric_settings",
                SANDBOX.base_url()
            );
            let _ = reqwest::Client::new()
                .patch(url)
                .header("Service-AO-API-Key", "demo-api-key")
                .json(&body)
                .send()
                .await;
        }
        LiveOp::CreateTemplate {
            project,
            feedback,
            name,
            constraints,
        } => {
            let pid = ids::project(project);
            let body = json!({"name": name, "constraints": constraints});
            if *feedback {
                if let Ok(b) = serde_json::from_value::<TemplateCreate<_>>(body) {
                    let _ = client.create_feedback_template(&pid, &b).await;
                }
            } else if let Ok(b) = serde_json::from_value::<TemplateCreate<_>>(body) {
                let _ = client.create_annotation_template(&pid, &b).await;
            }
        }
        LiveOp::DeleteTemplate {
            project,
            feedback,
            name,
        } => {
            let pid = ids::project(project);
            if *feedback {
                if let Ok(list) = client.list_feedback_templates(&pid).await
                    && let Some(t) = list.iter().find(|t| t.name == *name)
                {
                    let _ = client.delete_feedback_template(&pid, &t.id).await;
                }
            } else if let Ok(list) = client.list_annotation_templates(&pid).await
                && let Some(t) = list.iter().find(|t| t.name == *name)
            {
                let _ = client.delete_annotation_template(&pid, &t.id).await;
            }
        }
    }
}

/// Runs one case against the shared sandbox, from the demo fixture.
fn run_case(case: &Case) -> Result<(), TestCaseError> {
    SANDBOX
        .with_state(|s| *s = Fixture::demo().into_state())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    // The generators make only valid repos: a refusal is a generator bug.
    let live_repo = load(&case.live_documents)
        .map_err(|e| TestCaseError::fail(format!("the live repo does not load:\n{e}")))?;
    let desired = load(&case.desired)
        .map_err(|e| TestCaseError::fail(format!("the desired repo does not load:\n{e}")))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let client = client();
    runtime.block_on(async {
        // Randomizing live state: whether this converges is the same
        // property, checked below on the case's desired state.
        let _ = reconcile(&client, &live_repo, false).await;
        for op in &case.live_ops {
            live_op(&client, op).await;
        }
        reconcile(&client, &desired, case.prune)
            .await
            .map_err(TestCaseError::fail)
    })
}

#[test]
fn applying_the_plan_leaves_nothing_to_plan() {
    let mut runner = TestRunner::new(Config {
        max_shrink_iters: 400,
        failure_persistence: None,
        ..property_support::config(64)
    });
    match runner.run(&case(), |c| run_case(&c)) {
        Ok(()) => {}
        Err(TestError::Fail(why, minimal)) => {
            panic!("minimal failing case:{minimal:?}\n{why}")
        }
        Err(TestError::Abort(why)) => panic!("aborted: {why}"),
    }
}

#[test]
fn the_generators_make_repos_that_load_and_plan() {
    // Sanity of the generators themselves: a sample of repos loads without
    // errors and plans against the demo fixture.
    let mut runner = TestRunner::deterministic();
    let strategy = documents();
    let sandbox = Sandbox::builder().start().expect("a sandbox");
    let config = ClientConfig::new(
        sandbox.base_url(),
        Credentials::ApiKey(Secret::new("demo-api-key")),
    );
    let client = Client::new(config).expect("a client");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let mut changes = 0;
    for _ in 0..32 {
        let docs = strategy.new_tree(&mut runner).expect("a value").current();
        let set = load(&docs).unwrap_or_else(|e| panic!("{e}\n{docs:#?}"));
        let p = runtime
            .block_on(read_and_plan(&client, &set, &PlanOptions::default()))
            .expect("read")
            .plan
            .unwrap_or_else(|e| panic!("{e}"));
        changes += p.changes.len();
    }
    assert!(
        changes > 32,
        "the generators barely change anything: {changes}"
    );
}
