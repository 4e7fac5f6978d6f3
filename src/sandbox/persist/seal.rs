//! Integration settings sealed at rest: what the state file holds of an
//! integration's non-secret fields.
//!
//! The service returns an integration's non-secret fields (an Azure
//! integration's `default_headers`, a custom one's `init_kwargs`, an
//! `organization_id`), so the sandbox must keep them to answer reads as it
//! does, across restarts; yet they are often values taken from the
//! environment (`Authorization: Bearer ${TOKEN}`). Like the service, which
//! keeps such settings encrypted at rest, the state file holds them sealed:
//! each record's `fields` is `"sealed:v1:" + base64(nonce || AES-256-GCM
//! ciphertext and tag)` of their JSON text, under a key kept apart in
//! `FILE.key` (32 random bytes as hex, mode 0600, written the first time an
//! integration is). The state file alone, copied, shared or committed, shows
//! no value of an integration. (Secret fields themselves are never kept at
//! all: a salted fingerprint only, see `store::integrations`.)
//!
//! The snapshot line is written and read through serde (the `fields` hook
//! [`fields`], active only in [`scope`]); journal lines are sealed and opened
//! as JSON ([`seal_op`], [`open_op`]). A record read in the clear (a file of
//! an earlier version) is counted, so that the file can be rewritten sealed.

use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use super::journal::{Change, Op};

/// What a sealed `fields` value starts with.
const PREFIX: &str = "sealed:v1:";

/// Bound to every sealed value, so a sealed text means nothing elsewhere.
const AAD: &[u8] = b"evalctl sandbox: integration fields, v1";

/// The collection whose records are sealed.
const INTEGRATIONS: &str = "integrations";

/// Why the key cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Reading or writing the key file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The key file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The key file does not hold a key.
    #[error("{} does not hold a key written by the sandbox", path.display())]
    Invalid {
        /// The key file.
        path: PathBuf,
    },
    /// The system's random generator failed.
    #[error("no random bytes for a key")]
    Random,
}

/// The key sealing one state file's integration settings.
pub struct Sealer {
    key: RandomizedNonceKey,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer([redacted])")
    }
}

/// The key file of the state file at `state`: `FILE.key`.
pub fn key_path(state: &Path) -> PathBuf {
    let mut name = state.file_name().unwrap_or_default().to_os_string();
    name.push(".key");
    state.with_file_name(name)
}

/// Where [`Sealer::create`] writes a key before renaming it: `KEY.new`.
pub fn new_key_path(key: &Path) -> PathBuf {
    let mut name = key.file_name().unwrap_or_default().to_os_string();
    name.push(".new");
    key.with_file_name(name)
}

impl Sealer {
    fn from_bytes(bytes: &[u8], path: &Path) -> Result<Sealer, KeyError> {
        RandomizedNonceKey::new(&AES_256_GCM, bytes)
            .map(|key| Sealer { key })
            .map_err(|_| KeyError::Invalid {
                path: path.to_owned(),
            })
    }

    /// Reads the key at `path` (tightening its mode to the owner's); `None`
    /// when there is no such file.
    pub fn load(path: &Path) -> Result<Option<Sealer>, KeyError> {
        let io = |source| KeyError::Io {
            path: path.to_owned(),
            source,
        };
        let mut file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        super::owner_only(&file, path).map_err(io)?;
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(io)?;
        let hex = text.trim();
        let bytes: Option<Vec<u8>> = (hex.len() == 64)
            .then(|| {
                (0..32)
                    .map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
                    .collect()
            })
            .flatten();
        let Some(bytes) = bytes else {
            return Err(KeyError::Invalid {
                path: path.to_owned(),
            });
        };
        Self::from_bytes(&bytes, path).map(Some)
    }

    /// Makes a new key and writes it to `path` (mode 0600): to `PATH.new`,
    /// flushed, renamed over `path`, directory flushed, so a crash leaves no
    /// half-written key.
    pub fn create(path: &Path) -> Result<Sealer, KeyError> {
        let io = |source| KeyError::Io {
            path: path.to_owned(),
            source,
        };
        let mut bytes = [0u8; 32];
        aws_lc_rs::rand::fill(&mut bytes).map_err(|_| KeyError::Random)?;
        let sealer = Self::from_bytes(&bytes, path)?;
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let new = new_key_path(path);
        let mut options = OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&new).map_err(io)?;
        super::owner_only(&file, &new).map_err(io)?;
        file.write_all(format!("{hex}\n").as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&new, path).map_err(io)?;
        super::sync_dir(path).map_err(io)?;
        Ok(sealer)
    }

    /// The sealed text of `fields`.
    fn seal(&self, fields: &Map<String, Value>) -> Result<String, String> {
        let mut buf = serde_json::to_vec(fields).map_err(|e| e.to_string())?;
        let nonce = self
            .key
            .seal_in_place_append_tag(Aad::from(AAD), &mut buf)
            .map_err(|_| "the integration's settings could not be sealed".to_owned())?;
        let mut out = nonce.as_ref().to_vec();
        out.extend_from_slice(&buf);
        Ok(format!("{PREFIX}{}", STANDARD.encode(out)))
    }

    /// The fields of a sealed text; `None` when it was not sealed with this key.
    fn open(&self, sealed: &str) -> Option<Map<String, Value>> {
        let bytes = STANDARD.decode(sealed.strip_prefix(PREFIX)?).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, rest) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut rest = rest.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(AAD), &mut rest)
            .ok()?;
        serde_json::from_slice(plain).ok()
    }
}

