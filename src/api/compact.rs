//! A request body held as its compact JSON text until it is sent: what a
//! plan keeps of each metric-settings change (10,000 planned changes hold
//! tens of thousands of scorer configs, several times larger as structs).
//! Texts are shared, and [`SharedTexts`] makes equal ones one: a plan's
//! thousands of runs given the same scorers hold that body once.

use std::borrow::Borrow;
use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

thread_local! {
    static VERBATIM: Cell<bool> = const { Cell::new(false) };
}

/// Runs `work` with compact JSON texts ([`Compact`], `plan::JsonText`)
/// written and read verbatim, as their text, instead of as the values they
/// hold: for JSON that only this process reads back (a plan's changes
/// spilled to a temporary file), where parsing each text again to lay it
/// out, or checking it again as the type it holds, would be wasted.
pub fn verbatim<R>(work: impl FnOnce() -> R) -> R {
    /// Restores the mode on the way out, however `work` ends.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            VERBATIM.set(self.0);
        }
    }
    let _restore = Restore(VERBATIM.replace(true));
    work()
}

/// Whether texts are written and read verbatim ([`verbatim`]).
pub fn is_verbatim() -> bool {
    VERBATIM.get()
}

/// A `T` held as the compact JSON text it serializes to. It serializes
/// exactly as the `T` would, and reads back with [`Compact::get`].
pub struct Compact<T> {
    text: Arc<RawValue>,
    shape: PhantomData<fn() -> T>,
}

impl<T: Serialize> Compact<T> {
    /// The compact form of `value`.
    pub fn new(value: &T) -> Self {
        Compact {
            // The wire types hold strings, numbers and string-keyed maps,
            // which always serialize.
            text: Arc::from(
                serde_json::value::to_raw_value(value).expect("a wire type serializes"),
            ),
            shape: PhantomData,
        }
    }
}

impl<T: DeserializeOwned> Compact<T> {
    /// The value. It was made from a `T` or read as one, so it reads back.
    pub fn get(&self) -> T {
        serde_json::from_str(self.text.get()).expect("a Compact<T> holds a T")
    }
}

impl<T> Compact<T> {
    /// The compact JSON text.
    pub fn as_str(&self) -> &str {
        self.text.get()
    }

    /// Holds the text `texts` already has, when equal (see [`SharedTexts`]).
    pub fn share(&mut self, texts: &mut SharedTexts) {
        texts.share(&mut self.text);
    }
}

/// Compact JSON texts held once: each text given to [`SharedTexts::share`]
/// is swapped for an equal one seen before, or kept to be given out. Equal
/// means the same text: the same value written with keys in another order
/// stays two texts (both correct, only held twice).
#[derive(Debug, Default)]
pub struct SharedTexts {
    texts: HashSet<Text>,
}

impl SharedTexts {
    /// Makes `text` the one held for its text, keeping it when it is new.
    pub fn share(&mut self, text: &mut Arc<RawValue>) {
        match self.texts.get(text.get()) {
            Some(held) => *text = Arc::clone(&held.0),
            None => {
                self.texts.insert(Text(Arc::clone(text)));
            }
        }
    }

    /// How many distinct texts are held.
    pub fn len(&self) -> usize {
        self.texts.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}

/// A held text, hashed and compared as its text.
#[derive(Debug)]
struct Text(Arc<RawValue>);

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

impl Eq for Text {}

impl Hash for Text {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.get().hash(state);
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.0.get()
    }
}

impl<T> Clone for Compact<T> {
    fn clone(&self) -> Self {
        Compact {
            text: Arc::clone(&self.text),
            shape: PhantomData,
        }
    }
}

impl<T> fmt::Debug for Compact<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.text.get())
    }
}

impl<T: DeserializeOwned + PartialEq> PartialEq for Compact<T> {
    /// Equal when they hold equal values.
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str() || self.get() == other.get()
    }
}

impl<T> Serialize for Compact<T> {
    /// As the `T` would be (parsed again as JSON, keys in their order, so
    /// that a pretty printer lays it out).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if is_verbatim() {
            return self.text.serialize(serializer);
        }
        serde_json::from_str::<serde_json::Value>(self.text.get())
            .map_err(serde::ser::Error::custom)?
            .serialize(serializer)
    }
}

impl<'de, T: Serialize + Deserialize<'de>> Deserialize<'de> for Compact<T> {
    /// A `T` (refused as a `T` would be), kept compact.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if is_verbatim() {
            // Read as a JSON value (a body sits in an internally tagged
            // operation, which serde buffers: a raw text cannot be read
            // from that buffer), not checked again as a `T`.
            let value = serde_json::Value::deserialize(deserializer)?;
            let text = serde_json::value::to_raw_value(&value).map_err(serde::de::Error::custom)?;
            return Ok(Compact {
                text: Arc::from(text),
                shape: PhantomData,
            });
        }
        T::deserialize(deserializer).map(|value| Compact::new(&value))
    }
}

/// A body that serializes as a `T`: the `T` itself or its [`Compact`] form.
/// Client operations take one, so a plan's compact body is sent as it is.
pub trait Shaped<T>: Serialize {}

impl<T: Serialize> Shaped<T> for T {}

impl<T> Shaped<T> for Compact<T> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{MetricSettingsRequest, ScorerConfig, ScorerType};

    #[test]
    fn serializes_as_the_value_and_reads_it_back() {
        let request = MetricSettingsRequest {
            scorers: Some(vec![ScorerConfig::new("s-1", ScorerType::Preset)]),
            segment_filters: None,
        };
        let compact = Compact::new(&request);
        assert_eq!(
            compact.as_str(),
            r#"{"scorers":[{"id":"s-1","scorer_type":"preset"}]}"#
        );
        assert_eq!(compact.get(), request);
        assert_eq!(
            serde_json::to_string(&compact).unwrap(),
            serde_json::to_string(&request).unwrap()
        );
        let pretty = serde_json::to_string_pretty(&request).unwrap();
        assert_eq!(serde_json::to_string_pretty(&compact).unwrap(), pretty);
        let back: Compact<MetricSettingsRequest> = serde_json::from_str(&pretty).unwrap();
        assert_eq!(back.as_str(), compact.as_str());
        assert_eq!(back, compact);
    }

    #[test]
    fn equal_texts_are_held_once() {
        let request = |id: &str| MetricSettingsRequest {
            scorers: Some(vec![ScorerConfig::new(id, ScorerType::Preset)]),
            segment_filters: None,
        };
        let mut texts = SharedTexts::default();
        let mut first = Compact::new(&request("s-1"));
        let mut second = Compact::new(&request("s-1"));
        let mut other = Compact::new(&request("s-2"));
        assert!(!Arc::ptr_eq(&first.text, &second.text));
        for compact in [&mut first, &mut second, &mut other] {
            compact.share(&mut texts);
        }
        assert!(Arc::ptr_eq(&first.text, &second.text));
        assert!(!Arc::ptr_eq(&first.text, &other.text));
        assert_eq!(texts.len(), 2);
        assert_eq!(second.get(), request("s-1"));
        assert_eq!(other.get(), request("s-2"));
    }

    #[test]
    fn reading_refuses_what_the_type_refuses() {
        let wrong = serde_json::from_str::<Compact<MetricSettingsRequest>>(r#"{"scorers": 3}"#);
        assert!(wrong.is_err());
    }
}
