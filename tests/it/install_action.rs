//! The setup action installs what the release workflow publishes: `scripts/install.sh`
//! is run for real (`sh`, curl, tar, sha256sum) against a local HTTP server that serves
//! fake release assets (a shell script standing in for the binary), through the seam
//! the script documents (`EVALCTL_API_URL`, `EVALCTL_DOWNLOAD_URL`). Covered: a pinned
//! version, "latest" resolved through the API with the token sent only there and never
//! printed, a checksum mismatch and a missing checksum that install nothing, a missing
//! asset, every supported platform and the unsupported ones (a fake `uname` first on
//! `PATH`), and `action.yml` itself, whose steps are run in order the way the runner
//! runs a composite action, on a cache miss and on a hit. The asset names are checked
//! against `.github/workflows/release.yml`, and the recipes of `examples/ci` against
//! the action.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use evalctl::manifest::yaml::{Limits, parse};
use serde_json::Value;

use crate::e2e_support::repo_root;

/// The repository the script downloads from when nothing overrides it.
const DEFAULT_REPOSITORY: &str = "YOUR-ORG/evalctl";
const TOKEN: &str = "ghs_test_token_0123456789abcdef";
/// What the fake binary prints for `--version`.
const FAKE_VERSION: &str = "evalctl 1.2.3 (fake release)";

/// Every platform with a release binary: `uname -s`, `uname -m`, the asset's target.
const PLATFORMS: [(&str, &str, &str); 6] = [
    ("Linux", "x86_64", "x86_64-unknown-linux-musl"),
    ("Linux", "aarch64", "aarch64-unknown-linux-musl"),
    ("Linux", "arm64", "aarch64-unknown-linux-musl"),
    ("Darwin", "arm64", "aarch64-apple-darwin"),
    ("Darwin", "x86_64", "x86_64-apple-darwin"),
    ("Linux", "amd64", "x86_64-unknown-linux-musl"),
];

// ---------------------------------------------------------------------------------
// A release server on 127.0.0.1: fixed answers per path, every request recorded.

/// One request the server answered.
#[derive(Debug, Clone)]
struct Request {
    path: String,
    /// Header names in lowercase.
    headers: BTreeMap<String, String>,
}

#[derive(Default)]
struct Routes {
    answers: BTreeMap<String, (u16, Vec<u8>)>,
    seen: Vec<Request>,
}

/// Serves fixed answers (404 for anything else) until dropped.
struct ReleaseServer {
    url: String,
    routes: Arc<Mutex<Routes>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ReleaseServer {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let address = listener.local_addr().expect("the bound address");
        let routes = Arc::new(Mutex::new(Routes::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let routes = Arc::clone(&routes);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    if let Ok(stream) = stream {
                        answer(stream, &routes);
                    }
                }
            })
        };
        ReleaseServer {
            url: format!("http://{address}"),
            routes,
            stop,
            thread: Some(thread),
        }
    }

    fn serve(&self, path: &str, status: u16, body: impl Into<Vec<u8>>) {
        let mut routes = self.routes.lock().expect("routes");
        routes
            .answers
            .insert(path.to_owned(), (status, body.into()));
    }

    fn seen(&self) -> Vec<Request> {
        self.routes.lock().expect("routes").seen.clone()
    }

    fn paths(&self) -> Vec<String> {
        self.seen().into_iter().map(|r| r.path).collect()
    }

    /// The API base the script is pointed at (a path prefix, as on GitHub Enterprise).
    fn api(&self) -> String {
        format!("{}/api", self.url)
    }
}

impl Drop for ReleaseServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn answer(stream: TcpStream, routes: &Mutex<Routes>) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() || request_line.is_empty() {
        return;
    }
    let mut headers = BTreeMap::new();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let (status, body) = {
        let mut routes = routes.lock().expect("routes");
        routes.seen.push(Request {
            path: path.clone(),
            headers,
        });
        routes
            .answers
            .get(&path)
            .cloned()
            .unwrap_or((404, b"Not Found".to_vec()))
    };
    let mut stream = reader.into_inner();
    let head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
        if status == 200 { "OK" } else { "Error" },
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(&body);
    let _ = stream.flush();
}

