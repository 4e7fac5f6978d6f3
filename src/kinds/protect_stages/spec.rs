//! A Protect stage as a manifest declares it (`protect_stages:` in a
//! Project), and its rulesets as the service takes them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::manifest::limits::{Binding, Service};

/// A Protect stage of a project. Its name, description and type are set when
/// it is created (the service cannot change them); `paused` is a pause or a
/// resume; a change of `prioritized_rulesets` replaces them all at once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProtectStageSpec {
    /// Name, unique among the project's stages.
    pub name: String,
    /// What the stage guards against (set when it is created).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `local` (the default) or `central` (set when it is created).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub stage_type: Option<StageType>,
    /// Whether the stage is paused (default: not paused). Left out, the
    /// stage's pause is not managed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// The rulesets, first the one that wins. Left out, the rulesets are not
    /// managed (a new stage has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prioritized_rulesets: Option<Vec<StageRuleset>>,
}

/// Where a stage runs (the reference's `StageType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StageType {
    /// In the application (the default).
    Local,
    /// In the service.
    Central,
}

impl StageType {
    /// As written on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            StageType::Local => "local",
            StageType::Central => "central",
        }
    }

    /// From the wire (`None` for a type evalctl does not know).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "local" => Some(StageType::Local),
            "central" => Some(StageType::Central),
            _ => None,
        }
    }
}

/// A ruleset: when all its rules hold, its action is taken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageRuleset {
    /// The rules, all of which must hold (at least one).
    pub rules: Vec<StageRule>,
    /// What to do when they hold.
    pub action: StageAction,
    /// What the ruleset is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A rule: a metric compared with a value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageRule {
    /// The metric's name, e.g. `toxicity`.
    pub metric: String,
    /// How the metric is compared.
    pub operator: RuleOperator,
    /// The right-hand side: a string, a number or a list; left out (sent
    /// as null) for `empty` and `not_empty`.
    #[serde(default)]
    pub target_value: Option<RuleValue>,
}

/// A rule's right-hand side (the reference's `target_value`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RuleValue {
    /// A number.
    Number(f64),
    /// A string.
    Text(String),
    /// A list.
    List(Vec<Value>),
}

/// A rule's operator (the reference's `RuleOperator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuleOperator {
    /// Greater than.
    Gt,
    /// Less than.
    Lt,
    /// Greater than or equal.
    Gte,
    /// Less than or equal.
    Lte,
    /// Equal.
    Eq,
    /// Not equal.
    Neq,
    /// Contains.
    Contains,
    /// All of.
    All,
    /// Any of.
    Any,
    /// Empty.
    Empty,
    /// Not empty.
    NotEmpty,
}

/// A ruleset's action: override the response with one of `choices`, or let
/// it pass; either may notify subscriptions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum StageAction {
    /// Replace the response with one of the choices (picked at random).
    Override {
        /// The responses to choose from (at least one).
        choices: Vec<String>,
        /// Who to notify.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        subscriptions: Vec<StageSubscription>,
    },
    /// Let the response through.
    Passthrough {
        /// Who to notify.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        subscriptions: Vec<StageSubscription>,
    },
}

/// A notification: a URL the service POSTs to when the ruleset's status is
/// one of `statuses`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StageSubscription {
    /// Where to send the event (a webhook, a queue, …).
    pub url: String,
    /// The statuses that notify (the service's default: `triggered`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statuses: Option<Vec<ExecutionStatus>>,
    /// When `url` takes its value from the environment and the variable is
    /// set: the fingerprint of the value, from the loader
    /// ([`super::webhooks`]). Never written.
    #[serde(skip)]
    #[schemars(skip)]
    pub url_fingerprint: Option<String>,
}

impl StageAction {
    /// Its subscriptions.
    pub fn subscriptions(&self) -> &[StageSubscription] {
        match self {
            StageAction::Override { subscriptions, .. }
            | StageAction::Passthrough { subscriptions } => subscriptions,
        }
    }

    /// Its subscriptions, mutably.
    pub fn subscriptions_mut(&mut self) -> &mut Vec<StageSubscription> {
        match self {
            StageAction::Override { subscriptions, .. }
            | StageAction::Passthrough { subscriptions } => subscriptions,
        }
    }
}

/// A ruleset's status (the reference's `ExecutionStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionStatus {
    /// `triggered`.
    Triggered,
    /// `failed`.
    Failed,
    /// `error`.
    Error,
    /// `timeout`.
    Timeout,
    /// `paused`.
    Paused,
    /// `not_triggered`.
    NotTriggered,
    /// `skipped`.
    Skipped,
}

