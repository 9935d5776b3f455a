//! The scale harness's outputs: `results.csv`, `results.md` (with the exact
//! command, revision and machine), `latency.svg` (retrieval p50 and p99
//! against store size, log-log, one series per vocabulary, like the paper's
//! Figure 1), `rows.jsonl`, and with `--dense` the crossover table and
//! `crossover.svg` (pfm against the MiniLM retriever and the hybrid).

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;

use super::Row;
pub use crate::run::RunMeta;
use pfm::error::{Error, Result};

/// The CSV columns, in order.
const COLUMNS: &str = "n,vocabulary,queries,p50_us,p99_us,max_us,add_us,rss_mb,rss_rest_mb,heap_mb,longest_posting,mean_block_chars,block_lines_total,commit_visible_p50_us,commit_visible_p99_us,build_s,reference,reference_p50_us,reference_p99_us,reference_max_us,reference_block_lines_total,reference_add_us,reference_rss_mb,reference_rss_rest_mb,dense_embedded,embed_ms_per_fact,encode_p50_us,scan_p50_us,scan_p99_us,dense_p50_us,dense_p99_us,hybrid_p50_us,hybrid_p99_us,vector_bytes_per_fact,int8_recall_at_10";

/// The rows as CSV (a header line, then one line per row).
pub fn csv(rows: &[Row]) -> String {
    let mut out = String::from(COLUMNS);
    out.push('\n');
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{:.2},{:.2},{:.2},{:.2},{:.1},{:.1},{},{},{:.1},{},{:.2},{:.2},{:.2},{},{}",
            r.n,
            r.vocabulary,
            r.queries,
            r.p50_us,
            r.p99_us,
            r.max_us,
            r.add_us,
            r.rss_mb,
            r.rss_rest_mb,
            r.heap_mb.map_or(String::new(), |h| format!("{h:.1}")),
            r.longest_posting,
            r.mean_block_chars,
            r.block_lines_total,
            r.commit_visible_p50_us,
            r.commit_visible_p99_us,
            r.build_s,
            r.reference
                .as_ref()
                .map_or(",,,,,,,".to_owned(), |e| format!(
                    "{},{:.2},{:.2},{:.2},{},{},{},{}",
                    e.engine,
                    e.p50_us,
                    e.p99_us,
                    e.max_us,
                    e.block_lines_total,
                    e.add_us.map_or(String::new(), |a| format!("{a:.2}")),
                    e.rss_mb.map_or(String::new(), |m| format!("{m:.1}")),
                    e.rss_rest_mb.map_or(String::new(), |m| format!("{m:.1}")),
                )),
            r.dense
                .as_ref()
                .map_or(",,,,,,,,,,".to_owned(), |d| format!(
                    "{},{:.3},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.1},{:.4}",
                    d.embedded,
                    d.embed_ms_per_fact,
                    d.encode_p50_us,
                    d.scan_p50_us,
                    d.scan_p99_us,
                    d.dense_p50_us,
                    d.dense_p99_us,
                    d.hybrid_p50_us,
                    d.hybrid_p99_us,
                    d.vector_bytes_per_fact,
                    d.int8_recall_at_10
                )),
        );
    }
    out
}

/// The rows as a markdown table.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| n | vocabulary | p50 (ms) | p99 (ms) | max (ms) | add (ms) | RSS / at rest (MiB) | heap (MiB) | longest posting | commit→visible p50 / p99 (µs) | block chars | block lines |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.4} | {:.0} / {:.0} | {} | {} | {:.1} / {:.1} | {:.0} | {} |",
            r.n,
            r.vocabulary,
            r.p50_us / 1e3,
            r.p99_us / 1e3,
            r.max_us / 1e3,
            r.add_us / 1e3,
            r.rss_mb,
            r.rss_rest_mb,
            r.heap_mb.map_or("–".into(), |h| format!("{h:.0}")),
            r.longest_posting,
            r.commit_visible_p50_us,
            r.commit_visible_p99_us,
            r.mean_block_chars,
            r.block_lines_total,
        );
    }
    out
}

