//! A server (or a proxy) that echoes the request back cannot make evalctl show
//! a secret: an echoing proxy in front of the sandbox answers with each error
//! status (400, 401, 403, 404, 409, 413, 422, 429, 500, 502, 503, 504) a body
//! and headers that repeat the whole request (every header, the API-key header
//! and `Authorization` included, and the body: the login form, an
//! integration's token); `plan` and `apply` run against it at `-v`, `-vv` and
//! `-vvv`, as text, JSON and markdown and with `--out`, with an API key, a user
//! name and password (HTTP Basic, then a token from `/login`) and an access
//! token; no canary appears in any output or file.
//!
//! Two modes: every request is answered with the status (the first read
//! fails), or the reads are passed to the sandbox and every write is answered
//! with it (the writes, the integration's included, are echoed).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test support: a failing unwrap is a failing test

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;

use crate::e2e_support::{DEMO_API_KEY, Run, TestContext};

const API_KEY: &str = "CANARY-echo-api-key-3f9a";
const USERNAME: &str = "demo@example.com";
const PASSWORD: &str = "CANARY-echo-password-81c0";
const ACCESS_TOKEN: &str = "CANARY-echo-access-token-c2d4";
const LOGIN_TOKEN: &str = "CANARY-echo-login-token-9e17";
const INTEGRATION_TOKEN: &str = "CANARY-echo-integration-5b62";
const ORG_SUFFIX: &str = "CANARY-echo-organization-11aa";

const STATUSES: [u16; 12] = [400, 401, 403, 404, 409, 413, 422, 429, 500, 502, 503, 504];

const REPO: &str = r##"
kind: Project
name: demo-project
log_streams:
  - name: production
    metric_settings:
      scorers:
        - name: correctness
          num_judges: 5
    trends:
      sections:
        - name: Echo test
          color: "#123456"
---
kind: Integration
provider: openai
organization_id: org-${ORG_SUFFIX}
token: ${OPENAI_API_KEY}
"##;

fn basic() -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("{USERNAME}:{PASSWORD}"))
}

fn canaries() -> Vec<String> {
    vec![
        API_KEY.to_owned(),
        PASSWORD.to_owned(),
        ACCESS_TOKEN.to_owned(),
        LOGIN_TOKEN.to_owned(),
        INTEGRATION_TOKEN.to_owned(),
        ORG_SUFFIX.to_owned(),
        basic(),
    ]
}

/// What the proxy echoed, counted by the canary the echoed request held.
#[derive(Default)]
struct Echoed {
    by_canary: Mutex<std::collections::BTreeMap<String, usize>>,
    answers: AtomicUsize,
}

#[derive(Clone)]
struct Proxy {
    sandbox: String,
    http: reqwest::Client,
    echoed: Arc<Echoed>,
}

/// Starts the echoing proxy in front of `sandbox` on its own thread and
/// runtime; its base URL takes `/s<status>/<every|writes>` after it.
fn start(sandbox: String, echoed: Arc<Echoed>) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    let proxy = Proxy {
        sandbox,
        http: reqwest::Client::new(),
        echoed,
    };
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            let app = axum::Router::new().fallback(handle).with_state(proxy);
            axum::serve(listener, app).await.unwrap();
        });
    });
    format!("http://{}", rx.recv().unwrap())
}

async fn handle(
    axum::extract::State(proxy): axum::extract::State<Proxy>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    // `/s<status>/<mode>/<the request's path>`.
    let mut parts = uri.path().splitn(4, '/').skip(1);
    let status: u16 = parts
        .next()
        .and_then(|s| s.strip_prefix('s'))
        .and_then(|s| s.parse().ok())
        .unwrap();
    let every = parts.next() == Some("every");
    let path = format!("/{}", parts.next().unwrap_or_default());
    let read = method == Method::GET
        || path == "/login"
        || ["/search", "/paginated", "/list"]
            .iter()
            .any(|end| path.ends_with(end));
    if every || !read {
        return echo(&proxy, status, &method, &uri, &headers, &body);
    }
    if path == "/login" {
        return (
            StatusCode::OK,
            [("content-type", "application/json")],
            serde_json::json!({ "access_token": LOGIN_TOKEN, "token_type": "bearer" }).to_string(),
        )
            .into_response();
    }
    // A read: the sandbox answers it, with its own key.
    let mut url = format!("{}{path}", proxy.sandbox);
    if let Some(query) = uri.query() {
        url = format!("{url}?{query}");
    }
    let mut request = proxy
        .http
        .request(method, url)
        .header("Service-AO-API-Key", DEMO_API_KEY)
        .body(body);
    if let Some(ct) = headers.get("content-type") {
        request = request.header("content-type", ct);
    }
    let answer = request.send().await.unwrap();
    let status = answer.status();
    let body = answer.bytes().await.unwrap();
    (status, [("content-type", "application/json")], body).into_response()
}

/// The answer `status` with the whole request in its body and headers.
fn echo(
    proxy: &Proxy,
    status: u16,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &Bytes,
) -> Response {
    let mut text = format!("{method} {uri}\n");
    for (name, value) in headers {
        text.push_str(&format!(
            "{name}: {}\n",
            String::from_utf8_lossy(value.as_bytes())
        ));
    }
    text.push_str(&String::from_utf8_lossy(body));
    {
        let mut counts = proxy.echoed.by_canary.lock().unwrap();
        for canary in canaries() {
            if text.contains(&canary) {
                *counts.entry(canary).or_default() += 1;
            }
        }
    }
    proxy.echoed.answers.fetch_add(1, Ordering::Relaxed);
    let json = if status == 422 {
        serde_json::json!({ "detail": [
            { "loc": ["body", text], "msg": text, "type": text, "input": text },
            { "loc": ["header", "authorization"], "msg": format!("bad {text}"), "type": "value_error" },
        ]})
    } else {
        serde_json::json!({ "detail": text, "request": text })
    };
    let mut response = (
        StatusCode::from_u16(status).unwrap(),
        [("content-type", "application/json")],
        json.to_string(),
    )
        .into_response();
    for (name, value) in headers {
        let echoed = HeaderName::from_bytes(format!("x-echo-{name}").as_bytes()).unwrap();
        response.headers_mut().append(echoed, value.clone());
    }
    if status == 401 {
        let challenge = format!("Basic realm=\"{}\"", uri.path());
        response.headers_mut().insert(
            "www-authenticate",
            HeaderValue::from_str(&challenge).unwrap(),
        );
    }
    response
}

