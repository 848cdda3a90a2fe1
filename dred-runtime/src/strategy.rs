//! The ways an update can withdraw what a deletion took away.

use std::fmt;
use std::str::FromStr;

#[allow(unused_imports)] // Named by the docs.
use crate::program::{DerivationSample, Program};

/// How an update withdraws what a deletion took away. Every strategy leaves exactly the
/// same facts (the least model); they differ in the work done and in what the report tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// The seed's delete-and-rederive rounds, exactly: over-delete everything that used a
    /// deleted fact, then rederive what still has a proof.
    #[default]
    DRed,
    /// Alternative proofs: before a fact's deletion propagates, look for another rule
    /// instance whose body facts are not under deletion and are older than the fact (their
    /// stamps are smaller, so no cycle can vouch for itself); only facts without one lose
    /// their support and propagate. The unsupported facts are then rederived as in DRed.
    ///
    /// A *closure relation* (the transitive closure of an input relation, and nothing else:
    /// see [`Program::closure_losses`]) over a graph dense enough is kept by reachability
    /// instead ([`crate::closure`]): what a deletion takes from it is read off the graph's
    /// strongly connected components before and after, and joins with the rest of round 1.
    /// Its facts are never checked, so their rounds need not lengthen with the shortest
    /// paths a deletion lengthens.
    AltProof,
    /// Backward/forward proofs: a fact a deletion reaches is kept if it still has a support
    /// (as for [`Strategy::AltProof`]) or if a backward search finds it a proof from the
    /// input facts that stay, through facts not under deletion (each body fact searched in
    /// turn; a proof carried forward to the instances that waited for it completes those
    /// held up by a cycle). Facts proved vouch for later searches; facts a search leaves
    /// unproved have no proof left, and go, and only their deletion propagates: nothing is
    /// over-deleted, nothing is rederived. A fact kept on a proof without a support rises
    /// to the level where it has one, so that stamps keep their invariant (see
    /// [`crate::maintain`]'s `backward` module).
    BackwardForward,
    /// Rematerialize from the input facts after the batch.
    Recompute,
    /// Per update: [`Strategy::Recompute`] when the net deletion is a large share of the
    /// input facts; otherwise [`Strategy::DRed`] when nearly every derived fact has one
    /// derivation (a sample says so, taken at materialization and again once updates have
    /// changed an eighth of the model, see [`DerivationSample`]: then DRed over-deletes
    /// little more than is really gone, and alternative proofs would check every fact they
    /// then withdraw), else [`Strategy::AltProof`]. Either is guarded: once it has cost
    /// more than a fraction of what rematerializing would, its joins stop where they are
    /// (what it changed is discarded with the derived relations) and it rematerializes.
    /// The report says which ran and why.
    Auto,
}

impl Strategy {
    /// Every strategy, in the order the docs present them.
    pub const ALL: [Strategy; 5] = [
        Strategy::DRed,
        Strategy::AltProof,
        Strategy::BackwardForward,
        Strategy::Recompute,
        Strategy::Auto,
    ];

    /// The strategy's name as the docs write it: the variant's name (`DRed`, `AltProof`,
    /// `BackwardForward`, `Recompute`, `Auto`). [`Strategy::from_str`] reads it back.
    pub const fn name(self) -> &'static str {
        match self {
            Strategy::DRed => "DRed",
            Strategy::AltProof => "AltProof",
            Strategy::BackwardForward => "BackwardForward",
            Strategy::Recompute => "Recompute",
            Strategy::Auto => "Auto",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A name that is no [`Strategy`]'s; displays the name and the names accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownStrategy(pub String);

impl fmt::Display for UnknownStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no strategy is named `{}`; the strategies are", self.0)?;
        for (i, strategy) in Strategy::ALL.iter().enumerate() {
            let sep = if i == 0 { " " } else { ", " };
            write!(f, "{sep}`{strategy}`")?;
        }
        Ok(())
    }
}

impl std::error::Error for UnknownStrategy {}

impl FromStr for Strategy {
    type Err = UnknownStrategy;

    /// Reads a strategy's [name](Strategy::name), ignoring case, `-` and `_` (so that a
    /// command line may say `alt-proof` or `dred`); surrounding whitespace is ignored too.
    ///
    /// ```
    /// use dred_runtime::Strategy;
    /// assert_eq!("alt-proof".parse(), Ok(Strategy::AltProof));
    /// assert_eq!(Strategy::DRed.to_string().parse(), Ok(Strategy::DRed));
    /// assert!("fastest".parse::<Strategy>().is_err());
    /// ```
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let folded = |name: &str| -> String {
            name.chars()
                .filter(|c| !matches!(c, '-' | '_'))
                .flat_map(char::to_lowercase)
                .collect()
        };
        let wanted = folded(text.trim());
        Strategy::ALL
            .into_iter()
            .find(|strategy| folded(strategy.name()) == wanted)
            .ok_or_else(|| UnknownStrategy(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_strategy_round_trips_through_its_name() {
        for strategy in Strategy::ALL {
            assert_eq!(strategy.to_string().parse(), Ok(strategy));
            assert_eq!(strategy.name().to_uppercase().parse(), Ok(strategy));
            assert_eq!(format!("{strategy:>16}").len(), 16);
        }
        assert_eq!(" Alt_Proof ".parse(), Ok(Strategy::AltProof));
        assert_eq!("recompute".parse(), Ok(Strategy::Recompute));
        assert_eq!("backward-forward".parse(), Ok(Strategy::BackwardForward));
    }

    #[test]
    fn an_unknown_name_is_an_error_that_lists_the_names() {
        let error = "DRed2".parse::<Strategy>().unwrap_err();
        assert_eq!(error, UnknownStrategy("DRed2".to_string()));
        assert_eq!(
            error.to_string(),
            "no strategy is named `DRed2`; the strategies are `DRed`, `AltProof`, `BackwardForward`, `Recompute`, `Auto`"
        );
        assert!("".parse::<Strategy>().is_err());
    }
}
