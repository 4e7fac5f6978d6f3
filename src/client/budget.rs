//! The bytes of response bodies the client holds at once, whatever the
//! service (or a proxy in front of it) sends: one budget per client, shared
//! by every request in flight, so that concurrency and paging cannot multiply
//! the per-response cap.
//!
//! - A success (2xx) body is read up to [`MAX_RESPONSE_BYTES`]; a larger one
//!   is an error (at once when its `Content-Length` says so, without reading
//!   it). An error body (any other status) is read only up to
//!   [`MAX_ERROR_BYTES`], all its `detail` needs; the rest is dropped unread
//!   (the connection is closed, not drained).
//! - Before a body is read, its bytes are reserved from two pools counted in
//!   KiB: the first [`HEAD_BYTES`] of each body (or its whole length when
//!   smaller and known, or [`MAX_ERROR_BYTES`] for an error) from the *heads*
//!   pool ([`HEADS_BUDGET`]), the rest from the *bodies* pool
//!   ([`BODIES_BUDGET`]): its `Content-Length` when known, else everything
//!   up to the cap, reserved once the body outgrows its head. Each
//!   reservation is taken whole (never a little at a time), a response
//!   waiting for the heads pool holds nothing, and one holding bodies
//!   permits waits for nothing, so responses cannot wait on each other in a
//!   circle; one reservation never exceeds its pool, so every wait ends. Once
//!   read, a body keeps only its own length reserved, until it is decoded
//!   and dropped.
//! - So at most `HEADS_BUDGET + BODIES_BUDGET` (96 MiB) of response bodies
//!   are held at a time, and a response that cannot get its reservation
//!   waits (within `--timeout`, which covers reading the body).
//!
//! A paginated listing is bounded as a whole too: its pages together may
//! hold at most [`MAX_LISTING_BYTES`] (`paginate` counts them), since the
//! items of every page are kept until the listing ends.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Semaphore;

/// The largest success body read; a larger one is an error, not an
/// allocation without bound.
pub const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// The most read of an error body (any status but 2xx): its `detail` and a
/// 422's fields need a few KiB; the rest is not read.
pub const MAX_ERROR_BYTES: usize = 64 << 10;

/// The part of each success body reserved from the heads pool.
pub const HEAD_BYTES: usize = 256 << 10;

/// The heads pool: the first [`HEAD_BYTES`] of every body in flight.
pub const HEADS_BUDGET: usize = 16 << 20;

/// The bodies pool: what bodies hold past their head.
pub const BODIES_BUDGET: usize = 80 << 20;

/// The most the pages of one paginated listing may hold together (their
/// items are kept, decoded, until the listing ends: a few times their bytes).
pub const MAX_LISTING_BYTES: usize = 32 << 20;

const KIB: usize = 1024;

/// `bytes` in KiB permits, rounded up.
fn kib(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(KIB)).unwrap_or(u32::MAX)
}

/// The two pools of one client, and what bodies hold.
#[derive(Debug, Clone)]
pub struct Budget {
    heads: Arc<Semaphore>,
    bodies: Arc<Semaphore>,
    /// Bytes held by bodies now, and the most ever (measured apart from the
    /// pools, so that a test of the bound does not trust the pools).
    held: Arc<(AtomicUsize, AtomicUsize)>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(HEADS_BUDGET, BODIES_BUDGET)
    }
}

impl Budget {
    /// Pools of `heads` and `bodies` bytes (each at least what one response
    /// reserves from it).
    pub fn new(heads: usize, bodies: usize) -> Self {
        let heads = heads.max(HEAD_BYTES.max(MAX_ERROR_BYTES));
        let bodies = bodies.max(MAX_RESPONSE_BYTES - HEAD_BYTES);
        Budget {
            heads: Arc::new(Semaphore::new(kib(heads) as usize)),
            bodies: Arc::new(Semaphore::new(kib(bodies) as usize)),
            held: Arc::default(),
        }
    }

    /// The most bytes response bodies held at once so far.
    pub fn peak(&self) -> usize {
        self.held.1.load(Ordering::Relaxed)
    }

    /// KiB free in (heads, bodies): for tests.
    #[cfg(test)]
    pub fn available(&self) -> (usize, usize) {
        (
            self.heads.available_permits(),
            self.bodies.available_permits(),
        )
    }

    /// Reserves `bytes` from the heads pool, waiting while it is spent.
    pub async fn head(&self, bytes: usize) -> Held {
        let n = kib(bytes);
        take(&self.heads, n).await;
        Held {
            budget: self.clone(),
            heads: n,
            bodies: 0,
            bytes: 0,
        }
    }
}

async fn take(pool: &Semaphore, n: u32) {
    if n == 0 {
        return;
    }
    // The pools are never closed: the permits are returned by `Held`'s drop.
    if let Ok(permit) = pool.acquire_many(n).await {
        permit.forget();
    }
}

