//! Another engine timed on exactly the data of a row (`pfm scale
//! --reference BIN`), so that the targets of `../shared/DESIGN.md` ("faster
//! than tantivy on the same corpus, in the same run") are checked side by
//! side rather than against numbers from another day.
//!
//! The engine is any binary called as `BIN FACTS.jsonl QUERIES.jsonl` (the
//! spec's JSONL) that prints one JSON object with the keys of [`Reference`]
//! on stdout; `scale/tantivy-ref` is tantivy's.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::Reference;
use pfm::error::{Error, Result};
use pfm_synth::Vocabulary;

/// Writes the synthetic corpus of a row — the same facts and queries
/// [`super::measure`] generates — as `facts.jsonl` and `queries.jsonl` in
/// `dir`.
pub fn write_corpus(
    dir: &Path,
    n: u64,
    seed: u64,
    vocabulary: Vocabulary,
) -> Result<(PathBuf, PathBuf)> {
    let (facts, queries) = pfm_synth::generate(n, seed, vocabulary, pfm_synth::DEFAULT_QUERIES);
    std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    let write = |name: &str, lines: &mut dyn Iterator<Item = String>| {
        let path = dir.join(name);
        let file = std::fs::File::create(&path).map_err(Error::io(&path))?;
        let mut out = std::io::BufWriter::new(file);
        for line in lines {
            writeln!(out, "{line}").map_err(Error::io(&path))?;
        }
        out.flush().map_err(Error::io(&path))?;
        Ok::<_, Error>(path)
    };
    let f = write("facts.jsonl", &mut facts.iter().map(|f| f.to_json_line()))?;
    let q = write(
        "queries.jsonl",
        &mut queries.iter().map(|q| q.to_json_line()),
    )?;
    Ok((f, q))
}

/// Runs the engine on the files and reads its row.
pub fn run(bin: &Path, facts: &Path, queries: &Path) -> Result<Reference> {
    let output = std::process::Command::new(bin)
        .arg(facts)
        .arg(queries)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(Error::io(bin))?;
    let shown = bin.display();
    if !output.status.success() {
        return Err(Error::InvalidConfig(format!(
            "reference engine {shown} failed ({})",
            output.status
        )));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut reference: Reference = serde_json::from_str(stdout.trim()).map_err(|e| {
        Error::InvalidConfig(format!(
            "reference engine {shown} printed {:?}, not one JSON row: {e}",
            stdout.trim()
        ))
    })?;
    if reference.engine.is_empty() {
        reference.engine = bin
            .file_name()
            .map_or_else(|| shown.to_string(), |f| f.to_string_lossy().into_owned());
    }
    Ok(reference)
}
