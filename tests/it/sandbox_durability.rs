//! The `--state` file under `kill -9`: a real `evalctl sandbox --state`
//! process takes a stream of writes from several clients and is SIGKILLed
//! at a seeded moment in the middle of it, round after round (commits,
//! flushes and checkpoints alike get interrupted). After each restart every
//! acknowledged write is there (every section whose create was answered,
//! none whose delete was, each run's last answered metric settings or the
//! one in flight), and the directory holds nothing but the database, its
//! key and SQLite's own write-ahead log and shared-memory index (after a
//! last graceful stop: the database and its key alone).
//!
//! Every other round the sandbox checkpoints its write-ahead log after 16
//! KiB (a few writes), so kills land in checkpoints too.
//! `EVALCTL_KILL_ROUNDS` sets the number of rounds (default 6).

use crate::fault_support::{SandboxProcess, free_port};
use crate::sandbox_support::{KEY, log_stream, project};

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// What one writer sent and what it was told.
#[derive(Debug, Default)]
struct Ledger {
    /// Sections whose create was answered, not yet deleted (id, name).
    alive: Vec<(String, String)>,
    /// Section ids whose delete was answered.
    deleted: BTreeSet<String>,
    /// The sample rate of the last answered settings change.
    rate: Option<f64>,
    /// The write in flight when the sandbox died.
    in_flight: Option<InFlight>,
    /// Answered writes.
    acknowledged: usize,
}

#[derive(Debug, Clone)]
enum InFlight {
    Create(String),
    Delete(String),
    Rate(f64),
}

fn run_path(log_stream_name: &str) -> String {
    format!(
        "/v2/projects/{}/log_streams/{}",
        project("demo-project"),
        log_stream("demo-project", log_stream_name)
    )
}

/// Writes until the sandbox stops answering; returns what happened. Names
/// its sections `{prefix}-{n}`.
async fn writer(base: String, run: String, prefix: String, mut ledger: Ledger) -> Ledger {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("client");
    let mut n = 0u64;
    loop {
        n += 1;
        let (request, flight) = if n.is_multiple_of(2) {
            let rate = f64::from(u32::try_from(n % 999).unwrap_or(0) + 1) / 1000.0;
            (
                http.patch(format!("{base}{run}/metric_settings"))
                    .json(&json!({"segment_filters": [{"sample_rate": rate}]})),
                InFlight::Rate(rate),
            )
        } else if ledger.alive.len() >= 5 {
            let (id, _) = ledger.alive[0].clone();
            (
                http.delete(format!("{base}{run}/trends/sections/{id}")),
                InFlight::Delete(id),
            )
        } else {
            let name = format!("{prefix}-{n}");
            (
                http.post(format!("{base}{run}/trends/sections"))
                    .json(&json!({ "name": name })),
                InFlight::Create(name),
            )
        };
        ledger.in_flight = Some(flight.clone());
        let answer = match request.header("Service-AO-API-Key", KEY).send().await {
            Ok(r) => {
                let status = r.status().as_u16();
                let body: Value = r.json().await.unwrap_or(Value::Null);
                Some((status, body))
            }
            Err(_) => None,
        };
        let Some((status, body)) = answer else {
            // The sandbox died: this write may or may not have happened.
            return ledger;
        };
        assert!(matches!(status, 200 | 204), "{status}: {body}");
        ledger.in_flight = None;
        ledger.acknowledged += 1;
        match flight {
            InFlight::Rate(rate) => ledger.rate = Some(rate),
            InFlight::Delete(id) => {
                ledger.alive.retain(|(a, _)| *a != id);
                ledger.deleted.insert(id);
            }
            InFlight::Create(name) => {
                let id = body["id"].as_str().expect("a section id").to_owned();
                ledger.alive.push((id, name));
            }
        }
    }
}

