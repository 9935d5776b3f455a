//! Tenants' bearer tokens, in `<data-dir>/tokens.json`, stored hashed.
//!
//! A token is `pfm_` and 64 hex digits: 32 bytes from the OS's random source
//! (`/dev/urandom`), shown once by `pfm token create` and never stored. The
//! file keeps its SHA-256. A plain (unsalted, fast) hash is the right tool
//! for a 256-bit random secret: salting and slow hashing defend low-entropy
//! passwords against guessing, and a 256-bit token cannot be guessed.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use pfm::error::{Error, Result};

/// The token file inside a data directory.
pub const FILE: &str = "tokens.json";

/// One issued token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    /// The tenant it opens.
    pub tenant: String,
    /// Hex SHA-256 of the token.
    pub sha256: String,
    /// When it was created (RFC 3339).
    pub created: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TokenFile {
    tokens: Vec<TokenEntry>,
}

/// Checks a tenant name: 1–64 characters of `a-z`, `0-9`, `-`, `_` (it
/// names a directory).
pub fn check_tenant(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidConfig(format!(
            "tenant name {name:?}: use 1 to 64 characters of a-z, 0-9, '-' and '_'"
        )))
    }
}

/// Hex SHA-256 of a token.
pub fn hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE)
}

fn read(data_dir: &Path) -> Result<TokenFile> {
    let p = path(data_dir);
    match std::fs::read(&p) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| Error::InvalidState(format!("{}: not a token file: {e}", p.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TokenFile::default()),
        Err(source) => Err(Error::io(&p)(source)),
    }
}

/// Token hash → tenant, as the file says now.
pub fn load(data_dir: &Path) -> Result<HashMap<String, String>> {
    Ok(read(data_dir)?
        .tokens
        .into_iter()
        .map(|t| (t.sha256, t.tenant))
        .collect())
}

/// `pfm serve --bootstrap-tenant`: creates `tenant` with a fresh token when
/// the data directory has no token yet, and returns it (shown once).
pub fn bootstrap(data_dir: &Path, tenant: &str, now: jiff::Timestamp) -> Result<Option<String>> {
    if !load(data_dir)?.is_empty() {
        return Ok(None);
    }
    create(data_dir, tenant, now).map(Some)
}

/// Creates a token for `tenant` (creating the tenant if it is new) and
/// returns it; only its hash is written. The file is replaced atomically
/// and readable by its owner only.
pub fn create(data_dir: &Path, tenant: &str, now: jiff::Timestamp) -> Result<String> {
    check_tenant(tenant)?;
    std::fs::create_dir_all(data_dir).map_err(Error::io(data_dir))?;
    let mut secret = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut secret))
        .map_err(Error::io(Path::new("/dev/urandom")))?;
    let token: String = std::iter::once("pfm_".to_owned())
        .chain(secret.iter().map(|b| format!("{b:02x}")))
        .collect();
    let mut file = read(data_dir)?;
    file.tokens.push(TokenEntry {
        tenant: tenant.to_owned(),
        sha256: hash(&token),
        created: now.to_string(),
    });
    let target = path(data_dir);
    let tmp = target.with_extension("json.tmp");
    // Infallible: the file is plain strings.
    let json = serde_json::to_vec_pretty(&file).expect("token file serializes");
    std::fs::write(&tmp, json).map_err(Error::io(&tmp))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
            .map_err(Error::io(&tmp))?;
    }
    std::fs::rename(&tmp, &target).map_err(Error::io(&target))?;
    Ok(token)
}

/// When the token file last changed (to reload it when a token is unknown).
pub fn modified(data_dir: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path(data_dir))
        .and_then(|m| m.modified())
        .ok()
}
