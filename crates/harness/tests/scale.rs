//! The scale harness measures what it says on small stores: the same corpus
//! through the generator and through the spec's JSONL files gives the same
//! blocks, and the run folder holds the CSV, markdown, rows and plot.

use std::sync::atomic::{AtomicUsize, Ordering};

use pfm_harness::scale::{self, Corpus, MemoryProbe, NoProbe, RowOptions, report};
use pfm_synth::Vocabulary;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pfm-scale-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A probe that counts [`MemoryProbe::release_free`] calls.
#[derive(Default)]
struct CountingProbe {
    released: AtomicUsize,
}

impl MemoryProbe for CountingProbe {
    fn heap_bytes(&self) -> Option<usize> {
        None
    }

    fn release_free(&self) {
        self.released.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn generated_and_file_corpora_give_the_same_blocks() {
    let n = 600;
    let probe = CountingProbe::default();
    let row = scale::measure(
        Corpus::Synthetic {
            n,
            seed: 7,
            vocabulary: Vocabulary::Wide,
        },
        &probe,
        None,
        &RowOptions::default(),
    )
    .unwrap();
    assert_eq!(
        (row.n, row.queries),
        (n, pfm_synth::DEFAULT_QUERIES - scale::WARM_UP)
    );
    assert!(row.block_lines_total > 0 && row.block_lines_total <= 6 * row.queries);
    assert!(row.mean_block_chars > 0.0 && row.mean_block_chars <= 800.0);
    assert!(row.longest_posting > 0 && row.longest_posting <= n);
    assert!(row.p50_us > 0.0 && row.p50_us <= row.p99_us && row.p99_us <= row.max_us);
    assert!(row.commit_visible_p50_us > 0.0 && row.heap_mb.is_none());
    assert_eq!(
        probe.released.load(Ordering::Relaxed),
        1,
        "the free memory is handed back once, before the resting RSS is read"
    );
    assert!(row.rss_mb > 0.0 && row.rss_rest_mb > 0.0);

    let dir = temp_dir("files");
    let (facts, queries) = pfm_synth::generate(n, 7, Vocabulary::Wide, pfm_synth::DEFAULT_QUERIES);
    let write = |name: &str, lines: Vec<String>| {
        let path = dir.join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    };
    let fpath = write(
        "facts.jsonl",
        facts.iter().map(|f| f.to_json_line()).collect(),
    );
    let qpath = write(
        "queries.jsonl",
        queries.iter().map(|q| q.to_json_line()).collect(),
    );
    let from_files = scale::measure(
        Corpus::Files {
            facts: pfm_synth::read_facts(&fpath).unwrap(),
            queries: pfm_synth::read_queries(&qpath).unwrap(),
        },
        &NoProbe,
        None,
        &RowOptions::default(),
    )
    .unwrap();
    assert_eq!(from_files.vocabulary, "file");
    assert_eq!(from_files.block_lines_total, row.block_lines_total);
    assert_eq!(from_files.mean_block_chars, row.mean_block_chars);
    assert_eq!(from_files.longest_posting, row.longest_posting);

    // Too few queries to time anything is an error, not a panic.
    let err = scale::measure(
        Corpus::Files {
            facts: facts.clone(),
            queries: queries[..scale::WARM_UP].to_vec(),
        },
        &NoProbe,
        None,
        &RowOptions::default(),
    );
    assert!(err.is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_build_batch_changes_how_the_store_is_committed_not_what_it_serves() {
    let corpus = || Corpus::Synthetic {
        n: 900,
        seed: 7,
        vocabulary: Vocabulary::Narrow,
    };
    let with = |batch| {
        let options = RowOptions {
            batch,
            ..RowOptions::default()
        };
        scale::measure(corpus(), &NoProbe, None, &options)
    };
    let default = with(scale::BATCH).unwrap();
    let small = with(7).unwrap();
    assert_eq!((default.batch, small.batch), (scale::BATCH, 7));
    assert_eq!(small.block_lines_total, default.block_lines_total);
    assert_eq!(small.mean_block_chars, default.mean_block_chars);
    assert_eq!(small.longest_posting, default.longest_posting);
    let err = with(0).unwrap_err();
    assert!(err.to_string().contains("batch 0"), "{err}");
}

/// One measured row per (size, vocabulary) of the seed-7 corpus.
fn synthetic_rows(specs: &[(u64, Vocabulary)], dense: bool) -> Vec<scale::Row> {
    specs
        .iter()
        .map(|&(n, vocabulary)| {
            let corpus = Corpus::Synthetic {
                n,
                seed: 7,
                vocabulary,
            };
            scale::measure(
                corpus,
                &NoProbe,
                None,
                &RowOptions {
                    dense,
                    ..RowOptions::default()
                },
            )
            .unwrap()
        })
        .collect()
}

fn meta(command: &str) -> report::RunMeta {
    report::RunMeta {
        command: command.into(),
        revision: "test".into(),
        machine: "test".into(),
        date: "2026-11-30 00:00 UTC".into(),
    }
}

#[test]
fn the_run_folder_holds_csv_markdown_rows_and_plot() {
    let rows = synthetic_rows(
        &[
            (200, Vocabulary::Wide),
            (400, Vocabulary::Wide),
            (200, Vocabulary::Narrow),
        ],
        false,
    );
    let dir = temp_dir("run");
    let meta = meta("pfm scale --sizes 200,400");
    report::write_run(&dir, &rows, &meta).unwrap();
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + rows.len());
    assert!(csv.starts_with("n,vocabulary,queries,p50_us"));
    let md = std::fs::read_to_string(dir.join("results.md")).unwrap();
    assert!(md.contains("pfm scale --sizes 200,400") && md.contains("| 400 | wide |"));
    let jsonl = std::fs::read_to_string(dir.join("rows.jsonl")).unwrap();
    let back: Vec<scale::Row> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(back.len(), rows.len());
    let svg = std::fs::read_to_string(dir.join("latency.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("wide p50") && svg.contains("narrow p50"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--dense` on small stores (the models come from `scripts/fetch-models`,
/// which the README's test command runs first): both arms are timed on the
/// row's store, the embedded facts are the row's own, and the report gains
/// the crossover table and plot.
#[test]
fn dense_rows_time_the_minilm_retriever_on_the_same_store() {
    let rows = synthetic_rows(&[(150, Vocabulary::Wide), (300, Vocabulary::Wide)], true);
    for row in &rows {
        let d = row.dense.as_ref().expect("a dense row");
        assert_eq!(d.embedded as u64, row.n.min(scale::dense::EMBEDDED as u64));
        assert!(d.encode_p50_us > 0.0 && d.scan_p50_us > 0.0);
        // Per query, the whole call is the encoding plus the call.
        assert!(d.dense_p50_us >= d.encode_p50_us && d.dense_p99_us >= d.dense_p50_us);
        assert!(d.hybrid_p50_us >= d.encode_p50_us);
        // One int8 row of 384 components and its scale, at least.
        assert!(d.vector_bytes_per_fact >= (pfm_dense::DIM + 4) as f64);
        assert!(d.int8_recall_at_10 > 0.5 && d.int8_recall_at_10 <= 1.0);
        // The lexical row is still measured on the same store.
        assert!(row.block_lines_total > 0 && row.p50_us > 0.0);
    }
    let dir = temp_dir("dense");
    let meta = meta("pfm scale --dense");
    report::write_run(&dir, &rows, &meta).unwrap();
    let md = std::fs::read_to_string(dir.join("results.md")).unwrap();
    assert!(md.contains("int8 recall@10") && md.contains("wide: "));
    let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
    let columns = csv.lines().next().unwrap().split(',').count();
    assert!(csv.lines().all(|l| l.split(',').count() == columns));
    let svg = std::fs::read_to_string(dir.join("crossover.svg")).unwrap();
    assert!(svg.contains("wide dense p50") && svg.contains("wide pfm p50"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A stand-in reference engine: a shell script that reads the two files it
/// is given and reports their line counts in its row.
fn fake_engine(dir: &std::path::Path, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("engine.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_reference_engine_is_timed_on_the_rows_own_files() {
    let dir = temp_dir("reference");
    let (facts, queries) =
        scale::reference::write_corpus(&dir.join("corpus"), 300, 7, Vocabulary::Narrow).unwrap();
    let (f, q) = pfm_synth::generate(300, 7, Vocabulary::Narrow, pfm_synth::DEFAULT_QUERIES);
    assert_eq!(
        pfm_synth::read_facts(&facts).unwrap().len(),
        f.len(),
        "the facts the row is built from"
    );
    let written = std::fs::read_to_string(&queries).unwrap();
    assert_eq!(written.lines().next().unwrap(), q[0].to_json_line());
    assert_eq!(written.lines().count(), q.len());

    let engine = fake_engine(
        &dir,
        r#"echo "{\"engine\": \"fake\", \"p50_us\": 2.5, \"p99_us\": 4, \"max_us\": 9, \"block_lines_total\": $(cat "$1" | wc -l)$(cat "$2" | wc -l), \"add_us\": 1.5, \"rss_mb\": 42, \"rss_rest_mb\": 30}""#,
    );
    let got = scale::reference::run(&engine, &facts, &queries).unwrap();
    assert_eq!(got.engine, "fake");
    assert_eq!((got.p50_us, got.p99_us, got.max_us), (2.5, 4.0, 9.0));
    assert_eq!(
        (got.add_us, got.rss_mb, got.rss_rest_mb),
        (Some(1.5), Some(42.0), Some(30.0))
    );
    assert_eq!(
        got.block_lines_total.to_string(),
        format!("{}{}", f.len(), q.len()),
        "the engine read both files"
    );

    // Side by side in the report.
    let mut row = scale::measure(
        Corpus::Files {
            facts: pfm_synth::read_facts(&facts).unwrap(),
            queries: pfm_synth::read_queries(&queries).unwrap(),
        },
        &NoProbe,
        None,
        &RowOptions::default(),
    )
    .unwrap();
    row.reference = Some(got);
    let md = report::reference_table(std::slice::from_ref(&row));
    assert!(md.contains("| fake |") && md.lines().count() == 3, "{md}");
    assert!(
        md.contains(" / 1.50 | ") && md.contains(" / 42 | ") && md.ends_with(" / 30 |\n"),
        "build cost and RSS side by side: {md}"
    );
    let csv = report::csv(std::slice::from_ref(&row));
    // The reference columns, then the 11 empty columns of a row without --dense.
    let tail = format!(
        ",fake,2.50,4.00,9.00,{}{},1.50,42.0,30.0,{}",
        f.len(),
        q.len(),
        ",".repeat(10)
    );
    assert!(csv.lines().nth(1).unwrap().ends_with(&tail), "{csv}");
    assert_eq!(
        report::reference_table(&[scale::Row {
            reference: None,
            ..row
        }]),
        ""
    );

    // An engine that fails or prints something else is an error naming it.
    let failing = fake_engine(&dir, "exit 3");
    let err = scale::reference::run(&failing, &facts, &queries).unwrap_err();
    assert!(err.to_string().contains("engine.sh"), "{err}");
    let chatty = fake_engine(&dir, "echo hello");
    let err = scale::reference::run(&chatty, &facts, &queries).unwrap_err();
    assert!(err.to_string().contains("not one JSON row"), "{err}");
    let missing = scale::reference::run(&dir.join("no-such-engine"), &facts, &queries);
    assert!(missing.is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_row_times_the_recency_it_was_asked_for_and_says_so() {
    use pfm::rank::Recency;
    let corpus = || Corpus::Synthetic {
        n: 300,
        seed: 7,
        vocabulary: Vocabulary::Narrow,
    };
    let default = scale::measure(corpus(), &NoProbe, None, &RowOptions::default()).unwrap();
    let fixed = scale::measure(
        corpus(),
        &NoProbe,
        None,
        &RowOptions {
            recency: Some(Recency::Fixed),
            ..RowOptions::default()
        },
    )
    .unwrap();
    assert_eq!(default.recency, None);
    assert_eq!(fixed.recency, Some(Recency::Fixed));
    // The row's JSON carries it, so a report can tell the runs apart.
    let json = serde_json::to_string(&fixed).unwrap();
    assert!(json.contains("\"recency\":\"fixed\""), "{json}");
}
