//! Equal run declarations held once: a config repo often gives thousands of
//! log streams and experiments the same metric settings and dashboard
//! sections (stamped from one template), and each would otherwise be a
//! separate copy of a kilobyte or more. [`SharedParts::share`] swaps each
//! run's declaration for an equal one already held. A repo whose runs all
//! differ holds what it held before.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};
use std::io;
use std::sync::Arc;

use serde::Serialize;

use super::types::{MetricSettingsSpec, ProjectSpec, TrendsSpec};

/// The declarations held so far, of every project given.
#[derive(Debug, Default)]
pub struct SharedParts {
    metric_settings: Held<MetricSettingsSpec>,
    trends: Held<TrendsSpec>,
}

impl SharedParts {
    /// Holds each run's metric settings and dashboard of `project` once with
    /// the equal ones of the projects given before.
    pub fn share(&mut self, project: &mut ProjectSpec) {
        for log_stream in &mut project.log_streams {
            if let Some(settings) = &mut log_stream.metric_settings {
                self.metric_settings.share(settings);
            }
            if let Some(trends) = &mut log_stream.trends {
                self.trends.share(trends);
            }
        }
        for experiment in &mut project.experiments {
            if let Some(settings) = &mut experiment.metric_settings {
                self.metric_settings.share(settings);
            }
        }
    }
}

/// Values held, by a hash of their JSON: equal values are found among the
/// few of the same hash by comparing them.
#[derive(Debug)]
struct Held<T> {
    by_hash: HashMap<u64, Vec<Arc<T>>>,
}

impl<T> Default for Held<T> {
    fn default() -> Self {
        Held {
            by_hash: HashMap::new(),
        }
    }
}

impl<T: Serialize + PartialEq> Held<T> {
    fn share(&mut self, value: &mut Arc<T>) {
        let mut hasher = HashingWriter(DefaultHasher::new());
        // The manifest types hold strings, numbers and lists: they serialize.
        serde_json::to_writer(&mut hasher, &**value).expect("a manifest type serializes");
        let same_hash = self.by_hash.entry(hasher.0.finish()).or_default();
        match same_hash.iter().find(|held| ***held == **value) {
            Some(held) => *value = Arc::clone(held),
            None => same_hash.push(Arc::clone(value)),
        }
    }
}

/// Feeds what is written to a hasher (no text is kept).
struct HashingWriter(DefaultHasher);

impl io::Write for HashingWriter {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.write(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A project whose log streams enable `scorers` (one each) and whose
    /// experiment enables correctness.
    fn project(scorers: &[&str]) -> ProjectSpec {
        let settings = |scorer: &str| json!({"scorers": [{"name": scorer}]});
        serde_json::from_value(json!({
            "name": "p",
            "log_streams": scorers
                .iter()
                .enumerate()
                .map(|(i, s)| json!({"name": format!("ls-{i}"), "metric_settings": settings(s)}))
                .collect::<Vec<_>>(),
            "experiments": [{"name": "nightly", "metric_settings": settings("correctness")}],
        }))
        .expect("a project")
    }

    fn held(spec: &ProjectSpec) -> Vec<&Arc<MetricSettingsSpec>> {
        spec.log_streams
            .iter()
            .filter_map(|l| l.metric_settings.as_ref())
            .chain(
                spec.experiments
                    .iter()
                    .filter_map(|e| e.metric_settings.as_ref()),
            )
            .collect()
    }

    #[test]
    fn equal_declarations_are_held_once_across_projects_and_kinds() {
        let mut shared = SharedParts::default();
        let mut first = project(&["correctness", "completeness", "correctness"]);
        let mut second = project(&["completeness"]);
        let before = first.clone();
        let read = held(&first);
        assert!(!Arc::ptr_eq(read[0], read[2]), "read as separate copies");
        shared.share(&mut first);
        shared.share(&mut second);
        // Nothing changes but where the values are held.
        assert_eq!(first, before);
        let (a, b) = (held(&first), held(&second));
        // correctness: log streams 0 and 2 and the experiment of both
        // projects; completeness: log stream 1 and the other project's.
        assert!(Arc::ptr_eq(a[0], a[2]) && Arc::ptr_eq(a[0], a[3]) && Arc::ptr_eq(a[0], b[1]));
        assert!(Arc::ptr_eq(a[1], b[0]));
        assert!(!Arc::ptr_eq(a[0], a[1]));
    }
}
