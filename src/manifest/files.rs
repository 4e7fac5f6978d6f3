//! Finding manifest files and reading them into parsed documents.
//!
//! [`discover`] takes the paths the user named. A file is read whatever its name; a directory
//! is searched recursively for `*.yaml` and `*.yml` files, skipping hidden entries (names
//! starting with `.`, such as `.git`). Symbolic links are followed, but a directory already
//! visited is not entered again, so link loops end. Files reached twice (through links or
//! overlapping arguments) are read once. Files come back sorted by path, so output does not
//! depend on the file system's order.
//!
//! Every file is read by [`ManifestFile::read`] (UTF-8 required, a leading byte order mark
//! dropped) and parsed with [`super::yaml::parse`]. Problems are kept per file, so one bad
//! file does not hide the others': [`super::load()`] lists them all. Each file keeps its
//! text, so diagnostics can show the offending line.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use thiserror::Error;

use super::diagnostic::{Diagnostic, Span};
use super::yaml::{self, Document, Limits, YamlError};

/// A problem with the paths or files themselves, before YAML comes into it.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FileError {
    /// A path the user named does not exist.
    #[error("path `{}` does not exist", path.display())]
    NotFound {
        /// The path as named.
        path: PathBuf,
    },
    /// A directory the user named holds no `*.yaml` or `*.yml` file.
    #[error("no manifests (`*.yaml` or `*.yml` files) in directory `{}`", path.display())]
    NoManifests {
        /// The directory.
        path: PathBuf,
    },
    /// A path is neither a regular file nor a directory (a device, a socket, a pipe).
    #[error("`{}` is not a regular file or directory", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// A file is larger than [`Limits::max_file_bytes`]; it was not read.
    #[error("file is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The limit in force.
        limit: usize,
    },
    /// A file is not UTF-8 text.
    #[error("file is not valid UTF-8 text")]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// The first byte that is not part of UTF-8 text.
        at: Span,
    },
    /// Reading a file or directory failed.
    #[error("cannot read `{}`: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

impl FileError {
    /// The path the error is about.
    #[must_use]
    pub fn path(&self) -> &Path {
        match self {
            FileError::NotFound { path }
            | FileError::NoManifests { path }
            | FileError::NotAFile { path }
            | FileError::TooLarge { path, .. }
            | FileError::NotUtf8 { path, .. }
            | FileError::Io { path, .. } => path,
        }
    }

    /// This error as a diagnostic.
    #[must_use]
    pub fn to_diagnostic(&self) -> Diagnostic {
        let file = self.path().display().to_string();
        let (span, help) = match self {
            FileError::NotFound { .. } => (None, Some("check the spelling of the path")),
            FileError::NoManifests { .. } => (
                None,
                Some(
                    "manifests are files named `*.yaml` or `*.yml`; hidden directories are skipped",
                ),
            ),
            FileError::NotAFile { .. } | FileError::Io { .. } => (None, None),
            FileError::TooLarge { .. } => {
                (None, Some("split the manifests over several smaller files"))
            }
            FileError::NotUtf8 { at, .. } => (Some(*at), Some("save the file as UTF-8")),
        };
        Diagnostic::error(file, span, self.to_string()).with_help_opt(help)
    }
}

/// One manifest file, read and parsed.
#[derive(Clone, Debug)]
pub struct ManifestFile {
    /// The path, as found from what the user named (relative paths stay relative).
    pub path: PathBuf,
    /// The path as diagnostics show it.
    pub name: String,
    /// The text, without a byte order mark; spans index into it.
    pub text: String,
    /// The documents (empty ones skipped), or every YAML error found in the file.
    pub parsed: Result<Vec<Document>, Vec<YamlError>>,
}

impl ManifestFile {
    /// Parses `text` as the manifest file `path` (for tests and for input not on disk).
    /// A leading byte order mark is dropped.
    #[must_use]
    pub fn from_text(path: impl Into<PathBuf>, text: &str, limits: &Limits) -> Self {
        let path = path.into();
        let text = text.strip_prefix('\u{feff}').unwrap_or(text).to_owned();
        let parsed = yaml::parse(&text, limits);
        ManifestFile {
            name: path.display().to_string(),
            path,
            text,
            parsed,
        }
    }

