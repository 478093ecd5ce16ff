//! `cargo bench --bench plus`: `rgd datasets plus` on HumanEval and MBPP, whole process from the
//! command line, three runs each (target: under 2 minutes each on 2 cores), each output compared
//! byte for byte with the file rgd ships (generation is deterministic); then `rgd datasets
//! limits` on both, once.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

fn sha256(path: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(path).expect("output file")))
}

fn timed(args: &[&str], home: &Path) -> f64 {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_rgd"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("RGD_HOME", home)
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    started.elapsed().as_secs_f64()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    println!(
        "rgd datasets plus, whole process, 3 runs each ({} cores):",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    for (name, shipped) in [("humaneval", "humaneval_plus"), ("mbpp", "mbpp_plus")] {
        let out = dir.path().join(name).join("tasks.jsonl");
        let mut times = Vec::new();
        let mut same = true;
        for _ in 0..3 {
            times.push(timed(&["datasets", "plus", name, "--out", out.to_str().unwrap()], dir.path()));
            same &= sha256(&out) == sha256(&root.join("datasets").join(shipped).join("tasks.jsonl"));
        }
        let mut sorted = times.clone();
        sorted.sort_by(f64::total_cmp);
        println!(
            "  {name:<10} median {:6.1} s  {times:.1?}  (target < 120 s); every output the shipped file byte for byte: {same}",
            sorted[1]
        );
    }
    println!("rgd datasets limits (3 repeats per task), once:");
    for name in ["humaneval", "mbpp"] {
        let out = dir.path().join(format!("{name}.limits.json"));
        let secs = timed(&["datasets", "limits", name, "--out", out.to_str().unwrap()], dir.path());
        println!("  {name:<10} {secs:6.1} s");
    }
}
