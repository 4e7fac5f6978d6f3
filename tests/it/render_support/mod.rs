//! Plans and apply reports built from literals, shared by the renderer tests.
//!
//! Field changes are computed with the planner's own diff, so they have the
//! shape a real plan has (a created object is one change of the whole value,
//! an array whose length changed is one change of the whole array).

use evalctl::api::{
    Compact, IntegrationCreate, MetricSettingsRequest, SectionCreateRequest, SectionUpdateRequest,
    Visibility,
};
use evalctl::kinds::KindOp;
use evalctl::kinds::templates::{AnnotationConstraints, TemplateCreate, TemplateUpdate};
use evalctl::kinds::templates::{TemplateAddress, TemplateKind};
use evalctl::kinds::templates::{TemplateBody, TemplateOp};
use evalctl::manifest::types::EnvRef;
use evalctl::plan::address::{
    CustomIntegrationAddress, DashboardAddress, FavoriteAddress, IntegrationAddress,
    MetricSettingsAddress, SectionAddress, SettingsAddress, WidgetAddress,
};
use evalctl::plan::attribution::{Sides, attribute};
use evalctl::plan::diff::field_changes;
use evalctl::plan::fingerprint::fingerprint;
use evalctl::plan::{
    Action, Address, ApplyReport, BlastRadius, ChangeOutcome, Enrichment, FieldChange, Note,
    NoteKind, Operation, OutcomeStatus, Plan, ResourceChange, RunKind, RunRef, Unconverged,
};
use evalctl::render::{Applied, Format, Mode, RenderOptions, render_apply, render_plan};
use serde_json::{Value, json};

/// Plain options of a mode.
pub fn opts(mode: Mode) -> RenderOptions<'static> {
    RenderOptions {
        color: false,
        mode,
        saved_plan: None,
        artifact: None,
    }
}

/// A change as the planner builds it.
pub fn change(
    address: Address,
    action: Action,
    reason: &str,
    before: Option<Value>,
    after: Option<Value>,
    operations: Vec<Operation>,
    keyed_sets: &[&str],
) -> ResourceChange {
    let null = Value::Null;
    let fields = field_changes(
        before.as_ref().unwrap_or(&null),
        after.as_ref().unwrap_or(&null),
        keyed_sets,
    );
    ResourceChange {
        address,
        action,
        reason: reason.to_owned(),
        fields,
        live_fingerprint: fingerprint(before.as_ref()),
        operations,
        warnings: Vec::new(),
        created_by: None,
        attribution: None,
    }
}

pub fn plan_of(changes: Vec<ResourceChange>, notes: Vec<Note>) -> Plan {
    Plan {
        changes: changes.into(),
        notes,
        ..Plan::empty()
    }
}

fn section_address(name: &str) -> Address {
    Address::Section(SectionAddress {
        project: "demo".into(),
        log_stream: "production".into(),
        dashboard: None,
        name: name.into(),
    })
}

fn scorer(id: &str, scorer_type: &str, extra: Value) -> Value {
    let mut v = json!({
        "id": id,
        "scorer_type": scorer_type,
    });
    if let (Some(obj), Value::Object(more)) = (v.as_object_mut(), extra) {
        obj.extend(more);
    }
    v
}

fn segment_filter(sample_rate: f64, filter: Option<Value>, llm: bool) -> Value {
    let mut v = json!({"sample_rate": sample_rate});
    if let (Some(obj), Some(f)) = (v.as_object_mut(), filter) {
        obj.insert("filter".into(), f);
    }
    if let Some(obj) = v.as_object_mut() {
        obj.insert("llm_scorers".into(), json!(llm));
        obj.insert("multimodal_scorers".into(), json!(false));
    }
    v
}

