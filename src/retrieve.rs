//! A retrieval request and the read path: a pure function of one
//! [`IndexVersion`] and one [`Request`].

use std::cell::RefCell;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::block::{Block, MIN_BUDGET};
use crate::disclose::Disclose;
use crate::error::{Error, Result, check_no_control};
use crate::index::{Corpus, IndexVersion, Segment, SegmentView};
use crate::ledger::AsOf;
use crate::limits::{MAX_CONTEXT_BYTES, MAX_NAMES, check_names};
use crate::rank::scorer::{Cancel, Query};
use crate::rank::{Ranker, Recency, Scratch, shortlist};
use crate::rules::{self, Rules};
use crate::time::WallTime;
use crate::vector::Vector;

/// What an agent asks memory for before it generates.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Local context: the unfinished message.
    pub context: String,
    /// Participants `P_t` of the conversation.
    #[serde(default)]
    pub participants: Vec<String>,
    /// When the request is made (recency and usage are measured to it).
    pub at: WallTime,
    /// At most this many facts.
    #[serde(default = "default_k")]
    pub k: usize,
    /// At most this many characters in the whole block.
    #[serde(default = "default_budget")]
    pub budget: usize,
    /// Candidates scored before selection.
    #[serde(default = "default_shortlist")]
    pub shortlist: usize,
    /// The retrieval arm.
    #[serde(default)]
    pub ranker: Ranker,
    /// How recency decays for this request (`fixed`, `span`, `off`);
    /// absent: the store's default ([`crate::config::ScoreParams::recency`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recency: Option<Recency>,
    /// Identity and abstention rules applied to the shortlist.
    #[serde(default)]
    pub rules: Rules,
    /// Provenance to show beside each value (`["support", "alternatives",
    /// "history"]`); none by default, so the block is the paper's format.
    #[serde(default, skip_serializing_if = "Disclose::is_none")]
    pub disclose: Disclose,
    /// The embedding of [`Ranker::query_text`], for a dense or hybrid
    /// ranker: made by whoever runs the request (a retrieval worker owns an
    /// encoder), never sent over the wire.
    #[serde(skip)]
    pub vector: Option<Arc<Vector>>,
}

fn default_k() -> usize {
    6
}
fn default_budget() -> usize {
    800
}
fn default_shortlist() -> usize {
    50
}

impl Request {
    /// A request with the paper's defaults (k = 6, B = 800, shortlist 50, PFM).
    pub fn new(context: impl Into<String>, at: WallTime) -> Self {
        Request {
            context: context.into(),
            participants: Vec::new(),
            at,
            k: default_k(),
            budget: default_budget(),
            shortlist: default_shortlist(),
            ranker: Ranker::pfm(),
            recency: None,
            rules: Rules::NONE,
            disclose: Disclose::NONE,
            vector: None,
        }
    }

    /// Sets the participants.
    pub fn with_participants<S: Into<String>>(
        mut self,
        participants: impl IntoIterator<Item = S>,
    ) -> Self {
        self.participants = participants.into_iter().map(Into::into).collect();
        self
    }

    /// Sets `k`.
    pub fn with_k(mut self, k: usize) -> Self {
        self.k = k;
        self
    }

    /// Sets the character budget.
    pub fn with_budget(mut self, budget: usize) -> Self {
        self.budget = budget;
        self
    }

    /// Sets the ranker.
    pub fn with_ranker(mut self, ranker: Ranker) -> Self {
        self.ranker = ranker;
        self
    }

    /// Sets how recency decays (see [`Request::recency`]).
    pub fn with_recency(mut self, recency: Recency) -> Self {
        self.recency = Some(recency);
        self
    }

    /// Sets the query's embedding (see [`Request::vector`]).
    pub fn with_vector(mut self, vector: Arc<Vector>) -> Self {
        self.vector = Some(vector);
        self
    }

    /// Sets the disclosure modes.
    pub fn with_disclose(mut self, disclose: Disclose) -> Self {
        self.disclose = disclose;
        self
    }

    /// Sets the identity and abstention rules.
    pub fn with_rules(mut self, rules: Rules) -> Self {
        self.rules = rules;
        self
    }

    /// Checks the request: `k >= 1`, a budget that holds a line, clean
    /// text within [`MAX_CONTEXT_BYTES`], at most [`MAX_NAMES`] valid
    /// participant names, rule thresholds in range.
    pub fn validate(&self) -> Result<()> {
        if self.k == 0 {
            return Err(Error::ZeroK);
        }
        if self.budget < MIN_BUDGET {
            return Err(Error::BudgetTooSmall {
                budget: self.budget,
                min: MIN_BUDGET,
            });
        }
        if self.shortlist == 0 {
            return Err(Error::InvalidConfig("shortlist must be >= 1".into()));
        }
        if self.context.len() > MAX_CONTEXT_BYTES {
            return Err(Error::ContextTooLong {
                len: self.context.len(),
                max: MAX_CONTEXT_BYTES,
            });
        }
        check_no_control("context", &self.context)?;
        self.at.checked("at")?;
        check_names("participant", &self.participants, MAX_NAMES)?;
        self.rules.validate()
    }
}

/// Retrieves a block with caller-owned scratch buffers (one per thread).
pub fn retrieve_with(
    version: &IndexVersion,
    request: &Request,
    scratch: &mut Scratch,
) -> Result<Block> {
    retrieve_cancellable(version, request, None, scratch)
}

/// [`retrieve_with`] that stops with [`Error::Cancelled`] once `cancel` says
/// so (checked before scoring, between query terms and before selection).
pub fn retrieve_cancellable(
    version: &IndexVersion,
    request: &Request,
    cancel: Option<&dyn Cancel>,
    scratch: &mut Scratch,
) -> Result<Block> {
    request.validate()?;
    let query = Query {
        context: &request.context,
        participants: &request.participants,
        at: request.at,
        cancel,
        vector: request.vector.as_deref(),
        recency: request.recency,
    };
    let list = shortlist(
        version,
        query,
        &request.ranker,
        request.shortlist.max(request.k),
        scratch,
    )?;
    if cancel.is_some_and(Cancel::is_cancelled) {
        return Err(Error::Cancelled);
    }
    Ok(rules::select(
        version,
        &query,
        &request.rules,
        list,
        request.k,
        request.budget,
        request.disclose,
    ))
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Retrieves a block using this thread's scratch buffers.
pub fn retrieve(version: &IndexVersion, request: &Request) -> Result<Block> {
    SCRATCH.with(|s| retrieve_with(version, request, &mut s.borrow_mut()))
}

/// Retrieves from `version` as the store was at `as_of` (transaction time):
/// the facts its timeline says were active then, indexed on the fly (a
/// build of that view per call), ranked with validity on. A pure function
/// of one published version, so an as-of read never needs the writer.
pub fn retrieve_as_of(version: &IndexVersion, request: &Request, as_of: AsOf) -> Result<Block> {
    request.validate()?;
    let docs = version.timeline.active_at(as_of, &version.graph);
    let segment = Segment::build(docs, &version.params);
    let past = IndexVersion {
        active: Corpus::from_views(vec![SegmentView::new(Arc::new(segment))]),
        history: None,
        past: Some(as_of),
        ..version.clone()
    };
    let mut ranker = request.ranker.clone();
    ranker.validity = true;
    retrieve(
        &past,
        &Request {
            ranker,
            ..request.clone()
        },
    )
}
