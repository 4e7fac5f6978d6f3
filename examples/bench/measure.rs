//! Measuring one run of the `evalctl` binary: wall time and peak RSS of the
//! process (through a wrapper: the benchmark re-runs itself with
//! `--rss-wrap`, which spawns evalctl, waits for it and reads
//! `getrusage(RUSAGE_CHILDREN)`, so the maximum is exactly that one child's),
//! and the requests it sent, from the sandbox's request log, grouped by
//! method and route template.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use evalctl::client::operation::ALL;
use evalctl::sandbox::RequestRecord;

use super::BenchError;

/// The hidden flag that turns the benchmark into the measuring wrapper.
pub const WRAP_FLAG: &str = "--rss-wrap";

/// What one process run took.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    /// From spawn to exit.
    pub wall: Duration,
    /// Peak resident set size, KiB.
    pub max_rss_kib: u64,
    /// Exit status (`None` when killed by a signal).
    pub exit: Option<i32>,
}

/// How to run evalctl once.
pub struct Invocation<'a> {
    /// The evalctl binary.
    pub evalctl: &'a Path,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The sandbox's base URL (`EVALCTL_BASE_URL`), if it talks to one.
    pub base_url: Option<String>,
    /// Where its stdout and stderr go (`<stem>.out`, `<stem>.err`).
    pub log_stem: PathBuf,
}

