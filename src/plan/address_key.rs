//! An address as compact bytes that order as addresses do ([`AddressKey`]):
//! what a plan keeps of each change it spilled to a temporary file, and
//! what an apply keeps of each outcome. An [`Address`] is as large as its
//! largest kind and holds each name in an allocation of its own; its key
//! holds the kind and the names as bytes in one (measured:
//! docs/performance.md, Memory and time from 2,000 to 20,000 log streams).

pub use crate::kinds::AddressKind;
use crate::plan::address::{
    CustomIntegrationAddress, DashboardAddress, FavoriteAddress, IntegrationAddress,
    MetricSettingsAddress, SectionAddress, SettingsAddress, WidgetAddress,
};
use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::address::{Address, RunKind};

/// An address as bytes that compare as addresses do ([`Address`]'s
/// derived order), and read back as the address.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AddressKey(Box<[u8]>);

impl AddressKey {
    /// The key of `address`.
    pub fn of(address: &Address) -> Self {
        AddressKey(sort_key(address).into_boxed_slice())
    }

    /// The address.
    pub fn address(&self) -> Address {
        address_of_key(&self.0)
    }

    /// What kind of object it is (nothing is read back).
    pub fn kind(&self) -> AddressKind {
        AddressKind::from_key(&self.0)
    }
}

impl From<&Address> for AddressKey {
    fn from(address: &Address) -> Self {
        AddressKey::of(address)
    }
}

impl From<Address> for AddressKey {
    fn from(address: Address) -> Self {
        AddressKey::of(&address)
    }
}

impl std::fmt::Display for AddressKey {
    /// As the address reads (`project[demo].log_stream[production].metric_settings`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.address().fmt(f)
    }
}

impl std::fmt::Debug for AddressKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.address().fmt(f)
    }
}

impl Serialize for AddressKey {
    /// As the address.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.address().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for AddressKey {
    /// From an address.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Address::deserialize(deserializer).map(AddressKey::from)
    }
}

impl schemars::JsonSchema for AddressKey {
    fn schema_name() -> Cow<'static, str> {
        Address::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        Address::json_schema(generator)
    }

    fn inline_schema() -> bool {
        Address::inline_schema()
    }

    fn schema_id() -> Cow<'static, str> {
        Address::schema_id()
    }
}

impl AddressKind {
    fn from_key(key: &[u8]) -> Self {
        AddressKind::ALL[usize::from(key[0])]
    }
}

/// `address` as bytes that compare as addresses do (`Address`'s derived
/// order: the variant, then each field in turn): the variant's index,
/// then each field as its kind writes it ([`KeyFields`]). A string is
/// written with its zero bytes escaped (`00` as `00 FF`) and ends with
/// `00 00`, so that a string that is a prefix of another sorts first and no
/// field runs into the next; an optional string is `00` when absent, `01`
/// then the string when present; a kind is its index.
fn sort_key(address: &Address) -> Vec<u8> {
    let mut key = Vec::with_capacity(64);
    let kind = AddressKind::of(address);
    key.push(kind as u8);
    address.write_key(&mut KeyWriter(&mut key));
    key
}

/// The address [`sort_key`] encoded (keys are made only there, so they read back).
fn address_of_key(key: &[u8]) -> Address {
    Address::read_key(AddressKind::from_key(key), &mut KeyReader(&key[1..]))
}

/// How a kind's address writes its fields into a key and reads them back,
/// field by field in the order the address's derived `Ord` compares them.
pub trait KeyFields {
    /// Writes the fields.
    fn write_key(&self, w: &mut KeyWriter<'_>);

    /// Reads back what [`KeyFields::write_key`] wrote.
    fn read_key(r: &mut KeyReader<'_>) -> Self;
}

/// Writes the fields of a [`sort_key`].
pub struct KeyWriter<'k>(&'k mut Vec<u8>);

impl KeyWriter<'_> {
    /// One byte (a small enum's index, a presence flag).
    pub fn byte(&mut self, b: u8) {
        self.0.push(b);
    }

    /// A string, its zero bytes escaped, ended by `00 00`.
    pub fn string(&mut self, s: &str) {
        for &b in s.as_bytes() {
            self.0.push(b);
            if b == 0 {
                self.0.push(0xFF);
            }
        }
        self.0.extend_from_slice(&[0, 0]);
    }

    /// An optional string: `00`, or `01` then the string.
    pub fn optional(&mut self, s: Option<&str>) {
        match s {
            None => self.0.push(0),
            Some(s) => {
                self.0.push(1);
                self.string(s);
            }
        }
    }

    /// An optional number: `00`, or `01` then its big-endian bytes.
    pub fn optional_u32(&mut self, n: Option<u32>) {
        match n {
            None => self.0.push(0),
            Some(v) => {
                self.0.push(1);
                self.0.extend_from_slice(&v.to_be_bytes());
            }
        }
    }
}

impl KeyFields for IntegrationAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.provider);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        IntegrationAddress {
            provider: r.string(),
        }
    }
}

impl KeyFields for CustomIntegrationAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.name);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        CustomIntegrationAddress { name: r.string() }
    }
}

impl KeyFields for MetricSettingsAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.project);
        w.byte(match self.run_kind {
            RunKind::LogStream => 0,
            RunKind::Experiment => 1,
        });
        w.string(&self.run);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        MetricSettingsAddress {
            project: r.string(),
            run_kind: if r.byte() == 0 {
                RunKind::LogStream
            } else {
                RunKind::Experiment
            },
            run: r.string(),
        }
    }
}

