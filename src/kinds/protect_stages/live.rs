//! A project's Protect stages as the planner needs them: what the service
//! returns (name, description, type, paused, version) and, from the local
//! record, the rulesets evalctl last sent when the stage still has the
//! version they were sent at.

use serde::Serialize;
use serde_json::Value;

use super::record::StageRecord;
use super::wire::StageWire;

/// A stage, reduced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProtectStageState {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `local` or `central`.
    #[serde(rename = "type")]
    pub stage_type: String,
    /// Whether it is paused.
    pub paused: bool,
    /// Its version (bumped by every replace of its rulesets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    /// Its rulesets when known: what evalctl last sent, at this version.
    /// `None`: unknown (replaced since by someone else, or no record).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rulesets: Option<Vec<Value>>,
    /// The version evalctl last sent rulesets at, when it has a record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_version: Option<i64>,
    /// The user id of its creator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

impl ProtectStageState {
    /// The stage as read, with its record, if any.
    pub fn new(wire: StageWire, record: Option<&StageRecord>) -> Self {
        let rulesets = record
            .filter(|r| Some(r.version) == wire.version)
            .map(|r| r.prioritized_rulesets.clone());
        ProtectStageState {
            id: wire.id,
            name: wire.name,
            description: wire.description,
            stage_type: wire.stage_type,
            paused: wire.paused,
            version: wire.version,
            rulesets,
            recorded_version: record.map(|r| r.version),
            created_by: wire.created_by,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn wire(version: i64) -> StageWire {
        serde_json::from_value(json!({"id": "s", "name": "guard", "project_id": "p",
            "created_by": "u", "version": version, "paused": false, "type": "local"}))
        .expect("a stage")
    }

    #[test]
    fn the_rulesets_are_known_only_at_the_version_they_were_sent_at() {
        let record = StageRecord {
            id: "s".into(),
            name: "guard".into(),
            version: 2,
            prioritized_rulesets: vec![json!({"rules": []})],
        };
        let known = ProtectStageState::new(wire(2), Some(&record));
        assert_eq!(known.rulesets, Some(vec![json!({"rules": []})]));
        // Someone replaced them since: the version moved, they are unknown.
        let moved = ProtectStageState::new(wire(3), Some(&record));
        assert_eq!((moved.rulesets, moved.recorded_version), (None, Some(2)));
        assert_eq!(ProtectStageState::new(wire(2), None).rulesets, None);
    }
}
