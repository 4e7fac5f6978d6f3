//! A custom scorer's address, `scorer[NAME]`, and one of its versions,
//! `scorer[NAME].version[N]` (what a plan creates when the definition
//! changes). Scorers belong to the organization, not to a project.

use serde::{Deserialize, Serialize};

use crate::plan::Action;
use crate::plan::address::{Address, KindAddress, live_name};
use crate::plan::address_key::{KeyFields, KeyReader, KeyWriter};
use crate::plan::target::{Kind, Segment};

/// A custom scorer, or one of its versions.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct CustomScorerAddress {
    /// Scorer name.
    pub name: String,
    /// A version's number (absent: the scorer itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
}

impl CustomScorerAddress {
    /// The scorer `name`.
    pub fn scorer(name: &str) -> Self {
        CustomScorerAddress {
            name: name.to_owned(),
            version: None,
        }
    }

    /// Version `version` of the scorer `name`.
    pub fn version(name: &str, version: u32) -> Self {
        CustomScorerAddress {
            name: name.to_owned(),
            version: Some(version),
        }
    }
}

impl KindAddress for CustomScorerAddress {
    /// After integrations (0) and before anything in a project: metric
    /// settings may use what this creates.
    fn apply_stage(_action: Action) -> Option<u8> {
        Some(5)
    }

    fn segments(&self) -> Vec<Segment> {
        let mut segments = vec![Segment::named(Kind::Scorer, &self.name)];
        if let Some(v) = self.version {
            segments.push(Segment::named(Kind::VERSION, v.to_string()));
        }
        segments
    }

    fn project(&self) -> Option<&str> {
        None
    }

    fn live_identity(&self, before: &dyn Fn(&str) -> Option<Option<String>>) -> Option<Address> {
        Some(Address::CustomScorer(CustomScorerAddress {
            name: live_name(&self.name, before),
            version: self.version,
        }))
    }
}

impl KeyFields for CustomScorerAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.name);
        w.optional_u32(self.version);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        CustomScorerAddress {
            name: r.string(),
            version: r.optional_u32(),
        }
    }
}