/// Metric settings: `bleu` enabled, `rouge` disabled, `correctness`
/// reconfigured (3 → 5 judges), a segment filter changed and one added;
/// `correctness` v3 is shared with other projects.
pub fn metric_settings_change() -> ResourceChange {
    let correctness = |judges: i64| {
        scorer(
            "6f1c2b9e-4d3a-4c8e-9b7a-2e5d1f0a3c41",
            "llm",
            json!({
                "scorer_version": 3,
                "model_name": "gpt-4.1-mini",
                "num_judges": judges,
                "cot_enabled": true,
                "output_type": "boolean",
                "input_type": "basic",
                "model_type": "llm",
                "roll_up_method": "average",
            }),
        )
    };
    let rouge = scorer(
        "0b8e7d6c-5a4f-4e3d-8c2b-1a0f9e8d7c6b",
        "preset",
        json!({"output_type": "percentage", "roll_up_method": "average"}),
    );
    let bleu = scorer(
        "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d",
        "preset",
        json!({"output_type": "percentage", "roll_up_method": "average",
               "scoreable_node_types": ["chat", "llm"]}),
    );
    let node_filter =
        json!({"name": "node_name", "operator": "eq", "value": "llm", "case_sensitive": true});
    let meta_filter = json!({"name": "metadata", "operator": "one_of", "key": "tier", "value": ["enterprise", "pro"]});
    let before = json!({
        "scorers": {"correctness": correctness(3), "rouge": rouge},
        "segment_filters": [segment_filter(0.5, Some(node_filter.clone()), false)],
    });
    let after = json!({
        "scorers": {"bleu": bleu, "correctness": correctness(5)},
        "segment_filters": [
            segment_filter(0.25, Some(node_filter), false),
            segment_filter(1.0, Some(meta_filter), true),
        ],
    });
    change(
        Address::MetricSettings(MetricSettingsAddress {
            project: "demo".into(),
            run_kind: RunKind::LogStream,
            run: "production".into(),
        }),
        Action::Update,
        "enable bleu; disable rouge; reconfigure correctness; change `segment_filters`",
        Some(before),
        Some(after),
        vec![Operation::PatchMetricSettings {
            project_id: "p-1".into(),
            run: RunRef {
                kind: RunKind::LogStream,
                id: "ls-1".into(),
            },
            body: Compact::new(&MetricSettingsRequest::default()),
        }],
        &["scorers"],
    )
}

/// What was read beside the plans: the blast radius of the metric-settings
/// change, and the people behind the user ids they name.
pub fn enrichment() -> Enrichment {
    let radius = BlastRadius {
        scorer: "correctness".into(),
        scorer_version_id: "v-3".into(),
        version: 3,
        projects: vec![
            "billing-bot".into(),
            "search".into(),
            "support-bot".into(),
            "triage".into(),
        ],
        total_count: 12,
    };
    Enrichment {
        blast_radius: [(metric_settings_change().address.to_string(), vec![radius])].into(),
        people: [
            ("u-ana".to_owned(), "Ana Diaz <ana@example.com>".to_owned()),
            ("u-bo".to_owned(), "Bo Chen <bo@example.com>".to_owned()),
        ]
        .into(),
    }
}

/// Renders `report` as the apply of [`full_plan`], with [`enrichment`].
pub fn render_report(report: &ApplyReport, format: Format, opts: &RenderOptions) -> String {
    let (plan, enrichment) = (full_plan(), enrichment());
    let applied = Applied {
        plan: &plan,
        enrichment: &enrichment,
        report,
        plan_after_apply: None,
    };
    render_apply(&applied, format, opts).expect("renders")
}

/// Renders a plan with [`enrichment`].
pub fn render(plan: &Plan, format: Format, opts: &RenderOptions) -> String {
    render_plan(plan, &enrichment(), format, opts).expect("renders")
}

fn openai_body() -> IntegrationCreate<EnvRef> {
    let token = match EnvRef::new("OPENAI_API_KEY") {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    };
    IntegrationCreate::Openai {
        token,
        organization_id: Some("org-8f2e".into()),
    }
}

pub fn integration_create() -> ResourceChange {
    change(
        Address::Integration(IntegrationAddress {
            provider: "openai".into(),
        }),
        Action::Create,
        "no integration for this provider",
        None,
        Some(json!({"provider": "openai", "organization_id": "org-8f2e"})),
        vec![Operation::PutIntegration {
            body: Box::new(openai_body()),
        }],
        &[],
    )
}

fn template_address(kind: TemplateKind, name: &str) -> Address {
    Address::Template(TemplateAddress {
        project: "demo".into(),
        kind,
        name: name.into(),
    })
}

