//! Running a project's tests for rgd: a throw-away copy of the project (`copies`, `testrun`),
//! confined (`confine`), the hidden tests withheld while visible ones run (`withhold`), the
//! agents' function in a process of its own (`isolate`), outcomes from rgd's own channel
//! (`verdict`), and the sandbox executor that judges repository tasks (`executor`).

pub mod confine;
pub mod copies;
pub mod executor;
pub mod isolate;
pub mod testrun;
pub mod verdict;
pub mod withhold;
