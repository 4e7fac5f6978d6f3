//! The hostile-server phase (`--hostile-server`, issue 22 item 12): how much
//! memory a hostile or broken service can make evalctl hold.
//!
//! A proxy in front of an in-process sandbox (2 projects × 50 log streams)
//! forwards every request, except the ones each run turns hostile, which it
//! answers with large bodies streamed without a `Content-Length` (the worst
//! case for the client: it cannot refuse them unread), at full concurrency:
//!
//! - `apply` of 13 new annotation templates, each create answered 422 with a
//!   100 MB body;
//! - `apply` of the metric settings of 100 log streams, each PATCH answered
//!   200 with a 70 MB body;
//! - `plan` of the same, the scorer catalogue answered with valid pages of
//!   58 MB that never end (each names a next page), and again with pages of
//!   30 MB (under the listing's 32 MiB: the first is read and decoded whole);
//! - and, for scale, the same plan against the honest sandbox.
//!
//! Each evalctl run is measured through the wrapper of `measure` (peak RSS
//! from `getrusage(RUSAGE_CHILDREN)`) and printed against the documented
//! bound, [`BOUND_MIB`]: at most 96 MiB of response bodies held at once, an
//! error body read to its first 64 KiB, a success body to 64 MiB, a listing
//! to 32 MiB of pages, plus evalctl's own state and what it decoded.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use evalctl::sandbox::{Sandbox, SandboxHandle};

use super::measure::{self, Invocation, Run};
use super::population::{Size, WorkDir};
use super::{Args, BenchError};

/// The documented peak RSS of evalctl, whatever the service sends, in MiB.
pub const BOUND_MIB: u64 = 256;

const MB: usize = 1_000_000;

/// Which requests the proxy answers itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Mode {
    /// None: everything is forwarded.
    Honest = 0,
    /// Template creates: 422 with 100 MB.
    Templates = 1,
    /// Metric-settings PATCHes: 200 with 70 MB.
    Patches = 2,
    /// The scorer catalogue: valid 58 MB pages, endlessly.
    Catalogue = 3,
    /// The scorer catalogue: valid 30 MB pages, endlessly.
    SmallerPages = 4,
}

struct Proxy {
    upstream: String,
    http: reqwest::Client,
    mode: AtomicU8,
    /// The scorers of one catalogue page (about 58 MB of JSON).
    page: Bytes,
    /// The scorers of a smaller page (about 30 MB).
    smaller: Bytes,
}

/// `n` chunks of `chunk`, then `tail`, as a streamed body.
fn streamed(head: String, chunk: Bytes, n: usize, tail: &'static str) -> Body {
    let parts = std::iter::once(Bytes::from(head))
        .chain(std::iter::repeat_n(chunk, n))
        .chain(std::iter::once(Bytes::from_static(tail.as_bytes())))
        .map(Ok::<_, std::io::Error>);
    Body::from_stream(futures::stream::iter(parts))
}

fn json(status: StatusCode, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        "application/json".parse().expect("a header"),
    );
    response
}

/// One catalogue page's scorers: valid records with long names (kept by the
/// catalogue, unlike unknown fields), about `size` bytes.
fn catalogue_page(size: usize) -> Bytes {
    let pad = "n".repeat(480);
    let mut text = String::with_capacity(size + MB);
    let mut i = 0usize;
    while text.len() < size {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(
            r#"{{"id":"00000000-0000-4000-8000-{i:012}","name":"bench-hostile-{i}-{pad}","scorer_type":"llm","permissions":[]}}"#
        ));
        i += 1;
    }
    Bytes::from(text)
}