impl KeyFields for DashboardAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.project);
        w.string(&self.log_stream);
        w.string(&self.name);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        DashboardAddress {
            project: r.string(),
            log_stream: r.string(),
            name: r.string(),
        }
    }
}

impl KeyFields for SectionAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.project);
        w.string(&self.log_stream);
        w.optional(self.dashboard.as_deref());
        w.string(&self.name);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        SectionAddress {
            project: r.string(),
            log_stream: r.string(),
            dashboard: r.optional(),
            name: r.string(),
        }
    }
}

impl KeyFields for FavoriteAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.project);
        w.string(&self.log_stream);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        FavoriteAddress {
            project: r.string(),
            log_stream: r.string(),
        }
    }
}

impl KeyFields for WidgetAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.project);
        w.string(&self.log_stream);
        w.optional(self.dashboard.as_deref());
        w.optional(self.section.as_deref());
        w.string(&self.name);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        WidgetAddress {
            project: r.string(),
            log_stream: r.string(),
            dashboard: r.optional(),
            section: r.optional(),
            name: r.string(),
        }
    }
}

impl KeyFields for SettingsAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.project);
        w.string(&self.log_stream);
        w.optional(self.dashboard.as_deref());
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        SettingsAddress {
            project: r.string(),
            log_stream: r.string(),
            dashboard: r.optional(),
        }
    }
}

/// Reads the fields of a [`sort_key`] in turn (struct fields are evaluated
/// in the order they are written).
pub struct KeyReader<'k>(&'k [u8]);

impl KeyReader<'_> {
    /// One byte.
    pub fn byte(&mut self) -> u8 {
        let (first, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        *first
    }

    /// A string.
    pub fn string(&mut self) -> String {
        let mut bytes = Vec::new();
        loop {
            match self.byte() {
                0 if self.0.first() == Some(&0xFF) => {
                    self.byte();
                    bytes.push(0);
                }
                0 => {
                    self.byte();
                    break;
                }
                b => bytes.push(b),
            }
        }
        String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// An optional string.
    pub fn optional(&mut self) -> Option<String> {
        (self.byte() == 1).then(|| self.string())
    }

    /// An optional number.
    pub fn optional_u32(&mut self) -> Option<u32> {
        (self.byte() == 1)
            .then(|| u32::from_be_bytes([self.byte(), self.byte(), self.byte(), self.byte()]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::templates::{TemplateAddress, TemplateKind};
    use proptest::prelude::*;

    fn any_name() -> impl Strategy<Value = String> {
        // Few letters, the zero byte and a two-byte character: prefixes and escapes.
        proptest::collection::vec(
            prop_oneof![Just('a'), Just('b'), Just('\u{0}'), Just('ÿ')],
            0..4,
        )
        .prop_map(|c| c.into_iter().collect())
    }

    fn any_address() -> impl Strategy<Value = Address> {
        let name = any_name;
        let optional = || proptest::option::of(any_name());
        prop_oneof![
            name().prop_map(|provider| Address::Integration(IntegrationAddress { provider })),
            name().prop_map(|name| Address::CustomIntegration(CustomIntegrationAddress { name })),
            (name(), any::<bool>(), name()).prop_map(|(project, a, name)| Address::Template(
                TemplateAddress {
                    project,
                    kind: if a {
                        TemplateKind::Annotation
                    } else {
                        TemplateKind::Feedback
                    },
                    name
                }
            )),
            (name(), any::<bool>(), name()).prop_map(|(project, l, run)| {
                Address::MetricSettings(MetricSettingsAddress {
                    project,
                    run_kind: if l {
                        RunKind::LogStream
                    } else {
                        RunKind::Experiment
                    },
                    run,
                })
            }),
            (name(), name(), name()).prop_map(|(project, log_stream, name)| Address::Dashboard(
                DashboardAddress {
                    project,
                    log_stream,
                    name
                }
            )),
            (name(), name(), optional(), name()).prop_map(
                |(project, log_stream, dashboard, name)| Address::Section(SectionAddress {
                    project,
                    log_stream,
                    dashboard,
                    name,
                })
            ),
            (name(), name()).prop_map(|(project, log_stream)| Address::Favorite(FavoriteAddress {
                project,
                log_stream
            })),
            (name(), name(), optional(), optional(), name()).prop_map(
                |(project, log_stream, dashboard, section, name)| Address::Widget(WidgetAddress {
                    project,
                    log_stream,
                    dashboard,
                    section,
                    name,
                })
            ),
            (name(), name(), optional()).prop_map(|(project, log_stream, dashboard)| {
                Address::Settings(SettingsAddress {
                    project,
                    log_stream,
                    dashboard,
                })
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 2000,
            rng_seed: proptest::test_runner::RngSeed::Fixed(9),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn keys_compare_as_addresses_do_and_read_back(a in any_address(), b in any_address()) {
            let (ka, kb) = (AddressKey::of(&a), AddressKey::of(&b));
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
            prop_assert_eq!(ka.kind(), AddressKind::of(&a));
            prop_assert_eq!(ka.address(), a.clone());
            prop_assert_eq!(ka.to_string(), a.to_string());
            let json = serde_json::to_value(&ka).unwrap();
            prop_assert_eq!(&json, &serde_json::to_value(&a).unwrap());
            prop_assert_eq!(serde_json::from_value::<AddressKey>(json).unwrap(), ka);
        }
    }
}