/// What reading sealed records found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Opened {
    /// Records read in the clear (to be rewritten sealed).
    pub clear: usize,
    /// Sealed records that could not be opened: no key, or another key.
    pub unopened: usize,
}

thread_local! {
    /// The key of the serialization under way in [`scope`], and what reading found.
    static CURRENT: RefCell<Option<(Option<Arc<Sealer>>, Opened)>> = const { RefCell::new(None) };
}

/// Runs `f` (which writes or reads a snapshot) with `sealer` sealing and
/// opening the integration records it meets; returns what reading found.
pub fn scope<R>(sealer: Option<Arc<Sealer>>, f: impl FnOnce() -> R) -> (R, Opened) {
    let previous = CURRENT.with(|c| c.replace(Some((sealer, Opened::default()))));
    let out = f();
    let found = CURRENT.with(|c| c.replace(previous));
    (out, found.map(|(_, opened)| opened).unwrap_or_default())
}

/// The serde hook of `IntegrationRecord::fields`: sealed in [`scope`] when it
/// has a key, as a map everywhere else (responses, fixtures, tests).
pub mod fields {
    use serde::de::Error as _;
    use serde::ser::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::{Map, Value};

    use super::CURRENT;

    /// Serializes `fields`, sealed in a scope with a key.
    pub fn serialize<S: Serializer>(
        fields: &Map<String, Value>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let sealer = CURRENT.with(|c| c.borrow().as_ref().and_then(|(s, _)| s.clone()));
        match sealer {
            Some(sealer) => sealer
                .seal(fields)
                .map_err(S::Error::custom)?
                .serialize(serializer),
            None => fields.serialize(serializer),
        }
    }

    /// Reads `fields`, sealed or (from an earlier version) in the clear.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Map<String, Value>, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Object(map) => {
                CURRENT.with(|c| {
                    if let Some((_, opened)) = c.borrow_mut().as_mut() {
                        opened.clear += 1;
                    }
                });
                Ok(map)
            }
            Value::String(sealed) => CURRENT.with(|c| {
                let mut current = c.borrow_mut();
                let Some((sealer, opened)) = current.as_mut() else {
                    return Err(D::Error::custom(
                        "sealed integration settings outside a state file",
                    ));
                };
                match sealer.as_ref().and_then(|s| s.open(&sealed)) {
                    Some(map) => Ok(map),
                    None => {
                        opened.unopened += 1;
                        Err(D::Error::custom(
                            "sealed integration settings that this key does not open",
                        ))
                    }
                }
            }),
            _ => Err(D::Error::custom("integration fields must be an object")),
        }
    }
}

/// Whether `ops` write integration records.
pub fn writes_integrations(ops: &[Op]) -> bool {
    ops.iter().any(|op| op.c == INTEGRATIONS)
}

/// The records an op carries, to change.
fn records(op: &mut Op) -> Vec<&mut Value> {
    if op.c != INTEGRATIONS {
        return Vec::new();
    }
    match &mut op.change {
        Change::Set { v, .. } | Change::Push { v } | Change::Insert { v, .. } => vec![v],
        Change::All { v } => v.iter_mut().collect(),
        Change::Remove { .. } | Change::Truncate { .. } | Change::Field { .. } => Vec::new(),
    }
}

/// Seals the integration records of a journal line's op.
pub fn seal_op(sealer: &Sealer, op: &mut Op) -> Result<(), String> {
    for record in records(op) {
        if let Some(slot) = record.get_mut("fields")
            && let Value::Object(map) = slot
        {
            *slot = Value::String(sealer.seal(map)?);
        }
    }
    Ok(())
}

/// Opens the integration records of an op read from the file (in place),
/// counting those in the clear and those that cannot be opened.
pub fn open_op(sealer: Option<&Sealer>, op: &mut Op, found: &mut Opened) {
    for record in records(op) {
        match record.get_mut("fields") {
            Some(Value::Object(_)) => found.clear += 1,
            Some(slot @ Value::String(_)) => {
                let opened = slot
                    .as_str()
                    .and_then(|sealed| sealer.and_then(|s| s.open(sealed)));
                match opened {
                    Some(map) => *slot = Value::Object(map),
                    None => found.unopened += 1,
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sealed_fields_open_with_their_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json.key");
        assert!(Sealer::load(&path).unwrap().is_none());
        let sealer = Sealer::create(&path).unwrap();
        let map: Map<String, Value> =
            serde_json::from_value(json!({"default_headers": {"Authorization": "Bearer CANARY"}}))
                .unwrap();
        let sealed = sealer.seal(&map).unwrap();
        assert!(sealed.starts_with(PREFIX) && !sealed.contains("CANARY"));
        assert_ne!(
            sealed,
            sealer.seal(&map).unwrap(),
            "a fresh nonce each time"
        );
        let again = Sealer::load(&path).unwrap().unwrap();
        assert_eq!(again.open(&sealed), Some(map.clone()));
        let other = Sealer::create(&dir.path().join("other.key")).unwrap();
        assert_eq!(other.open(&sealed), None);
        let mut tampered = sealed.clone();
        tampered.pop();
        tampered.push('A');
        assert_eq!(again.open(&tampered), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(&path, "not a key").unwrap();
        assert!(matches!(Sealer::load(&path), Err(KeyError::Invalid { .. })));
    }
}