pub fn template_replace() -> ResourceChange {
    let t = |max: i64| {
        json!({"name": "Helpfulness", "criteria": "How helpful was the answer?",
               "include_explanation": false,
               "constraints": {"annotation_type": "score", "min": 1, "max": max}})
    };
    let body = TemplateBody::Annotation(TemplateCreate {
        name: "Helpfulness".into(),
        include_explanation: None,
        criteria: Some("How helpful was the answer?".into()),
        constraints: AnnotationConstraints::Score { min: 1, max: 10 },
    });
    let mut c = change(
        template_address(TemplateKind::Annotation, "Helpfulness"),
        Action::Replace,
        "constraints cannot be changed in place",
        Some(t(5)),
        Some(t(10)),
        vec![
            Operation::Kind(KindOp::Template(TemplateOp::DeleteTemplate {
                project_id: "p-1".into(),
                kind: TemplateKind::Annotation,
                template_id: "t-1".into(),
            })),
            Operation::Kind(KindOp::Template(TemplateOp::CreateTemplate {
                project_id: "p-1".into(),
                body,
            })),
        ],
        &[],
    );
    c.warnings.push(
        "12 rating(s) use this template; replacing it leaves them without their template".into(),
    );
    c
}

pub fn section_create(name: &str) -> ResourceChange {
    change(
        section_address(name),
        Action::Create,
        "declared, not on the dashboard",
        None,
        Some(json!({"name": name, "description": "p95 and p99 by route", "color": "#ff8800"})),
        vec![Operation::CreateSection {
            project_id: "p-1".into(),
            log_stream_id: "ls-1".into(),
            dashboard_id: "d-1".into(),
            body: SectionCreateRequest {
                name: name.into(),
                description: Some("p95 and p99 by route".into()),
                color: Some("#ff8800".into()),
            },
        }],
        &[],
    )
}

pub fn section_update() -> ResourceChange {
    change(
        section_address("Quality"),
        Action::Update,
        "fields differ",
        Some(json!({"name": "Quality", "color": "#00aa00"})),
        Some(json!({"name": "Quality", "description": "Scores over time", "color": "#0055ff"})),
        vec![Operation::UpdateSection {
            project_id: "p-1".into(),
            log_stream_id: "ls-1".into(),
            dashboard_id: "d-1".into(),
            section_id: "s-2".into(),
            body: SectionUpdateRequest {
                name: None,
                description: Some("Scores over time".into()),
                color: Some("#0055FF".into()),
            },
        }],
        &[],
    )
}

pub fn section_delete() -> ResourceChange {
    let mut c = change(
        section_address("Old experiments"),
        Action::Delete,
        "not declared (--prune)",
        Some(json!({"name": "Old experiments"})),
        None,
        vec![Operation::DeleteSection {
            project_id: "p-1".into(),
            log_stream_id: "ls-1".into(),
            dashboard_id: "d-1".into(),
            section_id: "s-9".into(),
        }],
        &[],
    );
    c.warnings
        .push("the section holds 3 widget(s), which are deleted with it".into());
    c.created_by = Some("u-ana".into());
    c
}

pub fn favorite() -> ResourceChange {
    change(
        Address::Favorite(FavoriteAddress {
            project: "demo".into(),
            log_stream: "production".into(),
        }),
        Action::Update,
        "favorite for the project",
        Some(json!({"favorited": false})),
        Some(json!({"favorited": true})),
        vec![Operation::Favorite {
            project_id: "p-1".into(),
            log_stream_id: "ls-1".into(),
            dashboard_id: "d-1".into(),
            visibility: Visibility::Project,
        }],
        &[],
    )
}

pub fn notes() -> Vec<Note> {
    vec![
        Note {
            address: Some(template_address(TemplateKind::Feedback, "Legacy thumbs")),
            kind: NoteKind::Unmanaged,
            message: "feedback template `Legacy thumbs` exists but is not declared (delete it with --prune)".into(),
            created_by: Some("u-bo".into()),
        },
        Note {
            address: Some(section_address("Scratch")),
            kind: NoteKind::Unmanaged,
            message: "section `Scratch` exists but is not declared (delete it with --prune)".into(),
            created_by: None,
        },
        Note {
            address: Some(Address::Integration(IntegrationAddress {
                provider: "openai".into(),
            })),
            kind: NoteKind::Unverifiable,
            message: "the service does not return organization_id; a change to it is sent only with other changes or --rotate-secrets".into(),
            created_by: None,
        },
        Note {
            address: None,
            kind: NoteKind::Info,
            message: "2 experiments of project `demo` have no metric settings declared".into(),
            created_by: None,
        },
    ]
}

/// One change of each action and kind, with notes, in address order.
pub fn full_plan() -> Plan {
    plan_of(
        vec![
            integration_create(),
            template_replace(),
            metric_settings_change(),
            section_create("Latency"),
            section_delete(),
            section_update(),
            favorite(),
        ],
        notes(),
    )
}

