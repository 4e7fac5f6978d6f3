//! Walking paginated results: `starting_token` / `next_starting_token` /
//! `paginated` ([`crate::api::PageInfo::next`]), as a stream of pages, with a
//! guard against a server whose cursor does not advance (a token seen before
//! is an error, not an endless loop), a bound on the number of pages, and a
//! bound on the bytes of the pages together ([`MAX_LISTING_BYTES`]): the
//! items of every page are kept until the walk ends, so endless valid pages
//! must not grow memory without end.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::Stream;

use super::budget::MAX_LISTING_BYTES;
use super::error::ApiError;
use super::operation::Operation;
use crate::api::{
    ExperimentPage, ListScorerVersionsResponse, ListScorersResponse, LogStreamPage, PageInfo,
    ProjectListing,
};

/// The most pages one walk reads (a million items at the default page size).
pub const MAX_PAGES: usize = 10_000;

/// A response that carries pagination fields.
pub trait Paged {
    /// The pagination fields.
    fn page_info(&self) -> &PageInfo;
}

macro_rules! paged {
    ($($t:ty),+) => {$(
        impl Paged for $t {
            fn page_info(&self) -> &PageInfo {
                &self.page
            }
        }
    )+};
}

paged!(
    LogStreamPage,
    ExperimentPage,
    ProjectListing,
    ListScorersResponse,
    ListScorerVersionsResponse
);

tokio::task_local! {
    /// The bytes of the pages the current walk has read so far.
    static WALK: Arc<AtomicUsize>;
}

/// The most the next page of the current walk may hold, if a walk is under
/// way: what is left of [`MAX_LISTING_BYTES`] (the transport stops reading a
/// body there).
pub(crate) fn page_allowance() -> Option<usize> {
    WALK.try_with(|walk| MAX_LISTING_BYTES.saturating_sub(walk.load(Ordering::Relaxed)))
        .ok()
}

/// The error of a walk whose pages hold more than [`MAX_LISTING_BYTES`].
pub(crate) fn listing_too_large(op: &'static Operation, status: u16) -> ApiError {
    ApiError::Decode {
        operation: op,
        status,
        message: format!(
            "the pages of this listing hold more than {} MiB together, the most one listing reads; stopped (narrow the search)",
            MAX_LISTING_BYTES >> 20
        ),
    }
}

/// Counts a success body of `len` bytes toward the walk it belongs to, if
/// any (the transport calls it for every 2xx answer): past
/// [`MAX_LISTING_BYTES`] in all, the walk stops with an error.
pub(crate) fn charge_page(op: &'static Operation, status: u16, len: usize) -> Result<(), ApiError> {
    let total = WALK
        .try_with(|walk| walk.fetch_add(len, Ordering::Relaxed).saturating_add(len))
        .unwrap_or(0);
    if total > MAX_LISTING_BYTES {
        return Err(listing_too_large(op, status));
    }
    Ok(())
}

/// Tracks the cursors of one walk.
#[derive(Debug)]
pub struct Cursor {
    op: &'static Operation,
    seen: HashSet<i64>,
}

impl Cursor {
    /// A walk starting at `first`.
    pub fn new(op: &'static Operation, first: i64) -> Self {
        Cursor {
            op,
            seen: HashSet::from([first]),
        }
    }

    /// The next token after a page, or `None` at the end. A token seen before
    /// is [`ApiError::Pagination`]; a page past [`MAX_PAGES`] is
    /// [`ApiError::TooManyPages`].
    pub fn advance(&mut self, page: &PageInfo) -> Result<Option<i64>, ApiError> {
        let Some(next) = page.next() else {
            return Ok(None);
        };
        if !self.seen.insert(next) {
            return Err(ApiError::Pagination {
                operation: self.op,
                token: next,
            });
        }
        // One token per page read, plus the next one's.
        if self.seen.len() > MAX_PAGES {
            return Err(ApiError::TooManyPages {
                operation: self.op,
                pages: MAX_PAGES,
            });
        }
        Ok(Some(next))
    }
}

