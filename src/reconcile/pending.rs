//! Pending ids: what a plan creates has no id when the plan is made, yet
//! what is planned inside it or using it (a log stream in a new project,
//! metric settings naming a new custom scorer, …) names it by id. The kind
//! that plans such an object gives it a pending id, which says it is to be
//! created and under which name (`pending:KIND:NAME`, the kind's own
//! syntax); apply resolves every pending id of an operation when the
//! operation runs, after the creates' stages, by asking the kinds through
//! the registry (`crate::kinds::resolve_pending`), each of which reads back
//! the objects it made ([`Pending`]). A saved plan holds pending ids too,
//! and is resolved the same way when it is applied ([`resolve_all`]), and
//! the readers by id skip an object a change names by pending id
//! ([`mentions`]).
//!
//! A pending id cannot be a service id (those are uuids), and the service
//! is never asked about one.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::future::Future;

use tokio::sync::Mutex;

use crate::client::Client;
use crate::plan::{Operation, ResourceChange};
use crate::reconcile::apply::OperationError;

/// What every pending id starts with.
const PREFIX: &str = "pending:";

/// Whether `id` is pending (its object is to be created).
pub fn is_pending(id: &str) -> bool {
    id.starts_with(PREFIX)
}

/// Resolves pending ids when operations run, each once per apply.
pub struct Pending {
    /// Whether the plan creates anything (otherwise nothing is pending).
    active: bool,
    /// Resolved ids, under the keys the kinds choose ([`Pending::remember`]).
    resolved: Mutex<BTreeMap<(String, String), String>>,
}

impl Pending {
    /// A resolver for a plan that creates objects other changes name by
    /// pending id (`active`), or one that leaves every operation as it is.
    pub fn new(active: bool) -> Self {
        Pending {
            active,
            resolved: Mutex::new(BTreeMap::new()),
        }
    }

    /// The id remembered under `key`, or the one `find` finds, remembered:
    /// how a kind resolves each of its pending ids once per apply.
    pub async fn remember(
        &self,
        key: (String, String),
        find: impl Future<Output = Result<String, OperationError>>,
    ) -> Result<String, OperationError> {
        if let Some(id) = self.resolved.lock().await.get(&key) {
            return Ok(id.clone());
        }
        let id = find.await?;
        self.resolved.lock().await.insert(key, id.clone());
        Ok(id)
    }

    /// Like [`Pending::remember`], for a `find` that may not know the id
    /// (`None`, remembered as nothing).
    pub async fn remember_found(
        &self,
        key: (String, String),
        find: impl Future<Output = Result<Option<String>, OperationError>>,
    ) -> Result<Option<String>, OperationError> {
        if let Some(id) = self.resolved.lock().await.get(&key) {
            return Ok(Some(id.clone()));
        }
        let found = find.await?;
        if let Some(id) = &found {
            self.resolved.lock().await.insert(key, id.clone());
        }
        Ok(found)
    }

    /// `op` with its pending ids replaced by the ids of the objects created
    /// since; `None` when it holds none.
    pub async fn resolve(
        &self,
        client: &Client,
        op: &Operation,
    ) -> Result<Option<Operation>, OperationError> {
        if !self.active {
            return Ok(None);
        }
        let mut value = serde_json::to_value(op).map_err(|e| unresolved(e.to_string()))?;
        let Some(fields) = value.as_object_mut() else {
            return Ok(None);
        };
        let mut changed = false;
        // The project first: what is inside it is found within it.
        let project_id = match fields.get("project_id").and_then(|v| v.as_str()) {
            Some(id) if is_pending(id) => {
                let real = self.id(client, id, None).await?;
                fields.insert("project_id".into(), real.clone().into());
                changed = true;
                Some(real)
            }
            Some(id) => Some(id.to_owned()),
            None => None,
        };
        let mut stack: Vec<&mut serde_json::Value> = fields.values_mut().collect();
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::String(s) if is_pending(s) => {
                    *s = self.id(client, s, project_id.as_deref()).await?;
                    changed = true;
                }
                serde_json::Value::Array(items) => stack.extend(items.iter_mut()),
                serde_json::Value::Object(map) => stack.extend(map.values_mut()),
                _ => {}
            }
        }
        if !changed {
            return Ok(None);
        }
        serde_json::from_value(value)
            .map(Some)
            .map_err(|e| unresolved(e.to_string()))
    }

    /// The id the pending id `id` stands for, in the project `project_id`
    /// (resolved) when the operation is in one, from the kind that made it.
    pub async fn id(
        &self,
        client: &Client,
        id: &str,
        project_id: Option<&str>,
    ) -> Result<String, OperationError> {
        // Boxed: the kinds' resolvers are held only while an id resolves,
        // not in every operation's future.
        Box::pin(crate::kinds::resolve_pending(self, client, id, project_id))
            .await?
            .ok_or_else(|| unresolved(format!("`{id}` (no project to find it in)")))
    }

    /// `change` with the pending ids of its operations resolved, or the
    /// change as it is and why one could not be.
    pub async fn resolve_change<'c>(
        &self,
        client: &Client,
        change: Cow<'c, ResourceChange>,
    ) -> (Cow<'c, ResourceChange>, Option<OperationError>) {
        let mut resolved = Vec::new();
        for (index, op) in change.operations.iter().enumerate() {
            match self.resolve(client, op).await {
                Ok(Some(op)) => resolved.push((index, op)),
                Ok(None) => {}
                Err(error) => return (change, Some(error)),
            }
        }
        if resolved.is_empty() {
            return (change, None);
        }
        let mut change = change.into_owned();
        for (index, op) in resolved {
            change.operations[index] = op;
        }
        (Cow::Owned(change), None)
    }
}