/// The rows that ran a reference engine, side by side with pfm (empty when
/// none did).
pub fn reference_table(rows: &[Row]) -> String {
    let mut out = String::new();
    for r in rows {
        let Some(e) = &r.reference else {
            continue;
        };
        if out.is_empty() {
            out.push_str(
                "| n | vocabulary | engine | pfm p50 / p99 (ms) | engine p50 / p99 (ms) | pfm / engine p50 | pfm / engine p99 | block lines pfm / engine | add µs per fact pfm / engine | RSS MiB pfm / engine | RSS at rest MiB pfm / engine |\n\
                 |---|---|---|---|---|---|---|---|---|---|---|\n",
            );
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.3} / {:.3} | {:.3} / {:.3} | {:.2} | {:.2} | {} / {} | {:.2} / {} | {:.0} / {} | {:.0} / {} |",
            r.n,
            r.vocabulary,
            e.engine,
            r.p50_us / 1e3,
            r.p99_us / 1e3,
            e.p50_us / 1e3,
            e.p99_us / 1e3,
            r.p50_us / e.p50_us,
            r.p99_us / e.p99_us,
            r.block_lines_total,
            e.block_lines_total,
            r.add_us,
            e.add_us.map_or("—".to_owned(), |a| format!("{a:.2}")),
            r.rss_mb,
            e.rss_mb.map_or("—".to_owned(), |m| format!("{m:.0}")),
            r.rss_rest_mb,
            e.rss_rest_mb.map_or("—".to_owned(), |m| format!("{m:.0}")),
        );
    }
    out
}

/// The rows that timed the dense arms, beside pfm (empty when none did).
pub fn crossover_table(rows: &[Row]) -> String {
    let mut out = String::new();
    for r in rows {
        let Some(d) = &r.dense else {
            continue;
        };
        if out.is_empty() {
            out.push_str(
                "| n | vocabulary | pfm p50 / p99 (ms) | encode p50 (ms) | scan p50 / p99 (ms) | dense p50 / p99 (ms) | hybrid p50 / p99 (ms) | dense / pfm p50 | vector bytes / fact | int8 recall@10 |\n\
                 |---|---|---|---|---|---|---|---|---|---|\n",
            );
        }
        let _ = writeln!(
            out,
            "| {} | {} | {:.3} / {:.3} | {:.2} | {:.2} / {:.2} | {:.2} / {:.2} | {:.2} / {:.2} | {:.0} | {:.0} | {:.3} |",
            r.n,
            r.vocabulary,
            r.p50_us / 1e3,
            r.p99_us / 1e3,
            d.encode_p50_us / 1e3,
            d.scan_p50_us / 1e3,
            d.scan_p99_us / 1e3,
            d.dense_p50_us / 1e3,
            d.dense_p99_us / 1e3,
            d.hybrid_p50_us / 1e3,
            d.hybrid_p99_us / 1e3,
            d.dense_p50_us / r.p50_us,
            d.vector_bytes_per_fact,
            d.int8_recall_at_10,
        );
    }
    out
}

/// Per vocabulary, the smallest size at which the dense call's p50 is at
/// or below pfm's (the curves cross), or that they never do in the run.
pub fn crossings(rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    for v in vocabularies(rows) {
        let series: Vec<(&Row, &super::dense::DenseRow)> = rows
            .iter()
            .filter(|r| r.vocabulary == v)
            .filter_map(|r| Some((r, r.dense.as_ref()?)))
            .collect();
        let Some(largest) = series.iter().map(|(r, _)| r.n).max() else {
            continue;
        };
        out.push(
            match series.iter().find(|(r, d)| d.dense_p50_us <= r.p50_us) {
                Some((r, _)) => format!("{v}: the dense call is as fast as pfm's from {} facts", r.n),
                None => {
                    let least = series
                        .iter()
                        .map(|(r, d)| d.dense_p50_us / r.p50_us)
                        .fold(f64::MAX, f64::min);
                    format!(
                        "{v}: no crossing up to {largest} facts (the dense call's p50 stays at least {least:.0}x pfm's)"
                    )
                }
            },
        );
    }
    out
}

/// The rows' build batch sizes, for the report's header: `batches of N`
/// when every row used N.
fn batches(rows: &[Row]) -> String {
    let mut sizes: Vec<usize> = rows.iter().map(|r| r.batch).collect();
    sizes.sort_unstable();
    sizes.dedup();
    match sizes.as_slice() {
        [one] => format!("batches of {one}"),
        _ => "each row's `batch` observations a commit".to_owned(),
    }
}