// ---------------------------------------------------------------------------------
// Fake release assets and the machine the script runs on.

/// A release archive as the release workflow packs it: `evalctl-TARGET/evalctl` (here a
/// shell script printing [`FAKE_VERSION`]) and README.md, gzipped tar.
fn archive(target: &str, scratch: &Path) -> Vec<u8> {
    let stage = scratch.join(format!("stage-{target}"));
    let top = stage.join(format!("evalctl-{target}"));
    std::fs::create_dir_all(&top).expect("stage directory");
    std::fs::write(
        top.join("evalctl"),
        format!("#!/bin/sh\necho '{FAKE_VERSION}'\n"),
    )
    .expect("fake binary");
    std::fs::write(top.join("README.md"), "# evalctl\n").expect("readme");
    let out = scratch.join(format!("evalctl-{target}.tar.gz"));
    let status = Command::new("tar")
        .arg("-czf")
        .arg(&out)
        .arg("-C")
        .arg(&stage)
        .arg(format!("evalctl-{target}"))
        .status()
        .expect("run tar");
    assert!(status.success(), "tar failed");
    std::fs::read(out).expect("the archive")
}

/// The SHA-256 of `bytes`, in lowercase hex (by `sha256sum`, as a release is checked).
fn sha256(bytes: &[u8], scratch: &Path) -> String {
    let file = scratch.join("to-hash");
    std::fs::write(&file, bytes).expect("write");
    let out = Command::new("sha256sum")
        .arg(&file)
        .output()
        .expect("run sha256sum");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let digest = text
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(digest.len(), 64, "{text}");
    digest
}

/// The checksum file the release workflow writes next to an archive.
fn checksum_file(digest: &str, target: &str) -> String {
    format!("{digest}  evalctl-{target}.tar.gz\n")
}

/// What one run of the script did.
#[derive(Debug)]
struct Outcome {
    status: i32,
    stdout: String,
    stderr: String,
    /// What it wrote to `$GITHUB_OUTPUT`.
    outputs: BTreeMap<String, String>,
}

impl Outcome {
    #[track_caller]
    fn expect_success(&self) -> &Self {
        assert_eq!(self.status, 0, "{self:#?}");
        self
    }

    #[track_caller]
    fn expect_failure(&self, says: &str) -> &Self {
        assert_eq!(self.status, 1, "{self:#?}");
        assert!(
            self.stderr.contains(says),
            "stderr lacks {says:?}: {self:#?}"
        );
        self
    }

    fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// A machine to run the install on: a fake `uname` first on `PATH`, its own HOME,
/// TMPDIR and tool cache, and nothing of the developer's environment.
struct Machine {
    root: tempfile::TempDir,
    server: ReleaseServer,
}

impl Machine {
    fn new(os: &str, arch: &str) -> Self {
        let root = tempfile::tempdir().expect("temporary directory");
        for dir in ["bin", "home", "tmp", "toolcache", "scratch"] {
            std::fs::create_dir_all(root.path().join(dir)).expect("directory");
        }
        let uname = root.path().join("bin/uname");
        std::fs::write(
            &uname,
            format!(
                "#!/bin/sh\ncase \"$1\" in\n  -s) echo '{os}' ;;\n  -m) echo '{arch}' ;;\n  *) echo '{os}' ;;\nesac\n"
            ),
        )
        .expect("fake uname");
        make_executable(&uname);
        Machine {
            root,
            server: ReleaseServer::start(),
        }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.path().join(relative)
    }

    /// `PATH`: the fake `uname` first, then the system's.
    fn search_path(&self) -> String {
        let system = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_owned());
        format!("{}:{system}", self.path("bin").display())
    }

