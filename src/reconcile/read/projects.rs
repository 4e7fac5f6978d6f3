//! Finding projects: by the names and ids the manifests use (one filtered
//! listing, one GET per id), or all of them (an export). A name that finds
//! nothing is reported with the nearest existing names, read with one more
//! listing only then.

use std::collections::BTreeMap;

use futures::future::try_join_all;

use super::error::{ReadError, ctx};
use crate::api::{FilterValue, Operator, ProjectCollectionParams, ProjectFilter, ProjectItem};
use crate::client::Client;
use crate::state::{MissingObject, ObjectKey};
use crate::suggest::nearest;

/// A project found live: its id and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FoundProject {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
}

/// The names and the ids among `keys`, in order.
pub(crate) fn split_keys<'k>(
    keys: impl IntoIterator<Item = &'k ObjectKey>,
) -> (Vec<String>, Vec<String>) {
    let mut names = Vec::new();
    let mut ids = Vec::new();
    for key in keys {
        match key {
            ObjectKey::Name(n) => names.push(n.clone()),
            ObjectKey::Id(i) => ids.push(i.clone()),
        }
    }
    (names, ids)
}

/// Every project the credentials can see.
pub async fn list_projects(client: &Client) -> Result<Vec<ProjectItem>, ReadError> {
    client
        .list_projects(ProjectCollectionParams::default())
        .await
        .map_err(ctx(|| "the projects".to_owned()))
}

/// Finds the projects `keys` name; those that do not exist are returned as
/// missing, with the nearest names.
pub async fn find_projects(
    client: &Client,
    keys: &[ObjectKey],
) -> Result<(BTreeMap<ObjectKey, FoundProject>, Vec<MissingObject>), ReadError> {
    let (names, ids) = split_keys(keys);
    let by_name = async {
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let params = ProjectCollectionParams {
            filters: vec![ProjectFilter::Name {
                operator: Operator::OneOf,
                value: FilterValue::Many(names.clone()),
                case_sensitive: Some(true),
            }],
            sort: None,
        };
        client
            .list_projects(params)
            .await
            .map_err(ctx(|| "the projects".to_owned()))
    };
    let by_id = try_join_all(ids.iter().map(|id| async move {
        let project = client
            .get_project(id)
            .await
            .map_err(ctx(|| format!("project {id}")))?;
        Ok::<_, ReadError>((id.clone(), project))
    }));
    let (listed, fetched) = tokio::try_join!(by_name, by_id)?;
    let mut found = BTreeMap::new();
    for p in listed {
        found
            .entry(ObjectKey::Name(p.name.clone()))
            .or_insert(FoundProject {
                id: p.id,
                name: p.name,
            });
    }
    for (id, project) in fetched {
        if let Some(p) = project {
            found.insert(
                ObjectKey::Id(id),
                FoundProject {
                    id: p.id,
                    name: p.name.unwrap_or_default(),
                },
            );
        }
    }
    let absent: Vec<&ObjectKey> = keys.iter().filter(|k| !found.contains_key(*k)).collect();
    let mut missing = Vec::new();
    if !absent.is_empty() {
        let all = list_projects(client).await?;
        let all_names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
        for key in absent {
            missing.push(MissingObject {
                kind: "project".to_owned(),
                key: key.clone(),
                project: None,
                suggestions: nearest(key.text(), all_names.iter().copied()),
            });
        }
    }
    Ok((found, missing))
}
