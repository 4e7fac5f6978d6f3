//! The addresses of a project, `project[P]`, and of one of its log streams,
//! `project[P].log_stream[L]` (what a plan creates, renames or deletes).
//! Their own variants of `plan::Address`, so that apply stages them apart:
//! a project is created before its log streams, and both before anything
//! inside them.

use serde::{Deserialize, Serialize};

use crate::plan::address::{Address, KindAddress, project_segment, quote};
use crate::plan::address_key::{KeyFields, KeyReader, KeyWriter};
use crate::plan::target::Segment;
use crate::plan::{Action, RunKind};
use crate::state::ProjectState;

/// A project itself (its existence, name, description and labels).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct ProjectAddress {
    /// Project, as the manifest refers to it.
    pub project: String,
}

/// A log stream itself (its existence and name).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct LogStreamAddress {
    /// Project, as the manifest refers to it.
    pub project: String,
    /// Log stream, as the manifest refers to it.
    pub log_stream: String,
}

impl KindAddress for ProjectAddress {
    /// Projects, then their log streams, before anything inside them;
    /// deleted after everything else (log streams, then projects).
    fn apply_stage(action: Action) -> Option<u8> {
        Some(if action == Action::Delete { 130 } else { 1 })
    }

    fn segments(&self) -> Vec<Segment> {
        vec![project_segment(&self.project)]
    }

    fn project(&self) -> Option<&str> {
        Some(&self.project)
    }

    fn live_identity(&self, _before: &dyn Fn(&str) -> Option<Option<String>>) -> Option<Address> {
        Some(Address::Project(self.clone()))
    }
}

impl KindAddress for LogStreamAddress {
    /// After their project, before anything inside them; deleted before
    /// their project (see [`ProjectAddress`]'s).
    fn apply_stage(action: Action) -> Option<u8> {
        Some(if action == Action::Delete { 120 } else { 2 })
    }

    fn segments(&self) -> Vec<Segment> {
        vec![
            project_segment(&self.project),
            Segment::run(RunKind::LogStream, &self.log_stream),
        ]
    }

    fn project(&self) -> Option<&str> {
        Some(&self.project)
    }

    fn collection(&self) -> Option<(String, &'static str)> {
        Some((format!("project[{}]", quote(&self.project)), "log streams"))
    }

    fn collection_size(&self, live: &ProjectState) -> usize {
        live.log_streams.len()
            + live
                .parts
                .project
                .undeclared_log_streams
                .as_ref()
                .map_or(0, Vec::len)
    }

    fn live_identity(&self, _before: &dyn Fn(&str) -> Option<Option<String>>) -> Option<Address> {
        Some(Address::LogStream(self.clone()))
    }
}

impl KeyFields for ProjectAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.project);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        ProjectAddress {
            project: r.string(),
        }
    }
}

impl KeyFields for LogStreamAddress {
    fn write_key(&self, w: &mut KeyWriter<'_>) {
        w.string(&self.project);
        w.string(&self.log_stream);
    }

    fn read_key(r: &mut KeyReader<'_>) -> Self {
        LogStreamAddress {
            project: r.string(),
            log_stream: r.string(),
        }
    }
}