pub const OLD_CRITERIA: &str = "You are grading the tone of an assistant's reply to a customer.\n\
Rate 1 when the reply is rude, dismissive or sarcastic.\n\
Rate 2 when the reply is curt but not rude.\n\
Rate 3 when the reply is neutral.\n\
Rate 4 when the reply is warm and professional.\n\
Rate 5 when the reply is warm, professional and anticipates the customer's next question.\n\
Ignore spelling mistakes.\n\
Answer with the number only.\n";

pub const NEW_CRITERIA: &str = "You are grading the tone of an assistant's reply to a customer.\n\
Rate 1 when the reply is rude, dismissive or sarcastic.\n\
Rate 2 when the reply is curt but not rude.\n\
Rate 3 when the reply is neutral.\n\
Rate 4 when the reply is warm and professional.\n\
Rate 5 when the reply is warm, professional and anticipates the customer's next question.\n\
Ignore spelling mistakes, but not a wrong product name.\n\
Answer with the number, then one sentence explaining it.\n";

/// A feedback template whose long criteria changed.
pub fn long_text_plan() -> Plan {
    let t = |criteria: &str| {
        json!({"name": "Tone", "criteria": criteria, "include_explanation": true,
               "constraints": {"feedback_type": "score", "min": 1, "max": 5}})
    };
    plan_of(
        vec![change(
            template_address(TemplateKind::Feedback, "Tone"),
            Action::Update,
            "criteria differ",
            Some(t(OLD_CRITERIA)),
            Some(t(NEW_CRITERIA)),
            vec![Operation::Kind(KindOp::Template(
                TemplateOp::PatchTemplate {
                    project_id: "p-1".into(),
                    kind: TemplateKind::Feedback,
                    template_id: "t-7".into(),
                    body: TemplateUpdate {
                        name: "Tone".into(),
                        criteria: Some(NEW_CRITERIA.into()),
                    },
                },
            ))],
            &[],
        )],
        Vec::new(),
    )
}

/// An apply that partly failed: succeeded, failed, skipped, and one object
/// whose fields did not stick.
pub fn apply_report() -> ApplyReport {
    let outcome = |address: Address, action, status, detail: Option<&str>| ChangeOutcome {
        address: address.into(),
        action,
        status,
        detail: detail.map(str::to_owned),
        // A refusal (422) or a skip after it: a second apply fails alike.
        transient: false,
        invalid_input: false,
    };
    let ms = metric_settings_change().address;
    ApplyReport {
        outcomes: vec![
            outcome(
                Address::Integration(IntegrationAddress {
                    provider: "openai".into(),
                }),
                Action::Create,
                OutcomeStatus::Succeeded,
                None,
            ),
            outcome(
                template_address(TemplateKind::Annotation, "Helpfulness"),
                Action::Replace,
                OutcomeStatus::Failed,
                Some(
                    "the service answered 422 Unprocessable Entity:\n  body.constraints.max: Input should be less than or equal to 10",
                ),
            ),
            outcome(ms.clone(), Action::Update, OutcomeStatus::Succeeded, None),
            outcome(
                section_address("Latency"),
                Action::Create,
                OutcomeStatus::Succeeded,
                Some("already existed as wanted"),
            ),
            outcome(
                section_address("Old experiments"),
                Action::Delete,
                OutcomeStatus::Skipped,
                Some("the run stopped after a failure"),
            ),
            ChangeOutcome {
                // Not started because of an interrupt: a second apply makes it.
                transient: true,
                ..outcome(
                    section_address("Quality"),
                    Action::Update,
                    OutcomeStatus::Skipped,
                    Some(
                        "not started: the apply was interrupted (SIGTERM); the next apply makes it",
                    ),
                )
            },
        ],
        unconverged: vec![Unconverged {
            address: ms,
            fields: vec![
                FieldChange::new(
                    "scorers[correctness].num_judges",
                    Some(json!(5)),
                    Some(json!(3)),
                ),
                FieldChange::new(
                    "scorers[bleu]",
                    Some(
                        json!({"id": "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d", "scorer_type": "preset"}),
                    ),
                    None,
                ),
            ],
        }],
    }
}

/// `count` section creates, for folding.
pub fn many_changes(count: usize) -> Plan {
    let changes = (0..count)
        .map(|i| section_create(&format!("Section {i:04} of the big dashboard")))
        .collect();
    plan_of(changes, notes())
}

