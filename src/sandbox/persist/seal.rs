//! Fields sealed at rest: what the state database holds of the values that
//! must not be readable from the file alone.
//!
//! Two kinds of record hold them: users (the salted fingerprints of their
//! password and API keys) and integrations (the salted fingerprint of their
//! secret fields, and their other settings: an Azure integration's
//! `default_headers`, a custom one's `init_kwargs`, often values taken from
//! the environment such as `Authorization: Bearer ${TOKEN}`). The service
//! returns an integration's settings, so the sandbox must keep them to answer
//! reads across restarts; like the service, which keeps them encrypted at
//! rest, the file holds them sealed. Each table names its sealed fields
//! (`tables`); a row keeps them, as one JSON object, in its `sealed` column:
//! `"sealed:v2:" + base64(nonce || AES-256-GCM ciphertext and tag)`, bound to
//! the table's name, under a key kept apart in `FILE.key` (32 random bytes as
//! hex, mode 0600, written the first time a sealed field is). The other
//! columns stay in the clear, for `sqlite3`. (Secret values themselves are
//! never kept at all: salted fingerprints only, see `store::integrations`.)
//!
//! A journal file of the previous version sealed an integration's `fields`
//! alone, as `"sealed:v1:..."` under the same key file ([`Sealer::open_v1`]),
//! which migrating it reads.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use aws_lc_rs::aead::{AES_256_GCM, Aad, NONCE_LEN, Nonce, RandomizedNonceKey};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

/// What a sealed column starts with.
const PREFIX: &str = "sealed:v2:";

/// What an integration's sealed `fields` started with in a journal file.
const PREFIX_V1: &str = "sealed:v1:";

/// Bound to every sealed value of a journal file.
const AAD_V1: &[u8] = b"evalctl sandbox: integration fields, v1";

/// Bound to every sealed column, with its table's name, so a sealed text
/// means nothing in another table.
fn aad(table: &str) -> Vec<u8> {
    format!("evalctl sandbox: sealed fields of {table}, v2").into_bytes()
}

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

    /// The sealed text of the fields of a row of `table`.
    pub fn seal(&self, table: &str, fields: &Map<String, Value>) -> Result<String, SealError> {
        let mut buf = serde_json::to_vec(fields).map_err(|_| SealError)?;
        let nonce = self
            .key
            .seal_in_place_append_tag(Aad::from(aad(table).as_slice()), &mut buf)
            .map_err(|_| SealError)?;
        let mut out = nonce.as_ref().to_vec();
        out.extend_from_slice(&buf);
        Ok(format!("{PREFIX}{}", STANDARD.encode(out)))
    }

    /// The fields of a sealed text of `table`; `None` when it was not sealed
    /// with this key for that table.
    pub fn open(&self, table: &str, sealed: &str) -> Option<Map<String, Value>> {
        self.open_with(sealed.strip_prefix(PREFIX)?, &aad(table))
    }

    /// An integration's `fields` as a journal file sealed them.
    pub fn open_v1(&self, sealed: &str) -> Option<Map<String, Value>> {
        self.open_with(sealed.strip_prefix(PREFIX_V1)?, AAD_V1)
    }

    fn open_with(&self, base64: &str, aad: &[u8]) -> Option<Map<String, Value>> {
        let bytes = STANDARD.decode(base64).ok()?;
        if bytes.len() < NONCE_LEN {
            return None;
        }
        let (nonce, rest) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut rest = rest.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(aad), &mut rest)
            .ok()?;
        serde_json::from_slice(plain).ok()
    }

    /// Seals `fields` as a journal file did (for tests of migrating one).
    #[cfg(test)]
    pub fn seal_v1(&self, fields: &Map<String, Value>) -> String {
        let mut buf = serde_json::to_vec(fields).unwrap();
        let nonce = self
            .key
            .seal_in_place_append_tag(Aad::from(AAD_V1), &mut buf)
            .unwrap();
        let mut out = nonce.as_ref().to_vec();
        out.extend_from_slice(&buf);
        format!("{PREFIX_V1}{}", STANDARD.encode(out))
    }
}

/// Sealing failed (the cipher refused; not expected in practice).
#[derive(Debug, thiserror::Error)]
#[error("a sealed field could not be sealed")]
pub struct SealError;

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
        let sealed = sealer.seal("integrations", &map).unwrap();
        assert!(sealed.starts_with(PREFIX) && !sealed.contains("CANARY"));
        assert_ne!(
            sealed,
            sealer.seal("integrations", &map).unwrap(),
            "a fresh nonce each time"
        );
        let again = Sealer::load(&path).unwrap().unwrap();
        assert_eq!(again.open("integrations", &sealed), Some(map.clone()));
        assert_eq!(again.open("users", &sealed), None, "bound to its table");
        let other = Sealer::create(&dir.path().join("other.key")).unwrap();
        assert_eq!(other.open("integrations", &sealed), None);
        // One character of the ciphertext changed to another (in the middle,
        // where all six bits of a base64 character are data; changing the
        // last one to `A` changed nothing when it was an `A` already).
        let mid = sealed.len() / 2;
        let was = sealed.as_bytes()[mid];
        let mut tampered = sealed.clone();
        tampered.replace_range(mid..=mid, if was == b'A' { "B" } else { "A" });
        assert_ne!(tampered, sealed);
        assert_eq!(again.open("integrations", &tampered), None);
        let v1 = again.seal_v1(&map);
        assert_eq!(again.open_v1(&v1), Some(map.clone()));
        assert_eq!(again.open("integrations", &v1), None);
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