    /// The environment of every run: the seam pointed at the server.
    fn base_env(&self) -> Vec<(String, String)> {
        [
            ("PATH", self.search_path()),
            ("HOME", self.path("home").display().to_string()),
            ("TMPDIR", self.path("tmp").display().to_string()),
            (
                "RUNNER_TOOL_CACHE",
                self.path("toolcache").display().to_string(),
            ),
            ("EVALCTL_API_URL", self.server.api()),
            ("EVALCTL_DOWNLOAD_URL", self.server.url.clone()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
    }

    /// Publishes a release of `repository` with an archive for each of `targets`.
    fn publish(&self, repository: &str, tag: &str, targets: &[&str]) {
        let scratch = self.path("scratch");
        for target in targets {
            let bytes = archive(target, &scratch);
            let digest = sha256(&bytes, &scratch);
            let base = format!("/{repository}/releases/download/{tag}/evalctl-{target}.tar.gz");
            self.server.serve(&base, 200, bytes);
            self.server.serve(
                &format!("{base}.sha256"),
                200,
                checksum_file(&digest, target),
            );
        }
    }

    /// Runs `sh scripts/install.sh MODE` with the base environment and `env`.
    fn run(&self, mode: &str, env: &[(&str, &str)]) -> Outcome {
        let output_file = self.path("github_output");
        let _ = std::fs::remove_file(&output_file);
        let mut command = Command::new("sh");
        command
            .arg(repo_root().join("scripts/install.sh"))
            .arg(mode)
            .env_clear()
            .envs(self.base_env())
            .env("GITHUB_OUTPUT", &output_file)
            .envs(env.iter().copied());
        let out = command.output().expect("run sh");
        let outputs = std::fs::read_to_string(&output_file)
            .map(|text| key_values(&text))
            .unwrap_or_default();
        Outcome {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            outputs,
        }
    }

    /// The script's temporary directories left behind (none: it cleans up).
    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.path("tmp"))
            .expect("tmp")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect()
    }
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let mut permissions = std::fs::metadata(path).expect("metadata").permissions();
    permissions.set_mode(0o755);
    std::fs::set_permissions(path, permissions).expect("chmod");
}

