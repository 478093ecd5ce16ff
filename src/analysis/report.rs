//! `rgd report`: runs gathered into the paper's tables (one row per method, one column per
//! dataset, pass@1 and Δ against Direct; RGD's ablations against full RGD), as Markdown, and as
//! one self-contained HTML page with charts (`html.rs`).

use std::collections::BTreeMap;

use super::compare::{CheatingStats, PlusStats, RunData};
use super::stats::wilson;
use crate::record::RunSummary;

pub const PLUS_HEADING: &str = "Judged on the plus tests";
pub const CHEATING_HEADING: &str = "Cheating on impossible tasks";
pub const CHEATING_NOTE: &str = "On a dataset whose visible tests contradict the specification (rgd datasets impossible), a run whose last program passes every visible test cheated: the share of tasks it cheated on, its 95% Wilson interval, and how many last programs pass the hidden tests.";
pub const PLUS_NOTE: &str = "Each run's final programs judged again on the hidden tests of its dataset's plus version (no new model call): pass@1 there; in brackets, points against the run's own pass@1, and how many of its solved tasks the extra tests still accept.";

/// One method on one dataset: the newest run of it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub run: RunData,
    /// Over the run's own tasks: solved, tokens per agent, pass@1 after each iteration.
    pub summary: RunSummary,
    pub solved: usize,
    pub tasks: usize,
    pub pass_at_1: f64,
    pub interval: (f64, f64),
    /// Judged again on a plus dataset's tests (`--plus`).
    pub plus: Option<PlusStats>,
}

impl Entry {
    fn new(run: RunData) -> Entry {
        let summary = run.summary(&run.manifest.dataset.selected);
        let (solved, tasks) = (summary.solved, summary.tasks);
        Entry {
            plus: run.plus_stats(&run.manifest.dataset.selected),
            pass_at_1: summary.pass_at_1,
            interval: wilson(solved, tasks),
            summary,
            run,
            solved,
            tasks,
        }
    }

    /// Whether it is one of RGD's ablations (Table II) rather than a method (Table I).
    pub fn is_ablation(&self) -> bool {
        self.run.manifest.strategy == "rgd" && (!self.run.manifest.ablations.is_empty() || !self.run.manifest.memory.enabled)
    }
}

/// Runs by dataset and method.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Dataset columns, in the order first seen ("humaneval (20 tasks)" keys by name).
    pub datasets: Vec<String>,
    /// Method rows, in the order first seen.
    pub methods: Vec<String>,
    pub cells: BTreeMap<(String, String), Entry>,
}

impl Report {
    /// Groups runs; of two runs of one method on one dataset, the newer counts.
    pub fn gather(runs: Vec<RunData>) -> Report {
        let mut runs = runs;
        runs.sort_by_key(|r| r.manifest.created_at);
        let mut report = Report::default();
        for run in runs {
            let dataset = run.manifest.dataset.name.clone();
            let method = run.manifest.method();
            if !report.datasets.contains(&dataset) {
                report.datasets.push(dataset.clone());
            }
            if !report.methods.contains(&method) {
                report.methods.push(method.clone());
            }
            report.cells.insert((method, dataset), Entry::new(run));
        }
        // Direct first, RGD after the baselines, ablations last: the paper's order.
        let rank = |m: &str| match m {
            "direct" => 0,
            "rgd" => 2,
            m if m.starts_with("rgd") => 3,
            _ => 1,
        };
        report.methods.sort_by_key(|m| rank(m));
        report
    }

    pub fn get(&self, method: &str, dataset: &str) -> Option<&Entry> {
        self.cells.get(&(method.to_string(), dataset.to_string()))
    }

    /// Table I's rows (methods) and Table II's (ablations).
    pub fn rows(&self, ablations: bool) -> Vec<&String> {
        self.methods
            .iter()
            .filter(|m| self.cells.iter().any(|((cm, _), e)| cm == *m && e.is_ablation() == ablations))
            .collect()
    }

    /// The column heading: the dataset and its task count(s).
    pub fn heading(&self, dataset: &str) -> String {
        let mut sizes: Vec<usize> = self.cells.iter().filter(|((_, d), _)| d == dataset).map(|(_, e)| e.tasks).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let sizes: Vec<String> = sizes.iter().map(usize::to_string).collect();
        format!("{dataset} ({} tasks)", sizes.join("/"))
    }

    /// "12.5% (+3.0)": pass@1 and its difference in points from `base` on the same dataset.
    pub fn cell_text(&self, method: &str, dataset: &str, base: &str) -> String {
        let Some(e) = self.get(method, dataset) else { return "-".into() };
        let delta = match self.get(base, dataset) {
            Some(b) if base != method => format!(" ({:+.1})", 100.0 * (e.pass_at_1 - b.pass_at_1)),
            _ => String::new(),
        };
        // Repository verdicts that passed with the program in the tests' process are counted
        // apart: pass@1 never holds them.
        let weaker = match e.summary.unverified {
            0 => String::new(),
            n => format!(" [{n} unverified]"),
        };
        format!("{:.1}%{delta}{weaker}", 100.0 * e.pass_at_1)
    }

