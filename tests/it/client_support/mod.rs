//! A small purpose-built HTTP server for the client's tests: every request is
//! logged (method, path, query, which credentials, body) and answered by a
//! closure the test gives, optionally after a delay. It runs on 127.0.0.1:0 on
//! its own thread and runtime, so blocking test code cannot deadlock it.
//!
//! Also: a server that closes every connection without answering, and an
//! address where nothing listens (connection refused).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test support: a failing unwrap is a failing test, with its location

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use evalctl::client::{Client, ClientConfig, Credentials, RetryPolicy};

/// Which credentials a request carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthSeen {
    /// None.
    None,
    /// An API key in the named header.
    ApiKey { header: String, value: String },
    /// HTTP Basic.
    Basic { user: String, password: String },
    /// A bearer token.
    Bearer(String),
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub auth: AuthSeen,
    pub body: Vec<u8>,
    pub content_type: Option<String>,
    pub at: Instant,
    /// How many earlier requests had the same method and path.
    pub nth: usize,
}

impl Seen {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// An answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub delay: Duration,
}

impl Reply {
    /// A JSON answer.
    pub fn json(status: u16, body: serde_json::Value) -> Self {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    /// 200 with a JSON body.
    pub fn ok(body: serde_json::Value) -> Self {
        Reply::json(200, body)
    }

    /// A status with `{"detail": ...}`.
    pub fn detail(status: u16, detail: &str) -> Self {
        Reply::json(status, serde_json::json!({ "detail": detail }))
    }

    /// A status with no body.
    pub fn status(status: u16) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: String::new(),
            delay: Duration::ZERO,
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Answers after `delay`.
    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

type Handler = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

#[derive(Clone)]
struct State {
    handler: Handler,
    log: Arc<Mutex<Vec<Seen>>>,
    api_key_header: String,
    in_flight: Arc<AtomicUsize>,
    peak: Arc<AtomicUsize>,
}

/// The running server.
pub struct TestServer {
    pub base_url: String,
    log: Arc<Mutex<Vec<Seen>>>,
    peak: Arc<AtomicUsize>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server answering with `handler`; API keys are looked for in
    /// `Service-AO-API-Key`.
    pub fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Self {
        Self::start_with_key_header("Service-AO-API-Key", handler)
    }

    /// Starts a server looking for API keys in `api_key_header`.
    pub fn start_with_key_header(
        api_key_header: &str,
        handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let log = Arc::new(Mutex::new(Vec::new()));
        let peak = Arc::new(AtomicUsize::new(0));
        let state = State {
            handler: Arc::new(handler),
            log: log.clone(),
            api_key_header: api_key_header.to_ascii_lowercase(),
            in_flight: Arc::new(AtomicUsize::new(0)),
            peak: peak.clone(),
        };
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                let app = axum::Router::new().fallback(handle).with_state(state);
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stop_rx.await;
                    })
                    .await
                    .unwrap();
            });
        });
        let addr = addr_rx.recv().unwrap();
        TestServer {
            base_url: format!("http://{addr}"),
            log,
            peak,
            shutdown: Some(stop_tx),
            thread: Some(thread),
        }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }

    /// Requests to `path` (any method).
    pub fn requests_to(&self, path: &str) -> Vec<Seen> {
        self.requests()
            .into_iter()
            .filter(|s| s.path == path)
            .collect()
    }

    /// The most requests that were in flight at once.
    pub fn peak_in_flight(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    /// A client for this server with fast retries.
    pub fn client(&self, credentials: Credentials) -> Client {
        Client::new(self.config(credentials)).unwrap()
    }

    /// A config for this server with fast retries (10 ms base, 4 attempts).
    pub fn config(&self, credentials: Credentials) -> ClientConfig {
        fast(ClientConfig::new(&self.base_url, credentials))
    }
}

/// Fast retries for tests: 4 attempts, 10 ms base delay, 100 ms cap.
pub fn fast(mut config: ClientConfig) -> ClientConfig {
    config.retry = RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(100),
        max_elapsed: Duration::from_secs(30),
    };
    config.request_timeout = Duration::from_secs(10);
    config
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn handle(
    axum::extract::State(state): axum::extract::State<State>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let auth = read_auth(&headers, &state.api_key_header);
    let seen = {
        let mut log = state.log.lock().unwrap();
        let nth = log
            .iter()
            .filter(|s| s.method == method.as_str() && s.path == uri.path())
            .count();
        let seen = Seen {
            method: method.to_string(),
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            auth,
            body: body.to_vec(),
            content_type: headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            at: Instant::now(),
            nth,
        };
        log.push(seen.clone());
        seen
    };
    let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.peak.fetch_max(now, Ordering::SeqCst);
    let reply = (state.handler)(&seen);
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    state.in_flight.fetch_sub(1, Ordering::SeqCst);
    let mut response = (
        StatusCode::from_u16(reply.status).unwrap(),
        reply.body.clone(),
    )
        .into_response();
    for (k, v) in &reply.headers {
        response.headers_mut().insert(
            axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
            v.parse().unwrap(),
        );
    }
    response
}

fn read_auth(headers: &HeaderMap, api_key_header: &str) -> AuthSeen {
    if let Some(v) = headers.get(api_key_header).and_then(|v| v.to_str().ok()) {
        return AuthSeen::ApiKey {
            header: api_key_header.to_owned(),
            value: v.to_owned(),
        };
    }
    let Some(v) = headers.get("authorization").and_then(|v| v.to_str().ok()) else {
        return AuthSeen::None;
    };
    if let Some(token) = v.strip_prefix("Bearer ") {
        return AuthSeen::Bearer(token.to_owned());
    }
    if let Some(b64) = v.strip_prefix("Basic ") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        let text = String::from_utf8(decoded).unwrap();
        let (user, password) = text.split_once(':').unwrap();
        return AuthSeen::Basic {
            user: user.to_owned(),
            password: password.to_owned(),
        };
    }
    AuthSeen::None
}

/// A server that accepts connections, reads the request head, and closes the
/// connection without answering. Returns its base URL and a connection counter.
pub fn closing_server() -> (String, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        use std::io::Read;
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 4096];
            let mut head = Vec::new();
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            drop(stream);
        }
    });
    (format!("http://{addr}"), count)
}

/// A loopback address where nothing listens (the port was bound, then freed).
pub fn refused_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

/// JSON of a minimal section.
pub fn section_json(id: &str, name: &str) -> serde_json::Value {
    serde_json::json!({ "id": id, "name": name, "description": null, "color": null, "widgets": [] })
}

/// JSON of a minimal metric settings answer.
pub fn settings_json() -> serde_json::Value {
    serde_json::json!({ "scorers": [], "segment_filters": null })
}
