use pfm::rank::Scratch;
use pfm::retrieve::retrieve_with;
use pfm::{Config, Memory};
use pfm_synth::Vocabulary;
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
fn main() {
    let voc = if std::env::args().nth(1).as_deref() == Some("narrow") {
        Vocabulary::Narrow
    } else {
        Vocabulary::Wide
    };
    let n: u64 = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(100_000);
    let secs: f64 = std::env::args()
        .nth(3)
        .map(|s| s.parse().unwrap())
        .unwrap_or(6.0);
    let (facts, queries) = pfm_synth::generate(n, 7, voc, 350);
    let mut m = Memory::new(Config::default()).unwrap();
    for c in facts.chunks(1000) {
        m.observe_batch(c.iter().map(|f| f.observation()).collect())
            .unwrap();
    }
    m.wait_for_merges();
    let v = m.version();
    let reqs: Vec<_> = queries.iter().map(|q| q.request()).collect();
    let mut s = Scratch::default();
    let t = std::time::Instant::now();
    let mut k = 0;
    while t.elapsed().as_secs_f64() < secs {
        for r in &reqs[50..] {
            std::hint::black_box(retrieve_with(&v, r, &mut s).unwrap());
            k += 1;
        }
    }
    eprintln!("{:.1} us/query", t.elapsed().as_secs_f64() * 1e6 / k as f64);
}
