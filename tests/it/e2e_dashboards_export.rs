//! End to end: dashboards as code through `export` and `drift`, the real
//! binary against the sandbox. Widgets (per section and at the top level),
//! dashboard settings and a log stream's other dashboards (by name, with
//! their visibility) are exported so that `export --verify`, `plan` and
//! `drift` of the files are empty; a favorite is written with a comment, not
//! a guessed audience; a second widget or dashboard of a name is left out
//! with a warning. Against the exported files, what someone changes in the
//! service afterwards (a widget's field, a widget added or deleted, a
//! setting, the favorite, a dashboard's description, a dashboard deleted or
//! added) is drift naming the address and the field, and the plan's warnings say what
//! a deletion takes with it.

use crate::e2e_support;

use e2e_support::TestContext;
use evalctl::api::{
    MetricAggregation, SectionCreateRequest, TrendsDashboard, TrendsDashboardDuplicateRequest,
    TrendsDashboardUpdateRequest, Visibility, WidgetCreateRequest, WidgetType, WidgetUpdateRequest,
};

/// Declared, then applied: the starting point of every test.
const DASHBOARDS: &str = r##"
kind: Project
name: demo-project
log_streams:
  - name: production
    trends:
      interval_mins: 30
      relative_time: last_14_days
      group_by: model
      favorite: project
      widgets:
        - {name: Traces, type: number, metric: num_traces, aggregation: Count}
      sections:
        - name: Quality
          widgets:
            - {name: Correctness, type: bar_chart, metric: correctness, aggregation: Count}
        - name: Cost
          color: "#2CA02C"
          widgets:
            - name: Cost per trace
              type: number
              metric: cost_usd
              aggregation: Average
              description: "Spend in $${USD}, # not a comment"
              dataset: [{metrics: [cost_usd], groups: [model, region]}]
      dashboards:
        - name: On-call
          interval_mins: 5
          widgets:
            - {name: Errors, type: table, metric: error_count, aggregation: Sum}
        - name: Triage
          visibility: user
          description: "Mine: yes"
          relative_time: last_24_hours
          widgets: []
          sections:
            - name: Errors
              color: "#D62728"
              widgets:
                - {name: 5xx, type: line_chart, metric: status_5xx, aggregation: Sum}
"##;

/// The ids of demo-project and its production log stream.
fn ids(ctx: &TestContext) -> (String, String) {
    ctx.demo_ids("production")
}

/// The production log stream's dashboards as the demo user reads them, in
/// the listing's order.
fn dashboards(ctx: &TestContext) -> Vec<TrendsDashboard> {
    let (project, ls) = ids(ctx);
    let client = ctx.client();
    ctx.block_on(async {
        let mut out = Vec::new();
        let listed = client
            .list_dashboards(&project, &ls)
            .await
            .expect("the dashboards are listed");
        for d in listed {
            out.push(
                client
                    .get_dashboard(&project, &ls, Some(&d.id))
                    .await
                    .expect("a dashboard is read")
                    .expect("a listed dashboard exists"),
            );
        }
        out
    })
}

fn by_name<'d>(all: &'d [TrendsDashboard], name: &str) -> &'d TrendsDashboard {
    all.iter()
        .find(|d| d.name == name && (name != "Default" || d.is_default))
        .unwrap_or_else(|| panic!("dashboard `{name}`"))
}

fn widget(name: &str, widget_type: WidgetType, section_id: Option<&str>) -> WidgetCreateRequest {
    WidgetCreateRequest {
        name: name.into(),
        description: None,
        widget_type,
        dataset: None,
        metric: "num_traces".into(),
        aggregation: MetricAggregation::from("Count"),
        section_id: section_id.map(str::to_owned),
    }
}

