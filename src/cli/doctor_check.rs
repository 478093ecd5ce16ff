//! One line of `rgd doctor`: a part's name and whether it is ready, absent (a note) or broken
//! (with what to do about it).

pub(super) enum Status {
    Ok(String),
    /// Not an error: an optional part is absent (the fix is in the message).
    Note(String),
    Fail {
        problem: String,
        fix: String,
    },
}

pub(super) struct Check {
    pub(super) name: &'static str,
    pub(super) status: Status,
}

pub(super) fn ok(name: &'static str, detail: impl Into<String>) -> Check {
    Check {
        name,
        status: Status::Ok(detail.into()),
    }
}

pub(super) fn fail(name: &'static str, problem: impl Into<String>, fix: impl Into<String>) -> Check {
    Check {
        name,
        status: Status::Fail {
            problem: problem.into(),
            fix: fix.into(),
        },
    }
}

pub(super) fn note(name: &'static str, detail: impl Into<String>) -> Check {
    Check {
        name,
        status: Status::Note(detail.into()),
    }
}
