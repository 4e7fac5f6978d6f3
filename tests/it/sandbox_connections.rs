//! The sandbox's connections under neglect and floods: idle connections
//! and stalled request heads are closed after their timeouts, a request in
//! progress is never cut by them, and beyond the cap on connections a new
//! client is answered 503 (JSON, `Retry-After`) instead of waiting forever,
//! in process and as the real `evalctl sandbox` under a low open-file limit;
//! one peer address holding idle sockets cannot take the slots of another.

use crate::fault_support::free_port;
use crate::sandbox_support::*;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use evalctl::sandbox::{Faults, Sandbox};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A bound on how long anything here may take: reaching it means a hang.
const HANG: Duration = Duration::from_secs(30);

/// What a connection reads until the sandbox closes it.
#[derive(Debug, PartialEq)]
enum Ending {
    /// Closed without a byte.
    Closed,
    /// Answered 503, then closed.
    Refused,
    /// Something else was read before the close.
    Other(String),
}

/// Reads `conn` until the sandbox closes it (a reset counts as closed);
/// panics when it stays open for [`HANG`].
async fn ending(mut conn: TcpStream) -> Ending {
    let mut got = Vec::new();
    let read = tokio::time::timeout(HANG, async {
        let mut buf = [0u8; 4096];
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the connection was never closed");
    let text = String::from_utf8_lossy(&got).into_owned();
    if got.is_empty() {
        Ending::Closed
    } else if text.starts_with("HTTP/1.1 503") {
        Ending::Refused
    } else {
        Ending::Other(text)
    }
}

/// Reads one response (head and `content-length` bytes of body).
async fn read_response(conn: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().expect("a length"))
                })
                .unwrap_or(0);
            if got.len() >= end + 4 + length {
                return text;
            }
        }
        let n = tokio::time::timeout(HANG, conn.read(&mut buf))
            .await
            .expect("answered")
            .expect("read");
        assert!(n > 0, "closed before the whole response: {text:?}");
        got.extend_from_slice(&buf[..n]);
    }
}

async fn open_idle(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut idle = Vec::with_capacity(n);
    for _ in 0..n {
        idle.push(TcpStream::connect(addr).await.expect("connect"));
    }
    idle
}

/// A fresh client's GET of the current user: its status, `Retry-After` and
/// JSON body. A hang fails the test.
async fn fresh_request(base: &str) -> (u16, Option<String>, serde_json::Value) {
    let client = reqwest::Client::builder()
        .timeout(HANG)
        .build()
        .expect("client");
    let r = client
        .get(format!("{base}/v2/current_user"))
        .header("Service-AO-API-Key", KEY)
        .send()
        .await
        .expect("the fresh client is answered");
    let status = r.status().as_u16();
    let retry_after = r
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = r.json().await.unwrap_or(serde_json::Value::Null);
    (status, retry_after, body)
}

fn assert_refusal(retry_after: Option<&str>, body: &serde_json::Value) {
    assert_eq!(retry_after, Some("1"));
    let detail = body["detail"].as_str().expect("a JSON detail");
    assert!(detail.contains("connections"), "{detail}");
}

