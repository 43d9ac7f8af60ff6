//! What a failed call's error text says about whether Unity may have run
//! the call: the words the scenarios hold the bridge to, and that the
//! deliberately broken bridge turns around.

use fake_unity::scenario::Meaning;

/// Words that say the Editor may have run a call (it reached Unity).
const MAY_HAVE_RUN: &[&str] = &["may have run", "may or may not have run", "may still be running", "may still run"];
/// Words that say it did not (it never reached Unity).
const DID_NOT_RUN: &[&str] = &["did not run", "was not run", "was not sent", "could not run", "never sent"];

/// What an error text claims about whether the call ran.
pub fn claims(text: &str) -> (bool, bool) {
    let text = text.to_lowercase();
    (MAY_HAVE_RUN.iter().any(|w| text.contains(w)), DID_NOT_RUN.iter().any(|w| text.contains(w)))
}

/// A violation unless an error's text says what `meaning` says, and only that.
pub fn check_meaning(text: &str, meaning: Meaning) -> Result<(), String> {
    let (may, not) = claims(text);
    match meaning {
        Meaning::MayHaveRun if may && !not => Ok(()),
        Meaning::MayHaveRun => Err(format!(
            "the call reached Unity, so the error must say it may have run ({}), and never that it did not: {text:?}",
            MAY_HAVE_RUN.join(" | ")
        )),
        Meaning::DidNotRun if not && !may => Ok(()),
        Meaning::DidNotRun => Err(format!(
            "the call never reached Unity, so the error must say it did not run ({}), and never that it may have: {text:?}",
            DID_NOT_RUN.join(" | ")
        )),
    }
}
