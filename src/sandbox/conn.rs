//! The sandbox's listener: TCP connections with timeouts, a cap on how many
//! are open at once, and a switch the fault layer can use to cut one.
//!
//! - **Timeouts** ([`ConnLimits`]): a connection must deliver a complete
//!   request head within the header-read timeout of its first byte (of
//!   being accepted, for its first request); between requests it may stay
//!   idle for the idle timeout. A request being processed is never timed
//!   out (the fault layer's latency spikes run as long as they are told).
//!   When a timeout expires the connection reads as closed, so hyper
//!   drops it without writing anything.
//! - **The cap**: at most [`ConnLimits::max_connections`] connections are
//!   served at once, and at most [`ConnLimits::per_peer`] of them (half the
//!   cap by default) from one IP address, so one client holding idle or
//!   slow-header sockets cannot take every slot from the others. Beyond
//!   either limit a connection is answered `503 {"detail": ...}` with
//!   `Retry-After: 1` and closed. At most a quarter of the cap more are
//!   being answered at once (past that the oldest of them is closed), so a
//!   flood of idle connections neither hangs new clients nor uses up the
//!   process's file descriptors.
//! - **Cuts**: each accepted connection carries a [`ConnInfo`] (a
//!   [`KillSwitch`] and its [`Activity`]) into the request's extensions.
//!   Tripping the switch makes every later read of the connection end and
//!   every later write fail, so hyper drops the connection without writing
//!   a byte: the client sees a connection closed without a response, as
//!   after a crash or a network cut.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::AbortHandle;
use tokio::time::{Instant, Sleep};

/// Timeouts and the cap on connections (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// How long a request head may take to arrive, from its first byte (from
    /// the connection's start for its first request).
    pub header_read_timeout: Duration,
    /// How long a connection may stay open with no request between two
    /// requests (keep-alive).
    pub idle_timeout: Duration,
    /// The most connections served at once; more are answered 503.
    pub max_connections: usize,
    /// The most connections served at once from one IP address; more from it
    /// are answered 503 (`None`: half of `max_connections`, see
    /// [`ConnLimits::per_peer`]).
    pub max_per_peer: Option<usize>,
}

/// The default header-read timeout.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The default idle timeout: longer than the 90 s for which HTTP clients
/// (reqwest, hence evalctl) keep an idle connection for reuse, so a client
/// does not send a request on a connection the sandbox is closing.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// The largest default cap on connections.
pub const MAX_DEFAULT_CONNECTIONS: usize = 1024;

/// File descriptors left for everything but connections (the runtime, the
/// state file, the listener).
const RESERVED_FDS: u64 = 128;

impl Default for ConnLimits {
    fn default() -> Self {
        ConnLimits {
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: default_max_connections(),
            max_per_peer: None,
        }
    }
}

impl ConnLimits {
    /// How many connections beyond the cap may be waiting for their 503 at
    /// once (a quarter of the cap, at least 4).
    pub fn max_refusals(&self) -> usize {
        (self.max_connections / 4).max(4)
    }

    /// The most connections served at once from one IP address: as set, else
    /// half the cap (at least 1), so one client leaves the other half to the
    /// rest.
    pub fn per_peer(&self) -> usize {
        self.max_per_peer
            .unwrap_or(self.max_connections / 2)
            .clamp(1, self.max_connections.max(1))
    }

    /// Checks that timeouts and the caps are positive.
    pub fn validate(&self) -> Result<(), super::SandboxError> {
        let bad = |option, reason: &str| {
            Err(super::SandboxError::BadOption {
                option,
                reason: reason.to_owned(),
            })
        };
        if self.header_read_timeout.is_zero() {
            return bad("header_read_timeout", "must be longer than zero");
        }
        if self.idle_timeout.is_zero() {
            return bad("idle_timeout", "must be longer than zero");
        }
        if self.max_connections == 0 {
            return bad("max_connections", "must be at least 1");
        }
        if self.max_per_peer == Some(0) {
            return bad("max_connections_per_peer", "must be at least 1");
        }
        Ok(())
    }
}

/// The default cap: three quarters of the open-file limit less
/// [`RESERVED_FDS`], at most [`MAX_DEFAULT_CONNECTIONS`], so the connections
/// served and those being refused fit in the limit (1,024 files: 672).
pub fn default_max_connections() -> usize {
    let cap = open_file_limit()
        .map(|n| n.saturating_sub(RESERVED_FDS) * 3 / 4)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(MAX_DEFAULT_CONNECTIONS);
    cap.clamp(16, MAX_DEFAULT_CONNECTIONS)
}