/// Bytes reserved for one body; returned to the pools when dropped.
#[derive(Debug)]
pub struct Held {
    budget: Budget,
    heads: u32,
    bodies: u32,
    /// Bytes the body holds.
    bytes: usize,
}

impl Held {
    /// Reserves `bytes` more from the bodies pool, waiting while it is spent;
    /// once per body: a later call does nothing (a second reservation would
    /// wait while holding one).
    pub async fn grow(&mut self, bytes: usize) {
        if self.bodies > 0 {
            return;
        }
        let n = kib(bytes);
        take(&self.budget.bodies, n).await;
        self.bodies += n;
    }

    /// Counts `n` more bytes held by the body.
    fn hold(&mut self, n: usize) {
        self.bytes += n;
        let (now, peak) = &*self.budget.held;
        let total = now.fetch_add(n, Ordering::Relaxed) + n;
        peak.fetch_max(total, Ordering::Relaxed);
    }

    /// Bytes reserved.
    pub fn reserved(&self) -> usize {
        (self.heads as usize + self.bodies as usize) * KIB
    }

    /// Keeps only `bytes` reserved (what the body holds once read).
    pub fn shrink_to(&mut self, bytes: usize) {
        let keep = kib(bytes);
        let heads = self.heads.min(keep);
        let bodies = self.bodies.min(keep - heads);
        self.budget.heads.add_permits((self.heads - heads) as usize);
        self.budget
            .bodies
            .add_permits((self.bodies - bodies) as usize);
        self.heads = heads;
        self.bodies = bodies;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.budget.held.0.fetch_sub(self.bytes, Ordering::Relaxed);
        self.budget.heads.add_permits(self.heads as usize);
        self.budget.bodies.add_permits(self.bodies as usize);
    }
}

/// What reading a body found.
#[derive(Debug)]
pub enum Read {
    /// The body (an error body possibly cut at [`MAX_ERROR_BYTES`]), with
    /// its reservation.
    Body(Vec<u8>, Held),
    /// A success body over [`MAX_RESPONSE_BYTES`] (by its `Content-Length`,
    /// or once read that far): nothing of it is kept.
    TooLarge,
}

/// The chunks of a body as they arrive.
pub trait Chunks {
    /// The error of a failed read.
    type Error;
    /// The next chunk, `None` at the end.
    fn next_chunk(
        &mut self,
    ) -> impl Future<Output = Result<Option<impl AsRef<[u8]> + Send>, Self::Error>> + Send;
}

impl Chunks for reqwest::Response {
    type Error = reqwest::Error;
    fn next_chunk(
        &mut self,
    ) -> impl Future<Output = Result<Option<impl AsRef<[u8]> + Send>, Self::Error>> + Send {
        self.chunk()
    }
}