/// The error of a pending id that could not be resolved: `what` says which.
pub fn unresolved(what: String) -> OperationError {
    OperationError::Unresolved { what }
}

/// Whether an operation of `change` names a pending object by id (the
/// object does not exist before the apply; the readers by id skip it).
pub fn mentions(change: &ResourceChange) -> bool {
    fn walk(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(map) => map.iter().any(|(k, v)| match v {
                serde_json::Value::String(s) => (k == "id" || k.ends_with("_id")) && is_pending(s),
                other => walk(other),
            }),
            serde_json::Value::Array(items) => items.iter().any(walk),
            _ => false,
        }
    }
    change
        .operations
        .iter()
        .any(|op| serde_json::to_value(op).is_ok_and(|v| walk(&v)))
}

/// Each of `changes` with its pending ids resolved, where it has any and
/// they resolve (`None` otherwise): how a saved plan's changes are read back
/// after it was applied.
pub async fn resolve_all(
    client: &Client,
    changes: &[&ResourceChange],
) -> Vec<Option<ResourceChange>> {
    let pending = Pending::new(true);
    let mut out = Vec::with_capacity(changes.len());
    for change in changes {
        if !mentions(change) {
            out.push(None);
            continue;
        }
        out.push(
            match pending.resolve_change(client, Cow::Borrowed(*change)).await {
                (resolved, None) => Some(resolved.into_owned()),
                (_, Some(_)) => None,
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn only_pending_ids_are_pending() {
        assert!(is_pending("pending:project:a"));
        assert!(is_pending("pending:scorer:judge"));
        assert!(!is_pending("0b9e6a4e-3c5d-4d3e-9a55-2f1e8a0c1b7d"));
        assert!(!is_pending("project:pending:a"));
    }

    #[tokio::test]
    async fn an_id_is_found_once_per_apply() {
        let pending = Pending::new(true);
        let finds = AtomicUsize::new(0);
        let find = || async {
            finds.fetch_add(1, Ordering::SeqCst);
            Ok("id-1".to_owned())
        };
        let key = || (String::new(), "a".to_owned());
        assert_eq!(
            pending.remember(key(), find()).await.ok(),
            Some("id-1".into())
        );
        assert_eq!(
            pending.remember(key(), find()).await.ok(),
            Some("id-1".into())
        );
        assert_eq!(finds.load(Ordering::SeqCst), 1);
        // Another key is found on its own.
        let other = (String::new(), "b".to_owned());
        assert_eq!(
            pending.remember(other, find()).await.ok(),
            Some("id-1".into())
        );
        assert_eq!(finds.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn an_id_not_found_is_not_remembered() {
        let pending = Pending::new(true);
        let finds = AtomicUsize::new(0);
        let find = |found: Option<&str>| {
            let found = found.map(str::to_owned);
            let finds = &finds;
            async move {
                finds.fetch_add(1, Ordering::SeqCst);
                Ok(found)
            }
        };
        let key = || ("pending:".to_owned(), "pending:scorer:x".to_owned());
        assert_eq!(
            pending.remember_found(key(), find(None)).await.ok(),
            Some(None)
        );
        assert_eq!(
            pending.remember_found(key(), find(Some("s1"))).await.ok(),
            Some(Some("s1".into()))
        );
        assert_eq!(
            pending.remember_found(key(), find(Some("s2"))).await.ok(),
            Some(Some("s1".into()))
        );
        assert_eq!(finds.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_failed_find_is_not_remembered() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let pending = Pending::new(true);
        let key = || (String::new(), "a".to_owned());
        runtime.block_on(async {
            let failed = pending
                .remember(key(), async { Err(unresolved("gone".into())) })
                .await;
            assert!(failed.is_err());
            let found = pending.remember(key(), async { Ok("id".to_owned()) }).await;
            assert_eq!(found.ok(), Some("id".into()));
        });
    }
}
