//! `pfm scale` as a user runs it: a reference engine that fails does not
//! cost the rows pfm has already measured.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use support::{PFM, tempdir};

#[test]
fn a_failing_reference_engine_keeps_the_measured_rows_and_fails_the_run() {
    let scratch = tempdir("scale-reference");
    let dir = scratch.path();
    let engine = dir.join("broken-engine.sh");
    std::fs::write(&engine, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&engine, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out_dir = dir.join("results");
    let out = Command::new(PFM)
        .args(["scale", "--sizes", "100", "--vocabularies", "wide,narrow"])
        .arg("--reference")
        .arg(&engine)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the run fails: {stderr}");
    assert!(
        stderr.contains("failed on 2 of 2 rows") && stderr.contains("broken-engine.sh"),
        "names the engine and how many rows: {stderr}"
    );
    let runs: Vec<_> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "one run folder");
    assert!(stderr.contains(&*runs[0].display().to_string()), "{stderr}");
    let rows = std::fs::read_to_string(runs[0].join("rows.jsonl")).unwrap();
    let rows: Vec<serde_json::Value> = rows
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2, "both of pfm's rows are kept");
    for row in &rows {
        assert_eq!(row["n"], 100);
        assert!(row["p50_us"].as_f64().unwrap() > 0.0);
        assert!(row["reference"].is_null(), "no reference columns: {row}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_build_batch_reaches_every_row_and_the_report_says_it() {
    let scratch = tempdir("scale-batch");
    let out_dir = scratch.path().join("results");
    let out = Command::new(PFM)
        .args(["scale", "--sizes", "100", "--vocabularies", "narrow"])
        .args(["--batch", "7", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let run = std::fs::read_dir(&out_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let row: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("rows.jsonl")).unwrap()).unwrap();
    assert_eq!(
        row["batch"], 7,
        "the row's child process built in batches of 7: {row}"
    );
    assert!(row["rss_rest_mb"].as_f64().unwrap() > 0.0, "{row}");
    let md = std::fs::read_to_string(run.join("results.md")).unwrap();
    assert!(md.contains("(batches of 7)"), "{md}");

    let zero = Command::new(PFM)
        .args(["scale", "--sizes", "100", "--batch", "0"])
        .output()
        .unwrap();
    assert!(!zero.status.success());
    assert!(
        String::from_utf8_lossy(&zero.stderr).contains("--batch"),
        "a batch of 0 is refused, naming the flag"
    );
}
