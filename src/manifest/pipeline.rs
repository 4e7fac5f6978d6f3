//! The per-file half of [`load`](mod@super::load): each manifest file is read, parsed,
//! checked document by document and reduced to what outlives it (typed specs,
//! diagnostics, the [`Claim`](super::check::Claim)s the rules across documents need, the
//! text with its secrets masked) before the next file is taken. A file's parse tree (a
//! JSON value and a span for every path, tens of times the size of its YAML) is dropped
//! as soon as the file is done, so only a file or two's are alive at any moment, however
//! large the config repo.
//!
//! A large load (over [`PARALLEL_MIN_BYTES`] of YAML in several files), when the caller
//! allows it ([`Threads::Cores`]: `validate`), is spread over the cores (at most
//! [`MAX_WORKERS`]): the calling thread and helper threads each take the next file as
//! they finish one. Any other load is done on the calling thread alone: it
//! takes a fraction of a second there, and a helper would cost more than it saves, as
//! the C library keeps each thread's memory arena (a parse tree's worth of pages, a few
//! MB) for the rest of the process, where the command's own work could have reused it.
//! Results come back in file order, so nothing that follows depends on the threads'
//! timing. Environment variables are read through the caller's function, which must be
//! thread-safe: every worker calls it directly, as its files need.

use std::fs;
use std::hash::{Hash, Hasher};
use std::num::NonZero;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::check::{self, Checked, Input, Spec};
use super::diagnostic::{Diagnostic, LineIndex, Span};
use super::files::{FileError, ManifestFile};
use super::mask::{self, Masked};
use super::set::Origin;
use super::shared::SharedParts;
use super::yaml::Limits;

/// The most threads one load uses, the calling thread included.
pub const MAX_WORKERS: usize = 4;

/// The least YAML, in bytes, that a load spreads over several threads: a fraction of a
/// second of work on one core. Below it, the time a helper saves is not noticed, while
/// the pages its arena keeps are a large share of what a command on a config repo that
/// size uses (measured: docs/performance.md, Figures behind choices in the code).
pub const PARALLEL_MIN_BYTES: u64 = 2 * 1024 * 1024;

/// Stack of a worker thread: a main thread's, as the checks recurse through documents.
const WORKER_STACK: usize = 8 * 1024 * 1024;

/// Which threads a load may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// Several cores for a large load ([`PARALLEL_MIN_BYTES`]): `validate`,
    /// whose whole work it is.
    Cores,
    /// The calling thread alone: the commands that go on to read the
    /// service. Their load is a small part of their time, which waits on
    /// the service, and the memory a helper's arena keeps (the parse trees
    /// it held, the specs it built, freed there as projects are planned)
    /// would stay with the process to its end, a large share of a plan's
    /// (measured: docs/performance.md, Figures behind choices in the code).
    One,
}

/// What is kept of one manifest file once it has been checked.
#[derive(Debug)]
pub struct FileOutcome {
    /// The path as diagnostics show it.
    pub name: String,
    /// The file's YAML errors (it has no documents then).
    pub yaml_errors: Vec<Diagnostic>,
    /// Each document's checks, in file order (empty documents are skipped).
    pub documents: Vec<DocumentOutcome>,
    /// Where the file is.
    pub path: PathBuf,
    /// The text, with literal secrets masked, for diagnostics to quote;
    /// `None` when the file has no diagnostic of its own and nothing to
    /// mask (most files: a repo of thousands is not held twice), so a
    /// diagnostic found across files quotes it as read again.
    pub masked: Option<Masked>,
    /// A hash of the text as read (secrets included), to tell whether the
    /// file changed between two loads.
    pub digest: u64,
}

/// What checking one document found, and where the document starts.
#[derive(Debug)]
pub struct DocumentOutcome {
    /// The file and line the document starts at.
    pub origin: Origin,
    /// The diagnostics, claims and spec of the document.
    pub checked: Checked,
}

/// Reads and checks every file of `paths`, on several threads when there is enough to
/// do, and returns the outcome of each, in the order of `paths`. Environment variables
/// are read with `env`, on whichever thread checks the file that names them.
pub fn run(
    paths: &[PathBuf],
    limits: &Limits,
    threads: Threads,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Vec<Result<FileOutcome, FileError>> {
    // Files that cannot be measured count as nothing; reading them reports the problem.
    let bytes: u64 = paths
        .iter()
        .filter_map(|path| fs::metadata(path).ok())
        .map(|meta| meta.len())
        .sum();
    let workers = if threads == Threads::One || bytes < PARALLEL_MIN_BYTES {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, NonZero::get)
            .min(MAX_WORKERS)
    };
    run_on(workers, paths, limits, env)
}

