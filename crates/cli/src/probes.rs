//! The probes `pfm scale` hands the harness: the allocator's heap (this
//! binary's global allocator is mimalloc) and pprof flamegraphs. They live
//! here because only the binary chooses the allocator and links pprof.

use std::path::PathBuf;

/// mimalloc's committed memory: the allocator's heap, free pages included.
pub struct MimallocProbe;

impl pfm_harness::scale::MemoryProbe for MimallocProbe {
    fn heap_bytes(&self) -> Option<usize> {
        let mut v = [0usize; 8];
        // SAFETY: mi_process_info writes one usize through each pointer,
        // all of which point into `v`.
        unsafe {
            let [a, b, c, d, e, f, g, h] = &mut v;
            libmimalloc_sys::mi_process_info(a, b, c, d, e, f, g, h);
        }
        Some(v[5])
    }

    fn release_free(&self) {
        // SAFETY: mi_collect takes a plain flag and may run at any time.
        unsafe { libmimalloc_sys::mi_collect(true) };
    }
}

/// Writes a pprof flamegraph of each profiled piece of work into a folder.
pub struct Flamegraphs(pub PathBuf);

impl pfm_harness::scale::Profiler for Flamegraphs {
    fn profile(&self, name: &str, work: &mut dyn FnMut() -> pfm::Result<()>) -> pfm::Result<()> {
        let path = self.0.join(format!("{name}.svg"));
        let fail = |e: String| pfm::Error::Io {
            path: path.display().to_string(),
            source: std::io::Error::other(e),
        };
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(997)
            .blocklist(&["libc", "libgcc", "pthread", "vdso"])
            .build()
            .map_err(|e| fail(e.to_string()))?;
        work()?;
        let report = guard.report().build().map_err(|e| fail(e.to_string()))?;
        std::fs::create_dir_all(&self.0).map_err(|e| fail(e.to_string()))?;
        let file = std::fs::File::create(&path).map_err(|e| fail(e.to_string()))?;
        report.flamegraph(file).map_err(|e| fail(e.to_string()))
    }
}