#[cfg(unix)]
fn open_file_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<u64> {
    None
}

/// Cuts one connection.
#[derive(Debug, Clone, Default)]
pub struct KillSwitch(Arc<AtomicBool>);

impl KillSwitch {
    /// Cuts the connection: nothing more is read or written on it.
    pub fn trip(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    fn tripped(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What a connection is doing, for its timeouts: requests in progress,
/// requests served, when it last became idle and when the head of its next
/// request started to arrive.
#[derive(Debug)]
pub struct Activity {
    inner: Mutex<ActivityState>,
}

#[derive(Debug)]
struct ActivityState {
    busy: usize,
    served: u64,
    idle_since: Instant,
    head_started: Option<Instant>,
    /// The reader's waker, woken when a request ends so that the idle
    /// timeout starts even if nothing arrives on the socket.
    reader: Option<Waker>,
}

impl Default for Activity {
    fn default() -> Self {
        Activity {
            inner: Mutex::new(ActivityState {
                busy: 0,
                served: 0,
                idle_since: Instant::now(),
                head_started: None,
                reader: None,
            }),
        }
    }
}

impl Activity {
    fn state(&self) -> std::sync::MutexGuard<'_, ActivityState> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Marks a request as in progress until the returned guard is dropped
    /// (no timeout applies meanwhile).
    pub fn begin_request(self: &Arc<Self>) -> RequestGuard {
        let mut s = self.state();
        s.busy += 1;
        s.head_started = None;
        RequestGuard {
            activity: Arc::clone(self),
        }
    }

    fn bytes_read(&self) {
        let mut s = self.state();
        if s.busy == 0 && s.head_started.is_none() {
            s.head_started = Some(Instant::now());
        }
    }

    fn bytes_written(&self) {
        let mut s = self.state();
        if s.busy == 0 {
            s.idle_since = Instant::now();
        }
    }

    /// When the connection times out if nothing happens; `None` while a
    /// request is in progress (then `cx`'s waker is woken when it ends).
    fn deadline(&self, limits: &ConnLimits, cx: Option<&Context<'_>>) -> Option<Instant> {
        let mut s = self.state();
        if let Some(cx) = cx {
            s.reader = Some(cx.waker().clone());
        }
        if s.busy > 0 {
            return None;
        }
        Some(match s.head_started {
            Some(t) => t + limits.header_read_timeout,
            None if s.served == 0 => s.idle_since + limits.header_read_timeout,
            None => s.idle_since + limits.idle_timeout,
        })
    }
}

/// A request in progress on a connection (see [`Activity::begin_request`]).
#[derive(Debug)]
pub struct RequestGuard {
    activity: Arc<Activity>,
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let mut s = self.activity.state();
        s.busy = s.busy.saturating_sub(1);
        s.served += 1;
        s.idle_since = Instant::now();
        if let Some(reader) = s.reader.take() {
            reader.wake();
        }
    }
}

/// What the fault layer knows about a request's connection.
#[derive(Debug, Clone, Default)]
pub struct ConnInfo {
    /// Cuts this connection.
    pub kill: KillSwitch,
    /// What the connection is doing, for its timeouts.
    pub activity: Arc<Activity>,
}

/// Connections served per peer IP address (an address leaves the map when
/// its last connection closes).
type PeerCounts = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// One connection's place in its peer's count, given back when dropped.
#[derive(Debug)]
struct PeerSlot {
    peers: PeerCounts,
    ip: IpAddr,
}

impl PeerSlot {
    /// Takes a place for `ip` when it has fewer than `max` connections.
    fn take(peers: &PeerCounts, ip: IpAddr, max: usize) -> Option<PeerSlot> {
        let mut counts = peers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = counts.entry(ip).or_insert(0);
        if *count >= max {
            return None;
        }
        *count += 1;
        Some(PeerSlot {
            peers: Arc::clone(peers),
            ip,
        })
    }
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut counts = self
            .peers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.ip) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                counts.remove(&self.ip);
            }
        }
    }
}

/// Which limit a refused connection met.
#[derive(Debug, Clone, Copy)]
enum Over {
    /// [`ConnLimits::max_connections`].
    Cap,
    /// [`ConnLimits::per_peer`].
    Peer,
}

