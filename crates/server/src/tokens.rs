//! Bearer tokens, in `<data-dir>/tokens.json`, stored hashed: a tenant's
//! tokens open its memory; metrics tokens open `GET /metrics` (which names
//! every tenant) and nothing else; admin tokens open the tenant lifecycle
//! (`/v1/tenants`, `/v1/tokens`: create, list, revoke, delete) and no
//! tenant's memory. `pfm token create | list | revoke` edits the file; so
//! does the lifecycle API; a running server rereads it within a second of a
//! change.
//!
//! A token is `pfm_` and 64 hex digits: 32 bytes from the OS's random source
//! (`/dev/urandom`), shown once by `pfm token create` and never stored. The
//! file keeps its SHA-256. A plain (unsalted, fast) hash is the right tool
//! for a 256-bit random secret: salting and slow hashing defend low-entropy
//! passwords against guessing, and a 256-bit token cannot be guessed.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use pfm::error::{Error, Result};

/// The token file inside a data directory.
pub const FILE: &str = "tokens.json";

/// What a token opens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// A tenant's memory (the tenant is named in the entry).
    #[default]
    Tenant,
    /// `GET /metrics` only.
    Metrics,
    /// The tenant lifecycle API only (`/v1/tenants`, `/v1/tokens`).
    Admin,
}

impl Scope {
    /// Its name, as `pfm token list` and the lifecycle API show it.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Tenant => "tenant",
            Scope::Metrics => "metrics",
            Scope::Admin => "admin",
        }
    }
}

/// What a new token is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant<'a> {
    /// A tenant's memory (the tenant is created if new).
    Tenant(&'a str),
    /// `GET /metrics`.
    Metrics,
    /// The tenant lifecycle API.
    Admin,
}

impl Grant<'_> {
    fn scope(self) -> Scope {
        match self {
            Grant::Tenant(_) => Scope::Tenant,
            Grant::Metrics => Scope::Metrics,
            Grant::Admin => Scope::Admin,
        }
    }
}

/// One issued token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    /// The tenant it opens (empty for a metrics or admin token).
    pub tenant: String,
    /// Hex SHA-256 of the token.
    pub sha256: String,
    /// When it was created (RFC 3339).
    pub created: String,
    /// What it opens (files written before scopes hold tenant tokens).
    #[serde(default)]
    pub scope: Scope,
}

impl TokenEntry {
    /// The token's id: the first 12 hex digits of its hash (what
    /// `pfm token list` shows and `pfm token revoke` takes).
    pub fn id(&self) -> &str {
        &self.sha256[..self.sha256.len().min(ID_DIGITS)]
    }
}

/// A token's id (see [`TokenEntry::id`]).
pub fn id_of(token: &str) -> String {
    let mut h = hash(token);
    h.truncate(ID_DIGITS);
    h
}

/// Hex digits of a token id.
const ID_DIGITS: usize = 12;

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

/// Every token as the file says now.
pub fn list(data_dir: &Path) -> Result<Vec<TokenEntry>> {
    Ok(read(data_dir)?.tokens)
}

/// The token file as a server uses it: each scope's token hashes.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Tenant-token hash → tenant.
    pub tenants: HashMap<String, String>,
    /// Metrics-token hashes.
    pub metrics: HashSet<String>,
    /// Admin-token hashes.
    pub admins: HashSet<String>,
}

/// The tokens as the file says now.
pub fn load(data_dir: &Path) -> Result<Loaded> {
    let mut loaded = Loaded::default();
    for t in read(data_dir)?.tokens {
        match t.scope {
            Scope::Tenant => {
                loaded.tenants.insert(t.sha256, t.tenant);
            }
            Scope::Metrics => {
                loaded.metrics.insert(t.sha256);
            }
            Scope::Admin => {
                loaded.admins.insert(t.sha256);
            }
        }
    }
    Ok(loaded)
}

/// `pfm serve --bootstrap-tenant`: creates `tenant` with a fresh token when
/// the data directory has no token yet, and returns it (shown once).
pub fn bootstrap(data_dir: &Path, tenant: &str, now: jiff::Timestamp) -> Result<Option<String>> {
    if !load(data_dir)?.tenants.is_empty() {
        return Ok(None);
    }
    create(data_dir, Grant::Tenant(tenant), now).map(Some)
}

/// Creates a token for what `grant` names (a tenant's token creates the
/// tenant if it is new) and returns it; only its hash is written.
pub fn create(data_dir: &Path, grant: Grant<'_>, now: jiff::Timestamp) -> Result<String> {
    let mut tokens = create_many(data_dir, &[grant], now)?;
    // Infallible: one token per name asked for.
    Ok(tokens.pop().expect("one token"))
}

