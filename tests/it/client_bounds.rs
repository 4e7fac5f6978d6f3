//! What a hostile or broken server cannot make the client do (issue 22,
//! items 12 and 17):
//!
//! - hold more response bytes than its budget: many large bodies at full
//!   concurrency (success bodies without a `Content-Length`, a success body
//!   declaring more than the cap, error bodies of many MiB) are read within
//!   the budget (96 MiB at once), error bodies only their first 64 KiB (the
//!   server sees the connection closed long before it has written the rest),
//!   and every request ends: none waits forever for budget;
//! - send the credentials to a proxy: with `HTTP_PROXY`/`ALL_PROXY` pointing
//!   at a listener, commands against the loopback sandbox succeed and the
//!   listener never sees a connection.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: a failing unwrap is a failing test

use std::net::TcpListener as StdListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use evalctl::api::Secret;
use evalctl::client::{ApiError, Client, ClientConfig, Credentials};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::e2e_support::TestContext;

const MIB: usize = 1 << 20;

/// Bytes the hostile server wrote, per kind of answer.
#[derive(Default)]
struct Written {
    success: AtomicUsize,
    error: AtomicUsize,
    declared: AtomicUsize,
}

/// Serves every request on its own task: `GET /v2/scorers/ok-N` a 200 of
/// `N` MiB without a `Content-Length` (chunked), `…declared…` a 200 that
/// declares 70 MiB, anything else a 422 of 50 MiB (chunked). It writes until
/// the client closes the connection, counting what it wrote.
fn hostile_server(written: Arc<Written>) -> String {
    let std = StdListener::bind("127.0.0.1:0").unwrap();
    std.set_nonblocking(true).unwrap();
    let url = format!("http://{}", std.local_addr().unwrap());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(std).unwrap();
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                tokio::spawn(serve(socket, written.clone()));
            }
        });
    });
    url
}

async fn serve(mut socket: tokio::net::TcpStream, written: Arc<Written>) {
    loop {
        // The request head (the client's GETs carry no body).
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match socket.read(&mut byte).await {
                Ok(1) => head.push(byte[0]),
                _ => return,
            }
        }
        let head = String::from_utf8_lossy(&head).into_owned();
        let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
        let chunk = vec![b'x'; 64 << 10];
        let (status, total, declared, counter) = if path.contains("declared") {
            ("200 OK", 70 * MIB, true, &written.declared)
        } else if let Some(n) = path
            .strip_prefix("/v2/scorers/ok-")
            .and_then(|n| n.parse::<usize>().ok())
        {
            ("200 OK", n * MIB, false, &written.success)
        } else {
            ("422 Unprocessable Entity", 50 * MIB, false, &written.error)
        };
        let framing = if declared {
            format!("content-length: {total}")
        } else {
            "transfer-encoding: chunked".to_owned()
        };
        let reply =
            format!("HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{framing}\r\n\r\n");
        if socket.write_all(reply.as_bytes()).await.is_err() {
            return;
        }
        let mut sent = 0;
        while sent < total {
            let n = chunk.len().min(total - sent);
            let ok = if declared {
                socket.write_all(&chunk[..n]).await
            } else {
                let mut framed = format!("{n:x}\r\n").into_bytes();
                framed.extend_from_slice(&chunk[..n]);
                framed.extend_from_slice(b"\r\n");
                socket.write_all(&framed).await
            };
            if ok.is_err() {
                return;
            }
            sent += n;
            counter.fetch_add(n, Ordering::Relaxed);
        }
        if !declared && socket.write_all(b"0\r\n\r\n").await.is_err() {
            return;
        }
    }
}

fn client(url: &str) -> Client {
    let mut config = ClientConfig::new(url, Credentials::ApiKey(Secret::new("k-test")));
    config.concurrency = 32;
    config.adaptive_concurrency = false;
    config.request_timeout = Duration::from_secs(60);
    config.retry.max_attempts = 1;
    Client::new(config).unwrap()
}

#[test]
fn response_bodies_held_at_once_stay_within_the_budget() {
    let written = Arc::new(Written::default());
    let url = hostile_server(written.clone());
    let client = client(&url);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        // 24 success bodies of 12 MiB without a length (288 MiB in all), 32
        // error bodies of 50 MiB, 8 bodies declaring 70 MiB: all at once.
        let mut calls = Vec::new();
        for i in 0..64 {
            let client = client.clone();
            calls.push(tokio::spawn(async move {
                let id = match i % 8 {
                    0 => "declared-70".to_owned(),
                    n if n % 2 == 1 => format!("bad-{i}"),
                    _ => "ok-12".to_owned(),
                };
                (id.clone(), client.get_scorer(&id).await)
            }));
        }
        let all = futures::future::join_all(calls);
        let results = tokio::time::timeout(Duration::from_secs(120), all)
            .await
            .expect("every request ends: none waits forever for budget");
        for result in results {
            let (id, result) = result.unwrap();
            let err = result.expect_err("no body here is a scorer");
            let text = err.to_string();
            if id.starts_with("declared") {
                assert!(text.contains("larger than 64 MiB"), "{id}: {text}");
            } else if id.starts_with("ok-") {
                // Read whole (12 MiB is under the cap), then not a scorer.
                assert!(matches!(err, ApiError::Decode { .. }), "{id}: {text}");
                assert!(!text.contains("larger than"), "{id}: {text}");
            } else {
                assert_eq!(err.status(), Some(422), "{id}: {text}");
            }
        }
    });
    let peak = client.response_bytes_peak();
    assert!(peak >= 12 * MIB, "the bodies were never held: {peak}");
    assert!(
        peak <= 96 * MIB,
        "{} MiB of response bodies held at once, over the 96 MiB budget",
        peak / MIB
    );
    // Error bodies: the first 64 KiB read, the rest never (what the server
    // wrote is bounded by the socket buffers, not by the 50 MiB it meant to).
    let error_written = written.error.load(Ordering::Relaxed);
    assert!(
        error_written < 32 * 20 * MIB,
        "{} MiB of the 32 error bodies was written: they were read far past 64 KiB",
        error_written / MIB
    );
    // A body declaring more than the cap is refused unread.
    let declared = written.declared.load(Ordering::Relaxed);
    assert!(
        declared < 8 * 20 * MIB,
        "{} MiB of the bodies declaring 70 MiB was written",
        declared / MIB
    );
    assert_eq!(written.success.load(Ordering::Relaxed), 24 * 12 * MIB);
}

/// A listener standing in for a proxy: counts the connections it accepts.
fn proxy_listener() -> (String, Arc<AtomicUsize>) {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (url, seen)
}

#[test]
fn loopback_requests_never_go_through_a_proxy() {
    let ctx = TestContext::new();
    ctx.write(
        "repo/project.yaml",
        "kind: Project\nname: demo-project\nlog_streams:\n  - name: production\n",
    );
    let (proxy, seen) = proxy_listener();
    let url = ctx.sandbox.base_url();
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
        "HTTPS_PROXY",
    ] {
        let run = ctx.evalctl_with(
            &[
                ("EVALCTL_BASE_URL", url.as_str()),
                (var, proxy.as_str()),
                ("NO_PROXY", ""),
                ("no_proxy", ""),
            ],
            &["plan", "repo"],
        );
        run.expect(0);
        assert_eq!(
            seen.load(Ordering::SeqCst),
            0,
            "{var}: the request (and its API key) went to the proxy"
        );
    }
    // The listener does count: a request made through it is seen.
    let _ = std::net::TcpStream::connect(proxy.trim_start_matches("http://"));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}
