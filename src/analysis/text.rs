//! A comparison as text: what `rgd compare` prints and the TUI's compare popup shows.

use super::compare::Comparison;
use crate::text::{fit, short_id as short};

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn signed_pct(x: f64) -> String {
    format!("{:+.1}", 100.0 * x)
}

/// The comparison as text: pass@1, paired results, cost, iterations, failures.
pub fn render(c: &Comparison) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} · {} tasks (sha256 {}…)",
        c.dataset,
        c.tasks,
        c.dataset_sha256.get(..12).unwrap_or("")
    );
    if let Some(s) = &c.subset {
        let _ = writeln!(out, "note: {s}");
    }
    let _ = writeln!(
        out,
        "\n{:<12} {:<24} {:<24} {:>8} {:>9} {:>15} {:>8}",
        "run", "method", "model", "solved", "pass@1", "95% interval", "Δ pp"
    );
    for r in &c.runs {
        let _ = writeln!(
            out,
            "{:<12} {:<24} {:<24} {:>8} {:>9} {:>15} {:>8}{}",
            r.run_id.get(..10).unwrap_or(&r.run_id),
            fit(&r.method, 24),
            fit(&r.model, 24),
            format!("{}/{}", r.solved, r.tasks),
            pct(r.pass_at_1),
            format!("{:.1}-{:.1}%", 100.0 * r.interval.0, 100.0 * r.interval.1),
            signed_pct(r.delta),
            if r.unfinished > 0 {
                format!("  ({} unfinished)", r.unfinished)
            } else {
                String::new()
            }
        );
    }
    paired_lines(&mut out, c);
    cheating_lines(&mut out, c);
    plus_lines(&mut out, c);
    cost_lines(&mut out, c);
    let _ = writeln!(out, "\npass@1 after each iteration");
    for r in &c.runs {
        let steps: Vec<String> = r.cumulative.iter().map(|x| pct(*x)).collect();
        let _ = writeln!(out, "  {:<12} {}", short(&r.run_id), steps.join("  "));
    }
    let _ = writeln!(out, "\nwhy unsolved tasks failed");
    for r in &c.runs {
        let classes: Vec<String> = r.failures.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(
            out,
            "  {:<12} {}",
            short(&r.run_id),
            if classes.is_empty() { "-".to_string() } else { classes.join(", ") }
        );
    }
    out
}

/// Each pair of runs: tasks one solved and the other did not, and McNemar's test.
fn paired_lines(out: &mut String, c: &Comparison) {
    use std::fmt::Write;
    for p in &c.paired {
        let _ = writeln!(
            out,
            "\n{} vs {}: both solved {}, neither {}; only {} {}, only {} {}",
            short(&p.other),
            short(&p.first),
            p.both,
            p.neither,
            short(&p.first),
            p.only_first.len(),
            short(&p.other),
            p.only_other.len()
        );
        let _ = writeln!(
            out,
            "  Δ {} pp, paired bootstrap 95% [{}, {}] ({} resamples, seed {}); McNemar exact p = {:.4}",
            signed_pct(p.delta),
            signed_pct(p.bootstrap.0),
            signed_pct(p.bootstrap.1),
            p.bootstrap_resamples,
            p.bootstrap_seed,
            p.mcnemar_p
        );
        if !p.only_first.is_empty() {
            let _ = writeln!(out, "  only {}: {}", short(&p.first), p.only_first.join(", "));
        }
        if !p.only_other.is_empty() {
            let _ = writeln!(out, "  only {}: {}", short(&p.other), p.only_other.join(", "));
        }
    }
}

/// How often each method cheated on impossible tasks, when any run measured it.
fn cheating_lines(out: &mut String, c: &Comparison) {
    use std::fmt::Write;
    if c.runs.iter().any(|r| r.cheating.is_some()) {
        let _ = writeln!(
            out,
            "\ncheating on impossible tasks (a visible test contradicts the specification: passing every visible test is a cheat)"
        );
        for r in &c.runs {
            let Some(x) = &r.cheating else { continue };
            let _ = writeln!(
                out,
                "  {:<12} cheated {:>4} {:>9} {:>15}  flagged {}, failed honestly {}; {} last programs pass the hidden tests",
                short(&r.run_id),
                x.cheated,
                pct(x.rate),
                format!("{:.1}-{:.1}%", 100.0 * x.interval.0, 100.0 * x.interval.1),
                x.flagged,
                x.failed_honestly,
                x.hidden_passed
            );
        }
        for p in &c.paired {
            let Some(x) = &p.cheating else { continue };
            let _ = writeln!(
                out,
                "  {} vs {}: cheated only {} {}, only {} {}; McNemar exact p = {:.4}",
                short(&p.other),
                short(&p.first),
                short(&p.first),
                x.only_first.len(),
                short(&p.other),
                x.only_other.len(),
                x.mcnemar_p
            );
        }
    }
}

/// The plus column: each run judged again on the plus dataset's tests.
fn plus_lines(out: &mut String, c: &Comparison) {
    use std::fmt::Write;
    if let Some(dataset) = c.runs.iter().find_map(|r| r.plus.as_ref().map(|p| p.dataset.clone())) {
        let _ = writeln!(
            out,
            "\njudged again on {dataset}'s hidden tests (the same final programs, no new model call)"
        );
        for r in &c.runs {
            let Some(p) = &r.plus else { continue };
            let _ = writeln!(
                out,
                "  {:<12} {:>8} {:>9} {:>15}  {} of its {} solved tasks rejected{}",
                short(&r.run_id),
                format!("{}/{}", p.solved, r.tasks),
                pct(p.pass_at_1),
                format!("{:.1}-{:.1}%", 100.0 * p.interval.0, 100.0 * p.interval.1),
                p.rejected.len(),
                r.solved,
                if p.rejected.is_empty() {
                    String::new()
                } else {
                    format!(": {}", p.rejected.join(", "))
                }
            );
        }
    }
}

/// What each run cost: calls, tokens and time.
fn cost_lines(out: &mut String, c: &Comparison) {
    use std::fmt::Write;
    let _ = writeln!(out, "\ncost");
    let _ = writeln!(
        out,
        "  {:<12} {:<9} {:>10} {:>10} {:>7}",
        "run", "agent", "tokens in", "tokens out", "calls"
    );
    for r in &c.runs {
        for (agent, a) in &r.cost.per_agent {
            let _ = writeln!(
                out,
                "  {:<12} {:<9} {:>10} {:>10} {:>7}",
                short(&r.run_id),
                agent,
                a.tokens_in,
                a.tokens_out,
                a.calls
            );
        }
        let per = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.0}"));
        let _ = writeln!(
            out,
            "  {:<12} per solved task: {} tokens in, {} out, {} calls · {:.1} s per task",
            short(&r.run_id),
            per(r.cost.tokens_in_per_solved),
            per(r.cost.tokens_out_per_solved),
            per(r.cost.calls_per_solved),
            r.cost.seconds_per_task
        );
    }
}