async fn handle(State(proxy): State<Arc<Proxy>>, request: Request) -> Response {
    let mode = proxy.mode.load(Ordering::Relaxed);
    let method = request.method().as_str().to_owned();
    let path = request.uri().path().to_owned();
    let filler = || Bytes::from(vec![b'x'; MB]);
    if mode == Mode::Templates as u8 && method == "POST" && path.ends_with("/templates") {
        let body = streamed(r#"{"detail":""#.to_owned(), filler(), 100, r#""}"#);
        return json(StatusCode::UNPROCESSABLE_ENTITY, body);
    }
    if mode == Mode::Patches as u8 && method == "PATCH" && path.ends_with("/metric_settings") {
        let body = streamed(r#"{"scorers":[],"pad":""#.to_owned(), filler(), 70, r#""}"#);
        return json(StatusCode::OK, body);
    }
    let catalogue = mode == Mode::Catalogue as u8 || mode == Mode::SmallerPages as u8;
    if catalogue && method == "POST" && path == "/v2/scorers/list" {
        let token: i64 = request
            .uri()
            .query()
            .and_then(|q| {
                q.split('&')
                    .find_map(|kv| kv.strip_prefix("starting_token="))
                    .and_then(|v| v.parse().ok())
            })
            .unwrap_or(0);
        let head = format!(
            r#"{{"starting_token":{token},"limit":100,"paginated":true,"next_starting_token":{},"scorers":["#,
            token + 1
        );
        let page = if mode == Mode::Catalogue as u8 {
            proxy.page.clone()
        } else {
            proxy.smaller.clone()
        };
        return json(StatusCode::OK, streamed(head, page, 1, "]}"));
    }
    forward(&proxy, request).await
}

/// Sends `request` on to the sandbox and its answer back.
async fn forward(proxy: &Proxy, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let url = format!(
        "{}{}",
        proxy.upstream,
        parts.uri.path_and_query().map_or("/", |p| p.as_str())
    );
    let Ok(bytes) = axum::body::to_bytes(body, 64 * MB).await else {
        return json(StatusCode::BAD_REQUEST, Body::empty());
    };
    let mut headers = HeaderMap::new();
    for (name, value) in &parts.headers {
        if name != header::HOST && name != header::CONTENT_LENGTH {
            headers.append(name.clone(), value.clone());
        }
    }
    let sent = proxy
        .http
        .request(parts.method, url)
        .headers(headers)
        .body(bytes)
        .send()
        .await;
    let Ok(answer) = sent else {
        return json(StatusCode::BAD_GATEWAY, Body::empty());
    };
    let status = answer.status();
    let mut headers = answer.headers().clone();
    headers.remove(header::CONTENT_LENGTH);
    headers.remove(header::TRANSFER_ENCODING);
    headers.remove(header::CONNECTION);
    let body = answer.bytes().await.unwrap_or_default();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

/// Starts the proxy on its own thread and runtime; returns its base URL.
fn start_proxy(proxy: Arc<Proxy>) -> Result<String, BenchError> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")
        .map_err(|e| BenchError::io("the hostile proxy's socket", e))?;
    let addr: SocketAddr = listener
        .local_addr()
        .map_err(|e| BenchError::io("the hostile proxy's socket", e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| BenchError::io("the hostile proxy's socket", e))?;
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime for the hostile proxy");
        rt.block_on(async move {
            let listener =
                tokio::net::TcpListener::from_std(listener).expect("the hostile proxy's listener");
            let app = axum::Router::new().fallback(handle).with_state(proxy);
            let _ = axum::serve(listener, app).await;
        });
    });
    Ok(format!("http://{addr}"))
}

/// A repo of 13 new annotation templates in the first project, and one
/// managing the metric settings of every log stream (a segment filter added).
fn write_repos(handle: &SandboxHandle, work: &WorkDir) -> std::io::Result<(String, String)> {
    let templates = work.root.join("hostile-server-templates");
    let settings = work.root.join("hostile-server-settings");
    for dir in [&templates, &settings] {
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::create_dir_all(dir)?;
    }
    handle.read_state(|state| {
        if let Some(project) = state.projects.first() {
            let mut text = format!("kind: Project\nname: {}\nannotation_templates:\n", project.name);
            for i in 1..=13 {
                text.push_str(&format!(
                    "  - name: bench-hostile-{i}\n    criteria: Template {i}.\n    constraints: {{annotation_type: like_dislike}}\n"
                ));
            }
            std::fs::write(templates.join("templates.yaml"), text)?;
        }
        for project in &state.projects {
            let mut text = format!("kind: Project\nname: {}\nlog_streams:\n", project.name);
            for ls in state.log_streams.iter().filter(|l| l.project_id == project.id) {
                text.push_str(&format!(
                    "  - name: {}\n    metric_settings:\n      scorers:\n",
                    ls.name
                ));
                for config in &ls.metric_settings.scorers {
                    if let Some(s) = state.scorers.iter().find(|s| s.id == config.id) {
                        text.push_str(&format!("        - name: {}\n", s.name));
                    }
                }
                text.push_str(
                    "      segment_filters:\n        - sample_rate: 0.5\n          filter: {name: node_name, operator: eq, value: llm}\n",
                );
            }
            std::fs::write(settings.join(format!("{}.yaml", project.name)), text)?;
        }
        Ok((
            templates.display().to_string(),
            settings.display().to_string(),
        ))
    })
}

/// `--hostile-server`: the runs, printed as a table.
pub fn run(_args: &Args, evalctl: &Path, work: &WorkDir) -> Result<(), BenchError> {
    let logs = work.logs();
    std::fs::create_dir_all(&logs).map_err(|e| BenchError::io(&logs, e))?;
    let size = Size {
        projects: 2,
        log_streams: 50,
        experiments: 0,
    };
    let handle = Sandbox::builder().fixture(size.fixture()).start()?;
    let (templates, settings) =
        write_repos(&handle, work).map_err(|e| BenchError::io(&work.root, e))?;
    eprintln!("building catalogue pages of 58 and 30 MB");
    let proxy = Arc::new(Proxy {
        upstream: handle.base_url(),
        http: reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(|e| BenchError::Wrapper(format!("the proxy's client: {e}")))?,
        mode: AtomicU8::new(Mode::Honest as u8),
        page: catalogue_page(58 * MB),
        smaller: catalogue_page(30 * MB),
    });
    let url = start_proxy(proxy.clone())?;
    let runs: [(Mode, &str, &str, Vec<&str>, &str); 5] = [
        (
            Mode::Honest,
            "honest service (for scale)",
            "plan of 100 log streams' metric settings",
            vec!["plan", &settings],
            "hostile-server-honest",
        ),
        (
            Mode::Templates,
            "13 template creates answered 422 with 100 MB",
            "apply of 13 new templates",
            vec!["apply", &templates, "--auto-approve"],
            "hostile-server-templates",
        ),
        (
            Mode::Patches,
            "100 metric-settings PATCHes answered 200 with 70 MB",
            "apply of 100 log streams' metric settings",
            vec!["apply", &settings, "--auto-approve"],
            "hostile-server-patches",
        ),
        (
            Mode::Catalogue,
            "valid 58 MB catalogue pages, endless",
            "plan of 100 log streams' metric settings",
            vec!["plan", &settings],
            "hostile-server-catalogue",
        ),
        (
            Mode::SmallerPages,
            "valid 30 MB catalogue pages, endless",
            "plan of 100 log streams' metric settings",
            vec!["plan", &settings],
            "hostile-server-catalogue-30",
        ),
    ];
    println!("\n### Hostile server (issue 22, item 12)\n");
    println!(
        "Documented bound: peak RSS at most {BOUND_MIB} MiB whatever the service sends (96 MiB of response bodies held at once, error bodies read to 64 KiB, success bodies to 64 MiB, a listing's pages to 32 MiB together).\n"
    );
    println!("| server | command | exit | wall | peak RSS | bound | |");
    println!("|---|---|---|---|---|---|---|");
    for (mode, server, what, args, stem) in runs {
        proxy.mode.store(mode as u8, Ordering::Relaxed);
        eprintln!("running: evalctl {} ({server})", args.join(" "));
        let run: Run = measure::run(&Invocation {
            evalctl,
            args: args.iter().map(OsString::from).collect(),
            base_url: Some(url.clone()),
            log_stem: logs.join(stem),
        })?;
        let mib = run.max_rss_kib / 1024;
        println!(
            "| {server} | {what} | {} | {:.1} s | {mib} MiB | {BOUND_MIB} MiB | {} |",
            run.exit
                .map_or_else(|| "signal".to_owned(), |c| c.to_string()),
            run.wall.as_secs_f64(),
            if mib <= BOUND_MIB { "PASS" } else { "MISS" }
        );
    }
    println!(
        "\nstdout and stderr of each run: {}/hostile-server-*.{{out,err}}",
        logs.display()
    );
    Ok(())
}
