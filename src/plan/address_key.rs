//! An address as compact bytes that order as addresses do ([`AddressKey`]):
//! what a plan keeps of each change it spilled to a temporary file, and
//! what an apply keeps of each outcome. An [`Address`] is as large as its
//! largest kind and holds each name in an allocation of its own; its key
//! holds the kind and the names as bytes in one (measured:
//! docs/performance.md, Memory and time from 2,000 to 20,000 log streams).

use crate::plan::address::{
    CustomIntegrationAddress, DashboardAddress, FavoriteAddress, IntegrationAddress,
    MetricSettingsAddress, SectionAddress, SettingsAddress, TemplateAddress, WidgetAddress,
};
use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::address::{Address, RunKind, TemplateKind};

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

/// The kind of object a change is to, as [`Address`]'s variants (what a
/// spilled change says of itself without being read back).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AddressKind {
    /// [`Address::Integration`].
    Integration,
    /// [`Address::CustomIntegration`].
    CustomIntegration,
    /// [`Address::CustomScorer`].
    CustomScorer,
    /// [`Address::Template`].
    Template,
    /// [`Address::MetricSettings`].
    MetricSettings,
    /// [`Address::Dashboard`].
    Dashboard,
    /// [`Address::Section`].
    Section,
    /// [`Address::Favorite`].
    Favorite,
    /// [`Address::Widget`].
    Widget,
    /// [`Address::Settings`].
    Settings,
    /// [`Address::PromptTemplate`].
    PromptTemplate,
    /// [`Address::ProtectStage`].
    ProtectStage,
    /// [`Address::Project`].
    Project,
    /// [`Address::LogStream`].
    LogStream,
}

impl AddressKind {
    /// In the order of [`Address`]'s variants, which is the order addresses sort in.
    const ALL: [AddressKind; 14] = [
        AddressKind::Integration,
        AddressKind::CustomIntegration,
        AddressKind::CustomScorer,
        AddressKind::Template,
        AddressKind::MetricSettings,
        AddressKind::Dashboard,
        AddressKind::Section,
        AddressKind::Favorite,
        AddressKind::Widget,
        AddressKind::Settings,
        AddressKind::PromptTemplate,
        AddressKind::ProtectStage,
        AddressKind::Project,
        AddressKind::LogStream,
    ];

    /// The kind of `address`.
    pub fn of(address: &Address) -> Self {
        match address {
            Address::Integration(IntegrationAddress { .. }) => AddressKind::Integration,
            Address::CustomIntegration(CustomIntegrationAddress { .. }) => {
                AddressKind::CustomIntegration
            }
            Address::CustomScorer(_) => AddressKind::CustomScorer,
            Address::Template(TemplateAddress { .. }) => AddressKind::Template,
            Address::MetricSettings(MetricSettingsAddress { .. }) => AddressKind::MetricSettings,
            Address::Dashboard(DashboardAddress { .. }) => AddressKind::Dashboard,
            Address::Section(SectionAddress { .. }) => AddressKind::Section,
            Address::Favorite(FavoriteAddress { .. }) => AddressKind::Favorite,
            Address::Widget(WidgetAddress { .. }) => AddressKind::Widget,
            Address::Settings(SettingsAddress { .. }) => AddressKind::Settings,
            Address::PromptTemplate(_) => AddressKind::PromptTemplate,
            Address::ProtectStage(_) => AddressKind::ProtectStage,
            Address::Project(_) => AddressKind::Project,
            Address::LogStream(_) => AddressKind::LogStream,
        }
    }

    fn from_key(key: &[u8]) -> Self {
        AddressKind::ALL[usize::from(key[0])]
    }
}

