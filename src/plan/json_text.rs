//! A JSON value kept as its compact text: what a plan holds as a field
//! change's before and after (a parsed value takes several times the room of
//! its text, and a plan of 10,000 objects holds tens of thousands of them).
//! Equal texts can be held once ([`JsonText::share`]).

use std::borrow::Cow;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::api::SharedTexts;

/// A JSON value as compact text. Built from a [`Value`] and read back as
/// one with [`JsonText::value`]; serialized as the value it holds (not as a
/// string), so plan documents and saved plans are unchanged.
#[derive(Debug, Clone)]
pub struct JsonText(Arc<RawValue>);

impl JsonText {
    /// The compact text of `value`.
    pub fn new(value: &Value) -> Self {
        // A `Value` always serializes: its keys are strings and its numbers finite.
        JsonText(Arc::from(
            serde_json::value::to_raw_value(value).expect("a JSON value serializes"),
        ))
    }

    /// Holds the text `texts` already has, when equal ([`SharedTexts`]).
    pub fn share(&mut self, texts: &mut SharedTexts) {
        texts.share(&mut self.0);
    }

    /// The value.
    pub fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).expect("a JsonText holds valid JSON")
    }

    /// The compact text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// Whether the value is JSON `null`.
    pub fn is_null(&self) -> bool {
        self.0.get() == "null"
    }
}

impl PartialEq for JsonText {
    /// Equal when they hold equal values (object keys in any order).
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str() || self.value() == other.value()
    }
}

impl Serialize for JsonText {
    /// As the value (parsed again, so that a pretty printer lays it out).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if crate::api::compact::is_verbatim() {
            return self.0.serialize(serializer);
        }
        self.value().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for JsonText {
    /// Any JSON value; kept compact whatever the layout of the document it
    /// is read from.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(|v| JsonText::new(&v))
    }
}

impl schemars::JsonSchema for JsonText {
    fn schema_name() -> Cow<'static, str> {
        Value::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Value::json_schema(generator)
    }

    fn inline_schema() -> bool {
        Value::inline_schema()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn holds_compact_text_and_reads_back_the_value() {
        let value = json!({"b": [1, 2.5, "x"], "a": {"c": null}});
        let text = JsonText::new(&value);
        assert_eq!(text.as_str(), r#"{"b":[1,2.5,"x"],"a":{"c":null}}"#);
        assert_eq!(text.value(), value);
        assert!(JsonText::new(&Value::Null).is_null());
    }

    #[test]
    fn serializes_as_the_value_and_reads_any_layout_compact() {
        let value = json!({"k": [1, {"z": true}]});
        let text = JsonText::new(&value);
        assert_eq!(serde_json::to_value(&text).unwrap(), value);
        assert_eq!(
            serde_json::to_string_pretty(&text).unwrap(),
            serde_json::to_string_pretty(&value).unwrap()
        );
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let back: JsonText = serde_json::from_str(&pretty).unwrap();
        assert_eq!(back.as_str(), r#"{"k":[1,{"z":true}]}"#);
        assert_eq!(back, text);
    }

    #[test]
    fn equality_is_of_values_not_of_key_order() {
        let one = JsonText::new(&json!({"a": 1, "b": 2}));
        let other: JsonText = serde_json::from_str(r#"{"b": 2, "a": 1}"#).unwrap();
        assert_eq!(one, other);
        assert_ne!(one, JsonText::new(&json!({"a": 1, "b": 3})));
    }
}