/// Every format of every mode.
pub fn all_formats() -> Vec<(Format, Mode)> {
    let mut out = Vec::new();
    for format in [Format::Text, Format::Json, Format::Markdown] {
        for mode in [Mode::Plan, Mode::Drift] {
            out.push((format, mode));
        }
    }
    out
}

/// `change`, moved to `project` (an integration stays where it is).
pub fn in_project(mut change: ResourceChange, project: &str) -> ResourceChange {
    match &mut change.address {
        Address::Integration(IntegrationAddress { .. })
        | Address::CustomIntegration(CustomIntegrationAddress { .. })
        | Address::CustomScorer(_) => {}
        Address::Template(TemplateAddress { project: p, .. })
        | Address::MetricSettings(MetricSettingsAddress { project: p, .. })
        | Address::Section(SectionAddress { project: p, .. })
        | Address::Favorite(FavoriteAddress { project: p, .. })
        | Address::Widget(WidgetAddress { project: p, .. })
        | Address::Settings(SettingsAddress { project: p, .. })
        | Address::Dashboard(DashboardAddress { project: p, .. }) => *p = project.to_owned(),
        Address::PromptTemplate(a) => a.project = Some(project.to_owned()),
        Address::ProtectStage(a) => a.project = project.to_owned(),
        Address::Project(a) => a.project = project.to_owned(),
        Address::LogStream(a) => a.project = project.to_owned(),
    }
    change
}

/// A large rollout: five changes in each of `projects` projects (`team-000`,
/// ...): a section created, one updated, metric settings changed, a template
/// replaced (with a warning), and the favorite set, or on every tenth project a
/// section deleted (with a warning); in address order, with notes.
pub fn rollout_plan(projects: usize) -> Plan {
    let mut changes = Vec::new();
    for i in 0..projects {
        let project = format!("team-{i:03}");
        let last = if i % 10 == 0 {
            section_delete()
        } else {
            favorite()
        };
        for c in [
            section_create("Latency"),
            section_update(),
            metric_settings_change(),
            template_replace(),
            last,
        ] {
            changes.push(in_project(c, &project));
        }
    }
    changes.sort_by(|a, b| a.address.cmp(&b.address));
    plan_of(changes, notes())
}

/// A three-way plan, attributed by the planner's own [`attribute`]: one
/// change of each attribution. Live: correctness has 3 judges, rouge is on,
/// Quality is green, Latency is missing. The base (and the manifests as last
/// applied): 4 judges, rouge off, Quality blue; the base (not yet applied)
/// also wants Latency and a template criteria change this PR drops. The
/// PR: 5 judges, bleu on, new segment filters; Quality described;
/// `Old experiments` deleted.
pub fn three_way_plan() -> Plan {
    let settings = metric_settings_change();
    let quality = section_update();
    let latency = section_create("Latency");
    let base_change =
        |address: &Address, action: Action, fields: Vec<FieldChange>| ResourceChange {
            address: address.clone(),
            action,
            reason: String::new(),
            fields,
            live_fingerprint: String::new(),
            operations: Vec::new(),
            warnings: Vec::new(),
            created_by: None,
            attribution: None,
        };
    let applied = vec![
        base_change(
            &settings.address,
            Action::Update,
            vec![
                FieldChange::new(
                    "scorers[correctness].num_judges",
                    Some(json!(3)),
                    Some(json!(4)),
                ),
                FieldChange::new(
                    "scorers[rouge]",
                    Some(json!({"scorer_type": "preset"})),
                    None,
                ),
            ],
        ),
        base_change(
            &quality.address,
            Action::Update,
            vec![FieldChange::new(
                "color",
                Some(json!("#00aa00")),
                Some(json!("#0055ff")),
            )],
        ),
    ];
    let mut base = applied.clone();
    base.push(base_change(
        &latency.address,
        Action::Create,
        latency.fields.clone(),
    ));
    base.push(base_change(
        &Address::Template(TemplateAddress {
            project: "demo".into(),
            kind: TemplateKind::Feedback,
            name: "Tone".into(),
        }),
        Action::Update,
        vec![FieldChange::new(
            "criteria",
            Some(json!("old")),
            Some(json!("new")),
        )],
    ));
    let pr = plan_of(
        vec![settings, latency, section_delete(), quality],
        Vec::new(),
    );
    attribute(
        pr,
        Sides {
            base: &plan_of(base, Vec::new()),
            applied: Some(&plan_of(applied, Vec::new())),
            declared: &[],
        },
    )
    .expect("held in memory")
}
