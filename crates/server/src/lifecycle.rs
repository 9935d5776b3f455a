//! Tenants as a data directory holds them: a tenant exists when a token
//! names it or its ledger directory (`<data-dir>/tenants/NAME`) exists.
//! Creating, listing and removing them, shared by `pfm tenant` (on a data
//! directory, server running or not) and the lifecycle API of a running
//! server (`/v1/tenants`, which also closes the tenant before removing it:
//! `Tenants::delete`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pfm::config::{ChainOrder, Config};
use pfm::error::{Error, Result};

use crate::durable::{Batch, DurableLedger, Settings};
use crate::tokens::{self, Grant, Scope};

/// One tenant of a data directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenantInfo {
    /// Its name.
    pub name: String,
    /// Tokens that open it.
    pub tokens: usize,
    /// Its ledger directory, if it has one (a tenant whose token was
    /// created but that never served a request has none yet).
    pub dir: Option<PathBuf>,
}

impl TenantInfo {
    /// Bytes of its ledger files on disk.
    pub fn ledger_bytes(&self) -> u64 {
        let Some(dir) = &self.dir else { return 0 };
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.metadata().ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
            .sum()
    }
}

/// Where a tenant's ledger lives.
pub fn tenant_dir(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join("tenants").join(name)
}

/// A tenant's ledger directory, if it has one (a tenant makes it with its
/// ledger file, on its first write: `ledger_file`).
pub fn existing_dir(data_dir: &Path, name: &str) -> Option<PathBuf> {
    Some(tenant_dir(data_dir, name)).filter(|d| d.is_dir())
}

/// Every tenant, by name.
pub fn list(data_dir: &Path) -> Result<Vec<TenantInfo>> {
    let mut out: BTreeMap<String, TenantInfo> = BTreeMap::new();
    fn entry<'a>(out: &'a mut BTreeMap<String, TenantInfo>, name: &str) -> &'a mut TenantInfo {
        out.entry(name.to_owned()).or_insert_with(|| TenantInfo {
            name: name.to_owned(),
            tokens: 0,
            dir: None,
        })
    }
    for t in tokens::list(data_dir)? {
        if t.scope == Scope::Tenant {
            entry(&mut out, &t.tenant).tokens += 1;
        }
    }
    let root = data_dir.join("tenants");
    if let Ok(dirs) = std::fs::read_dir(&root) {
        for dir in dirs.flatten() {
            let name = dir.file_name().to_string_lossy().into_owned();
            if tokens::check_tenant(&name).is_ok() && dir.path().is_dir() {
                entry(&mut out, &name).dir = Some(dir.path());
            }
        }
    }
    Ok(out.into_values().collect())
}

/// One tenant, if it exists (its own directory only, not a scan of every
/// tenant's: a server may hold 100,000).
pub fn find(data_dir: &Path, name: &str) -> Result<Option<TenantInfo>> {
    tokens::check_tenant(name)?;
    let tokens = tokens::list(data_dir)?
        .iter()
        .filter(|t| t.scope == Scope::Tenant && t.tenant == name)
        .count();
    let dir = existing_dir(data_dir, name);
    Ok((tokens > 0 || dir.is_some()).then(|| TenantInfo {
        name: name.to_owned(),
        tokens,
        dir,
    }))
}

/// Creates a tenant with its revision `ordering` and retrieval `settings`
/// (fixed for its life: the ledger records them before its first write)
/// and its first token, which it returns (shown once); `None` if the
/// tenant exists. Two creates of one name race on creating its directory,
/// which only one wins.
pub fn create(
    data_dir: &Path,
    name: &str,
    ordering: ChainOrder,
    settings: Settings,
    now: jiff::Timestamp,
) -> Result<Option<String>> {
    tokens::check_tenant(name)?;
    settings.validate()?;
    crate::files::private_dir(&data_dir.join("tenants"))?;
    let dir = tenant_dir(data_dir, name);
    match std::fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(None),
        Err(e) => return Err(Error::io(&dir)(e)),
    }
    if find(data_dir, name)?.is_some_and(|t| t.tokens > 0) {
        // A token names it already (created before its first request).
        std::fs::remove_dir(&dir).map_err(Error::io(&dir))?;
        return Ok(None);
    }
    let config = Config {
        ordering,
        ..Config::default()
    };
    let (mut store, memory) = DurableLedger::open(&dir, config)?;
    store.write_first(&Batch::full(&memory), settings)?;
    drop((store, memory));
    tokens::create(data_dir, Grant::Tenant(name), now).map(Some)
}

/// Removes a tenant's ledger directory and everything under it. The
/// caller has revoked its tokens and made sure no server holds it open.
pub fn remove_data(dir: &Path) -> Result<()> {
    std::fs::remove_dir_all(dir).map_err(Error::io(dir))
}

/// Makes sure a token names tenant `name`, so that it may be opened (by
/// `pfm mcp`, which serves one tenant of a data directory): creates it with
/// `ordering` if it does not exist, or names a tenant whose tokens were all
/// revoked with a new one (its data kept). The token is not returned:
/// opening the tenant from the data directory needs none, and `pfm token
/// create` makes one to reach it over HTTP. Returns whether it wrote one.
pub fn register(
    data_dir: &Path,
    name: &str,
    ordering: ChainOrder,
    now: jiff::Timestamp,
) -> Result<bool> {
    match find(data_dir, name)? {
        Some(t) if t.tokens > 0 => Ok(false),
        Some(_) => tokens::create(data_dir, Grant::Tenant(name), now).map(|_| true),
        None => create(data_dir, name, ordering, Settings::default(), now).map(|t| t.is_some()),
    }
}