#[tokio::test]
async fn beyond_the_cap_a_new_client_gets_503_and_idle_connections_are_closed() {
    let header_timeout = Duration::from_secs(3);
    let cx = Ctx::with(
        Sandbox::builder()
            .max_connections(8)
            // The whole cap for this one peer: the cap itself is what is tested.
            .max_connections_per_peer(8)
            .header_read_timeout(header_timeout)
            .idle_timeout(Duration::from_secs(60)),
    );
    let opened = Instant::now();
    // The cap, and three more (fewer than the four answered 503 at once).
    let idle = open_idle(cx.sb.addr(), 8 + 3).await;
    let (status, retry_after, body) = fresh_request(&cx.sb.base_url()).await;
    if status == 503 {
        assert_refusal(retry_after.as_deref(), &body);
    } else {
        // Only possible if the idle connections had already timed out.
        assert_eq!(status, 200, "{body}");
        assert!(opened.elapsed() >= header_timeout);
    }
    let mut endings = Vec::new();
    for conn in idle {
        endings.push(ending(conn).await);
    }
    let closed = endings.iter().filter(|e| **e == Ending::Closed).count();
    let refused = endings.iter().filter(|e| **e == Ending::Refused).count();
    assert_eq!((closed, refused), (8, 3), "{endings:?}");
    assert!(
        opened.elapsed() >= header_timeout,
        "closed before the header-read timeout"
    );
    // Their places are free again.
    let (status, _, body) = fresh_request(&cx.sb.base_url()).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn timeouts_close_idle_and_stalled_connections_but_never_a_request_in_progress() {
    let header_timeout = Duration::from_millis(500);
    let idle_timeout = Duration::from_millis(1500);
    let latency = Duration::from_millis(2500);
    let cx = Ctx::with(
        Sandbox::builder()
            .header_read_timeout(header_timeout)
            .idle_timeout(idle_timeout)
            .faults(Faults {
                latency,
                ..Faults::default()
            }),
    );
    // A request that takes longer than both timeouts is answered.
    let mut conn = TcpStream::connect(cx.sb.addr()).await.expect("connect");
    let request = format!(
        "GET /v2/current_user HTTP/1.1\r\nHost: sandbox\r\nService-AO-API-Key: {KEY}\r\n\r\n"
    );
    conn.write_all(request.as_bytes()).await.expect("write");
    let response = read_response(&mut conn).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    // Then, kept alive and idle, it is closed after the idle timeout (not
    // the shorter header-read timeout).
    // (The sandbox counts from its last byte written, a little before the
    // client's last byte read.)
    let idle_from = Instant::now();
    assert_eq!(ending(conn).await, Ending::Closed);
    let idle_for = idle_from.elapsed();
    assert!(idle_for >= idle_timeout.mul_f64(0.8), "{idle_for:?}");

    // A head that stalls half-way is closed after the header-read timeout.
    let mut stalled = TcpStream::connect(cx.sb.addr()).await.expect("connect");
    let started = Instant::now();
    stalled
        .write_all(b"GET /v2/current_user HTTP/1.1\r\nHost: sandbox\r\n")
        .await
        .expect("write");
    let end = ending(stalled).await;
    assert!(matches!(end, Ending::Closed | Ending::Other(_)), "{end:?}");
    assert!(started.elapsed() >= header_timeout);
    // The log saw one request: the stalled head never became one.
    assert_eq!(cx.sb.requests().len(), 1);
}

/// `evalctl sandbox` under `ulimit -n FILES`, killed when dropped.
struct LimitedSandbox {
    child: Child,
    base: String,
    addr: SocketAddr,
}

impl LimitedSandbox {
    fn start(files: u32, flags: &[&str]) -> LimitedSandbox {
        let port = free_port();
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -n {files} && exec \"$0\" sandbox --listen 127.0.0.1:{port} \"$@\""
            ))
            .arg(env!("CARGO_BIN_EXE_evalctl"))
            .args(flags)
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start evalctl sandbox");
        let stdout = child.stdout.take().expect("stdout");
        let mut first = String::new();
        let _ = BufReader::new(stdout).read_line(&mut first);
        assert!(first.contains("listening on"), "{first:?}");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        LimitedSandbox {
            child,
            base: format!("http://{addr}"),
            addr,
        }
    }
}

impl Drop for LimitedSandbox {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn a_flood_of_idle_connections_past_the_open_file_limit_does_not_silence_the_sandbox() {
    // 256 files: the default cap is (256 - 128) * 3/4 = 96 connections.
    // Open 400 that send nothing: without the cap, the sandbox runs out of
    // file descriptors and nobody is answered until they close.
    let sb = LimitedSandbox::start(256, &["--header-read-timeout-ms", "4000"]);
    let idle = open_idle(sb.addr, 400).await;
    let (status, retry_after, body) = fresh_request(&sb.base).await;
    if status == 503 {
        assert_refusal(retry_after.as_deref(), &body);
    } else {
        assert_eq!(status, 200, "{body}");
    }
    let mut endings = Vec::new();
    for conn in idle {
        endings.push(ending(conn).await);
    }
    assert!(
        endings
            .iter()
            .all(|e| matches!(e, Ending::Closed | Ending::Refused)),
        "{endings:?}"
    );
    let (status, _, body) = fresh_request(&sb.base).await;
    assert_eq!(status, 200, "{body}");
}

/// A connection to `addr` from the loopback address `source` (all of
/// 127.0.0.0/8 is loopback on Linux, so tests can be two peers).
async fn connect_from(source: [u8; 4], addr: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(SocketAddr::from((source, 0)))
        .expect("bind a loopback source address");
    socket.connect(addr).await.expect("connect")
}

#[tokio::test]
async fn one_peer_holding_idle_sockets_cannot_starve_another() {
    // A cap of 16: one address may hold 8 (half) by default.
    let sb = LimitedSandbox::start(
        1024,
        &[
            "--max-connections",
            "16",
            "--header-read-timeout-ms",
            "20000",
        ],
    );
    let greedy = [127, 0, 0, 2];
    let mut held = Vec::new();
    for _ in 0..8 {
        held.push(connect_from(greedy, sb.addr).await);
    }
    // Its ninth is refused, and told why.
    let mut ninth = connect_from(greedy, sb.addr).await;
    ninth
        .write_all(b"GET /v2/current_user HTTP/1.1\r\nHost: sandbox\r\n\r\n")
        .await
        .expect("write");
    let answer = read_response(&mut ninth).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after: 1")
            && answer.contains("at most 8 connections at once from one address"),
        "{answer}"
    );
    // A flood from the same address changes nothing for the others.
    for _ in 0..40 {
        held.push(connect_from(greedy, sb.addr).await);
    }
    for _ in 0..5 {
        let (status, _, body) = fresh_request(&sb.base).await;
        assert_eq!(status, 200, "another peer is served: {body}");
    }
    drop(held);
}
