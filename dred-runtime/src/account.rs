//! What ran in an update and why, as data: the account an [`UpdateReport`] carries, so
//! that a caller can tell which strategy produced the result, what [`Strategy::Auto`]
//! tried first and gave up on, and why, without reading the report's text.
//!
//! [`UpdateReport`]: crate::UpdateReport

use std::fmt;

use crate::strategy::Strategy;

/// How an update came to run the strategy that produced its result.
#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    /// The strategy the caller asked for.
    pub requested: Strategy,
    /// The deletion strategy that ran first: the one that produced the result, or the one
    /// [`Strategy::Auto`] gave up on (see [`Self::abandoned`]). `None` when no deletion
    /// strategy ran: the batch deleted nothing, or `Auto` recomputed outright.
    pub first_tried: Option<Strategy>,
    /// Why the strategy that produced the result ran.
    pub reason: Reason,
    /// What the abandoned attempt had done when [`Strategy::Auto`] gave up on it.
    pub abandoned: Option<Abandoned>,
}

impl Account {
    /// The account of a strategy the caller named, which ran.
    pub(crate) fn requested(strategy: Strategy) -> Self {
        Account {
            requested: strategy,
            first_tried: Some(strategy),
            reason: Reason::Requested,
            abandoned: None,
        }
    }
}

/// Why an update ran the strategy that produced its result.
#[derive(Debug, Clone, PartialEq)]
pub enum Reason {
    /// The caller asked for it.
    Requested,
    /// The batch deletes nothing (it inserts, or holds nothing new): no deletion strategy
    /// ran, only the insertion.
    NothingDeleted,
    /// [`Strategy::Auto`] recomputed outright: the net deletion is more than 1/`share` of
    /// the input facts.
    LargeDeletion {
        /// Input facts in the net deletion.
        deleted: usize,
        /// Input facts before the update.
        inputs: usize,
        /// The share's denominator.
        share: usize,
    },
    /// [`Strategy::Auto`] recomputed to restart the stamp clock, which is near its end.
    ClockExhausted,
    /// [`Strategy::Auto`] recomputed: the deletion takes more than 1/`share` of the facts
    /// from relations kept by reachability.
    LargeClosureLoss {
        /// All facts before the update.
        facts: usize,
        /// The share's denominator.
        share: u32,
    },
    /// [`Strategy::Auto`] chose by the derivation sample: [`Strategy::DRed`] when at most
    /// 1/`share` of the sampled derived facts have a second derivation, else
    /// [`Strategy::AltProof`].
    SampledDerivations {
        /// Sampled derived facts.
        sampled: u32,
        /// How many of them have a second derivation.
        multiply_derived: u32,
        /// The share's denominator.
        share: u32,
    },
    /// [`Strategy::Auto`] gave up on its first strategy ([`Account::first_tried`]) at the
    /// guard, and recomputed.
    GuardReached {
        /// The budget it had, in units of counted work ([`crate::program::Counted`]).
        budget: u64,
        /// What a recompute was expected to count.
        recompute: u64,
        /// The budget's share of a recompute's expected work, before the taper.
        share: u32,
        /// The share of the budget the deletion's size left (1 for a deletion of nothing).
        taper: f64,
    },
}

/// Whether at most 1/`share` of `sampled` derived facts have a second derivation (none
/// sampled: no): the rule by which [`Strategy::Auto`] chooses DRed.
pub(crate) fn few_multiply_derived(sampled: u32, multiply_derived: u32, share: u32) -> bool {
    sampled > 0 && multiply_derived * share <= sampled
}

/// What an attempt that [`Strategy::Auto`] gave up on had done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Abandoned {
    /// Its counted work ([`crate::program::Counted::units`]).
    pub work: u64,
    /// Rounds of over-deletion (or of loss of support) it recorded.
    pub rounds: usize,
    /// Facts those rounds took out.
    pub taken_out: usize,
    /// Facts checked for another proof ([`Strategy::AltProof`] only).
    pub checked: usize,
    /// Facts rederived before it stopped.
    pub rederived: usize,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Reason::Requested => f.write_str("as requested"),
            Reason::NothingDeleted => f.write_str("nothing to delete: no deletion strategy ran"),
            Reason::LargeDeletion {
                deleted,
                inputs,
                share,
            } => write!(
                f,
                "the net deletion ({deleted} facts) is more than 1/{share} of the {inputs} input facts"
            ),
            Reason::ClockExhausted => f.write_str("the stamp clock is exhausted"),
            Reason::LargeClosureLoss { facts, share } => write!(
                f,
                "the deletion takes more than 1/{share} of the {facts} facts from closure relations"
            ),
            Reason::SampledDerivations {
                sampled,
                multiply_derived,
                share,
            } => {
                write!(
                    f,
                    "{multiply_derived} of {sampled} sampled derived facts have a second derivation: "
                )?;
                if few_multiply_derived(sampled, multiply_derived, share) {
                    write!(f, "at most 1/{share}")
                } else {
                    write!(f, "more than 1/{share}")
                }
            }
            Reason::GuardReached {
                budget,
                recompute,
                share,
                taper,
            } => {
                write!(
                    f,
                    "passed the guard (budget: {budget} units, 1/{share} of a recompute's {recompute}"
                )?;
                if taper < 1.0 {
                    write!(f, " × {taper:.2} for the deletion's size")?;
                }
                f.write_str(")")
            }
        }
    }
}

impl fmt::Display for Account {
    /// The reason, preceded for a give-up by what was abandoned:
    /// `alternative proofs passed the guard (…) after 1234 rows, 3 rounds, …`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.reason, self.first_tried, &self.abandoned) {
            (Reason::GuardReached { .. }, Some(first), Some(abandoned)) => {
                let name = match first {
                    Strategy::DRed => "DRed",
                    _ => "alternative proofs",
                };
                write!(
                    f,
                    "{name} {} after {} units, {} facts taken out in {} rounds, {} checked, {} rederived",
                    self.reason,
                    abandoned.work,
                    abandoned.taken_out,
                    abandoned.rounds,
                    abandoned.checked,
                    abandoned.rederived
                )
            }
            _ => self.reason.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampled_choice_says_which_side_of_the_share_it_fell() {
        let reason = |multiply_derived| Reason::SampledDerivations {
            sampled: 256,
            multiply_derived,
            share: 64,
        };
        assert_eq!(
            reason(4).to_string(),
            "4 of 256 sampled derived facts have a second derivation: at most 1/64"
        );
        assert!(reason(5).to_string().ends_with("more than 1/64"));
    }

    #[test]
    fn a_give_up_names_the_abandoned_attempt_and_its_counts() {
        let account = Account {
            requested: Strategy::Auto,
            first_tried: Some(Strategy::AltProof),
            reason: Reason::GuardReached {
                budget: 450,
                recompute: 5000,
                share: 10,
                taper: 0.9,
            },
            abandoned: Some(Abandoned {
                work: 612,
                rounds: 3,
                taken_out: 40,
                checked: 120,
                rederived: 0,
            }),
        };
        assert_eq!(
            account.to_string(),
            "alternative proofs passed the guard (budget: 450 units, 1/10 of a recompute's \
             5000 × 0.90 for the deletion's size) after 612 units, 40 facts taken out in \
             3 rounds, 120 checked, 0 rederived"
        );
    }
}
