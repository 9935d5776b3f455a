//! tantivy on the synthetic scaling corpus, timed the way `pfm scale` times
//! pfm: build an index of the facts, run 50 warm-up queries, then time 300 —
//! the whole call: top 50 by BM25 (block-max WAND), then the block (stored
//! text of the best facts, greedy under k = 6 lines and B = 800 characters,
//! formatted like pfm's lines).
//!
//! usage: tantivy-ref FACTS.jsonl QUERIES.jsonl
//!
//! Prints one JSON object with the keys `pfm scale --json` uses (`n`,
//! `queries`, `p50_us`, `p99_us`, `max_us`, `block_lines_total`, …) on stdout,
//! and what the build cost: `add_us` (its wall time per fact, the merge into
//! one segment included), `rss_mb` (the resident set right after it, with
//! the writer gone and the facts as read still held) and `rss_rest_mb` (the
//! resident set once the facts are dropped and glibc's `malloc_trim` has
//! handed its free memory back to the OS, as `pfm scale` reads pfm's at
//! rest with `mi_collect`).
//!
//! Fields text / entities / participants, boosted 1.0 / 2.5 / 2.0 like pfm's
//! BM25F weights (tantivy sums a per-field BM25 instead); tokens lowercased
//! with tantivy's English stop words removed; the index is merged into one
//! segment and read through one searcher, single-threaded.

use std::time::Instant;

use serde::Deserialize;
use tantivy::collector::TopDocs;
use tantivy::indexer::NoMergePolicy;
use tantivy::query::QueryParser;
use tantivy::schema::{
    Field, INDEXED, IndexRecordOption, STORED, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::{Language, LowerCaser, SimpleTokenizer, StopWordFilter, TextAnalyzer};
use tantivy::{Index, IndexWriter, ReloadPolicy, TantivyDocument, doc};

const WARM_UP: usize = 50;
const SHORTLIST: usize = 50;
const K: usize = 6;
const BUDGET: usize = 800;
const HEADER: &str = "[Relevant memory]";

#[derive(Deserialize)]
struct Fact {
    text: String,
    entities: Vec<String>,
    participants: Vec<String>,
    observed_at: i64,
}

#[derive(Deserialize)]
struct Query {
    text: String,
    participants: Vec<String>,
}

type Failure = Box<dyn std::error::Error>;

fn read<T: for<'de> Deserialize<'de>>(path: &str) -> Result<Vec<T>, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("{path}:{}: {e}", i + 1).into()))
        .collect()
}

struct Fields {
    text: Field,
    entities: Field,
    participants: Field,
    observed_at: Field,
}

fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().collect();
    let [_, facts, queries] = &args[..] else {
        return Err("usage: tantivy-ref FACTS.jsonl QUERIES.jsonl".into());
    };
    let facts: Vec<Fact> = read(facts)?;
    let queries: Vec<Query> = read(queries)?;
    if queries.len() <= WARM_UP {
        return Err(format!("need more than {WARM_UP} queries").into());
    }

    let mut schema = Schema::builder();
    let indexing = TextFieldIndexing::default()
        .set_tokenizer("pfm")
        .set_index_option(IndexRecordOption::WithFreqs);
    let indexed = TextOptions::default().set_indexing_options(indexing);
    let fields = Fields {
        text: schema.add_text_field("text", indexed.clone().set_stored()),
        entities: schema.add_text_field("entities", indexed.clone()),
        participants: schema.add_text_field("participants", indexed.set_stored()),
        observed_at: schema.add_i64_field("observed_at", STORED | INDEXED),
    };
    let index = Index::create_in_ram(schema.build());
    index.tokenizers().register(
        "pfm",
        TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(StopWordFilter::new(Language::English).ok_or("no English stop words")?)
            .build(),
    );

    let started = Instant::now();
    let mut writer: IndexWriter = index.writer(256_000_000)?;
    // One explicit merge at the end, and none in the background: a merge the
    // default policy started while the writer flushed would take segments
    // the explicit merge names, and tantivy refuses that merge (seen at
    // 10,000,000 facts, where the 256 MB budget flushes many segments).
    writer.set_merge_policy(Box::new(NoMergePolicy));
    for f in &facts {
        let mut d = doc!(fields.text => f.text.as_str(), fields.observed_at => f.observed_at);
        for e in &f.entities {
            d.add_text(fields.entities, e);
        }
        for p in &f.participants {
            d.add_text(fields.participants, p);
        }
        writer.add_document(d)?;
    }
    writer.commit()?;
    let segments = index.searchable_segment_ids()?;
    if segments.len() > 1 {
        writer.merge(&segments).wait()?;
    }
    writer.wait_merging_threads()?;
    let build_s = started.elapsed().as_secs_f64();
    // `wait_merging_threads` took the writer: what stays is the searchable
    // index and the facts as read, as pfm's row holds its store and the
    // generated facts when it reads its RSS.
    let rss_mb = resident_mib()?;
    let n = facts.len();
    drop(facts);
    // SAFETY: malloc_trim takes a plain size and may run at any time.
    unsafe { malloc_trim(0) };
    let rss_rest_mb = resident_mib()?;
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    let searcher = reader.searcher();
    let mut parser = QueryParser::for_index(
        &index,
        vec![fields.text, fields.entities, fields.participants],
    );
    parser.set_field_boost(fields.entities, 2.5);
    parser.set_field_boost(fields.participants, 2.0);

    let run = |q: &Query| -> Result<(usize, usize), Failure> {
        // Query words only (no operators), like pfm's context + participants.
        let words: String = std::iter::once(q.text.as_str())
            .chain(q.participants.iter().map(String::as_str))
            .flat_map(|s| s.split(|c: char| !c.is_alphanumeric()))
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        let query = parser.parse_query(&words)?;
        let top = searcher.search(&query, &TopDocs::with_limit(SHORTLIST).order_by_score())?;
        let mut block = String::from(HEADER);
        let mut used = HEADER.chars().count();
        let mut lines = 0;
        for (_, address) in top {
            if lines >= K {
                break;
            }
            let d: TantivyDocument = searcher.doc(address)?;
            let line = format_line(&d, &fields);
            let cost = 1 + line.chars().count();
            if used + cost > BUDGET {
                break;
            }
            used += cost;
            lines += 1;
            block.push('\n');
            block.push_str(&line);
        }
        Ok((lines, block.chars().count()))
    };
    for q in &queries[..WARM_UP] {
        run(q)?;
    }
    let mut times = Vec::with_capacity(queries.len() - WARM_UP);
    let (mut lines_total, mut chars_total) = (0, 0);
    for q in &queries[WARM_UP..] {
        let t = Instant::now();
        let (lines, chars) = run(q)?;
        times.push(t.elapsed().as_nanos() as f64 / 1e3);
        lines_total += lines;
        chars_total += chars;
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() as f64 * q).ceil() as usize).clamp(1, times.len()) - 1];
    println!(
        "{}",
        serde_json::json!({
            "engine": "tantivy",
            "n": n,
            "queries": times.len(),
            "p50_us": at(0.5),
            "p99_us": at(0.99),
            "max_us": at(1.0),
            "mean_block_chars": chars_total as f64 / times.len() as f64,
            "block_lines_total": lines_total,
            "segments": searcher.segment_readers().len(),
            "build_s": build_s,
            "add_us": build_s * 1e6 / n.max(1) as f64,
            "rss_mb": rss_mb,
            "rss_rest_mb": rss_rest_mb,
        })
    );
    Ok(())
}

unsafe extern "C" {
    /// glibc: returns the free memory at the heap's top and in its free
    /// pages to the OS.
    fn malloc_trim(pad: usize) -> i32;
}

/// The process's resident set in MiB (`VmRSS` of `/proc/self/status`);
/// `pfm scale` reads its own from the same counter (`statm`'s pages).
fn resident_mib() -> Result<f64, Failure> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .ok_or("/proc/self/status has no VmRSS line")?
        .parse()?;
    Ok(kib / 1024.0)
}

/// `- (YYYY-MM-DD, to P) text`, as pfm's block lines.
fn format_line(d: &TantivyDocument, f: &Fields) -> String {
    let secs = d
        .get_first(f.observed_at)
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    let mut line = format!("- ({}", date(secs));
    for (i, p) in d
        .get_all(f.participants)
        .filter_map(|v| v.as_str())
        .enumerate()
    {
        line.push_str(if i == 0 { ", to " } else { ", " });
        line.push_str(p);
    }
    line.push_str(") ");
    line.push_str(d.get_first(f.text).and_then(|v| v.as_str()).unwrap_or(""));
    line
}

/// The UTC calendar date of Unix seconds (Howard Hinnant's civil_from_days).
fn date(secs: i64) -> String {
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