    /// Reads and parses the file at `path`.
    pub fn read(path: &Path, limits: &Limits) -> Result<Self, FileError> {
        let text = read_text(path, limits)?;
        let parsed = yaml::parse(&text, limits);
        Ok(ManifestFile {
            name: path.display().to_string(),
            path: path.to_path_buf(),
            text,
            parsed,
        })
    }

    /// The parsed documents; none when the file had errors.
    #[must_use]
    pub fn documents(&self) -> &[Document] {
        self.parsed.as_deref().unwrap_or_default()
    }

    /// A diagnostic for each YAML error of this file.
    #[must_use]
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        match &self.parsed {
            Ok(_) => Vec::new(),
            Err(errors) => errors.iter().map(|e| e.to_diagnostic(&self.name)).collect(),
        }
    }
}

/// The manifest files under `paths`, sorted and without repeats, and the problems met
/// finding them. A file named directly is taken whatever its name.
#[must_use]
pub fn discover<P: AsRef<Path>>(paths: &[P]) -> (Vec<PathBuf>, Vec<FileError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        let path = path.as_ref();
        match fs::metadata(path) {
            Ok(meta) if meta.is_file() => files.push(path.to_path_buf()),
            Ok(meta) if meta.is_dir() => {
                let (files_before, errors_before) = (files.len(), errors.len());
                walk(path, &mut files, &mut errors);
                if files.len() == files_before && errors.len() == errors_before {
                    errors.push(FileError::NoManifests {
                        path: path.to_path_buf(),
                    });
                }
            }
            Ok(_) => errors.push(FileError::NotAFile {
                path: path.to_path_buf(),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => errors.push(FileError::NotFound {
                path: path.to_path_buf(),
            }),
            Err(source) => errors.push(FileError::Io {
                path: path.to_path_buf(),
                source,
            }),
        }
    }
    files.sort();
    let mut seen = HashSet::new();
    files.retain(|path| seen.insert(fs::canonicalize(path).unwrap_or_else(|_| path.clone())));
    (files, errors)
}

/// Collects the manifest files under `root`, depth first with an explicit stack.
fn walk(root: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<FileError>) {
    let mut visited = HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        // Entering each real directory once ends symlink loops.
        let real = fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
        if !visited.insert(real) {
            continue;
        }
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(source) => {
                errors.push(FileError::Io { path: dir, source });
                continue;
            }
        };
        let mut names = Vec::new();
        for entry in entries {
            match entry {
                Ok(entry) => names.push(entry.file_name()),
                Err(source) => errors.push(FileError::Io {
                    path: dir.clone(),
                    source,
                }),
            }
        }
        names.sort();
        for name in names {
            if name.as_encoded_bytes().starts_with(b".") {
                continue;
            }
            let path = dir.join(&name);
            let is_manifest = is_manifest_name(&path);
            // Follows symbolic links; a dangling one is only worth reporting if it looks
            // like a manifest.
            match fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => stack.push(path),
                Ok(meta) if is_manifest && meta.is_file() => files.push(path),
                Ok(_) if is_manifest => errors.push(FileError::NotAFile { path }),
                Ok(_) => {}
                Err(source) if is_manifest => errors.push(FileError::Io { path, source }),
                Err(_) => {}
            }
        }
    }
}

/// The UTF-8 byte order mark.
const BOM: &[u8] = "\u{feff}".as_bytes();

fn is_manifest_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext.eq_ignore_ascii_case("yaml") || ext.eq_ignore_ascii_case("yml"))
}

/// Reads `path` as UTF-8 text, refusing files over the size limit before reading them and
/// dropping a leading byte order mark.
pub fn read_text(path: &Path, limits: &Limits) -> Result<String, FileError> {
    let io_error = |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = fs::File::open(path).map_err(io_error)?;
    let size = file.metadata().map_err(io_error)?.len();
    let limit = limits.max_file_bytes;
    let too_large = |size| FileError::TooLarge {
        path: path.to_path_buf(),
        size,
        limit,
    };
    if size > limit as u64 {
        return Err(too_large(size));
    }
    // The file may grow after the size check: read one byte past the limit at most.
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take((limit as u64).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    if bytes.len() > limit {
        return Err(too_large(bytes.len() as u64));
    }
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        // The text before the bad byte is valid UTF-8, so its position can be computed.
        let before = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
        let at = Span {
            len: 1,
            ..Span::from_offset(before, valid, 0)
        };
        FileError::NotUtf8 {
            path: path.to_path_buf(),
            at,
        }
    })
}