/// Applies [`DASHBOARDS`], then changes the service out of band in ways a
/// manifest must still hold: an absolute time range, a widget and a section
/// whose text needs care in YAML.
fn setup(ctx: &TestContext) {
    ctx.write("repo/demo.yaml", DASHBOARDS);
    ctx.evalctl(&["apply", "repo", "--auto-approve"]).expect(0);
    let all = dashboards(ctx);
    let (project, ls) = ids(ctx);
    let oncall = by_name(&all, "On-call").id.clone();
    let triage = by_name(&all, "Triage").id.clone();
    let client = ctx.client();
    ctx.block_on(async {
        client
            .update_dashboard(
                &project,
                &ls,
                Some(&oncall),
                &TrendsDashboardUpdateRequest {
                    start_time: Some(1_700_000_000),
                    end_time: Some(1_700_086_400),
                    relative_time: Some(None),
                    ..Default::default()
                },
            )
            .await
            .expect("an absolute time range is set");
        let section = client
            .create_section(
                &project,
                &ls,
                Some(&triage),
                &SectionCreateRequest {
                    name: "yes".into(),
                    description: Some("null".into()),
                    color: None,
                },
            )
            .await
            .expect("a section is created");
        let mut w = widget(
            "- dash: ${HOME}",
            WidgetType::from("number"),
            Some(&section.id),
        );
        w.description = Some("First: ${HOME} # kept".into());
        w.dataset = Some(vec![std::collections::BTreeMap::from([(
            "metrics".to_owned(),
            vec!["yes".to_owned(), "1.0".to_owned()],
        )])]);
        client
            .create_widget(&project, &ls, Some(&triage), &w)
            .await
            .expect("a widget is created");
    });
}

