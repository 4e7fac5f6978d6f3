//! A Protect stage's address, `project[P].protect_stage[NAME]`.

use serde::{Deserialize, Serialize};

use crate::plan::Action;
use crate::plan::address::{Address, KindAddress, project_segment, quote};
use crate::plan::address_key::{KeyFields, KeyReader, KeyWriter};
use crate::plan::target::{Kind, Segment};
use crate::state::ProjectState;

/// A Protect stage of a project.
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct ProtectStageAddress {
    /// Project, as the manifest refers to it.
    pub project: String,
    /// Stage name.
    pub name: String,
}

impl ProtectStageAddress {
    /// The stage `name` of `project`.
    pub fn new(project: &str, name: &str) -> Self {
        ProtectStageAddress {
            project: project.to_owned(),
            name: name.to_owned(),
        }
    }
}

impl KindAddress for ProtectStageAddress {
    fn apply_stage(_action: Action) -> Option<u8> {
        Some(15)
    }

    fn segments(&self) -> Vec<Segment> {
        vec![
            project_segment(&self.project),
            Segment::named(Kind::ProtectStage, &self.name),
        ]
    }

    fn project(&self) -> Option<&str> {
        Some(&self.project)
    }

    fn collection(&self) -> Option<(String, &'static str)> {
        Some((
            format!("project[{}]", quote(&self.project)),
            "Protect stages",
        ))
    }

    fn collection_size(&self, live: &ProjectState) -> usize {
        live.parts.protect_stages.as_ref().map_or(0, Vec::len)
    }

    fn live_identity(&self, _before: &dyn Fn(&str) -> Option<Option<String>>) -> Option<Address> {
        Some(Address::ProtectStage(self.clone()))
    }
}

impl KeyFields for ProtectStageAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.project);
        w.string(&self.name);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        ProtectStageAddress {
            project: r.string(),
            name: r.string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::AddressKey;

    #[test]
    fn keys_read_back_and_order_as_addresses_do() {
        let addresses: Vec<Address> = [("a", "b"), ("a", "a\u{0}"), ("", "z"), ("a", "")]
            .into_iter()
            .map(|(p, n)| Address::ProtectStage(ProtectStageAddress::new(p, n)))
            .collect();
        let keys: Vec<AddressKey> = addresses.iter().map(AddressKey::of).collect();
        for (a, k) in addresses.iter().zip(&keys) {
            assert_eq!(&k.address(), a);
        }
        for (a, ka) in addresses.iter().zip(&keys) {
            for (b, kb) in addresses.iter().zip(&keys) {
                assert_eq!(a.cmp(b), ka.cmp(kb), "{a} against {b}");
            }
        }
    }
}