/// Which service schemas the manifest's stage fields take their limits from
/// (`crate::manifest::limits`).
pub const LIMITS: &[Binding] = &[
    Binding {
        manifest: "/$defs/ProtectStageSpec",
        service: &[Service::Schema("StageWithRulesets")],
    },
    Binding {
        manifest: "/$defs/StageRuleset",
        service: &[Service::Schema("Ruleset")],
    },
    Binding {
        manifest: "/$defs/StageRule",
        service: &[Service::Schema("Rule")],
    },
    Binding {
        manifest: "/$defs/StageAction/oneOf/0",
        service: &[Service::Schema("OverrideAction")],
    },
    Binding {
        manifest: "/$defs/StageAction/oneOf/1",
        service: &[Service::Schema("PassthroughAction")],
    },
    Binding {
        manifest: "/$defs/StageSubscription",
        service: &[Service::Schema("SubscriptionConfig")],
    },
];

impl StageRuleset {
    /// The ruleset as the service takes it (the reference's `Ruleset`:
    /// the action's `type` in capitals).
    pub fn to_wire(&self) -> Value {
        let mut action = serde_json::to_value(&self.action).unwrap_or(Value::Null);
        if let Some(t) = action.get_mut("type")
            && let Some(s) = t.as_str()
        {
            *t = Value::String(s.to_ascii_uppercase());
        }
        let mut out = json!({
            "rules": serde_json::to_value(&self.rules).unwrap_or(Value::Null),
            "action": action,
        });
        if let Some(d) = &self.description {
            out["description"] = Value::String(d.clone());
        }
        out
    }

    /// A ruleset as [`StageRuleset::to_wire`] wrote it (`None`: not one).
    pub fn from_wire(wire: &Value) -> Option<Self> {
        let mut wire = super::webhooks::without_fingerprints(std::slice::from_ref(wire))
            .pop()
            .unwrap_or(Value::Null);
        if let Some(t) = wire.pointer_mut("/action/type")
            && let Some(s) = t.as_str()
        {
            *t = Value::String(s.to_ascii_lowercase());
        }
        serde_json::from_value(wire).ok()
    }
}

impl ProtectStageSpec {
    /// The declared rulesets as the service takes them (`None`: not managed).
    pub fn wire_rulesets(&self) -> Option<Vec<Value>> {
        self.prioritized_rulesets
            .as_ref()
            .map(|all| all.iter().map(StageRuleset::to_wire).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::limits::{apply_with, service_reference};
    use crate::manifest::schema::generate_types;

    #[test]
    fn the_limits_of_the_reference_on_its_fields() {
        let mut schema = generate_types();
        let applied = apply_with(&mut schema, &service_reference(), LIMITS, false);
        insta::assert_snapshot!(applied.listing(), @r#"
        /$defs/StageRuleset/properties/rules minItems=1 <- #/components/schemas/Ruleset/properties/rules
        /$defs/StageAction/oneOf/0/properties/choices minItems=1 <- #/components/schemas/OverrideAction/properties/choices
        /$defs/StageSubscription/properties/url minLength=1 <- #/components/schemas/SubscriptionConfig/properties/url
        /$defs/StageSubscription/properties/url format="uri" <- #/components/schemas/SubscriptionConfig/properties/url
        "#);
        for binding in LIMITS {
            let def = binding.manifest.trim_start_matches("/$defs/");
            let name = def.split('/').next().unwrap_or(def);
            assert!(applied.reached.contains(name), "{name} was not reached");
        }
    }

    #[test]
    fn a_ruleset_goes_to_the_wire_with_the_references_action_type_and_back() {
        let yaml = json!({
            "rules": [{"metric": "toxicity", "operator": "gt", "target_value": 0.5}],
            "action": {"type": "override", "choices": ["Sorry, I cannot help with that."],
                       "subscriptions": [{"url": "https://hooks.example.com/protect"}]},
        });
        let ruleset: StageRuleset = serde_json::from_value(yaml).expect("a ruleset");
        let wire = ruleset.to_wire();
        assert_eq!(wire["action"]["type"], "OVERRIDE");
        assert_eq!(wire["rules"][0]["target_value"], 0.5);
        assert_eq!(StageRuleset::from_wire(&wire), Some(ruleset));
        let unknown =
            json!({"rules": [], "action": {"type": "override", "choices": [], "colour": 1}});
        assert!(serde_json::from_value::<StageRuleset>(unknown).is_err());
    }
}