/// [`run`] on at most `workers` threads; on the calling thread alone when that is one.
fn run_on(
    workers: usize,
    paths: &[PathBuf],
    limits: &Limits,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Vec<Result<FileOutcome, FileError>> {
    let workers = workers.min(paths.len());
    if workers <= 1 {
        return paths.iter().map(|path| file(path, limits, env)).collect();
    }
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<Result<FileOutcome, FileError>>> =
        std::iter::repeat_with(|| None).take(paths.len()).collect();
    let mut place = |done: Vec<(usize, Result<FileOutcome, FileError>)>| {
        for (index, outcome) in done {
            if let Some(slot) = slots.get_mut(index) {
                *slot = Some(outcome);
            }
        }
    };
    std::thread::scope(|scope| {
        // The calling thread is one of the workers; the others are helpers.
        let mut helpers = Vec::with_capacity(workers - 1);
        for n in 1..workers {
            let next = &next;
            let helper = move || {
                let mut done = Vec::new();
                while let Some((index, path)) = claim(next, paths) {
                    done.push((index, file(path, limits, env)));
                }
                done
            };
            let spawned = std::thread::Builder::new()
                .name(format!("manifest-{n}"))
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, helper);
            // A thread that cannot start leaves its share to the others.
            if let Ok(handle) = spawned {
                helpers.push(handle);
            }
        }
        let mut done = Vec::new();
        while let Some((index, path)) = claim(&next, paths) {
            done.push((index, file(path, limits, env)));
        }
        place(done);
        for helper in helpers {
            match helper.join() {
                Ok(done) => place(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    slots
        .into_iter()
        .zip(paths)
        .map(|(slot, path)| slot.unwrap_or_else(|| file(path, limits, env)))
        .collect()
}

/// The next file no worker has taken yet, with its index.
fn claim<'p>(next: &AtomicUsize, paths: &'p [PathBuf]) -> Option<(usize, &'p PathBuf)> {
    let index = next.fetch_add(1, Ordering::Relaxed);
    paths.get(index).map(|path| (index, path))
}

/// Reads, parses and checks the file at `path`; its parse tree is dropped on return.
fn file(
    path: &Path,
    limits: &Limits,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Result<FileOutcome, FileError> {
    let mut file = ManifestFile::read(path, limits)?;
    let lines = LineIndex::new(&file.text);
    let mut hidden: Vec<Span> = Vec::new();
    let mut documents = file
        .parsed
        .as_deref_mut()
        .unwrap_or_default()
        .iter_mut()
        .map(|document| {
            // The value is checked, interpolated and turned into the spec where it is,
            // not copied: the document keeps its spans.
            let value = std::mem::take(&mut document.value);
            let input = Input {
                file: &file.name,
                lines: &lines,
                document,
            };
            let mut checked = check::check(&input, value, env);
            hidden.append(&mut checked.hidden);
            DocumentOutcome {
                origin: Origin {
                    file: file.path.clone(),
                    line: document.root().value.line as usize,
                },
                checked,
            }
        })
        .collect::<Vec<_>>();
    // Equal run declarations of the file held once before its outcome is
    // kept with the others (`load` shares them across files).
    let mut shared = SharedParts::default();
    for document in &mut documents {
        if let Some(Spec::Project(spec)) = &mut document.checked.spec {
            shared.share(spec);
        }
    }
    let yaml_errors = file.diagnostics();
    let quiet = yaml_errors.is_empty()
        && hidden.is_empty()
        && documents.iter().all(|d| d.checked.diagnostics.is_empty());
    // Parsed text is masked where the documents say; text that did not parse, by the
    // look of its lines.
    let masked = if quiet {
        None
    } else if file.parsed.is_ok() {
        Some(mask::mask_spans(&file.text, &hidden))
    } else {
        Some(mask::mask_secret_lines(
            &file.text,
            &crate::api::secret::is_secret_key,
        ))
    };
    let digest = {
        let mut hasher = std::hash::DefaultHasher::new();
        file.text.hash(&mut hasher);
        hasher.finish()
    };
    Ok(FileOutcome {
        yaml_errors,
        documents,
        masked,
        digest,
        path: file.path,
        name: file.name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many files, variables, secrets, errors and duplicates: the outcome on several
    /// threads is the outcome on one, variables included, whichever thread reads them.
    #[test]
    fn workers_change_nothing_but_the_time() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut paths = Vec::new();
        for n in 0..40 {
            let text = match n % 4 {
                0 => format!("kind: Project\nname: p-${{N{}}}\n", n % 12),
                1 => "kind: Integration\nprovider: openai\ntoken: sk-literal-secret\n".to_owned(),
                2 => format!("kind: Project\nname: q{n}\nnope: [\n"),
                _ => format!("kind: Projet\nname: r{n}\n---\nkind: Project\nid: ${{ID}}\n"),
            };
            let path = dir.path().join(format!("f{n:02}.yaml"));
            std::fs::write(&path, text).expect("write");
            paths.push(path);
        }
        paths.push(dir.path().join("missing.yaml"));
        let env = |name: &str| (name != "ID").then(|| format!("value of {name}"));
        let limits = Limits::default();
        let one = format!("{:?}", run_on(1, &paths, &limits, &env));
        let three = format!("{:?}", run_on(3, &paths, &limits, &env));
        assert!(one == three, "one thread:\n{one}\nthree threads:\n{three}");
        assert!(one.contains("name: Some(\"p-value of N8\")"), "{one}");
        assert!(!one.contains("sk-literal-secret"));
    }
}