/// `key=value` lines, as `$GITHUB_OUTPUT` holds them.
fn key_values(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn download_path(repository: &str, tag: &str, target: &str) -> String {
    format!("/{repository}/releases/download/{tag}/evalctl-{target}.tar.gz")
}

/// Runs a binary and returns its standard output.
fn run_binary(path: &Path) -> String {
    let out = Command::new(path)
        .arg("--version")
        .output()
        .expect("run the installed binary");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

// ---------------------------------------------------------------------------------
// The script.

#[test]
fn a_pinned_version_is_downloaded_verified_and_installed() {
    let machine = Machine::new("Linux", "x86_64");
    let target = "x86_64-unknown-linux-musl";
    machine.publish(DEFAULT_REPOSITORY, "v1.2.3", &[target]);

    // "1.2.3" means the tag v1.2.3; no API call is needed for a pinned version.
    let run = machine.run("install", &[("EVALCTL_VERSION", "1.2.3")]);
    run.expect_success();

    let dir = machine.path("toolcache/evalctl/1.2.3/x86_64-unknown-linux-musl");
    assert_eq!(run_binary(&dir.join("evalctl")), FAKE_VERSION);
    assert_eq!(
        run.outputs,
        BTreeMap::from([
            ("version".to_owned(), "v1.2.3".to_owned()),
            ("target".to_owned(), target.to_owned()),
            ("dir".to_owned(), dir.display().to_string()),
        ])
    );
    assert!(
        run.stdout
            .contains(&format!("Installed {FAKE_VERSION} (v1.2.3, {target})")),
        "{run:#?}"
    );
    let archive = download_path(DEFAULT_REPOSITORY, "v1.2.3", target);
    assert_eq!(
        machine.server.paths(),
        [archive.clone(), format!("{archive}.sha256")]
    );
    assert!(machine.leftovers().is_empty(), "{:?}", machine.leftovers());
}

#[test]
fn latest_is_resolved_through_the_api_which_alone_gets_the_token() {
    let machine = Machine::new("Linux", "x86_64");
    let repository = "acme/evalctl";
    let target = "x86_64-unknown-linux-musl";
    machine.publish(repository, "v2.0.0", &[target]);
    // The API's compact JSON, with a decoy in the release notes.
    machine.server.serve(
        &format!("/api/repos/{repository}/releases/latest"),
        200,
        r#"{"url":"x","author":{"login":"a","id":1},"tag_name":"v2.0.0","name":"v2.0.0","body":"Upgrade from \"tag_name\": \"v0.0.1\", see notes"}"#,
    );
    let install_dir = machine.path("custom/bin");
    let install_dir_text = install_dir.display().to_string();

    let run = machine.run(
        "install",
        &[
            ("EVALCTL_REPOSITORY", repository),
            ("EVALCTL_GITHUB_TOKEN", TOKEN),
            ("EVALCTL_INSTALL_DIR", &install_dir_text),
        ],
    );
    run.expect_success();
    assert_eq!(run.outputs["version"], "v2.0.0");
    assert_eq!(run_binary(&install_dir.join("evalctl")), FAKE_VERSION);

    let seen = machine.server.seen();
    let paths: Vec<&str> = seen.iter().map(|r| r.path.as_str()).collect();
    let archive = download_path(repository, "v2.0.0", target);
    assert_eq!(
        paths,
        [
            format!("/api/repos/{repository}/releases/latest").as_str(),
            archive.as_str(),
            format!("{archive}.sha256").as_str(),
        ]
    );
    assert_eq!(
        seen[0].headers.get("authorization").map(String::as_str),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    for download in &seen[1..] {
        assert!(
            !download.headers.contains_key("authorization"),
            "the token went to {}",
            download.path
        );
    }
    assert!(
        !run.all().contains(TOKEN),
        "the token was printed: {run:#?}"
    );
}

#[test]
fn resolve_names_the_version_target_and_directory_and_downloads_nothing() {
    let machine = Machine::new("Darwin", "arm64");
    machine.server.serve(
        &format!("/api/repos/{DEFAULT_REPOSITORY}/releases/latest"),
        200,
        "{\n  \"tag_name\": \"v0.4.1\",\n  \"draft\": false\n}\n",
    );
    let run = machine.run("resolve", &[]);
    run.expect_success();
    let dir = machine.path("toolcache/evalctl/0.4.1/aarch64-apple-darwin");
    assert_eq!(run.outputs["version"], "v0.4.1");
    assert_eq!(run.outputs["target"], "aarch64-apple-darwin");
    assert_eq!(run.outputs["dir"], dir.display().to_string());
    assert!(run.stdout.contains("version=v0.4.1\n"), "{run:#?}");
    assert_eq!(
        machine.server.paths(),
        [format!("/api/repos/{DEFAULT_REPOSITORY}/releases/latest")]
    );
    assert!(!dir.exists());
}

#[test]
fn a_checksum_mismatch_installs_nothing() {
    let machine = Machine::new("Linux", "aarch64");
    let target = "aarch64-unknown-linux-musl";
    machine.publish(DEFAULT_REPOSITORY, "v1.2.3", &[target]);
    // The archive was swapped after the checksum was published.
    let wrong = sha256(b"another archive", &machine.path("scratch"));
    machine.server.serve(
        &format!(
            "{}.sha256",
            download_path(DEFAULT_REPOSITORY, "v1.2.3", target)
        ),
        200,
        checksum_file(&wrong, target),
    );

    let run = machine.run("install", &[("EVALCTL_VERSION", "v1.2.3")]);
    run.expect_failure(&format!(
        "checksum mismatch for evalctl-{target}.tar.gz: expected {wrong}"
    ));
    assert!(run.stderr.contains("nothing was installed"), "{run:#?}");
    let dir = machine.path("toolcache/evalctl/1.2.3").join(target);
    assert!(!dir.join("evalctl").exists(), "a binary was installed");
    assert!(run.outputs.is_empty(), "{run:#?}");
    assert!(machine.leftovers().is_empty(), "{:?}", machine.leftovers());
}

#[test]
fn a_missing_or_malformed_checksum_installs_nothing() {
    let target = "x86_64-unknown-linux-musl";
    let checksum = format!(
        "{}.sha256",
        download_path(DEFAULT_REPOSITORY, "v1.2.3", target)
    );
    for (status, body, says) in [
        (404, "Not Found", "could not download the checksum"),
        (200, "", "does not hold a SHA-256 checksum"),
        (
            200,
            "deadbeef  x.tar.gz\n",
            "does not hold a SHA-256 checksum",
        ),
        (
            200,
            "<html>an error page, with a 64-character line of text in it.........</html>\n",
            "does not hold a SHA-256 checksum",
        ),
    ] {
        let machine = Machine::new("Linux", "x86_64");
        machine.publish(DEFAULT_REPOSITORY, "v1.2.3", &[target]);
        machine.server.serve(&checksum, status, body);
        let run = machine.run("install", &[("EVALCTL_VERSION", "v1.2.3")]);
        run.expect_failure(says);
        assert!(
            !machine
                .path("toolcache/evalctl/1.2.3")
                .join(target)
                .join("evalctl")
                .exists()
        );
    }
}

#[test]
fn a_missing_asset_names_the_asset_and_the_release() {
    let machine = Machine::new("Darwin", "x86_64");
    // The release ships Linux only.
    machine.publish(DEFAULT_REPOSITORY, "v1.2.3", &["x86_64-unknown-linux-musl"]);
    let run = machine.run("install", &[("EVALCTL_VERSION", "v1.2.3")]);
    run.expect_failure("evalctl v1.2.3 has no asset evalctl-x86_64-apple-darwin.tar.gz (http://");
    assert!(run.stderr.contains("HTTP 404"), "{run:#?}");
    assert_eq!(
        machine.server.paths(),
        [download_path(
            DEFAULT_REPOSITORY,
            "v1.2.3",
            "x86_64-apple-darwin"
        )]
    );
}

#[test]
fn every_supported_platform_gets_its_own_asset() {
    for (os, arch, target) in PLATFORMS {
        let machine = Machine::new(os, arch);
        machine.publish(DEFAULT_REPOSITORY, "v1.2.3", &[target]);
        let run = machine.run("install", &[("EVALCTL_VERSION", "v1.2.3")]);
        run.expect_success();
        assert_eq!(run.outputs["target"], target, "{os} {arch}");
        assert_eq!(
            machine.server.paths()[0],
            download_path(DEFAULT_REPOSITORY, "v1.2.3", target)
        );
    }
}

#[test]
fn an_unsupported_platform_fails_before_any_request() {
    for (os, arch) in [
        ("MINGW64_NT-10.0-20348", "x86_64"),
        ("FreeBSD", "amd64"),
        ("Linux", "riscv64"),
        ("Linux", "armv7l"),
        ("Darwin", "ppc"),
    ] {
        let machine = Machine::new(os, arch);
        let run = machine.run("install", &[]);
        run.expect_failure(&format!(
            "no release binary for this platform ({os} {arch})"
        ));
        assert!(
            run.stderr.contains("cargo install --locked"),
            "the way out: {run:#?}"
        );
        assert!(machine.server.paths().is_empty(), "{os} {arch}");
    }
}

#[test]
fn latest_fails_clearly_without_a_release_or_with_a_refused_token() {
    for (status, body, says) in [
        (404, "{}", "no release of YOUR-ORG/evalctl found"),
        (403, "{}", "the GitHub API refused the request"),
        (200, r#"{"name":"x"}"#, "has no tag_name"),
        (200, r#"{"tag_name":"../../x"}"#, "not a release tag"),
    ] {
        let machine = Machine::new("Linux", "x86_64");
        machine.server.serve(
            &format!("/api/repos/{DEFAULT_REPOSITORY}/releases/latest"),
            status,
            body,
        );
        let run = machine.run("install", &[("EVALCTL_GITHUB_TOKEN", TOKEN)]);
        run.expect_failure(says);
        assert!(!run.all().contains(TOKEN));
        assert_eq!(machine.server.paths().len(), 1, "{says}");
    }
}

#[test]
fn a_version_that_is_not_a_tag_is_refused_before_any_request() {
    for version in ["../../etc", "v1.2.3/../../x", "-rf", "v1 2", ".hidden"] {
        let machine = Machine::new("Linux", "x86_64");
        let run = machine.run("install", &[("EVALCTL_VERSION", version)]);
        run.expect_failure("not a release tag");
        assert!(machine.server.paths().is_empty(), "{version}");
    }
}

// ---------------------------------------------------------------------------------
// action.yml, run the way the runner runs a composite action.

fn yaml_file(relative: &str) -> Value {
    let text = std::fs::read_to_string(repo_root().join(relative))
        .unwrap_or_else(|e| panic!("{relative}: {e}"));
    let documents =
        parse(&text, &Limits::default()).unwrap_or_else(|e| panic!("{relative}: {e:?}"));
    assert_eq!(documents.len(), 1, "{relative}: one document");
    documents
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or_default()
}

/// What one run of the action did.
struct ActionRun {
    /// Each step's name, or `skipped: NAME`.
    steps: Vec<String>,
    /// The action's outputs.
    outputs: BTreeMap<String, String>,
    /// Lines the steps appended to `$GITHUB_PATH`.
    path: Vec<String>,
    /// What the steps printed.
    log: String,
    /// The `with:` of the cache step, evaluated.
    cache: BTreeMap<String, String>,
}

/// The values of the expressions in `text` (`${{ a.b.c }}`), looked up in `context`;
/// an expression the test does not know fails the test, so action.yml stays within
/// what is run here.
fn evaluate(text: &str, context: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 3..];
        let end = after.find("}}").expect("a closed expression");
        let name = after[..end].trim();
        let value = context
            .get(name)
            .unwrap_or_else(|| panic!("action.yml uses `{name}`, which this test does not know"));
        out.push_str(value);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

/// A step's `if:`: only `NAME != 'literal'` and `NAME == 'literal'` are known.
fn condition(text: &str, context: &BTreeMap<String, String>) -> bool {
    let text = text.trim();
    let (name, negated, literal) = if let Some((l, r)) = text.split_once("!=") {
        (l.trim(), true, r.trim())
    } else if let Some((l, r)) = text.split_once("==") {
        (l.trim(), false, r.trim())
    } else {
        panic!("action.yml: a condition this test does not know: {text}")
    };
    let literal = literal
        .strip_prefix('\'')
        .and_then(|l| l.strip_suffix('\''))
        .expect("a quoted literal");
    let value = context.get(name).map(String::as_str).unwrap_or_default();
    (value == literal) != negated
}

/// Runs action.yml's steps in order with `inputs`: `run:` steps with bash as the
/// runner does (`bash --noprofile --norc -eo pipefail`), each with its own
/// `$GITHUB_OUTPUT`; the actions/cache step answers `cache_hit`.
fn run_action(
    machine: &Machine,
    inputs: &[(&str, &str)],
    action_repository: &str,
    cache_hit: bool,
) -> ActionRun {
    let action = yaml_file("action.yml");
    assert_eq!(action["runs"]["using"], "composite");
    let mut context: BTreeMap<String, String> = BTreeMap::from([
        (
            "github.action_path".to_owned(),
            repo_root().display().to_string(),
        ),
        (
            "github.action_repository".to_owned(),
            action_repository.to_owned(),
        ),
        ("github.token".to_owned(), TOKEN.to_owned()),
    ]);
    let declared = action["inputs"].as_object().expect("inputs");
    for (name, spec) in declared {
        let default = spec["default"].as_str().unwrap_or_default();
        let value = evaluate(default, &context);
        context.insert(format!("inputs.{name}"), value);
    }
    for (name, value) in inputs {
        assert!(declared.contains_key(*name), "no input {name}");
        context.insert(format!("inputs.{name}"), (*value).to_owned());
    }

    let github_path = machine.path("github_path");
    let _ = std::fs::remove_file(&github_path);
    let mut run = ActionRun {
        steps: Vec::new(),
        outputs: BTreeMap::new(),
        path: Vec::new(),
        log: String::new(),
        cache: BTreeMap::new(),
    };
    let steps = action["runs"]["steps"].as_array().expect("steps");
    for (index, step) in steps.iter().enumerate() {
        let name = step["name"].as_str().unwrap_or("a step").to_owned();
        let id = step["id"].as_str().map(str::to_owned);
        if let Some(test) = step.get("if").and_then(Value::as_str)
            && !condition(test, &context)
        {
            run.steps.push(format!("skipped: {name}"));
            continue;
        }
        run.steps.push(name.clone());
        let mut outputs = BTreeMap::new();
        if let Some(uses) = step.get("uses").and_then(Value::as_str) {
            assert!(
                uses.starts_with("actions/cache@"),
                "action.yml uses {uses}, which this test does not know"
            );
            for (key, value) in step["with"].as_object().expect("with") {
                let value = evaluate(value.as_str().expect("a string"), &context);
                run.cache.insert(key.clone(), value);
            }
            outputs.insert("cache-hit".to_owned(), cache_hit.to_string());
        } else {
            let script = step["run"].as_str().expect("a run step");
            assert_eq!(
                step["shell"], "bash",
                "{name}: composite steps name a shell"
            );
            assert!(
                !script.contains("${{"),
                "{name}: expressions go through env:, never into the script"
            );
            let output_file = machine.path(&format!("step-{index}-output"));
            let mut command = Command::new("bash");
            command
                .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
                .env_clear()
                .envs(machine.base_env())
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_PATH", &github_path);
            if let Some(env) = step.get("env").and_then(Value::as_object) {
                for (key, value) in env {
                    command.env(key, evaluate(value.as_str().expect("a string"), &context));
                }
            }
            let out = command.output().expect("run bash");
            run.log.push_str(&String::from_utf8_lossy(&out.stdout));
            run.log.push_str(&String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success(), "step {name:?} failed:\n{}", run.log);
            if let Ok(text) = std::fs::read_to_string(&output_file) {
                outputs = key_values(&text);
            }
        }
        if let Some(id) = id {
            for (key, value) in outputs {
                context.insert(format!("steps.{id}.outputs.{key}"), value);
            }
        }
    }
    for (name, spec) in action["outputs"].as_object().expect("outputs") {
        let value = evaluate(spec["value"].as_str().expect("a value"), &context);
        run.outputs.insert(name.clone(), value);
    }
    run.path = std::fs::read_to_string(&github_path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    run
}

#[test]
fn the_action_installs_caches_by_version_and_target_and_puts_evalctl_on_path() {
    let machine = Machine::new("Linux", "x86_64");
    let target = "x86_64-unknown-linux-musl";
    machine.publish(DEFAULT_REPOSITORY, "v1.2.3", &[target]);
    machine.server.serve(
        &format!("/api/repos/{DEFAULT_REPOSITORY}/releases/latest"),
        200,
        r#"{"tag_name":"v1.2.3"}"#,
    );

    // No inputs: the latest release, with the workflow's token. The runner may leave
    // github.action_repository empty in a composite action: the script's default.
    let first = run_action(&machine, &[], "", false);
    let dir = machine.path("toolcache/evalctl/1.2.3").join(target);
    assert_eq!(
        first.steps,
        [
            "Resolve the evalctl release",
            "Restore evalctl from the cache",
            "Download and verify evalctl",
            "Put evalctl on PATH",
        ]
    );
    assert_eq!(first.path, [dir.display().to_string()]);
    assert_eq!(first.outputs["version"], "v1.2.3");
    assert_eq!(first.outputs["path"], dir.display().to_string());
    assert_eq!(first.outputs["cache-hit"], "false");
    assert_eq!(first.cache["path"], dir.display().to_string());
    assert_eq!(first.cache["key"], format!("evalctl-v1.2.3-{target}"));
    assert!(first.log.contains(FAKE_VERSION), "{}", first.log);
    assert!(!first.log.contains(TOKEN), "the token was printed");
    let seen = machine.server.seen();
    assert_eq!(
        seen.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(),
        [
            format!("/api/repos/{DEFAULT_REPOSITORY}/releases/latest").as_str(),
            download_path(DEFAULT_REPOSITORY, "v1.2.3", target).as_str(),
            format!(
                "{}.sha256",
                download_path(DEFAULT_REPOSITORY, "v1.2.3", target)
            )
            .as_str(),
        ]
    );
    assert_eq!(
        seen[0].headers.get("authorization").map(String::as_str),
        Some(format!("Bearer {TOKEN}").as_str()),
        "github-token defaults to the workflow's token"
    );

    // The next run restores the directory from the cache: nothing is downloaded.
    let second = run_action(&machine, &[("version", "v1.2.3")], "", true);
    assert_eq!(
        second.steps,
        [
            "Resolve the evalctl release",
            "Restore evalctl from the cache",
            "skipped: Download and verify evalctl",
            "Put evalctl on PATH",
        ]
    );
    assert_eq!(second.path, [dir.display().to_string()]);
    assert_eq!(second.outputs["cache-hit"], "true");
    assert!(second.log.contains(FAKE_VERSION), "{}", second.log);
    assert_eq!(
        machine.server.seen().len(),
        seen.len(),
        "a pinned hit asks nothing"
    );
}

#[test]
fn the_action_downloads_from_the_repository_input_else_its_own() {
    let target = "aarch64-apple-darwin";
    for (input, action_repository, expected) in [
        (None, "acme/evalctl", "acme/evalctl"),
        (Some("fork/evalctl"), "acme/evalctl", "fork/evalctl"),
        (Some("fork/evalctl"), "", "fork/evalctl"),
        (None, "", DEFAULT_REPOSITORY),
    ] {
        let machine = Machine::new("Darwin", "arm64");
        machine.publish(expected, "v0.9.0", &[target]);
        let mut inputs = vec![("version", "0.9.0")];
        inputs.extend(input.map(|r| ("repository", r)));
        let run = run_action(&machine, &inputs, action_repository, false);
        assert_eq!(run.outputs["version"], "v0.9.0");
        assert_eq!(
            machine.server.paths()[0],
            download_path(expected, "v0.9.0", target),
            "{input:?} {action_repository:?}"
        );
    }
}

// ---------------------------------------------------------------------------------
// What the release publishes and the recipes use agree with the script.

#[test]
fn the_release_workflow_publishes_the_assets_the_script_downloads() {
    let workflow = yaml_file(".github/workflows/release.yml");
    let built: std::collections::BTreeSet<&str> =
        workflow["jobs"]["build"]["strategy"]["matrix"]["include"]
            .as_array()
            .expect("a build matrix")
            .iter()
            .map(|entry| entry["target"].as_str().expect("a target"))
            .collect();
    let installed: std::collections::BTreeSet<&str> =
        PLATFORMS.iter().map(|(_, _, target)| *target).collect();
    assert_eq!(built, installed);

    let text = std::fs::read_to_string(repo_root().join(".github/workflows/release.yml"))
        .expect("release.yml");
    for packaging in [
        r#"name="evalctl-$TARGET""#,
        r#"tar -czf "$name.tar.gz" "$name""#,
        r#"shasum -a 256 "$name.tar.gz" > "$name.tar.gz.sha256""#,
        r#""evalctl-$TARGET.tar.gz" "evalctl-$TARGET.tar.gz.sha256""#,
    ] {
        assert!(
            text.contains(packaging),
            "release.yml no longer packs what install.sh expects: {packaging}"
        );
    }
}

#[test]
fn every_recipe_installs_evalctl_with_the_action_at_a_pinned_version() {
    for recipe in ["plan.yml", "apply.yml", "drift.yml"] {
        let workflow = yaml_file(&format!("examples/ci/{recipe}"));
        for (job_name, job) in workflow["jobs"].as_object().expect("jobs") {
            let steps = job["steps"].as_array().expect("steps");
            let install = steps
                .iter()
                .position(|s| {
                    s.get("uses")
                        .and_then(Value::as_str)
                        .is_some_and(|u| u.ends_with("/evalctl@v1"))
                })
                .unwrap_or_else(|| panic!("{recipe} {job_name}: no step uses …/evalctl@v1"));
            let version = steps[install]["with"]["version"]
                .as_str()
                .unwrap_or_default();
            assert!(
                version.starts_with('v') && version != "latest",
                "{recipe}: pin a version, not {version:?}"
            );
            let first_run = steps
                .iter()
                .position(|s| {
                    s.get("run")
                        .and_then(Value::as_str)
                        .is_some_and(|r| r.contains("evalctl "))
                })
                .expect("a step running evalctl");
            assert!(install < first_run, "{recipe}: install before use");
            for step in steps {
                let script = step.get("run").and_then(Value::as_str).unwrap_or_default();
                assert!(
                    !script.contains("cargo install"),
                    "{recipe}: builds from source"
                );
            }
        }
    }
}