/// Runs `inv` through the wrapper and returns what the wrapper measured.
pub fn run(inv: &Invocation<'_>) -> Result<Run, BenchError> {
    let me = std::env::current_exe().map_err(|e| BenchError::io("the benchmark's own path", e))?;
    let result = inv.log_stem.with_extension("rusage");
    let out_path = inv.log_stem.with_extension("out");
    let err_path = inv.log_stem.with_extension("err");
    let stdout = std::fs::File::create(&out_path).map_err(|e| BenchError::io(&out_path, e))?;
    let stderr = std::fs::File::create(&err_path).map_err(|e| BenchError::io(&err_path, e))?;
    let mut cmd = Command::new(me);
    cmd.arg(WRAP_FLAG)
        .arg(&result)
        .arg("--")
        .arg(inv.evalctl)
        .args(&inv.args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    for var in [
        "EVALCTL_ACCESS_TOKEN",
        "EVALCTL_USERNAME",
        "EVALCTL_PASSWORD",
        "EVALCTL_LOG",
        "EVALCTL_BASE_URL",
    ] {
        cmd.env_remove(var);
    }
    if let Some(url) = &inv.base_url {
        cmd.env("EVALCTL_BASE_URL", url)
            .env("EVALCTL_API_KEY", "demo-api-key");
    }
    cmd.env("NO_COLOR", "1")
        .env(super::population::REFERENCED_VARIABLE, "ref");
    let status = cmd
        .status()
        .map_err(|e| BenchError::io("the measuring wrapper", e))?;
    if !status.success() {
        return Err(BenchError::Wrapper(format!(
            "the measuring wrapper failed ({status}); see {}",
            err_path.display()
        )));
    }
    let text = std::fs::read_to_string(&result).map_err(|e| BenchError::io(&result, e))?;
    parse_result(&text).ok_or_else(|| BenchError::Wrapper(format!("unreadable {text:?}")))
}

fn parse_result(text: &str) -> Option<Run> {
    let mut wall = None;
    let mut rss = None;
    let mut exit = None;
    for pair in text.split_whitespace() {
        let (k, v) = pair.split_once('=')?;
        match k {
            "wall_ns" => wall = Some(Duration::from_nanos(v.parse().ok()?)),
            "max_rss_kib" => rss = Some(v.parse().ok()?),
            "exit" => exit = Some(v.parse::<i32>().ok()),
            _ => {}
        }
    }
    Some(Run {
        wall: wall?,
        max_rss_kib: rss?,
        exit: exit?,
    })
}

/// The wrapper's job (`bench --rss-wrap RESULT -- PROGRAM ARGS...`): run the
/// program with inherited stdio, then write `exit=.. wall_ns=.. max_rss_kib=..`
/// to RESULT. The wrapper's only child is the program, so the children's
/// maximum RSS is the program's.
pub fn wrap(args: &[OsString]) -> Result<(), BenchError> {
    let (result, rest) = match args {
        [result, sep, rest @ ..] if sep == "--" && !rest.is_empty() => (result, rest),
        _ => {
            return Err(BenchError::Wrapper(
                "usage: bench --rss-wrap RESULT -- PROGRAM ARGS...".to_owned(),
            ));
        }
    };
    let started = Instant::now();
    let status = Command::new(&rest[0])
        .args(&rest[1..])
        .status()
        .map_err(|e| BenchError::io(Path::new(&rest[0]), e))?;
    let wall = started.elapsed();
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .map_err(|e| BenchError::Wrapper(format!("getrusage: {e}")))?;
    // Linux reports ru_maxrss in KiB.
    let rss = u64::try_from(usage.max_rss()).unwrap_or(0);
    let exit = status
        .code()
        .map_or_else(|| "signal".to_owned(), |c| c.to_string());
    let text = format!(
        "exit={exit} wall_ns={} max_rss_kib={rss}\n",
        wall.as_nanos()
    );
    std::fs::write(PathBuf::from(result), text).map_err(|e| BenchError::io(Path::new(result), e))
}

/// Requests of one kind (method and route template).
#[derive(Debug, Clone, Default)]
pub struct Kind {
    /// The client's operation name, when the route is one of its operations.
    pub operation: Option<&'static str>,
    /// Whether the kind only reads.
    pub read: bool,
    /// Requests sent.
    pub requests: usize,
    /// Answered 429.
    pub rate_limited: usize,
    /// Answered with another non-2xx status, or not answered.
    pub failed: usize,
}

/// The requests of one phase.
#[derive(Debug, Clone, Default)]
pub struct Traffic {
    /// By `"METHOD /route/{template}"`.
    pub kinds: BTreeMap<String, Kind>,
    /// Every request.
    pub total: usize,
    /// Answered 2xx.
    pub succeeded: usize,
    /// Reads (GETs and the POSTs that list or search).
    pub reads: usize,
    /// Writes.
    pub writes: usize,
    /// Answered 429.
    pub rate_limited: usize,
    /// The most times one GET path was requested (1 = each object once).
    pub max_get_repeats: usize,
}

impl Traffic {
    /// Requests of the kinds served by operation `name`.
    pub fn of(&self, name: &str) -> usize {
        self.kinds
            .values()
            .filter(|k| k.operation == Some(name))
            .map(|k| k.requests)
            .sum()
    }
}

/// Groups a request log by method and route template.
pub fn traffic(records: &[RequestRecord]) -> Traffic {
    let mut t = Traffic::default();
    let mut gets: BTreeMap<&str, usize> = BTreeMap::new();
    for r in records {
        let (key, operation) = route_of(&r.method, &r.path);
        let read = operation.map_or(r.method == "GET", is_read);
        let kind = t.kinds.entry(key).or_insert_with(|| Kind {
            operation,
            read,
            ..Kind::default()
        });
        kind.requests += 1;
        t.total += 1;
        match r.status {
            Some(s) if (200..300).contains(&s) => t.succeeded += 1,
            Some(429) => {
                kind.rate_limited += 1;
                t.rate_limited += 1;
            }
            _ => kind.failed += 1,
        }
        if read {
            t.reads += 1;
        } else {
            t.writes += 1;
        }
        if r.method == "GET" {
            *gets.entry(r.path.as_str()).or_default() += 1;
        }
    }
    t.max_get_repeats = gets.values().copied().max().unwrap_or(0);
    t
}

fn is_read(operation: &str) -> bool {
    ["get_", "list_", "search_"]
        .iter()
        .any(|p| operation.starts_with(p))
}

/// The route template of a concrete path: the client operation with the same
/// method whose template matches with the most literal segments; otherwise
/// the path with id-like segments replaced by `{id}`.
fn route_of(method: &str, path: &str) -> (String, Option<&'static str>) {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let best = ALL
        .iter()
        .filter(|op| op.method.as_str() == method)
        .filter_map(|op| {
            let template: Vec<&str> = op.path.split('/').filter(|s| !s.is_empty()).collect();
            if template.len() != segments.len() {
                return None;
            }
            let mut literal = 0;
            for (t, s) in template.iter().zip(&segments) {
                if t.starts_with('{') {
                    continue;
                }
                if t != s {
                    return None;
                }
                literal += 1;
            }
            Some((literal, *op))
        })
        .max_by_key(|(literal, _)| *literal);
    match best {
        Some((_, op)) => (format!("{method} {}", op.path), Some(op.name)),
        None => {
            let generic: Vec<&str> = segments
                .iter()
                .map(|s| {
                    if s.len() >= 16 && s.chars().any(|c| c.is_ascii_digit()) {
                        "{id}"
                    } else {
                        s
                    }
                })
                .collect();
            (format!("{method} /{}", generic.join("/")), None)
        }
    }
}

/// Requests stamped with when the benchmark first saw them in the log.
#[derive(Debug, Clone)]
pub struct Stamped {
    /// Since the phase started.
    pub at: Duration,
    /// The answer's status.
    pub status: Option<u16>,
}

/// Polls the sandbox's request log every `every` until `stop` is set, and
/// stamps each new record with the time it was first seen.
pub fn poll_log(
    handle: &evalctl::sandbox::SandboxHandle,
    every: Duration,
    stop: &std::sync::atomic::AtomicBool,
) -> Vec<Stamped> {
    let started = Instant::now();
    let mut seen = 0;
    let mut out = Vec::new();
    loop {
        let done = stop.load(std::sync::atomic::Ordering::SeqCst);
        let records = handle.requests();
        let at = started.elapsed();
        for r in records.iter().skip(seen) {
            out.push(Stamped {
                at,
                status: r.status,
            });
        }
        seen = seen.max(records.len());
        if done {
            return out;
        }
        std::thread::sleep(every);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_the_most_specific_template() {
        assert_eq!(
            route_of("POST", "/v2/projects/paginated").1,
            Some("list_projects")
        );
        assert_eq!(route_of("GET", "/v2/projects/abc").1, Some("get_project"));
        let (key, op) = route_of("GET", "/nowhere/0123456789abcdef0123");
        assert_eq!((key.as_str(), op), ("GET /nowhere/{id}", None));
    }

    #[test]
    fn results_parse() {
        let run = parse_result("exit=2 wall_ns=1500 max_rss_kib=9000\n").unwrap();
        assert_eq!(run.exit, Some(2));
        assert_eq!(run.wall, Duration::from_nanos(1500));
        assert_eq!(run.max_rss_kib, 9000);
        assert_eq!(
            parse_result("exit=signal wall_ns=1 max_rss_kib=1")
                .unwrap()
                .exit,
            None
        );
    }
}