#[test]
fn widgets_settings_and_other_dashboards_export_and_plan_empty() {
    let ctx = TestContext::new();
    setup(&ctx);
    let run = ctx.evalctl(&[
        "export",
        "--dir",
        "out",
        "--project",
        "demo-project",
        "--verify",
    ]);
    run.expect(0);
    assert!(
        run.stderr
            .contains("Verified: planning the exported files against live state shows no changes."),
        "{}",
        run.stderr
    );
    ctx.evalctl(&["plan", "out", "--detailed-exitcode"])
        .expect(0);
    ctx.evalctl(&["drift", "out"]).expect(0);
    // With --prune too: every dashboard, section and widget is written.
    ctx.evalctl(&["plan", "out", "--prune", "--detailed-exitcode"])
        .expect(0);

    let text = std::fs::read_to_string(ctx.path("out/demo-project.yaml")).unwrap();
    for line in [
        "      favorite: user  # the service reads back only that it is favorited for you, not whether for the whole project: `project` if so (export does not guess)\n",
        "      interval_mins: 30\n      relative_time: last_14_days\n      group_by: model\n",
        "        - name: Triage\n          visibility: user\n          description: \"Mine: yes\"\n",
        "              description: \"Spend in $${USD}, # not a comment\"\n",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    // On-call's absolute range cannot be written: left out (unmanaged).
    let oncall = &text[text.find("        - name: On-call\n").unwrap()..];
    let oncall = &oncall[..oncall.find("        - name: Triage\n").unwrap()];
    assert!(!oncall.contains("relative_time"), "{oncall}");
    assert!(oncall.contains("          interval_mins: 5\n"), "{oncall}");

    ctx.evalctl(&["export", "--dir", "again", "--project", "demo-project"])
        .expect(0);
    assert_eq!(
        std::fs::read_to_string(ctx.path("again/demo-project.yaml")).unwrap(),
        text,
        "deterministic"
    );
    let mut settings = ctx.insta_settings();
    settings.add_filter(r"evalctl \d+\.\d+\.\d+\S*", "evalctl [VERSION]");
    settings.bind(|| insta::assert_snapshot!("demo_project_with_dashboards", text));
}

#[test]
fn second_widgets_and_dashboards_of_a_name_are_left_out_with_warnings() {
    let ctx = TestContext::new();
    setup(&ctx);
    let all = dashboards(&ctx);
    let (project, ls) = ids(&ctx);
    let default = all.iter().find(|d| d.is_default).unwrap();
    let quality = default
        .sections
        .iter()
        .find(|s| s.name == "Quality")
        .unwrap()
        .id
        .clone();
    let source = by_name(&all, "On-call").id.clone();
    let client = ctx.client();
    ctx.block_on(async {
        client
            .create_widget(
                &project,
                &ls,
                None,
                &widget("Correctness", WidgetType::from("table"), Some(&quality)),
            )
            .await
            .unwrap();
        client
            .duplicate_dashboard(
                &project,
                &ls,
                &source,
                &TrendsDashboardDuplicateRequest {
                    name: "On-call".into(),
                    description: None,
                    visibility: Some(Visibility::Project),
                },
            )
            .await
            .unwrap();
    });
    let run = ctx.evalctl(&[
        "export",
        "--dir",
        "out",
        "--project",
        "demo-project",
        "--verify",
    ]);
    run.expect(0);
    for line in [
        "widget `Correctness` of section `Quality` of the default dashboard of log stream `production` of project `demo-project` is the second of that name; only the first is exported",
        "dashboard `On-call` of log stream `production` of project `demo-project` is the second of that name; only the first is exported",
        "shows no changes but the deletion of 2 second object(s) of a name",
    ] {
        assert!(run.stderr.contains(line), "{line}\n{}", run.stderr);
    }
    let text = std::fs::read_to_string(ctx.path("out/demo-project.yaml")).unwrap();
    assert_eq!(text.matches("- name: On-call\n").count(), 1, "{text}");
    assert!(
        !text.contains("type: table\n              metric: num_traces"),
        "{text}"
    );
}

#[test]
fn out_of_band_dashboard_changes_against_exported_files_are_drift() {
    let ctx = TestContext::new();
    setup(&ctx);
    ctx.evalctl(&["export", "--dir", "out", "--project", "demo-project"])
        .expect(0);
    let all = dashboards(&ctx);
    let (project, ls) = ids(&ctx);
    let default = all.iter().find(|d| d.is_default).unwrap();
    let section = |d: &TrendsDashboard, name: &str| {
        d.sections
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("section `{name}`"))
            .clone()
    };
    let quality = section(default, "Quality");
    let correctness = quality.widgets[0].id.clone();
    let traces = default.widgets[0].id.clone();
    let oncall = by_name(&all, "On-call").id.clone();
    let triage = by_name(&all, "Triage");
    let five_xx = section(triage, "Errors").widgets[0].id.clone();
    let triage = triage.id.clone();
    let client = ctx.client();
    ctx.block_on(async {
        // A widget's aggregation changed and the widget moved to the top level.
        client
            .update_widget(
                &project,
                &ls,
                &correctness,
                None,
                &WidgetUpdateRequest {
                    aggregation: Some(MetricAggregation::from("Average")),
                    section_id: Some(None),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        // A widget deleted; one added to a managed section; a section with a
        // widget added.
        client
            .delete_widget(&project, &ls, &traces, None)
            .await
            .unwrap();
        client
            .create_widget(
                &project,
                &ls,
                None,
                &widget("Added", WidgetType::from("number"), Some(&quality.id)),
            )
            .await
            .unwrap();
        let extra = client
            .create_section(
                &project,
                &ls,
                None,
                &SectionCreateRequest {
                    name: "Extra".into(),
                    description: None,
                    color: None,
                },
            )
            .await
            .unwrap();
        client
            .create_widget(
                &project,
                &ls,
                None,
                &widget("Inside", WidgetType::from("table"), Some(&extra.id)),
            )
            .await
            .unwrap();
        // The default dashboard's settings.
        client
            .update_dashboard(
                &project,
                &ls,
                None,
                &TrendsDashboardUpdateRequest {
                    interval_mins: Some(15),
                    group_by: Some(None),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        // Another dashboard's description, and a widget's metric there.
        client
            .update_dashboard(
                &project,
                &ls,
                Some(&triage),
                &TrendsDashboardUpdateRequest {
                    description: Some(Some("Paged at night".into())),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        client
            .update_widget(
                &project,
                &ls,
                &five_xx,
                Some(&triage),
                &WidgetUpdateRequest {
                    metric: Some("status_4xx".into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
        // The favorite taken away.
        client
            .unfavorite_dashboard(&project, &ls, &Visibility::Project)
            .await
            .expect("the favorite is removed");
        // A dashboard made by hand, another deleted.
        client
            .duplicate_dashboard(
                &project,
                &ls,
                &oncall,
                &TrendsDashboardDuplicateRequest {
                    name: "Scratch".into(),
                    description: None,
                    visibility: Some(Visibility::Project),
                },
            )
            .await
            .unwrap();
        client
            .delete_dashboard(&project, &ls, &oncall)
            .await
            .unwrap();
    });

    let drift = ctx.evalctl(&["drift", "out"]);
    drift.expect(2);
    let at = "project[demo-project].log_stream[production]";
    for line in [
        format!(
            "~ {at}.trends.section[Quality].widget[Correctness] (moved from the top level; fields differ)"
        ),
        "~ aggregation  configured: \"Count\"  live: \"Average\"".to_owned(),
        format!("+ {at}.trends.widget[Traces] (declared, not on the dashboard)"),
        format!("~ {at}.trends.favorite"),
        format!("~ {at}.trends.settings (fields differ)"),
        "+ group_by  configured: \"model\"  live: absent".to_owned(),
        "~ interval_mins  configured: 30  live: 15".to_owned(),
        format!("~ {at}.dashboard[Triage] (fields differ)"),
        "~ description  configured: \"Mine: yes\"  live: \"Paged at night\"".to_owned(),
        format!("~ {at}.dashboard[Triage].section[Errors].widget[5xx] (fields differ)"),
        "~ metric  configured: \"status_5xx\"  live: \"status_4xx\"".to_owned(),
        format!("+ {at}.dashboard[On-call] (declared, not on the log stream: a copy of `Default`)"),
        // Undeclared: noted (their creator named), deleted only with --prune.
        format!("* {at}.dashboard[Scratch] (created by Demo Admin <demo@example.com>)"),
        format!("* {at}.trends.section[Quality].widget[Added]"),
        format!("* {at}.trends.section[Extra]"),
    ] {
        assert!(drift.stdout.contains(&line), "{line}\n{}", drift.stdout);
    }

    // The plan with --prune says what the deletions take with them.
    let plan = ctx.evalctl(&["plan", "out", "--prune"]);
    plan.expect(0);
    for line in [
        format!("- {at}.dashboard[Scratch] (not declared (--prune))"),
        "which go with it; the whole project sees it".to_owned(),
        format!("- {at}.trends.section[Extra] (not declared (--prune))"),
        "! the section holds 1 widget(s), which are deleted with it".to_owned(),
        format!("- {at}.trends.section[Quality].widget[Added] (not declared (--prune))"),
    ] {
        assert!(plan.stdout.contains(&line), "{line}\n{}", plan.stdout);
    }
    // The dashboard's deletion names its creator, after its warning.
    let scratch = &plan.stdout[plan
        .stdout
        .find(&format!("- {at}.dashboard[Scratch]"))
        .unwrap()..];
    let scratch = &scratch[..scratch.find("\n\n").unwrap_or(scratch.len())];
    assert!(
        scratch.contains("created by Demo Admin <demo@example.com>"),
        "{scratch}"
    );
    let json = ctx.evalctl(&["drift", "out", "-o", "json"]);
    json.expect(2);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).expect("drift -o json");
    let mut changes: Vec<String> = doc["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            let fields: Vec<&str> = c["fields"]
                .as_array()
                .expect("fields")
                .iter()
                .map(|f| f["path"].as_str().expect("a path"))
                .collect();
            format!(
                "{} {} [{}]",
                c["action"].as_str().expect("an action"),
                c["address"],
                fields.join(", ")
            )
        })
        .collect();
    changes.sort();
    insta::assert_debug_snapshot!("drift_changes", changes);

    // Apply with --prune puts back what the exported files say.
    ctx.evalctl(&["apply", "out", "--auto-approve", "--prune"])
        .expect(0);
    ctx.evalctl(&["drift", "out"]).expect(0);
    ctx.evalctl(&["plan", "out", "--prune", "--detailed-exitcode"])
        .expect(0);

    // An exported dashboard's visibility changed in the file: a replace
    // that says what is lost and who made the dashboard.
    let path = ctx.path("out/demo-project.yaml");
    let text = std::fs::read_to_string(&path).expect("the exported file");
    let edited = text.replace(
        "          visibility: user\n",
        "          visibility: project\n",
    );
    assert_ne!(edited, text);
    std::fs::write(&path, edited).expect("the file is written");
    let plan = ctx.evalctl(&["plan", "out"]);
    plan.expect(0);
    let triage = &plan.stdout[plan
        .stdout
        .find(&format!("-/+ {at}.dashboard[Triage]"))
        .unwrap_or_else(|| panic!("a replace:\n{}", plan.stdout))..];
    let triage = &triage[..triage.find("\n\n").unwrap_or(triage.len())];
    for line in [
        "visibility `user` → `project`: the service cannot change it in place",
        "the copy that replaces it has a new id: links to the dashboard break, and favorites of it are lost",
        "created by Demo Admin <demo@example.com>",
    ] {
        assert!(triage.contains(line), "{line}\n{triage}");
    }
}