/// Every page from `first` on, fetching each with `fetch(token)`.
pub fn pages<P, F, Fut>(
    op: &'static Operation,
    first: i64,
    fetch: F,
) -> impl Stream<Item = Result<P, ApiError>> + Send + 'static
where
    P: Paged + Send + 'static,
    F: Fn(i64) -> Fut + Send + 'static,
    Fut: Future<Output = Result<P, ApiError>> + Send + 'static,
{
    let walk = Arc::new(AtomicUsize::new(0));
    let state = (Some(first), Cursor::new(op, first), fetch, walk);
    futures::stream::try_unfold(state, |(token, mut cursor, fetch, walk)| async move {
        let Some(token) = token else {
            return Ok(None);
        };
        let page = WALK.scope(walk.clone(), fetch(token)).await?;
        let next = cursor.advance(page.page_info())?;
        Ok(Some((page, (next, cursor, fetch, walk))))
    })
}

/// Collects every item of every page.
pub async fn collect<P, T>(
    stream: impl Stream<Item = Result<P, ApiError>>,
    items: impl Fn(P) -> Vec<T>,
) -> Result<Vec<T>, ApiError> {
    use futures::TryStreamExt;
    let mut out = Vec::new();
    futures::pin_mut!(stream);
    while let Some(page) = stream.try_next().await? {
        out.extend(items(page));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::operation::SEARCH_LOG_STREAMS;

    fn info(next: Option<i64>) -> PageInfo {
        PageInfo {
            starting_token: 0,
            limit: 10,
            paginated: next.is_some(),
            next_starting_token: next,
        }
    }

    #[test]
    fn cursor_stops_and_detects_loops() {
        let mut c = Cursor::new(&SEARCH_LOG_STREAMS, 0);
        assert_eq!(c.advance(&info(Some(10))).unwrap(), Some(10));
        assert_eq!(c.advance(&info(Some(20))).unwrap(), Some(20));
        assert!(matches!(
            c.advance(&info(Some(10))),
            Err(ApiError::Pagination { token: 10, .. })
        ));
        assert_eq!(c.advance(&info(None)).unwrap(), None);
        let mut c = Cursor::new(&SEARCH_LOG_STREAMS, 0);
        assert!(
            c.advance(&info(Some(0))).is_err(),
            "a cursor that does not advance"
        );
        // `paginated: false` ends the walk whatever the next token says.
        let mut p = info(Some(5));
        p.paginated = false;
        assert_eq!(
            Cursor::new(&SEARCH_LOG_STREAMS, 0).advance(&p).unwrap(),
            None
        );
    }

    #[test]
    fn cursor_stops_after_max_pages() {
        let mut c = Cursor::new(&SEARCH_LOG_STREAMS, 0);
        for page in 1..MAX_PAGES as i64 {
            assert_eq!(c.advance(&info(Some(page))).unwrap(), Some(page));
        }
        let err = c.advance(&info(Some(MAX_PAGES as i64))).unwrap_err();
        assert!(
            matches!(
                err,
                ApiError::TooManyPages {
                    pages: MAX_PAGES,
                    ..
                }
            ),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(text.contains("stopped after 10000 pages"), "{text}");
        assert!(!text.contains("did not advance"), "{text}");
    }

    #[tokio::test]
    async fn a_walk_stops_once_its_pages_hold_too_much() {
        // Each page charges what the transport would for its body.
        let page_bytes = 12 << 20;
        let stream = pages(&SEARCH_LOG_STREAMS, 0, move |token| async move {
            charge_page(&SEARCH_LOG_STREAMS, 200, page_bytes)?;
            Ok(LogStreamPage {
                page: info(Some(token + 1)),
                log_streams: Vec::new(),
            })
        });
        let err = collect(stream, |_| Vec::<()>::new()).await.unwrap_err();
        assert!(
            err.to_string().contains("more than 32 MiB together"),
            "{err}"
        );
        // Outside a walk, nothing is counted.
        assert!(charge_page(&SEARCH_LOG_STREAMS, 200, usize::MAX).is_ok());
    }

    #[tokio::test]
    async fn streams_every_page_then_stops() {
        let stream = pages(&SEARCH_LOG_STREAMS, 0, |token| async move {
            let next = (token < 20).then_some(token + 10);
            Ok(LogStreamPage {
                page: info(next),
                log_streams: Vec::new(),
            })
        });
        let tokens = collect(stream, |p: LogStreamPage| vec![p.page.next_starting_token])
            .await
            .unwrap();
        assert_eq!(tokens, [Some(10), Some(20), None]);
        let stuck = pages(&SEARCH_LOG_STREAMS, 0, |_| async move {
            Ok(LogStreamPage {
                page: info(Some(7)),
                log_streams: Vec::new(),
            })
        });
        let err = collect(stuck, |_| Vec::<()>::new()).await.unwrap_err();
        assert!(err.to_string().contains("did not advance"), "{err}");
    }
}
