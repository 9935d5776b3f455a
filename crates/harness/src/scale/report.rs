//! The scale harness's outputs: `results.csv`, `results.md` (with the exact
//! command, revision and machine), `latency.svg` (retrieval p50 and p99
//! against store size, log-log, one series per vocabulary, like the paper's
//! Figure 1) and `rows.jsonl`.

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;

use super::Row;
pub use crate::run::RunMeta;
use pfm::error::{Error, Result};

/// The CSV columns, in order.
const COLUMNS: &str = "n,vocabulary,queries,p50_us,p99_us,max_us,add_us,rss_mb,heap_mb,longest_posting,mean_block_chars,block_lines_total,commit_visible_p50_us,commit_visible_p99_us,build_s,reference,reference_p50_us,reference_p99_us,reference_max_us,reference_block_lines_total";

/// The rows as CSV (a header line, then one line per row).
pub fn csv(rows: &[Row]) -> String {
    let mut out = String::from(COLUMNS);
    out.push('\n');
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{:.2},{:.2},{:.2},{:.2},{:.1},{},{},{:.1},{},{:.2},{:.2},{:.2},{}",
            r.n,
            r.vocabulary,
            r.queries,
            r.p50_us,
            r.p99_us,
            r.max_us,
            r.add_us,
            r.rss_mb,
            r.heap_mb.map_or(String::new(), |h| format!("{h:.1}")),
            r.longest_posting,
            r.mean_block_chars,
            r.block_lines_total,
            r.commit_visible_p50_us,
            r.commit_visible_p99_us,
            r.build_s,
            r.reference.as_ref().map_or(",,,,".to_owned(), |e| format!(
                "{},{:.2},{:.2},{:.2},{}",
                e.engine, e.p50_us, e.p99_us, e.max_us, e.block_lines_total
            )),
        );
    }
    out
}

/// The rows as a markdown table.
pub fn markdown_table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| n | vocabulary | p50 (ms) | p99 (ms) | max (ms) | add (ms) | RSS (MiB) | heap (MiB) | longest posting | commit→visible p50 / p99 (µs) | block chars | block lines |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.4} | {:.0} | {} | {} | {:.1} / {:.1} | {:.0} | {} |",
            r.n,
            r.vocabulary,
            r.p50_us / 1e3,
            r.p99_us / 1e3,
            r.max_us / 1e3,
            r.add_us / 1e3,
            r.rss_mb,
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
                "| n | vocabulary | engine | pfm p50 / p99 (ms) | engine p50 / p99 (ms) | pfm / engine p50 | pfm / engine p99 | block lines pfm / engine |\n\
                 |---|---|---|---|---|---|---|---|\n",
            );
        }
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.3} / {:.3} | {:.3} / {:.3} | {:.2} | {:.2} | {} / {} |",
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
        );
    }
    out
}

/// The report: header, table and the paper's Table 9 for comparison.
pub fn markdown(rows: &[Row], meta: &RunMeta) -> String {
    let mut out = String::from("# `pfm scale`: retrieval cost against store size\n\n");
    let _ = writeln!(
        out,
        "`{}` at {} (revision {}) on {}.\n\n\
         Whole retrieval call (shortlist 50, k = 6, B = 800, block text), 300 timed queries after \
         50 warm-ups per row; add = build wall time / facts (batches of 1,000); heap = mimalloc's \
         committed memory; commit→visible = one new fact from `observe` to a reader's version, {} \
         commits after the build.\n",
        meta.command,
        meta.date,
        meta.revision,
        meta.machine,
        super::COMMITS
    );
    out.push_str(&markdown_table(rows));
    let against = reference_table(rows);
    if !against.is_empty() {
        out.push_str(
            "\nThe reference engine on the same facts and queries, run right after each row \
             (ratios below 1: pfm is faster):\n\n",
        );
        out.push_str(&against);
    }
    out.push_str(
        "\nPaper, Table 9 (CPython, Apple M2): p50 0.20 ms at 1k, 2.8 ms at 20k, 22.6 ms at 100k \
         (frozen GC); add 0.14 ms; heap 275 MB at 100k.\n",
    );
    out
}

/// Draws retrieval p50 (solid) and p99 (dashed markers) against store size
/// on log-log axes, one colour per vocabulary, as an SVG.
pub fn plot(rows: &[Row], path: &Path) -> Result<()> {
    let err = |e: String| Error::Io {
        path: path.display().to_string(),
        source: std::io::Error::other(e),
    };
    let vocabularies: Vec<&str> = {
        let mut v: Vec<&str> = rows.iter().map(|r| r.vocabulary.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let (n_min, n_max) = rows.iter().fold((f64::MAX, 1.0f64), |(lo, hi), r| {
        (lo.min(r.n as f64), hi.max(r.n as f64))
    });
    let (t_min, t_max) = rows.iter().fold((f64::MAX, 0.0f64), |(lo, hi), r| {
        let (rlo, rhi) = r.reference.as_ref().map_or((r.p50_us, r.p99_us), |e| {
            (e.p50_us.min(r.p50_us), e.p99_us.max(r.p99_us))
        });
        (lo.min(rlo / 1e3), hi.max(rhi / 1e3))
    });
    let root = SVGBackend::new(path, (800, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "pfm retrieval latency against store size",
            ("sans-serif", 20),
        )
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
        .y_desc("retrieval (ms)")
        .draw()
        .map_err(|e| err(e.to_string()))?;
    for (i, v) in vocabularies.iter().enumerate() {
        let colour = Palette99::pick(i).to_rgba();
        let series: Vec<&Row> = rows.iter().filter(|r| r.vocabulary == *v).collect();
        chart
            .draw_series(LineSeries::new(
                series.iter().map(|r| (r.n as f64, r.p50_us / 1e3)),
                colour.stroke_width(2),
            ))
            .map_err(|e| err(e.to_string()))?
            .label(format!("{v} p50"))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2))
            });
        chart
            .draw_series(
                series
                    .iter()
                    .map(|r| Cross::new((r.n as f64, r.p99_us / 1e3), 4, colour.stroke_width(1))),
            )
            .map_err(|e| err(e.to_string()))?
            .label(format!("{v} p99"))
            .legend(move |(x, y)| Cross::new((x + 10, y), 4, colour.stroke_width(1)));
        // The reference engine's p50, thin, where the run has one.
        let reference: Vec<(f64, f64, &str)> = series
            .iter()
            .filter_map(|r| {
                let e = r.reference.as_ref()?;
                Some((r.n as f64, e.p50_us / 1e3, e.engine.as_str()))
            })
            .collect();
        if let Some(&(_, _, engine)) = reference.first() {
            let thin = colour.mix(0.6).stroke_width(1);
            chart
                .draw_series(LineSeries::new(
                    reference.iter().map(|&(n, t, _)| (n, t)),
                    thin,
                ))
                .map_err(|e| err(e.to_string()))?
                .label(format!("{v} {engine} p50"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], thin));
        }
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(e.to_string()))?;
    root.present().map_err(|e| err(e.to_string()))
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
    Ok(())
}