/// Reads a body within the budget: `success` says whether its status is a
/// 2xx (else only its first [`MAX_ERROR_BYTES`] are read), `declared` is its
/// `Content-Length`, `allowed` the most a success body may hold (at most
/// [`MAX_RESPONSE_BYTES`]: less for a page when its listing has read much).
pub async fn read<C: Chunks>(
    budget: &Budget,
    mut chunks: C,
    success: bool,
    declared: Option<u64>,
    allowed: usize,
) -> Result<Read, C::Error> {
    let declared = declared.map(|d| usize::try_from(d).unwrap_or(usize::MAX));
    let limit = if success {
        allowed.min(MAX_RESPONSE_BYTES)
    } else {
        MAX_ERROR_BYTES
    };
    if success && declared.is_some_and(|d| d > limit) {
        return Ok(Read::TooLarge);
    }
    let expected = declared.map(|d| d.min(limit));
    let head = expected
        .map_or(HEAD_BYTES, |d| d.min(HEAD_BYTES))
        .min(limit);
    let mut held = budget.head(head).await;
    if let Some(rest) = expected.map(|d| d.saturating_sub(head)).filter(|r| *r > 0) {
        held.grow(rest).await;
    }
    let mut body = Vec::with_capacity(expected.unwrap_or(0));
    while let Some(chunk) = chunks.next_chunk().await? {
        let chunk = chunk.as_ref();
        let wanted = body.len() + chunk.len();
        if wanted > limit {
            if success {
                return Ok(Read::TooLarge);
            }
            // An error body: its first bytes are enough.
            held.hold(limit - body.len());
            body.extend_from_slice(&chunk[..limit - body.len()]);
            break;
        }
        if wanted > held.reserved() {
            // A body longer than its head (or than it declared): everything up
            // to the cap, at once, and room for it (no copy as it grows).
            held.grow(limit.saturating_sub(held.reserved())).await;
            body.reserve_exact(limit.saturating_sub(body.len()));
        }
        held.hold(chunk.len());
        body.extend_from_slice(chunk);
    }
    held.shrink_to(body.len());
    Ok(Read::Body(body, held))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A body served in chunks of `chunk` bytes.
    struct Fake {
        left: usize,
        chunk: usize,
    }

    impl Chunks for Fake {
        type Error = std::convert::Infallible;
        async fn next_chunk(&mut self) -> Result<Option<impl AsRef<[u8]> + Send>, Self::Error> {
            tokio::task::yield_now().await;
            if self.left == 0 {
                return Ok(None);
            }
            let n = self.left.min(self.chunk);
            self.left -= n;
            Ok(Some(vec![b'x'; n]))
        }
    }

    fn fake(len: usize) -> Fake {
        Fake {
            left: len,
            chunk: 64 << 10,
        }
    }

    fn body_len(read: &Read) -> Option<usize> {
        match read {
            Read::Body(b, _) => Some(b.len()),
            Read::TooLarge => None,
        }
    }

    #[tokio::test]
    async fn error_bodies_are_cut_and_success_bodies_capped() {
        let budget = Budget::default();
        let err = read(&budget, fake(10 << 20), false, None, MAX_RESPONSE_BYTES)
            .await
            .unwrap();
        assert_eq!(body_len(&err), Some(MAX_ERROR_BYTES));
        let declared = read(
            &budget,
            fake(10 << 20),
            false,
            Some(10 << 20),
            MAX_RESPONSE_BYTES,
        )
        .await
        .unwrap();
        assert_eq!(body_len(&declared), Some(MAX_ERROR_BYTES));
        let ok = read(&budget, fake(3 << 20), true, None, MAX_RESPONSE_BYTES)
            .await
            .unwrap();
        assert_eq!(body_len(&ok), Some(3 << 20));
        // Too large: by its Content-Length without reading, or once read.
        let big = MAX_RESPONSE_BYTES + 1;
        let mut unread = fake(big);
        assert!(matches!(
            read(
                &budget,
                &mut unread,
                true,
                Some(big as u64),
                MAX_RESPONSE_BYTES
            )
            .await
            .unwrap(),
            Read::TooLarge
        ));
        assert_eq!(unread.left, big, "a declared oversize body is not read");
        assert!(matches!(
            read(&budget, fake(big), true, None, MAX_RESPONSE_BYTES)
                .await
                .unwrap(),
            Read::TooLarge
        ));
        // A page past what its listing may still read: stopped there.
        assert!(matches!(
            read(&budget, fake(2 << 20), true, None, 1 << 20)
                .await
                .unwrap(),
            Read::TooLarge
        ));
        // Everything read was given back but what the live bodies hold.
        drop((err, declared, ok));
        assert_eq!(budget.available(), Budget::default().available());
    }

    impl<C: Chunks + Send> Chunks for &mut C {
        type Error = C::Error;
        fn next_chunk(
            &mut self,
        ) -> impl Future<Output = Result<Option<impl AsRef<[u8]> + Send>, Self::Error>> + Send
        {
            (**self).next_chunk()
        }
    }

    /// The bound: many large bodies at once never hold more than the two
    /// pools, a body keeps only its length once read, and bodies of unknown
    /// length each larger than their head (waiting on each other if they
    /// could) all finish.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_bodies_stay_within_the_pools_and_all_finish() {
        let (heads, bodies) = (4 << 20, MAX_RESPONSE_BYTES);
        let budget = Budget::new(heads, bodies);
        let full = budget.available();
        let mut tasks = Vec::new();
        for i in 0..40usize {
            let budget = budget.clone();
            tasks.push(tokio::spawn(async move {
                let len = (i % 5 + 1) * (6 << 20);
                let declared = (i % 2 == 0).then_some(len as u64);
                let read = read(&budget, fake(len), true, declared, MAX_RESPONSE_BYTES)
                    .await
                    .unwrap();
                assert_eq!(body_len(&read), Some(len));
                tokio::time::sleep(Duration::from_millis(2)).await;
            }));
        }
        let all = futures::future::join_all(tasks);
        tokio::time::timeout(Duration::from_secs(60), all)
            .await
            .expect("every body is read: no response waits forever");
        // 40 bodies of 6 to 30 MiB (720 MiB in all) never held more than the pools.
        assert!(budget.peak() > 30 << 20, "{}", budget.peak());
        assert!(budget.peak() <= heads + bodies, "{}", budget.peak());
        assert_eq!(budget.available(), full);
    }

    #[test]
    fn shrinking_gives_back_the_bodies_pool_first() {
        let budget = Budget::default();
        let full = budget.available();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut held = rt.block_on(async {
            let mut held = budget.head(HEAD_BYTES).await;
            held.grow(10 << 20).await;
            held
        });
        held.shrink_to(1 << 20);
        assert_eq!(held.reserved(), 1 << 20);
        assert_eq!(budget.available().0, full.0 - kib(HEAD_BYTES) as usize);
        held.shrink_to(0);
        drop(held);
        assert_eq!(budget.available(), full);
    }
}
