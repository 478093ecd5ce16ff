//! The judge: every run is two interpreters that share nothing, and this relay between them.
//!
//! The candidate interpreter holds the program; the checker interpreter holds the tests and writes
//! the verdicts (see `sandbox/runner.py`). The relay forwards the checker's requests to the
//! candidate and the candidate's answers back, reads verdicts from the checker alone, enforces the
//! deadlines, and watches the candidate's side of the channel: an answer nobody asked for is a line
//! the program wrote itself, and marks the run `tampered`. Both executors (wasm
//! instances, python3 processes) only start interpreters; everything else is here, once.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_util::codec::{FramedRead, LinesCodec};

use super::verdict::Ended;
use super::{Job, Limits, RunReport, SandboxError, SetupStatus, TestOutcome, TestStatus};

/// How often deadlines are checked: their granularity.
pub(crate) const TICK: Duration = Duration::from_millis(5);
/// Longest line either interpreter may write (a test's answer included).
const LINE_CAP: usize = 16 << 20;
/// Bytes the candidate may write to the channel in one round before it counts as a flood.
const CANDIDATE_OUTPUT_CAP: usize = 64 << 20;
/// How long the candidate's last lines are awaited after the checker has finished.
const DRAIN: Duration = Duration::from_millis(500);
const STRAY: &str = "the program wrote lines of its own to the judge's channel";
/// Slack on the per-test deadline for the checker's own work and the round trips.
const TEST_GRACE: Duration = Duration::from_millis(250);

/// Which side of the run an interpreter is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Holds the program (and the job's data directory).
    Candidate,
    /// Holds the tests; runs no program code.
    Checker,
}

/// One started interpreter.
pub(crate) struct World {
    pub stdin: Box<dyn AsyncWrite + Send + Unpin>,
    pub stdout: Box<dyn AsyncRead + Send + Unpin>,
    /// Resolves when the interpreter has ended: `None` for a normal end, else why. Dropping the
    /// world (this future included) kills the interpreter.
    pub ended: BoxFuture<'static, Option<Ended>>,
    /// For an interpreter that can serve another run (the wasm checker): gives it that run's
    /// clock and a fresh output budget.
    pub rearm: Option<Box<dyn Fn(std::sync::Arc<Clock>) + Send + Sync>>,
}

/// The clock an interpreter's deadlines read: swapped when a checker serves another run.
pub(crate) struct ClockSlot(Mutex<std::sync::Arc<Clock>>);

impl ClockSlot {
    pub(crate) fn new(clock: std::sync::Arc<Clock>) -> Self {
        ClockSlot(Mutex::new(clock))
    }

    pub(crate) fn set(&self, clock: std::sync::Arc<Clock>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = clock;
    }

    pub(crate) fn overrun(&self) -> Option<Overrun> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).overrun()
    }
}

/// A checker between runs: it holds no program and ran no program code, and the runner dropped
/// every module its last run imported (`sandbox/runner.py`). Only a checker whose run ended by the
/// protocol (no deadline, no crash, no tampering seen) comes back here.
pub(crate) struct IdleChecker {
    stdin: Box<dyn AsyncWrite + Send + Unpin>,
    lines: FramedRead<Box<dyn AsyncRead + Send + Unpin>, LinesCodec>,
    ended: BoxFuture<'static, Option<Ended>>,
    rearm: Box<dyn Fn(std::sync::Arc<Clock>) + Send + Sync>,
    memory_mb: u64,
}

/// An interpreter's ends, as the relay holds them.
type Writer = Box<dyn AsyncWrite + Send + Unpin>;
type Lines = FramedRead<Box<dyn AsyncRead + Send + Unpin>, LinesCodec>;
type EndFuture = BoxFuture<'static, Option<Ended>>;
type Rearm = Box<dyn Fn(std::sync::Arc<Clock>) + Send + Sync>;

/// Checkers kept between runs, so a run starts one interpreter instead of two.
#[derive(Default)]
pub(crate) struct CheckerPool(Mutex<Vec<IdleChecker>>);

impl CheckerPool {
    fn take(&self, memory_mb: u64) -> Option<IdleChecker> {
        let mut idle = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let at = idle.iter().position(|c| c.memory_mb == memory_mb)?;
        Some(idle.swap_remove(at))
    }

    /// A checker whose run ended by the protocol, kept for the next run with `memory_mb`.
    fn put(&self, (stdin, lines, ended, rearm): (Writer, Lines, EndFuture, Rearm), memory_mb: u64) {
        let idle = IdleChecker {
            stdin,
            lines,
            ended,
            rearm,
            memory_mb,
        };
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(idle);
    }
}