/// A TCP listener with timeouts, caps and cuttable connections (see the
/// module docs).
#[derive(Debug)]
pub struct SandboxListener {
    inner: TcpListener,
    limits: ConnLimits,
    slots: Arc<Semaphore>,
    peers: PeerCounts,
    /// Connections being answered 503, oldest first.
    refusing: VecDeque<AbortHandle>,
}

impl SandboxListener {
    /// Wraps a bound listener.
    pub fn new(inner: TcpListener, limits: ConnLimits) -> Self {
        SandboxListener {
            inner,
            slots: Arc::new(Semaphore::new(limits.max_connections)),
            peers: PeerCounts::default(),
            refusing: VecDeque::new(),
            limits,
        }
    }

    /// Answers a connection beyond the cap with a 503 on its own task. When
    /// [`ConnLimits::max_refusals`] are being answered already, the oldest of
    /// them is closed to make room: it has had the longest time to send its
    /// request, and this way the newest client, likely a live one behind a
    /// flood of idle connections, still gets its answer.
    fn refuse(&mut self, stream: TcpStream, over: Over, ip: IpAddr) {
        self.refusing.retain(|t| !t.is_finished());
        if self.refusing.len() >= self.limits.max_refusals()
            && let Some(oldest) = self.refusing.pop_front()
        {
            oldest.abort();
        }
        let detail = match over {
            Over::Cap => {
                let max = self.limits.max_connections;
                tracing::warn!(
                    target: "evalctl::sandbox",
                    "connection refused with 503: {max} connections open"
                );
                format!(
                    "Service Unavailable: the sandbox serves at most {max} connections at once; retry later"
                )
            }
            Over::Peer => {
                let max = self.limits.per_peer();
                tracing::warn!(
                    target: "evalctl::sandbox",
                    "connection from {ip} refused with 503: {max} connections open from that address"
                );
                format!(
                    "Service Unavailable: the sandbox serves at most {max} connections at once from one address; close some or retry later"
                )
            }
        };
        let wait = self.limits.header_read_timeout.min(REFUSAL_READ_TIMEOUT);
        let task = tokio::spawn(async move {
            let _ = refuse_with_503(stream, wait, &detail).await;
        });
        self.refusing.push_back(task.abort_handle());
    }
}

/// How long a refused connection is given to send its request head (and,
/// after the 503, to close its side).
const REFUSAL_READ_TIMEOUT: Duration = Duration::from_secs(2);

/// Reads the request head (so closing does not reset the connection before
/// the client reads the answer), writes a 503, closes the writing side and
/// waits briefly for the client to close.
async fn refuse_with_503(mut stream: TcpStream, wait: Duration, detail: &str) -> io::Result<()> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    let _ = tokio::time::timeout(wait, async {
        while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let body = serde_json::json!({ "detail": detail }).to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await?;
    let _ = tokio::time::timeout(wait, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
    })
    .await;
    Ok(())
}

impl Listener for SandboxListener {
    type Io = CuttableStream;
    type Addr = ConnInfo;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.inner.accept().await {
                Ok((stream, remote)) => {
                    // An IPv4 client of a dual-stack listener counts as its IPv4 address.
                    let ip = remote.ip().to_canonical();
                    let Some(peer) = PeerSlot::take(&self.peers, ip, self.limits.per_peer()) else {
                        self.refuse(stream, Over::Peer, ip);
                        continue;
                    };
                    let Ok(permit) = Arc::clone(&self.slots).try_acquire_owned() else {
                        drop(peer);
                        self.refuse(stream, Over::Cap, ip);
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    let info = ConnInfo::default();
                    return (
                        CuttableStream {
                            inner: stream,
                            info: info.clone(),
                            limits: self.limits,
                            timer: None,
                            _slot: permit,
                            _peer: peer,
                        },
                        info,
                    );
                }
                // Out of file descriptors and the like: back off briefly.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr().map(|_| ConnInfo::default())
    }
}

impl Connected<IncomingStream<'_, SandboxListener>> for ConnInfo {
    fn connect_info(stream: IncomingStream<'_, SandboxListener>) -> Self {
        stream.remote_addr().clone()
    }
}

/// A TCP stream that ends when its [`KillSwitch`] trips or a timeout
/// expires, and holds its places under the caps until dropped.
#[derive(Debug)]
pub struct CuttableStream {
    inner: TcpStream,
    info: ConnInfo,
    limits: ConnLimits,
    timer: Option<Pin<Box<Sleep>>>,
    _slot: OwnedSemaphorePermit,
    _peer: PeerSlot,
}

