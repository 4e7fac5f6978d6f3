//! What the fault suite shares: the config repo it applies, the live state
//! that repo must produce (written out by hand, independent of the planner,
//! so a planner bug cannot hide itself), a reader of live state through the
//! API, the checks ("what the report says succeeded is live", "live equals
//! desired", "no name twice"), and a standalone `evalctl sandbox --state`
//! process that can be SIGKILLed and started again on the same port.

mod expected;
pub mod goal;
mod live;
mod report;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use expected::{Expected, expected};
pub use live::{LiveView, client_for};
pub use report::{check_honest, parse_report, plan_changes};

/// The integration token the repo's `${OPENAI_API_KEY}` resolves to.
pub const OPENAI_TOKEN: &str = "sk-fault-suite-0123456789abcdef";

/// The config repo: `(relative path, content)`. Against the demo fixture it
/// plans 1 integration, 8 template creates, 1 template update, 1 template
/// replace, 4 metric-settings updates, 1 section update (a rename), 8 section
/// creates and 3 favorites.
pub const REPO: &[(&str, &str)] = &[
    (
        "repo/demo-project.yaml",
        r##"
kind: Project
name: demo-project
log_streams:
  - name: production
    metric_settings:
      scorers:
        - name: correctness
          num_judges: 3
          cot_enabled: true
        - name: context_adherence
          scorer_version: 1
        - name: helpfulness-judge
          filters:
            - {name: metadata, key: customer_tier, operator: eq, value: enterprise}
        - name: output_toxicity
      segment_filters:
        - sample_rate: 0.5
          filter: {name: node_name, operator: contains, value: llm}
        - sample_rate: 0.1
    trends:
      sections:
        - {name: Quality, description: Quality charts, color: "#1F77B4"}
        - {name: Latency and cost, renamed_from: [Latency], description: Time and spend, color: "#FF7F0E"}
        - {name: Safety, description: Toxicity and PII, color: "#D62728"}
        - {name: Retrieval, description: Context use, color: "#2CA02C"}
        - {name: Tools, color: "#9467BD"}
      favorite: project
  - name: staging
    metric_settings:
      scorers:
        - name: correctness
        - name: completeness
          model_name: gpt-4.1-mini
      segment_filters:
        - sample_rate: 0.25
          filter: {name: metadata, key: env, operator: not_in, value: [dev, test]}
          llm_scorers: true
    trends:
      sections:
        - {name: Staging quality, description: Before release, color: "#17BECF"}
        - {name: Staging latency, color: "#BCBD22"}
      favorite: user
experiments:
  - name: baseline-eval
    metric_settings:
      scorers:
        - name: helpfulness-judge
          scorer_version: 1
        - name: bleu
annotation_templates:
  - name: helpful
    criteria: Was the response helpful?
    constraints: {annotation_type: like_dislike}
  - name: overall-rating
    criteria: Rate the response overall.
    include_explanation: true
    constraints: {annotation_type: star}
  - name: issue-tags
    constraints:
      annotation_type: tags
      tags: [hallucination, off-topic, unsafe]
      allow_other: true
  - name: star-annotation
    criteria: Stars, reworded.
    constraints: {annotation_type: star}
  - name: score-annotation
    criteria: Rate the response (score-annotation).
    include_explanation: true
    constraints: {annotation_type: score, min: 1, max: 5}
feedback_templates:
  - name: thumbs
    constraints: {feedback_type: like_dislike}
  - name: satisfaction
    criteria: How satisfied are you?
    constraints: {feedback_type: score, min: 0, max: 5}
  - name: resolved
    constraints:
      feedback_type: choice
      choices: ["yes", "no"]
      allow_other: true
"##,
    ),
    (
        "repo/support-bot.yaml",
        r##"
kind: Project
name: support-bot
log_streams:
  - name: default
    metric_settings:
      scorers:
        - name: prompt_injection
        - name: input_toxicity
      segment_filters:
        - sample_rate: 1.0
          filter: {name: modality, operator: ne, value: text}
          multimodal_scorers: true
    trends:
      sections:
        - {name: Support quality, description: Answers, color: "#E377C2"}
        - {name: Escalations, color: "#7F7F7F"}
      favorite: user
annotation_templates:
  - name: support-verdict
    criteria: Did the bot resolve it?
    constraints: {annotation_type: choice, choices: [resolved, escalated]}
feedback_templates:
  - name: support-stars
    constraints: {feedback_type: star}
"##,
    ),
    (
        "repo/integrations.yaml",
        r##"
kind: Integration
provider: openai
token: ${OPENAI_API_KEY}
organization_id: org-fault-suite
"##,
    ),
];

/// Writes [`REPO`] under `root`.
pub fn write_repo(root: &Path) {
    for (relative, content) in REPO {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("create the directory");
        std::fs::write(path, content).expect("write the manifest");
    }
}

/// A free TCP port on 127.0.0.1 (free when this returns; another process
/// could take it, which makes the start fail loudly, not silently).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// `evalctl sandbox --state FILE --listen 127.0.0.1:PORT`, as a child
/// process. Dropping it kills it.
pub struct SandboxProcess {
    child: Option<Child>,
    /// The port it listens on.
    pub port: u16,
    /// The state file.
    pub state: PathBuf,
    /// Extra `evalctl sandbox` flags (faults).
    pub flags: Vec<String>,
}

impl SandboxProcess {
    /// Starts it and waits until it listens.
    pub fn start(state: &Path, port: u16, flags: &[&str]) -> SandboxProcess {
        let mut p = SandboxProcess {
            child: None,
            port,
            state: state.to_owned(),
            flags: flags.iter().map(|s| (*s).to_owned()).collect(),
        };
        p.restart();
        p
    }

    /// Its base URL.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// SIGKILLs it (no graceful shutdown, nothing flushed) and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // `Child::kill` is SIGKILL on Unix.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops it as Ctrl-C does (a graceful shutdown) and reaps it.
    pub fn stop(&mut self) {
        self.stop_with("-INT");
    }

    /// Sends it `signal` (`-INT`, `-TERM`: the `kill` flag) and reaps it.
    pub fn stop_with(&mut self, signal: &str) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .arg(signal)
                .arg(child.id().to_string())
                .status();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, with the same state file, and waits
    /// until it listens (retrying while the port is still held).
    pub fn restart(&mut self) {
        self.kill();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let mut child = Command::new(env!("CARGO_BIN_EXE_evalctl"))
                .arg("sandbox")
                .arg("--state")
                .arg(&self.state)
                .arg("--listen")
                .arg(format!("127.0.0.1:{}", self.port))
                .args(&self.flags)
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("start evalctl sandbox");
            let stdout = child.stdout.take().expect("a stdout");
            let mut first = String::new();
            let _ = BufReader::new(stdout).read_line(&mut first);
            if first.contains("listening on") {
                self.child = Some(child);
                return;
            }
            let _ = child.kill();
            let _ = child.wait();
            assert!(
                Instant::now() < deadline,
                "the sandbox did not start on port {}: {first:?}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for SandboxProcess {
    fn drop(&mut self) {
        self.kill();
    }
}
