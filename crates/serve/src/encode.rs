//! Query encoding for the dense and hybrid rankers, done by whoever runs
//! the retrieval: a worker in fresh mode (so Proposition 2's `r` includes
//! it), the calling thread for a fallback or a direct read. Each owns its
//! session (an encoder takes `&mut self`), made on its first dense request
//! from the runtime's [`EncoderFactory`], so no lock is shared and a
//! lexical-only tenant never loads a model.

use std::sync::Arc;

use pfm::error::{Error, Result};
use pfm::retrieve::Request;
use pfm::vector::{Encoder, Vector};

/// Makes one encoder session (e.g. a MiniLM session on one thread).
pub type EncoderFactory = Arc<dyn Fn() -> Result<Box<dyn Encoder>> + Send + Sync>;

/// One thread's query encoder: the factory, and the session once made.
pub struct QueryEncoder {
    factory: Option<EncoderFactory>,
    session: Option<Box<dyn Encoder>>,
}

impl std::fmt::Debug for QueryEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryEncoder")
            .field("factory", &self.factory.is_some())
            .field("session", &self.session.is_some())
            .finish()
    }
}

/// What a dense request is told when the runtime has no encoder.
pub const NO_ENCODER: &str = "this runtime has no query encoder (a server runs one when started \
     with --models DIR, after scripts/fetch-models)";

impl QueryEncoder {
    /// An encoder that makes its session from `factory` when first needed;
    /// without one, a dense request is [`Error::DenseUnavailable`].
    pub fn new(factory: Option<EncoderFactory>) -> Self {
        QueryEncoder {
            factory,
            session: None,
        }
    }

    /// `request` with its query vector when its ranker needs one and it
    /// carries none (`None`: use `request` as it is).
    pub fn vectorize(&mut self, request: &Request) -> Result<Option<Request>> {
        if !request.ranker.needs_vector() || request.vector.is_some() {
            return Ok(None);
        }
        let session = match &mut self.session {
            Some(s) => s,
            None => {
                let factory = self
                    .factory
                    .as_ref()
                    .ok_or_else(|| Error::DenseUnavailable(NO_ENCODER.into()))?;
                self.session.insert(factory()?)
            }
        };
        let text = request
            .ranker
            .query_text(&request.context, &request.participants);
        let v = session.encode(&[&text])?;
        let v = v
            .first()
            .ok_or_else(|| Error::DenseUnavailable("the encoder returned no vector".into()))?;
        Ok(Some(Request {
            vector: Some(Arc::new(Vector::quantize(v))),
            ..request.clone()
        }))
    }
}
