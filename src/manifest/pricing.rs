//! `kind: Pricing`: what an LLM-judge call costs, by the judge's model, so the
//! plan's judge-call forecast (`crate::plan::forecast`) can say what a change
//! costs a month. Optional, one per repo; without it the forecast counts calls
//! only.
//!
//! ```yaml
//! kind: Pricing
//! currency: USD            # optional; the default
//! default: {per_1000_calls: 2.50}
//! models:
//!   gpt-4.1-mini: {per_call: 0.0012}
//!   gpt-4o: {per_1000_calls: 6}
//! ```

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A `kind: Pricing` document: the price of an LLM-judge call, by the model
/// (`model_name`) that answers it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PricingSpec {
    /// The currency of the prices, a three-letter code (`USD`, `EUR`, `GBP`,
    /// ...). Default: `USD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Z]{3}$"))]
    pub currency: Option<String>,
    /// The price of a call whose model has no price under `models` (and of a
    /// call whose scorer names no model). Left out: such calls are not priced
    /// and the forecast says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Price>,
    /// Prices by model name, as scorers write `model_name` (e.g. `gpt-4.1-mini`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, Price>,
}

/// The price of LLM-judge calls: per call, or per 1,000 calls.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum Price {
    /// The price of one call.
    #[serde(rename = "per_call")]
    #[schemars(title = "per_call")]
    PerCall(#[schemars(range(min = 0))] f64),
    /// The price of 1,000 calls.
    #[serde(rename = "per_1000_calls")]
    #[schemars(title = "per_1000_calls")]
    Per1000Calls(#[schemars(range(min = 0))] f64),
}

impl Price {
    /// The price of one call.
    pub fn per_call(self) -> f64 {
        match self {
            Price::PerCall(p) => p,
            Price::Per1000Calls(p) => p / 1000.0,
        }
    }
}

impl PricingSpec {
    /// The currency's code (`USD` when left out).
    pub fn currency(&self) -> &str {
        self.currency.as_deref().unwrap_or("USD")
    }

    /// The price of one call answered by `model` (`None`: the scorer names
    /// no model), when the document prices it.
    pub fn per_call(&self, model: Option<&str>) -> Option<f64> {
        model
            .and_then(|m| self.models.get(m))
            .or(self.default.as_ref())
            .map(|p| p.per_call())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_without_its_own_price_takes_the_default() {
        let spec: PricingSpec = serde_json::from_value(serde_json::json!({
            "default": {"per_1000_calls": 2.5},
            "models": {"gpt-4o": {"per_call": 0.01}}
        }))
        .unwrap_or_default();
        assert_eq!(spec.per_call(Some("gpt-4o")), Some(0.01));
        assert_eq!(spec.per_call(Some("other")), Some(0.0025));
        assert_eq!(spec.per_call(None), Some(0.0025));
        assert_eq!(spec.currency(), "USD");
        let none = PricingSpec::default();
        assert_eq!(none.per_call(Some("gpt-4o")), None);
    }

    #[test]
    fn a_price_is_one_of_two_forms() {
        let both = serde_json::from_value::<Price>(
            serde_json::json!({"per_call": 1, "per_1000_calls": 2}),
        );
        assert!(both.is_err());
        let one = serde_json::from_value::<Price>(serde_json::json!({"per_1000_calls": 2}));
        assert_eq!(one.ok(), Some(Price::Per1000Calls(2.0)));
    }
}