/// What starts interpreters: the wasm engine or a python3 binary.
#[async_trait::async_trait]
pub(crate) trait Interpreters: Send + Sync {
    fn name(&self) -> &'static str;
    /// Where the candidate finds the job's data directory, when it must change into it itself.
    fn guest_data_dir(&self) -> Option<&'static str> {
        None
    }
    async fn start(&self, role: Role, limits: &Limits, clock: std::sync::Arc<Clock>) -> Result<World, SandboxError>;
    /// Where checkers wait between runs, for interpreters that can serve several.
    fn checker_pool(&self) -> Option<&CheckerPool> {
        None
    }
}

/// Deadlines of one round, shared with the interpreters (the wasm epoch callback reads it).
pub(crate) struct Clock {
    run_started: Instant,
    test_started: Mutex<Instant>,
    per_test: Duration,
    total: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overrun {
    Test,
    Run,
}

impl Clock {
    pub(crate) fn new(per_test: Duration, total: Duration) -> Self {
        let now = Instant::now();
        Clock {
            run_started: now,
            test_started: Mutex::new(now),
            per_test: per_test + TEST_GRACE,
            total,
        }
    }

    fn next_test(&self) {
        *self.test_started.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    /// Which deadline has passed, if any.
    pub(crate) fn overrun(&self) -> Option<Overrun> {
        let now = Instant::now();
        let test_started = *self.test_started.lock().unwrap_or_else(|p| p.into_inner());
        if now.duration_since(self.run_started) > self.total {
            Some(Overrun::Run)
        } else if now.duration_since(test_started) > self.per_test {
            Some(Overrun::Test)
        } else {
            None
        }
    }
}

/// Runs all tests, continuing in fresh interpreters after a test that overran its deadline.
/// Evidence of tampering anywhere in a run marks every test of it: a program caught trying to fool
/// the judge has no trustworthy verdict left (a forged answer can even look like a correct one).
pub(crate) async fn judge(interpreters: &dyn Interpreters, job: &Job<'_>) -> Result<RunReport, SandboxError> {
    let mut report = judge_rounds(interpreters, job).await?;
    if let Some(reason) = report.tampered().map(str::to_string) {
        report.mark_tampered(&reason);
    }
    Ok(report)
}

async fn judge_rounds(interpreters: &dyn Interpreters, job: &Job<'_>) -> Result<RunReport, SandboxError> {
    job.limits.checked_data_dir()?;
    let started = Instant::now();
    let n = job.tests.len();
    let total = job.limits.total_for(n);
    let mut outcomes: Vec<TestOutcome> = Vec::with_capacity(n);
    let mut offset = 0;
    loop {
        let rest = &job.tests[offset..];
        let view = Job {
            tests: rest,
            ..job.clone()
        };
        let round = one_round(interpreters, &view, total.saturating_sub(started.elapsed())).await?;
        let wall_ms = started.elapsed().as_millis() as u64;
        let ended = round.ended.map(|(e, _)| e);
        let mut report = RunReport::from_runner_output(interpreters.name(), &round.verdicts, &round.nonce, rest.len(), ended, wall_ms);
        if let Some(reason) = &round.tampered {
            report.mark_tampered(reason);
        }
        for t in &mut report.tests {
            t.index += offset;
        }
        // The test in progress at a deadline is reported as the first Timeout.
        let overrun_at = report.tests.iter().position(|t| t.status == TestStatus::Timeout);
        let one_test_overran = matches!(round.ended, Some((Ended::Deadline, Some(Overrun::Test)))) && report.setup == SetupStatus::Ok;
        let Some(k) = overrun_at.filter(|_| one_test_overran) else {
            outcomes.extend(report.tests);
            return Ok(RunReport { tests: outcomes, ..report });
        };
        // Test `offset + k` overran its own deadline: keep it and those before it, go on after it.
        report.tests[k].exc_msg = Some(format!("the test ran longer than {:.1}s", job.limits.per_test.as_secs_f64()));
        outcomes.extend(report.tests.drain(..=k));
        offset += k + 1;
        if offset >= n {
            return Ok(RunReport {
                tests: outcomes,
                abnormal_end: None,
                ..report
            });
        }
        if started.elapsed() >= total {
            outcomes.extend((offset..n).map(|i| TestOutcome::new(i, TestStatus::NotRun)));
            return Ok(RunReport {
                tests: outcomes,
                abnormal_end: Some("the run exceeded its time limit".into()),
                ..report
            });
        }
    }
}

/// What one pair of interpreters produced.
struct Round {
    nonce: String,
    /// The checker's verdict lines.
    verdicts: String,
    /// Why the round ended early, if it did (and which deadline passed).
    ended: Option<(Ended, Option<Overrun>)>,
    /// Tampering the relay itself saw (the first reason); like all evidence, it marks the run.
    tampered: Option<String>,
}

async fn one_round(interpreters: &dyn Interpreters, job: &Job<'_>, remaining: Duration) -> Result<Round, SandboxError> {
    let nonce = ulid::Ulid::generate().to_string();
    let clock = std::sync::Arc::new(Clock::new(job.limits.per_test, remaining));
    let candidate = interpreters.start(Role::Candidate, job.limits, clock.clone()).await?;
    let World {
        stdin: mut c_in,
        stdout: c_out,
        ended: c_ended,
        ..
    } = candidate;
    let pool = interpreters.checker_pool();
    let (mut k_in, k_lines, k_ended, rearm) = checker_for(interpreters, pool, job, &clock).await?;
    let reusable = pool.is_some() && rearm.is_some();
    let (candidate_job, checker_job) = jobs(interpreters, job, &nonce, reusable);
    // Writes go straight to the interpreters' stdin (a task in between costs a wake-up per line,
    // and a run makes a round trip per call). They cannot stall the relay for long: each side
    // reads whenever it waits for the other, and the candidate's unasked lines are not forwarded.
    send(&mut c_in, candidate_job).await;
    send(&mut k_in, checker_job).await;

    relay((c_in, c_out, c_ended), (k_in, k_lines, k_ended, rearm), pool, job, clock, nonce).await
}

/// The two interpreters' lines relayed until the checker's verdicts are in or the run ends: the
/// checker's requests to the candidate, the candidate's answers back (never more than it owes),
/// the deadlines. A checker whose run ended by the protocol goes back to `pool`.
async fn relay(
    (mut c_in, c_out, mut c_ended): (Writer, Box<dyn AsyncRead + Send + Unpin>, EndFuture),
    (mut k_in, mut k_lines, mut k_ended, rearm): (Writer, Lines, EndFuture, Option<Rearm>),
    pool: Option<&CheckerPool>,
    job: &Job<'_>,
    clock: std::sync::Arc<Clock>,
    nonce: String,
) -> Result<Round, SandboxError> {
    let reusable = pool.is_some() && rearm.is_some();
    let mut c_lines = FramedRead::new(c_out, LinesCodec::new_with_max_length(LINE_CAP));
    let (request_prefix, verdict_prefix) = (format!("{nonce}>"), format!("{nonce} "));
    // A reusable checker says its run is over with this line instead of ending.
    let end_line = format!("{nonce} {{\"end\":true}}");
    // How the checker's side ended: its end line (it stays for the next run), or its end.
    let (mut checker_done, mut checker_ended) = (false, false);
    let mut verdicts = String::new();
    let mut verdicts_seen = 0usize;
    // Answers the candidate owes: its set-up report, then one per forwarded request.
    let mut owed = 1usize;
    let mut candidate_bytes = 0usize;
    let mut candidate_open = true;
    let mut tampered: Option<String> = None;
    let mut ended = None;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

    let candidate_gone = |why: Option<Ended>| candidate_gone(&nonce, why);

    loop {
        tokio::select! {
            line = k_lines.next() => match line {
                Some(Ok(line)) if reusable && line == end_line => {
                    checker_done = true;
                    break;
                }
                Some(Ok(line)) => {
                    if let Some(request) = line.strip_prefix(&request_prefix) {
                        if candidate_open {
                            owed += 1;
                            let mut bytes = request.as_bytes().to_vec();
                            bytes.push(b'\n');
                            send(&mut c_in, bytes).await;
                        }
                    } else if line.starts_with(&verdict_prefix) {
                        verdicts.push_str(&line);
                        verdicts.push('\n');
                        verdicts_seen += 1;
                        clock.next_test();
                    }
                }
                Some(Err(e)) => tracing::debug!("checker line dropped: {e}"),
                None => {
                    if let Some(why) = (&mut k_ended).await {
                        tracing::debug!("checker ended abnormally: {}", why.describe());
                        ended = Some((why, None));
                    }
                    checker_ended = true;
                    break;
                }
            },
            line = c_lines.next(), if candidate_open => match line {
                Some(Ok(line)) => {
                    candidate_bytes += line.len() + 1;
                    if candidate_bytes > CANDIDATE_OUTPUT_CAP {
                        candidate_open = false;
                        send(&mut k_in, candidate_gone(Some(Ended::OutputFlood))).await;
                    } else if owed == 0 {
                        // Nobody asked: the program wrote this line itself.
                        tampered.get_or_insert_with(|| STRAY.into());
                    } else {
                        owed -= 1;
                        let mut bytes = line.into_bytes();
                        bytes.push(b'\n');
                        send(&mut k_in, bytes).await;
                    }
                }
                Some(Err(_)) => {
                    // Too long, or not text: either way no answer the checker could read.
                    candidate_open = false;
                    send(&mut k_in, candidate_gone(Some(Ended::OutputFlood))).await;
                }
                None => {
                    candidate_open = false;
                    let why = (&mut c_ended).await;
                    send(&mut k_in, candidate_gone(why)).await;
                }
            },
            _ = tick.tick() => {
                if let Some(overrun) = clock.overrun() {
                    if verdicts_seen > job.tests.len() {
                        // Every verdict is in; only the checker's closing check of the candidate
                        // went unanswered, which the runner never does by itself.
                        tampered.get_or_insert_with(|| "the program's interpreter stopped answering the judge".into());
                    } else {
                        ended = Some((Ended::Deadline, Some(overrun)));
                    }
                    break;
                }
            }
        }
    }
    if checker_done || checker_ended {
        // The candidate may still hold lines it wrote itself after its last answer. Its stdin
        // closes now, so its runner ends; read what is left, briefly.
        let _ = c_in.shutdown().await;
        drop(c_in);
        if candidate_open && stray_lines(&mut c_lines, owed).await {
            tampered.get_or_insert_with(|| STRAY.into());
        }
    }
    if let (true, None, None, Some(pool), Some(rearm)) = (checker_done, &ended, &tampered, pool, rearm) {
        pool.put((k_in, k_lines, k_ended, rearm), job.limits.memory_mb);
    }
    Ok(Round {
        nonce,
        verdicts,
        ended,
        tampered,
    })
}

/// The candidate's and the checker's jobs, as the lines each reads first.
fn jobs(interpreters: &dyn Interpreters, job: &Job<'_>, nonce: &str, reusable: bool) -> (Vec<u8>, Vec<u8>) {
    let mut candidate_job = super::candidate_job(job);
    if let Some(dir) = interpreters.guest_data_dir().filter(|_| job.limits.data_dir.is_some()) {
        candidate_job["chdir"] = dir.into();
    }
    let mut checker_job = super::checker_job(job, nonce);
    if reusable {
        checker_job["reuse"] = true.into();
    }
    (json_line(&candidate_job), json_line(&checker_job))
}

/// The candidate is gone: the line that tells the checker, which only the host can write (it
/// carries the checker's nonce, which the candidate never sees).
fn candidate_gone(nonce: &str, why: Option<Ended>) -> Vec<u8> {
    let voluntary = matches!(why, None | Some(Ended::Exit(_)));
    let reason = why
        .map(|e| e.describe())
        .unwrap_or_else(|| "the interpreter exited with status 0".into());
    json_line(&serde_json::json!({"host": nonce, "ended": reason, "voluntary": voluntary}))
}

/// The checker for a run: an idle one of the pool (given this run's clock), else a new one.
async fn checker_for(
    interpreters: &dyn Interpreters,
    pool: Option<&CheckerPool>,
    job: &Job<'_>,
    clock: &std::sync::Arc<Clock>,
) -> Result<(Writer, Lines, EndFuture, Option<Rearm>), SandboxError> {
    Ok(match pool.and_then(|p| p.take(job.limits.memory_mb)) {
        Some(idle) => {
            (idle.rearm)(clock.clone());
            (idle.stdin, idle.lines, idle.ended, Some(idle.rearm))
        }
        None => {
            let checker = interpreters.start(Role::Checker, job.limits, clock.clone()).await?;
            let lines = FramedRead::new(checker.stdout, LinesCodec::new_with_max_length(LINE_CAP));
            (checker.stdin, lines, checker.ended, checker.rearm)
        }
    })
}

/// Whether the candidate, its stdin closed, still wrote lines nobody asked for (`owed`: the
/// answers it still owed), read for at most `DRAIN`.
async fn stray_lines(lines: &mut Lines, mut owed: usize) -> bool {
    let mut stray = false;
    let drain = async {
        while let Some(Ok(_)) = lines.next().await {
            if owed == 0 {
                stray = true;
            } else {
                owed -= 1;
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN, drain).await;
    stray
}

pub(crate) fn json_line(value: &serde_json::Value) -> Vec<u8> {
    let mut bytes = value.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

/// Writes one line to an interpreter's stdin. An interpreter that has gone no longer reads; its
/// end shows on its stdout, so a failed write needs no handling here.
pub(crate) async fn send(stdin: &mut (dyn AsyncWrite + Send + Unpin), bytes: Vec<u8>) {
    if stdin.write_all(&bytes).await.is_ok() {
        let _ = stdin.flush().await;
    }
}