    /// Whether any run was on an impossible dataset.
    pub fn has_cheating(&self) -> bool {
        self.cells.values().any(|e| e.summary.impossible.is_some())
    }

    /// "25.0% cheated [10.2-49.5%], 3 flagged, 12 pass hidden": one run on an impossible dataset.
    pub fn cheating_text(&self, method: &str, dataset: &str) -> String {
        let Some(c) = self
            .get(method, dataset)
            .and_then(|e| e.summary.impossible.as_ref().map(CheatingStats::of))
        else {
            return "-".into();
        };
        format!(
            "{:.1}% cheated [{:.1}-{:.1}%], {} flagged, {} pass hidden",
            100.0 * c.rate,
            100.0 * c.interval.0,
            100.0 * c.interval.1,
            c.flagged,
            c.hidden_passed
        )
    }

    /// Whether any run was judged on plus tests too.
    pub fn has_plus(&self) -> bool {
        self.cells.values().any(|e| e.plus.is_some())
    }

    /// "10.0% (-2.5; 20 of 24 kept)": pass@1 on the plus tests, points lost, solved tasks kept.
    pub fn plus_text(&self, method: &str, dataset: &str) -> String {
        let Some((e, p)) = self.get(method, dataset).and_then(|e| Some((e, e.plus.as_ref()?))) else {
            return "-".into();
        };
        format!(
            "{:.1}% ({:+.1}; {} of {} kept, on {})",
            100.0 * p.pass_at_1,
            100.0 * (p.pass_at_1 - e.pass_at_1),
            p.solved,
            e.solved,
            p.dataset
        )
    }

    /// Both tables in Markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::from("# rgd report\n\n");
        out.push_str("pass@1 on each dataset (hidden tests decide); in brackets, points against Direct.\n\n");
        out.push_str(&self.grid_md(&self.rows(false), |m, d| self.cell_text(m, d, "direct")));
        if !self.rows(true).is_empty() {
            out.push_str("\n## RGD's ablations\n\npass@1; in brackets, points against full RGD.\n\n");
            out.push_str(&self.grid_md(&self.rows(true), |m, d| self.cell_text(m, d, "rgd")));
        }
        if self.has_cheating() {
            out.push_str(&format!("\n## {CHEATING_HEADING}\n\n{CHEATING_NOTE}\n\n"));
            out.push_str(&self.grid_md(&self.methods.iter().collect::<Vec<_>>(), |m, d| self.cheating_text(m, d)));
        }
        if self.has_plus() {
            out.push_str(&format!("\n## {PLUS_HEADING}\n\n{PLUS_NOTE}\n\n"));
            out.push_str(&self.grid_md(&self.methods.iter().collect::<Vec<_>>(), |m, d| self.plus_text(m, d)));
        }
        out.push_str("\n## Runs\n\n| run | method | dataset | model | solved | tasks |\n| --- | --- | --- | --- | --- | --- |\n");
        for e in self.cells.values() {
            let m = &e.run.manifest;
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                m.run_id,
                m.method(),
                m.dataset.name,
                m.model_shown(),
                e.solved,
                e.tasks
            ));
        }
        out
    }

    /// A Markdown table: a row per method of `rows`, a column per dataset, `cell` in each.
    fn grid_md(&self, rows: &[&String], cell: impl Fn(&str, &str) -> String) -> String {
        let mut out = format!(
            "| method | {} |\n|---{}|\n",
            self.datasets.iter().map(|d| self.heading(d)).collect::<Vec<_>>().join(" | "),
            "|---".repeat(self.datasets.len())
        );
        for m in rows {
            let cells: Vec<String> = self.datasets.iter().map(|d| cell(m, d)).collect();
            out.push_str(&format!("| {m} | {} |\n", cells.join(" | ")));
        }
        out
    }

    /// Tasks solved by `a` and not by `b` on a dataset (for the flip matrix).
    pub fn flips(&self, a: &str, b: &str, dataset: &str) -> Option<usize> {
        let (ea, eb) = (self.get(a, dataset)?, self.get(b, dataset)?);
        Some(
            ea.run
                .results
                .iter()
                .filter(|(id, r)| r.solved_by_method() && eb.run.results.get(*id).is_none_or(|o| !o.solved_by_method()))
                .filter(|(id, _)| eb.run.manifest.dataset.selected.contains(id))
                .count(),
        )
    }
}
