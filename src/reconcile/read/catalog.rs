//! Reading the scorer catalog: every scorer (one paginated listing), each
//! reduced as it arrives, and the versions of the scorers a manifest pins.

use std::collections::BTreeSet;

use futures::future::try_join_all;

use super::error::{ReadError, ctx};
use crate::api::ListScorersRequest;
use crate::client::Client;
use crate::state::{Catalog, CatalogScorer, VersionRef};

/// How a manifest refers to a scorer whose version it pins.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum ScorerRef {
    /// By id.
    Id(String),
    /// By name.
    Name(String),
}

/// Reads the catalog, then the versions of every scorer of `pinned`.
pub async fn read_catalog(
    client: &Client,
    pinned: &BTreeSet<ScorerRef>,
) -> Result<Catalog, ReadError> {
    let scorers = client
        .list_scorers_reduced(ListScorersRequest::default(), CatalogScorer::from)
        .await
        .map_err(ctx(|| "the scorer catalog".to_owned()))?;
    let mut catalog = Catalog {
        scorers,
        ..Catalog::default()
    };
    let ids: BTreeSet<String> = pinned
        .iter()
        .filter_map(|r| match r {
            ScorerRef::Id(id) => catalog.by_id(id),
            ScorerRef::Name(name) => catalog.by_name(name),
        })
        .map(|s| s.id.clone())
        .collect();
    let reads = ids.into_iter().map(|id| async move {
        let versions = client
            .list_scorer_versions(&id)
            .await
            .map_err(ctx(|| format!("the versions of scorer {id}")))?;
        let versions: Vec<VersionRef> = versions.iter().map(VersionRef::from).collect();
        Ok::<_, ReadError>((id, versions))
    });
    catalog.versions = try_join_all(reads).await?.into_iter().collect();
    Ok(catalog)
}