fn cut() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionReset,
        "connection cut by fault injection",
    )
}

impl CuttableStream {
    /// Whether the connection's timeout expired (registering a wake-up at
    /// the deadline when not).
    fn timed_out(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(deadline) = self.info.activity.deadline(&self.limits, Some(cx)) else {
            return false;
        };
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if timer.deadline() != deadline {
            timer.as_mut().reset(deadline);
        }
        timer.as_mut().poll(cx).is_ready()
    }
}

impl AsyncRead for CuttableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.info.kill.tripped() {
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.info.activity.bytes_read();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                if self.timed_out(cx) {
                    // Reads as closed: hyper drops the connection.
                    tracing::debug!(target: "evalctl::sandbox", "connection timed out");
                    Poll::Ready(Ok(()))
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

impl AsyncWrite for CuttableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.info.kill.tripped() {
            return Poll::Ready(Err(cut()));
        }
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.info.activity.bytes_written();
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.info.kill.tripped() {
            return Poll::Ready(Err(cut()));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.info.kill.tripped() {
            return Poll::Ready(Err(cut()));
        }
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(r, Poll::Ready(Ok(n)) if n > 0) {
            self.info.activity.bytes_written();
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_fits_the_open_file_limit() {
        let limits = ConnLimits::default();
        assert!(limits.validate().is_ok());
        assert!((16..=MAX_DEFAULT_CONNECTIONS).contains(&limits.max_connections));
        if let Some(files) = open_file_limit()
            && files > 512
        {
            let used = (limits.max_connections + limits.max_refusals()) as u64 + RESERVED_FDS;
            assert!(used <= files, "{used} > {files}");
        }
        let zero = ConnLimits {
            max_connections: 0,
            ..limits
        };
        assert!(zero.validate().is_err());
        let zero = ConnLimits {
            max_per_peer: Some(0),
            ..limits
        };
        assert!(zero.validate().is_err());
    }

    #[test]
    fn one_peer_gets_half_the_cap_unless_told_and_gives_its_places_back() {
        let limits = |max_connections, max_per_peer| ConnLimits {
            max_connections,
            max_per_peer,
            ..ConnLimits::default()
        };
        assert_eq!(limits(672, None).per_peer(), 336);
        assert_eq!(limits(1, None).per_peer(), 1);
        assert_eq!(limits(8, Some(8)).per_peer(), 8);
        assert_eq!(limits(8, Some(50)).per_peer(), 8, "never above the cap");
        let peers = PeerCounts::default();
        let a: IpAddr = [127, 0, 0, 2].into();
        let b: IpAddr = [127, 0, 0, 1].into();
        let held: Vec<PeerSlot> = (0..2)
            .map(|_| PeerSlot::take(&peers, a, 2).expect("a place"))
            .collect();
        assert!(PeerSlot::take(&peers, a, 2).is_none(), "a is at its limit");
        let other = PeerSlot::take(&peers, b, 2).expect("b is not");
        drop(held);
        drop(other);
        assert!(peers.lock().unwrap().is_empty(), "places given back");
        assert!(PeerSlot::take(&peers, a, 2).is_some());
    }

    #[test]
    fn deadlines_follow_what_the_connection_is_doing() {
        let limits = ConnLimits {
            header_read_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_secs(60),
            max_connections: 4,
            max_per_peer: None,
        };
        let remaining = |a: &Activity| {
            a.deadline(&limits, None)
                .map(|d| d.saturating_duration_since(Instant::now()))
        };
        let activity = Arc::new(Activity::default());
        // A new connection: the header-read timeout from its start.
        let left = remaining(&activity).unwrap();
        assert!(left <= Duration::from_secs(5) && left > Duration::from_secs(4));
        activity.bytes_read();
        let guard = activity.begin_request();
        assert_eq!(remaining(&activity), None, "never while busy");
        activity.bytes_read();
        assert_eq!(remaining(&activity), None, "a request body is not a head");
        drop(guard);
        // Idle between requests: the idle timeout.
        let left = remaining(&activity).unwrap();
        assert!(left > Duration::from_secs(59), "{left:?}");
        // A new head started: the header-read timeout from its first byte.
        activity.bytes_read();
        let left = remaining(&activity).unwrap();
        assert!(left <= Duration::from_secs(5) && left > Duration::from_secs(4));
    }
}