/// Checks `ledger` against the restarted sandbox (the writer's sections are
/// named `{tag}-...`) and returns the ledger to go on with (a section
/// created in flight adopted, the in-flight write settled).
async fn check(base: &str, run: &str, tag: &str, mut ledger: Ledger) -> Ledger {
    let http = reqwest::Client::new();
    let get = |path: String| {
        let http = http.clone();
        async move {
            let r = http
                .get(format!("{base}{path}"))
                .header("Service-AO-API-Key", KEY)
                .send()
                .await
                .expect("the restarted sandbox answers");
            assert_eq!(r.status(), 200);
            r.json::<Value>().await.expect("JSON")
        }
    };
    let dashboard = get(format!("{run}/trends")).await;
    let sections: Vec<(String, String)> = dashboard["sections"]
        .as_array()
        .expect("sections")
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap_or_default().to_owned(),
                s["name"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .filter(|(_, name)| name.starts_with(&format!("{tag}-")))
        .collect();
    let ids: BTreeSet<&str> = sections.iter().map(|(id, _)| id.as_str()).collect();
    for (id, name) in &ledger.alive {
        let deleting = matches!(&ledger.in_flight, Some(InFlight::Delete(d)) if d == id);
        assert!(
            ids.contains(id.as_str()) || deleting,
            "acknowledged create of {name} lost"
        );
    }
    for id in &ledger.deleted {
        assert!(
            !ids.contains(id.as_str()),
            "acknowledged delete of {id} undone"
        );
    }
    let settings = get(format!("{run}/metric_settings")).await;
    let rate = settings["segment_filters"][0]["sample_rate"].as_f64();
    let in_flight_rate = match &ledger.in_flight {
        Some(InFlight::Rate(r)) => Some(*r),
        _ => None,
    };
    if ledger.rate.is_some() {
        assert!(
            rate == ledger.rate || (in_flight_rate.is_some() && rate == in_flight_rate),
            "{tag}: sample rate {rate:?}, acknowledged {:?}, in flight {in_flight_rate:?}",
            ledger.rate
        );
    }
    // Go on from what is there: a create in flight may have landed.
    ledger.alive = sections;
    ledger.rate = rate.or(ledger.rate);
    ledger.in_flight = None;
    ledger
}

fn files_beside(state: &std::path::Path) -> Vec<String> {
    let dir = state.parent().expect("a directory");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read the directory")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_in_a_stream_of_writes_loses_no_acknowledged_write_and_leaves_no_leftovers() {
    let rounds: u64 = std::env::var("EVALCTL_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let state = dir.path().join("state.json");
    let mut sandbox = SandboxProcess::start(&state, free_port(), &[]);
    let writers = [("production", "wp"), ("staging", "ws")];
    let mut ledgers: Vec<Ledger> = writers.iter().map(|_| Ledger::default()).collect();
    let mut rng = fastrand::Rng::with_seed(10);
    let (mut acknowledged, mut in_flight) = (0, 0);
    let mut checkpointed = 0;
    let started = Instant::now();
    for round in 0..rounds {
        let round_start = std::fs::read(&state).expect("the state file");
        let tasks: Vec<_> = writers
            .iter()
            .zip(std::mem::take(&mut ledgers))
            .map(|((name, tag), ledger)| {
                tokio::spawn(writer(
                    sandbox.base_url(),
                    run_path(name),
                    format!("{tag}-{round}"),
                    ledger,
                ))
            })
            .collect();
        // Somewhere in the middle of the stream.
        let delay = Duration::from_millis(rng.u64(300..1500));
        tokio::time::sleep(delay).await;
        sandbox.kill();
        for task in tasks {
            ledgers.push(task.await.expect("the writer finished"));
        }
        // The database file itself changes only when the log is checkpointed.
        checkpointed += usize::from(std::fs::read(&state).expect("the state file") != round_start);
        // Odd rounds checkpoint after every few writes.
        sandbox.flags = if round.is_multiple_of(2) {
            vec!["--checkpoint-after-bytes".into(), "16384".into()]
        } else {
            Vec::new()
        };
        sandbox.restart();
        assert_eq!(
            files_beside(&state),
            vec![
                "state.json",
                "state.json-shm",
                "state.json-wal",
                "state.json.key"
            ],
            "round {round}"
        );
        let mut checked = Vec::new();
        for ((name, tag), ledger) in writers.iter().zip(std::mem::take(&mut ledgers)) {
            acknowledged += ledger.acknowledged;
            in_flight += usize::from(ledger.in_flight.is_some());
            let mut ledger = check(&sandbox.base_url(), &run_path(name), tag, ledger).await;
            ledger.acknowledged = 0;
            checked.push(ledger);
        }
        ledgers = checked;
    }
    sandbox.stop();
    assert_eq!(
        files_beside(&state),
        vec!["state.json", "state.json.key"],
        "a graceful stop leaves the database and its key"
    );
    // Figures, printed: `cargo test --test it kill_9 -- --nocapture`.
    println!(
        "kill -9: {rounds} rounds, {acknowledged} acknowledged writes all kept, {in_flight} in flight at the kill; the log was checkpointed into the file in {checkpointed} rounds; {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(acknowledged > 0);
}

/// SIGTERM (what `docker stop` and service managers send) stops the sandbox
/// as Ctrl-C does: its write-ahead log checkpointed and removed, the
/// database and its key left (it used to die at SIGTERM, leaving
/// `-wal` and `-shm` beside the file).
#[test]
fn sigterm_stops_the_sandbox_as_ctrl_c_does() {
    for signal in ["-TERM", "-INT"] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let state = dir.path().join("state.json");
        let mut sandbox = SandboxProcess::start(&state, free_port(), &[]);
        sandbox.stop_with(signal);
        assert_eq!(
            files_beside(&state),
            vec!["state.json", "state.json.key"],
            "after kill {signal}"
        );
    }
}