/// [`create`] for many at once, in one rewrite of the file (registering
/// 100,000 tenants one `create` at a time would rewrite a growing file
/// 100,000 times); the tokens in the order of `tenants`.
pub fn create_many(
    data_dir: &Path,
    grants: &[Grant<'_>],
    now: jiff::Timestamp,
) -> Result<Vec<String>> {
    for grant in grants {
        if let Grant::Tenant(tenant) = grant {
            check_tenant(tenant)?;
        }
    }
    crate::files::private_dir(data_dir)?;
    let random = Path::new("/dev/urandom");
    let mut source = std::fs::File::open(random).map_err(Error::io(random))?;
    let _lock = edit_lock(data_dir)?;
    let mut file = read(data_dir)?;
    let created = now.to_string();
    let mut out = Vec::with_capacity(grants.len());
    for grant in grants {
        let mut secret = [0u8; 32];
        source.read_exact(&mut secret).map_err(Error::io(random))?;
        let token: String = std::iter::once("pfm_".to_owned())
            .chain(secret.iter().map(|b| format!("{b:02x}")))
            .collect();
        let tenant = match grant {
            Grant::Tenant(tenant) => tenant,
            Grant::Metrics | Grant::Admin => "",
        };
        file.tokens.push(TokenEntry {
            tenant: tenant.to_owned(),
            sha256: hash(&token),
            created: created.clone(),
            scope: grant.scope(),
        });
        out.push(token);
    }
    write(data_dir, &file)?;
    Ok(out)
}

/// Checks a token id as `revoke` takes it (at least 6 hex digits of one)
/// and returns it in lower case.
pub fn check_id(id: &str) -> Result<String> {
    if id.len() < 6 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::InvalidConfig(format!(
            "token id {id:?}: give at least 6 hex digits of an id (`pfm token list`, or GET /v1/tenants/{{tenant}}/tokens)"
        )));
    }
    Ok(id.to_ascii_lowercase())
}

/// Revokes the token whose id starts with `id` (see [`check_id`]; it must
/// match at most one token) or, with `tenant`, every token of that tenant;
/// returns the revoked entries, none if nothing matched (then the file is
/// not rewritten). A running server stops accepting them within a second.
pub fn revoke(data_dir: &Path, id: Option<&str>, tenant: Option<&str>) -> Result<Vec<TokenEntry>> {
    let _lock = edit_lock(data_dir)?;
    let mut file = read(data_dir)?;
    let (revoked, kept): (Vec<_>, Vec<_>) = match (id, tenant) {
        (Some(id), None) => {
            let id = check_id(id)?;
            let (hit, kept): (Vec<_>, Vec<_>) = file
                .tokens
                .into_iter()
                .partition(|t| t.sha256.starts_with(&id));
            if hit.len() > 1 {
                return Err(Error::InvalidConfig(format!(
                    "token id {id} matches {} tokens: give more digits",
                    hit.len()
                )));
            }
            (hit, kept)
        }
        (None, Some(tenant)) => file
            .tokens
            .into_iter()
            .partition(|t| t.scope == Scope::Tenant && t.tenant == tenant),
        _ => {
            return Err(Error::InvalidConfig(
                "revoke takes exactly one of --id and --tenant".into(),
            ));
        }
    };
    if revoked.is_empty() {
        return Ok(revoked);
    }
    file.tokens = kept;
    write(data_dir, &file)?;
    Ok(revoked)
}

/// Holds `<data-dir>/tokens.lock` exclusively (an OS file lock, released
/// when the returned file is dropped, or when its process dies) around a
/// read-modify-write of the token file: two `pfm token create`s, or a
/// `pfm load --tenants` beside them, would otherwise each write the file
/// they read and lose the other's token.
fn edit_lock(data_dir: &Path) -> Result<std::fs::File> {
    let path = data_dir.join("tokens.lock");
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&path).map_err(Error::io(&path))?;
    file.lock().map_err(Error::io(&path))?;
    Ok(file)
}

/// Replaces the token file atomically, readable by its owner only.
fn write(data_dir: &Path, file: &TokenFile) -> Result<()> {
    let target = path(data_dir);
    let tmp = target.with_extension("json.tmp");
    // Infallible: the file is plain strings.
    let json = serde_json::to_vec_pretty(file).expect("token file serializes");
    crate::files::write_private(&tmp, &json)?;
    std::fs::rename(&tmp, &target).map_err(Error::io(&target))
}

/// When the token file last changed (to reload it when a token is unknown).
pub fn modified(data_dir: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path(data_dir))
        .and_then(|m| m.modified())
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Creates from many threads at once (each its own read-modify-write of
    /// the file) lose no token.
    #[test]
    fn concurrent_creates_lose_no_token() {
        let dir = std::env::temp_dir().join(format!("pfm-tokens-race-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let tokens: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|t| {
                    let dir = &dir;
                    s.spawn(move || {
                        (0..10)
                            .map(|i| {
                                let name = format!("t{t}n{i}");
                                create(dir, Grant::Tenant(&name), jiff::Timestamp::now()).unwrap()
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        let by_hash = load(&dir).unwrap().tenants;
        assert_eq!(by_hash.len(), 80);
        assert!(tokens.iter().all(|t| by_hash.contains_key(&hash(t))));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