/// The report: header, table and the paper's Table 9 for comparison.
pub fn markdown(rows: &[Row], meta: &RunMeta) -> String {
    let mut out = String::from("# `pfm scale`: retrieval cost against store size\n\n");
    let _ = writeln!(
        out,
        "`{}` at {} (revision {}) on {}.\n\n\
         Whole retrieval call (shortlist 50, k = 6, B = 800, block text), 300 timed queries after \
         50 warm-ups per row; add = build wall time / facts ({}); RSS = the resident set right \
         after the build, the generator's input still held; at rest = once the input is dropped \
         and the allocator's free memory is handed back to the OS; heap = mimalloc's committed \
         memory right after the build; commit→visible = one new fact from `observe` to a \
         reader's version, {} commits after the build.\n",
        meta.command,
        meta.date,
        meta.revision,
        meta.machine,
        batches(rows),
        super::COMMITS
    );
    out.push_str(&markdown_table(rows));
    let against = reference_table(rows);
    if !against.is_empty() {
        out.push_str(
            "\nThe reference engine on the same facts and queries, run right after each row \
             (ratios below 1: pfm is faster). Its build cost is its own wall time per fact, \
             its merge into one segment included; its RSS is read right after the build with \
             its writer gone, while pfm's store stays writable; each process still holds the \
             facts it indexed. At rest, each has dropped them and handed its allocator's free \
             memory back (pfm: mimalloc's `mi_collect`; tantivy-ref: glibc's \
             `malloc_trim`):\n\n",
        );
        out.push_str(&against);
    }
    let dense = crossover_table(rows);
    if !dense.is_empty() {
        out.push_str(
            "\nThe lexical/dense crossover (`--dense`) on the same stores and queries: encode = MiniLM \
             on the query (one call, two intra-op threads); scan = the `dense_validity` call given the vector \
             (exact int8 scan of every active fact, top 50, block); dense and hybrid = encode plus \
             the call, per query. Fact vectors: the first 1,000 facts embedded by the model, the rest \
             replaying them (the scan's cost does not depend on the values); int8 recall@10 = overlap \
             of the int8 and f32 top 10 over the embedded facts. In these rows the table above's \
             add includes storing the vectors (not the model), and RSS and heap include the vectors \
             and what the model's sessions left allocated. `crossover.svg` plots pfm against \
             dense.\n\n",
        );
        out.push_str(&dense);
        out.push('\n');
        for line in crossings(rows) {
            let _ = writeln!(out, "- {line}");
        }
        out.push_str(
            "\nPaper, Appendix I (CPython, Apple M2): PFM crossed the MiniLM retriever near 20,000 \
             facts (narrow) and 50,000 (wide).\n",
        );
    }
    out.push_str(
        "\nPaper, Table 9 (CPython, Apple M2): p50 0.20 ms at 1k, 2.8 ms at 20k, 22.6 ms at 100k \
         (frozen GC); add 0.14 ms; heap 275 MB at 100k.\n",
    );
    out
}