#[track_caller]
fn assert_clean(what: &str, text: &str) {
    for canary in canaries() {
        assert!(
            !text.contains(&canary),
            "{what}: `{canary}` leaked:\n{text}"
        );
    }
}

#[test]
fn an_echoing_server_shows_no_secret_at_any_status_verbosity_or_format() {
    let ctx = TestContext::new()
        .env("OPENAI_API_KEY", INTEGRATION_TOKEN)
        .env("ORG_SUFFIX", ORG_SUFFIX);
    ctx.write("repo/config.yaml", REPO);
    let echoed = Arc::new(Echoed::default());
    let proxy = start(ctx.sandbox.base_url(), echoed.clone());

    let api_key: &[(&str, &str)] = &[("EVALCTL_API_KEY", API_KEY)];
    let password: &[(&str, &str)] = &[
        ("EVALCTL_API_KEY", ""),
        ("EVALCTL_USERNAME", USERNAME),
        ("EVALCTL_PASSWORD", PASSWORD),
    ];
    let token: &[(&str, &str)] = &[
        ("EVALCTL_API_KEY", ""),
        ("EVALCTL_ACCESS_TOKEN", ACCESS_TOKEN),
    ];
    // What runs in each mode: the credentials, then the arguments.
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a [&'a str]);
    let apply_cases: [Case<'_>; 4] = [
        (
            api_key,
            &["-vvv", "apply", "repo", "--auto-approve", "-o", "json"],
        ),
        (
            api_key,
            &["-v", "apply", "repo", "--auto-approve", "-o", "markdown"],
        ),
        (
            password,
            &["-vvv", "apply", "repo", "--auto-approve", "-o", "json"],
        ),
        (
            token,
            &["-vv", "apply", "repo", "--auto-approve", "-o", "markdown"],
        ),
    ];
    let plan_cases: [Case<'_>; 4] = [
        (
            api_key,
            &["-v", "plan", "repo", "-o", "json", "--out", "OUT"],
        ),
        (api_key, &["-vv", "plan", "repo", "-o", "markdown"]),
        (api_key, &["-vvv", "plan", "repo"]),
        (
            password,
            &["-vvv", "plan", "repo", "-o", "markdown", "--out", "OUT"],
        ),
    ];
    let retries = ["--max-retries", "1", "--retry-budget", "1s"];

    let runs: Vec<(String, Run, Option<std::path::PathBuf>)> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (i, status) in STATUSES.iter().enumerate() {
            let (ctx, proxy, plan_cases, apply_cases) = (&ctx, &proxy, &plan_cases, &apply_cases);
            handles.push(scope.spawn(move || {
                let mut out = Vec::new();
                for mode in ["every", "writes"] {
                    let base = format!("{proxy}/s{status}/{mode}");
                    let cases = apply_cases.iter().chain(if mode == "every" {
                        &plan_cases[..]
                    } else {
                        &[]
                    });
                    for (j, (env, args)) in cases.enumerate() {
                        let file = ctx.path(&format!("out-{i}-{mode}-{j}.json"));
                        let file_arg = file.display().to_string();
                        let mut argv: Vec<&str> = args
                            .iter()
                            .map(|a| if *a == "OUT" { file_arg.as_str() } else { a })
                            .collect();
                        argv.extend(retries);
                        let mut env = env.to_vec();
                        env.push(("EVALCTL_BASE_URL", base.as_str()));
                        let run =
                            ctx.evalctl_bounded(&env, &argv, std::time::Duration::from_secs(60));
                        let what = format!("{status} {mode}: evalctl {}", argv.join(" "));
                        out.push((what, run, Some(file)));
                    }
                }
                out
            }));
        }
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });

    for (what, run, file) in &runs {
        assert_clean(what, &run.all_output());
        if let Some(file) = file.as_ref().filter(|f| f.exists()) {
            assert_clean(what, &std::fs::read_to_string(file).unwrap());
        }
        // An echoing server is not the service: nothing is reported done.
        assert_ne!(run.status, 0, "{what}:\n{}", run.all_output());
    }
    // The runs did what they are for: the logs are on, the server's texts are
    // quoted (masked), and every canary was sent and echoed.
    let all: String = runs.iter().map(|(_, r, _)| r.all_output()).collect();
    assert!(all.contains("TRACE"), "no -vvv log");
    assert!(all.contains("********"), "no masked echo:\n{all}");
    let counts = echoed.by_canary.lock().unwrap().clone();
    for canary in canaries() {
        assert!(
            counts.get(&canary).copied().unwrap_or(0) > 0,
            "`{canary}` was never echoed: {counts:?}"
        );
    }
    assert!(echoed.answers.load(Ordering::Relaxed) > 100);
    // The service never got the secrets in a write it answered (no write was passed on).
    let state = ctx
        .sandbox
        .read_state(|s| serde_json::to_string(s).unwrap_or_default());
    assert_clean("the sandbox's state", &state);
}
