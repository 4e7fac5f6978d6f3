//! The one builder end-to-end tests use: an in-process sandbox on
//! 127.0.0.1:0 (its own thread and runtime), a temporary config repo, and the
//! real `evalctl` binary run against them — so tests read like specs.

use std::path::{Path, PathBuf};
use std::process::Command;

use evalctl::api::Secret;
use evalctl::client::{Client, ClientConfig, Credentials};
use evalctl::sandbox::{Faults, Fixture, Sandbox, SandboxHandle};

/// A default dashboard of the demo fixture, read out of band
/// ([`TestContext::demo_dashboard`]).
pub struct DemoDashboard {
    /// Its project's id.
    pub project_id: String,
    /// Its log stream's id.
    pub log_stream_id: String,
    /// The dashboard.
    pub dashboard: evalctl::api::TrendsDashboard,
}

/// The demo fixture's API key.
pub const DEMO_API_KEY: &str = "demo-api-key";

/// A sandbox, a config repo directory, and an environment for the binary.
pub struct TestContext {
    /// The sandbox.
    pub sandbox: SandboxHandle,
    /// The config repo (and working directory of every run).
    pub dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

/// What one run of the binary did.
#[derive(Debug)]
pub struct Run {
    /// Exit status.
    pub status: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Asserts the exit status, showing both streams when it differs.
    #[track_caller]
    pub fn expect(&self, status: i32) -> &Self {
        assert_eq!(
            self.status, status,
            "unexpected exit status\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    /// Both streams, for searching.
    pub fn all_output(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

impl Default for TestContext {
    fn default() -> Self {
        Self::new()
    }
}

impl TestContext {
    /// A sandbox with the built-in demo fixture.
    pub fn new() -> Self {
        Self::with_fixture(Fixture::demo())
    }

    /// A sandbox with `fixture`.
    pub fn with_fixture(fixture: Fixture) -> Self {
        let sandbox = Sandbox::builder()
            .fixture(fixture)
            .start()
            .expect("the sandbox starts");
        let dir = tempfile::tempdir().expect("a temporary directory");
        TestContext {
            sandbox,
            dir,
            env: Vec::new(),
        }
    }

    /// Sets an environment variable for every run of the binary.
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// The absolute path of `relative` in the config repo.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Writes a file of the config repo.
    pub fn write(&self, relative: &str, content: &str) -> PathBuf {
        let path = self.path(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create the directory");
        }
        std::fs::write(&path, content).expect("write the file");
        path
    }

    /// Copies a directory of the repository (e.g. `examples/quickstart`) into the config repo.
    pub fn copy_dir(&self, from_repo: &str, to: &str) -> PathBuf {
        let source = repo_root().join(from_repo);
        let target = self.path(to);
        copy_tree(&source, &target);
        target
    }

    /// Runs `evalctl ARGS` against the sandbox, in the config repo, with the
    /// demo API key.
    pub fn evalctl(&self, args: &[&str]) -> Run {
        self.evalctl_with(&[], args)
    }

    /// Like [`TestContext::evalctl`], with extra environment variables; an
    /// empty value removes the variable (e.g. `("EVALCTL_API_KEY", "")`).
    pub fn evalctl_with(&self, env: &[(&str, &str)], args: &[&str]) -> Run {
        let mut command = self.evalctl_command(env, args);
        let output = command.output().expect("run evalctl");
        Run {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Injects faults into the sandbox.
    pub fn faults(&self, faults: Faults) {
        self.sandbox.set_faults(faults);
    }

    /// A client of the sandbox, for out-of-band changes ("someone used the UI").
    pub fn client(&self) -> Client {
        let config = ClientConfig::new(
            self.sandbox.base_url(),
            Credentials::ApiKey(Secret::new(DEMO_API_KEY)),
        );
        Client::new(config).expect("a client")
    }

    /// The id of the fixture's `demo-project`, read out of band.
    pub fn demo_project_id(&self) -> String {
        let client = self.client();
        self.block_on(async {
            client
                .find_project_by_name("demo-project")
                .await
                .expect("the projects are listed")
                .expect("demo-project exists")
                .id
        })
    }

    /// The ids of the fixture's `demo-project` and of its log stream
    /// `log_stream`, read out of band.
    pub fn demo_ids(&self, log_stream: &str) -> (String, String) {
        let project_id = self.demo_project_id();
        let client = self.client();
        let ls = self.block_on(async {
            client
                .find_log_stream_by_name(&project_id, log_stream)
                .await
                .expect("the log streams are searched")
                .unwrap_or_else(|| panic!("log stream {log_stream} exists"))
        });
        (project_id, ls.id)
    }

    /// The default dashboard of the fixture's `demo-project` log stream
    /// `log_stream`, read out of band, with the project's and the log
    /// stream's ids.
    pub fn demo_dashboard(&self, log_stream: &str) -> DemoDashboard {
        let (project_id, log_stream_id) = self.demo_ids(log_stream);
        let client = self.client();
        let dashboard = self.block_on(async {
            client
                .get_dashboard(&project_id, &log_stream_id, None)
                .await
                .expect("the dashboard is read")
                .expect("a default dashboard")
        });
        DemoDashboard {
            project_id,
            log_stream_id,
            dashboard,
        }
    }

    /// Runs an async block (an out-of-band change) to completion.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
            .block_on(f)
    }

    /// Insta settings that hide what varies between runs: the sandbox's
    /// address, the temporary directory, durations and a log stream's age.
    pub fn insta_settings(&self) -> insta::Settings {
        let mut settings = insta::Settings::clone_current();
        settings.add_filter(&regex::escape(&self.sandbox.base_url()), "[SANDBOX]");
        settings.add_filter(
            &regex::escape(&self.dir.path().display().to_string()),
            "[REPO]",
        );
        settings.add_filter(
            r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
            "[UUID]",
        );
        settings.add_filter(r"\d+(\.\d+)?(ms|s)\b", "[DURATION]");
        // A log stream's age grows with the clock (its traffic a day does not).
        settings.add_filter(r"counted over [\d,]+ days?", "counted over [AGE] days");
        settings.add_filter(r#""age_days": \d+"#, r#""age_days": [AGE]"#);
        settings
    }
}

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the directory");
    for entry in std::fs::read_dir(from).expect("read the directory") {
        let entry = entry.expect("a directory entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy the file");
        }
    }
}

impl TestContext {
    /// The command [`TestContext::evalctl_with`] runs, not yet started: the
    /// binary in the config repo, against the sandbox, with the demo API key
    /// and this context's environment, then `env` (an empty value removes a
    /// variable; `EVALCTL_BASE_URL` may point elsewhere).
    pub fn evalctl_command(&self, env: &[(&str, &str)], args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_evalctl"));
        command.args(args).current_dir(self.dir.path());
        for (name, _) in std::env::vars() {
            if name.starts_with("EVALCTL_") || name == "CLICOLOR_FORCE" {
                command.env_remove(name);
            }
        }
        command
            .env("EVALCTL_BASE_URL", self.sandbox.base_url())
            .env("EVALCTL_API_KEY", DEMO_API_KEY)
            .env("NO_COLOR", "1")
            // What evalctl records of Protect stages stays in this test.
            .env("EVALCTL_RECORD_DIR", self.dir.path().join(".record"));
        let extra = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(env.iter().copied());
        for (name, value) in extra {
            if value.is_empty() {
                command.env_remove(name);
            } else {
                command.env(name, value);
            }
        }
        command
    }

    /// Like [`TestContext::evalctl_with`], but a run that takes longer than
    /// `limit` is killed and fails the test, showing what it printed: a hang
    /// fails fast instead of stalling CI.
    #[track_caller]
    pub fn evalctl_bounded(
        &self,
        env: &[(&str, &str)],
        args: &[&str],
        limit: std::time::Duration,
    ) -> Run {
        use std::io::Read;
        use std::process::Stdio;
        let mut child = self
            .evalctl_command(env, args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run evalctl");
        let drain = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                String::from_utf8_lossy(&bytes).into_owned()
            })
        };
        let stdout = drain(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let stderr = drain(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let deadline = std::time::Instant::now() + limit;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for evalctl") {
                break Some(status);
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let run = Run {
            status: status.and_then(|s| s.code()).unwrap_or(-1),
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        };
        assert!(
            status.is_some(),
            "evalctl {args:?} ran longer than {limit:?} and was killed\n{}",
            run.all_output()
        );
        run
    }
}

/// The JSON apply report an `apply -o json` printed (a test fails with the
/// run's output when there is none).
pub fn report(run: &Run) -> evalctl::plan::ApplyReport {
    serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("no JSON report ({e})\n{}", run.all_output()))
}