/// The vocabularies of `rows`, sorted, each once.
fn vocabularies(rows: &[Row]) -> Vec<&str> {
    let mut v: Vec<&str> = rows.iter().map(|r| r.vocabulary.as_str()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// How a series is drawn.
#[derive(Clone, Copy)]
enum Mark {
    /// A line of this width.
    Line(u32),
    /// A cross at each point, no line.
    Crosses,
}

/// One series of a log-log plot: (facts, milliseconds) points.
struct Series {
    label: String,
    colour: RGBAColor,
    mark: Mark,
    points: Vec<(f64, f64)>,
}

/// Draws `series` on log-log axes (facts against milliseconds) as an SVG.
fn loglog(path: &Path, caption: &str, y_desc: &str, series: &[Series]) -> Result<()> {
    let err = |e: String| Error::Io {
        path: path.display().to_string(),
        source: std::io::Error::other(e),
    };
    let points = || series.iter().flat_map(|s| s.points.iter().copied());
    let (n_min, n_max) = points().fold((f64::MAX, 1.0f64), |(lo, hi), (n, _)| {
        (lo.min(n), hi.max(n))
    });
    let (t_min, t_max) = points().fold((f64::MAX, 0.0f64), |(lo, hi), (_, t)| {
        (lo.min(t), hi.max(t))
    });
    let root = SVGBackend::new(path, (800, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(
            (n_min * 0.8..n_max * 1.25).log_scale(),
            (t_min.max(1e-4) * 0.8..t_max * 1.25).log_scale(),
        )
        .map_err(|e| err(e.to_string()))?;
    chart
        .configure_mesh()
        .x_desc("facts in the store")
        .y_desc(y_desc)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for s in series {
        let colour = s.colour;
        match s.mark {
            Mark::Line(width) => chart
                .draw_series(LineSeries::new(
                    s.points.iter().copied(),
                    colour.stroke_width(width),
                ))
                .map_err(|e| err(e.to_string()))?
                .label(s.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(width))
                }),
            Mark::Crosses => chart
                .draw_series(
                    s.points
                        .iter()
                        .map(|&p| Cross::new(p, 4, colour.stroke_width(1))),
                )
                .map_err(|e| err(e.to_string()))?
                .label(s.label.clone())
                .legend(move |(x, y)| Cross::new((x + 10, y), 4, colour.stroke_width(1))),
        };
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))
}

/// Retrieval p50 (line) and p99 (crosses) against store size, one colour
/// per vocabulary, and the reference engine's p50 (thin) where the run has
/// one: the paper's Figure 1 for pfm alone.
pub fn plot(rows: &[Row], path: &Path) -> Result<()> {
    let mut series = Vec::new();
    for (i, v) in vocabularies(rows).into_iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let of = |f: &dyn Fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
            rows.iter()
                .filter(|r| r.vocabulary == v)
                .filter_map(|r| Some((r.n as f64, f(r)? / 1e3)))
                .collect()
        };
        series.push(Series {
            label: format!("{v} p50"),
            colour,
            mark: Mark::Line(2),
            points: of(&|r| Some(r.p50_us)),
        });
        series.push(Series {
            label: format!("{v} p99"),
            colour,
            mark: Mark::Crosses,
            points: of(&|r| Some(r.p99_us)),
        });
        let reference = of(&|r| r.reference.as_ref().map(|e| e.p50_us));
        if let Some(engine) = rows
            .iter()
            .find(|r| r.vocabulary == v)
            .and_then(|r| r.reference.as_ref())
        {
            series.push(Series {
                label: format!("{v} {} p50", engine.engine),
                colour: colour.mix(0.6),
                mark: Mark::Line(1),
                points: reference,
            });
        }
    }
    loglog(
        path,
        "pfm retrieval latency against store size",
        "retrieval (ms)",
        &series,
    )
}

/// The crossover plot: per vocabulary, pfm's p50 (thick), the whole dense
/// call's p50 (encode + scan, medium), the scan alone (thin) and the
/// hybrid's p50 (crosses).
pub fn plot_crossover(rows: &[Row], path: &Path) -> Result<()> {
    let mut series = Vec::new();
    for (i, v) in vocabularies(rows).into_iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let of = |f: &dyn Fn(&Row) -> Option<f64>| -> Vec<(f64, f64)> {
            rows.iter()
                .filter(|r| r.vocabulary == v && r.dense.is_some())
                .filter_map(|r| Some((r.n as f64, f(r)? / 1e3)))
                .collect()
        };
        let dense = |f: fn(&super::dense::DenseRow) -> f64| move |r: &Row| r.dense.as_ref().map(f);
        series.extend([
            Series {
                label: format!("{v} pfm p50"),
                colour,
                mark: Mark::Line(3),
                points: of(&|r| Some(r.p50_us)),
            },
            Series {
                label: format!("{v} dense p50 (encode + scan)"),
                colour: colour.mix(0.7),
                mark: Mark::Line(2),
                points: of(&dense(|d| d.dense_p50_us)),
            },
            Series {
                label: format!("{v} scan alone p50"),
                colour: colour.mix(0.5),
                mark: Mark::Line(1),
                points: of(&dense(|d| d.scan_p50_us)),
            },
            Series {
                label: format!("{v} hybrid p50"),
                colour,
                mark: Mark::Crosses,
                points: of(&dense(|d| d.hybrid_p50_us)),
            },
        ]);
    }
    loglog(
        path,
        "lexical (pfm) against dense (MiniLM, exact scan)",
        "retrieval p50 (ms)",
        &series,
    )
}

/// Writes the run folder.
pub fn write_run(dir: &Path, rows: &[Row], meta: &RunMeta) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(Error::io(dir))?;
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(Error::io(&path))
    };
    write("results.csv", csv(rows))?;
    write("results.md", markdown(rows, meta))?;
    let jsonl: String = rows
        .iter()
        .map(|r| serde_json::to_string(r).map(|s| s + "\n"))
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::InvalidConfig(e.to_string()))?;
    write("rows.jsonl", jsonl)?;
    if rows.len() > 1 {
        plot(rows, &dir.join("latency.svg"))?;
    }
    if rows.iter().filter(|r| r.dense.is_some()).count() > 1 {
        plot_crossover(rows, &dir.join("crossover.svg"))?;
    }
    Ok(())
}