/// `address` as bytes that compare as addresses do (`Address`'s derived
/// order: the variant, then each field in turn): the variant's index,
/// then each field. A string is written with its zero bytes escaped
/// (`00` as `00 FF`) and ends with `00 00`, so that a string that is a
/// prefix of another sorts first and no field runs into the next; an
/// optional string is `00` when absent, `01` then the string when present;
/// a kind is its index.
fn sort_key(address: &Address) -> Vec<u8> {
    let mut key = Vec::with_capacity(64);
    let kind = AddressKind::of(address);
    key.push(kind as u8);
    let string = |key: &mut Vec<u8>, s: &str| {
        for &b in s.as_bytes() {
            key.push(b);
            if b == 0 {
                key.push(0xFF);
            }
        }
        key.extend_from_slice(&[0, 0]);
    };
    let optional = |key: &mut Vec<u8>, s: Option<&str>| match s {
        None => key.push(0),
        Some(s) => {
            key.push(1);
            string(key, s);
        }
    };
    match address {
        Address::Integration(IntegrationAddress { provider }) => string(&mut key, provider),
        Address::CustomIntegration(CustomIntegrationAddress { name }) => string(&mut key, name),
        Address::Template(TemplateAddress {
            project,
            kind,
            name,
        }) => {
            string(&mut key, project);
            key.push(match kind {
                TemplateKind::Annotation => 0,
                TemplateKind::Feedback => 1,
            });
            string(&mut key, name);
        }
        Address::MetricSettings(MetricSettingsAddress {
            project,
            run_kind,
            run,
        }) => {
            string(&mut key, project);
            key.push(match run_kind {
                RunKind::LogStream => 0,
                RunKind::Experiment => 1,
            });
            string(&mut key, run);
        }
        Address::Dashboard(DashboardAddress {
            project,
            log_stream,
            name,
        }) => {
            string(&mut key, project);
            string(&mut key, log_stream);
            string(&mut key, name);
        }
        Address::Section(SectionAddress {
            project,
            log_stream,
            dashboard,
            name,
        }) => {
            string(&mut key, project);
            string(&mut key, log_stream);
            optional(&mut key, dashboard.as_deref());
            string(&mut key, name);
        }
        Address::Favorite(FavoriteAddress {
            project,
            log_stream,
        }) => {
            string(&mut key, project);
            string(&mut key, log_stream);
        }
        Address::Widget(WidgetAddress {
            project,
            log_stream,
            dashboard,
            section,
            name,
        }) => {
            string(&mut key, project);
            string(&mut key, log_stream);
            optional(&mut key, dashboard.as_deref());
            optional(&mut key, section.as_deref());
            string(&mut key, name);
        }
        Address::Settings(SettingsAddress {
            project,
            log_stream,
            dashboard,
        }) => {
            string(&mut key, project);
            string(&mut key, log_stream);
            optional(&mut key, dashboard.as_deref());
        }
        Address::CustomScorer(a) => {
            string(&mut key, &a.name);
            match a.version {
                None => key.push(0),
                Some(v) => {
                    key.push(1);
                    key.extend_from_slice(&v.to_be_bytes());
                }
            }
        }
        Address::PromptTemplate(a) => {
            optional(&mut key, a.project.as_deref());
            string(&mut key, &a.name);
            match a.version {
                None => key.push(0),
                Some(v) => {
                    key.push(1);
                    key.extend_from_slice(&v.to_be_bytes());
                }
            }
        }
        Address::ProtectStage(a) => {
            string(&mut key, &a.project);
            string(&mut key, &a.name);
        }
        Address::Project(a) => string(&mut key, &a.project),
        Address::LogStream(a) => {
            string(&mut key, &a.project);
            string(&mut key, &a.log_stream);
        }
    }
    key
}

/// The address [`sort_key`] encoded (keys are made only there, so they read back).
fn address_of_key(key: &[u8]) -> Address {
    let mut r = KeyReader(&key[1..]);
    match AddressKind::from_key(key) {
        AddressKind::Integration => Address::Integration(IntegrationAddress {
            provider: r.string(),
        }),
        AddressKind::CustomIntegration => {
            Address::CustomIntegration(CustomIntegrationAddress { name: r.string() })
        }
        AddressKind::CustomScorer => {
            Address::CustomScorer(crate::kinds::scorers::CustomScorerAddress {
                name: r.string(),
                version: (r.byte() == 1)
                    .then(|| u32::from_be_bytes([r.byte(), r.byte(), r.byte(), r.byte()])),
            })
        }
        AddressKind::Template => Address::Template(TemplateAddress {
            project: r.string(),
            kind: if r.byte() == 0 {
                TemplateKind::Annotation
            } else {
                TemplateKind::Feedback
            },
            name: r.string(),
        }),
        AddressKind::MetricSettings => Address::MetricSettings(MetricSettingsAddress {
            project: r.string(),
            run_kind: if r.byte() == 0 {
                RunKind::LogStream
            } else {
                RunKind::Experiment
            },
            run: r.string(),
        }),
        AddressKind::Dashboard => Address::Dashboard(DashboardAddress {
            project: r.string(),
            log_stream: r.string(),
            name: r.string(),
        }),
        AddressKind::Section => Address::Section(SectionAddress {
            project: r.string(),
            log_stream: r.string(),
            dashboard: r.optional(),
            name: r.string(),
        }),
        AddressKind::Favorite => Address::Favorite(FavoriteAddress {
            project: r.string(),
            log_stream: r.string(),
        }),
        AddressKind::Widget => Address::Widget(WidgetAddress {
            project: r.string(),
            log_stream: r.string(),
            dashboard: r.optional(),
            section: r.optional(),
            name: r.string(),
        }),
        AddressKind::Settings => Address::Settings(SettingsAddress {
            project: r.string(),
            log_stream: r.string(),
            dashboard: r.optional(),
        }),
        AddressKind::PromptTemplate => {
            Address::PromptTemplate(crate::kinds::prompt_templates::PromptTemplateAddress {
                project: r.optional(),
                name: r.string(),
                version: (r.byte() == 1)
                    .then(|| u32::from_be_bytes([r.byte(), r.byte(), r.byte(), r.byte()])),
            })
        }
        AddressKind::ProtectStage => {
            Address::ProtectStage(crate::kinds::protect_stages::ProtectStageAddress {
                project: r.string(),
                name: r.string(),
            })
        }
        AddressKind::Project => Address::Project(crate::kinds::projects::ProjectAddress {
            project: r.string(),
        }),
        AddressKind::LogStream => Address::LogStream(crate::kinds::projects::LogStreamAddress {
            project: r.string(),
            log_stream: r.string(),
        }),
    }
}

/// Reads the fields of a [`sort_key`] in turn (struct fields are evaluated
/// in the order they are written).
struct KeyReader<'k>(&'k [u8]);

impl KeyReader<'_> {
    fn byte(&mut self) -> u8 {
        let (first, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        *first
    }

    fn string(&mut self) -> String {
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

    fn optional(&mut self) -> Option<String> {
        (self.byte() == 1).then(|| self.string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
