//! Files and directories the server writes hold tenants' memories and
//! token hashes, so they are private to the user running it: directories
//! 0700, files 0600, whatever the umask.

use std::path::Path;

use pfm::error::{Error, Result};

/// Creates `dir` (and its parents) and makes it owner-only.
pub fn private_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    restrict(dir, 0o700)
}

/// Writes `bytes` to a new owner-only file at `path`.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(Error::io(path))?;
    std::io::Write::write_all(&mut file, bytes).map_err(Error::io(path))?;
    restrict(path, 0o600)
}

/// Makes an existing file or directory owner-only (`mode`, on Unix).
pub fn restrict(path: &Path, mode: u32) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .map_err(Error::io(path))?;
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}
