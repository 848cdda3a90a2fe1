//! Restarting the clock without a recompute. Stamps matter only by their order (a fact's
//! support is an instance of older facts, see [`Stamp`]), so when the clock nears the end
//! of its range, the rounds that still stamp a fact are numbered again from the first,
//! in order, each stamp keeping its place within its round (see [`ROUND_GAP`]).

use std::collections::BTreeSet;

use super::*;

/// Renumbers the stamps of `program`'s facts and sets its clock past them (see the
/// module's doc), unless even renumbered they would not end below `limit`: then it changes
/// nothing, and the clock says so. Outside an update's phases: no fact has risen.
pub(super) fn renumber_rounds<P: Program>(program: &mut P, limit: Stamp) {
    let mut rounds = BTreeSet::from([0]);
    program.visit_stamps(&mut |stamp| {
        if stamp != Stamp::MAX {
            rounds.insert(stamp / ROUND_GAP);
        }
    });
    let renumbering = Renumbering {
        rounds: rounds.into_iter().collect(),
    };
    let clock = program.bookkeeping().clock;
    let Some(clock) = renumbering.apply(clock).filter(|&clock| clock <= limit) else {
        return;
    };
    program.map_stamps(&|stamp| renumbering.apply(stamp).unwrap_or(Stamp::MAX));
    program.bookkeeping_mut().clock = clock;
}

/// The rounds that stamp some fact, in order, round 0 first; the n-th of them becomes
/// round n.
struct Renumbering {
    rounds: Vec<Stamp>,
}

impl Renumbering {
    /// The new stamp of `stamp`, `None` if out of range. A stamp of a round that stamps no
    /// fact (a ghost's, say) goes to the start of the next round that does, so that the
    /// map keeps every stamp's order, and the facts' strictly. `Stamp::MAX` stays.
    fn apply(&self, stamp: Stamp) -> Option<Stamp> {
        if stamp == Stamp::MAX {
            return Some(stamp);
        }
        let (round, offset) = (stamp / ROUND_GAP, stamp % ROUND_GAP);
        let rank = self.rounds.partition_point(|&held| held < round);
        let offset = match self.rounds.get(rank) {
            Some(&held) if held == round => offset,
            _ => 0,
        };
        let start = Stamp::try_from(rank).ok()?.checked_mul(ROUND_GAP)?;
        start
            .checked_add(offset)
            .filter(|&stamp| stamp < Stamp::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_are_numbered_again_in_order_and_keep_their_offsets() {
        let gap = ROUND_GAP;
        let renumbering = Renumbering {
            rounds: vec![0, 7, 1_000_000],
        };
        let apply = |stamp| renumbering.apply(stamp).unwrap();
        assert_eq!(apply(0), 0);
        assert_eq!(apply(3), 3);
        assert_eq!(apply(7 * gap), gap);
        assert_eq!(apply(7 * gap + 5), gap + 5);
        assert_eq!(apply(1_000_000 * gap + 1), 2 * gap + 1);
        assert_eq!(apply(Stamp::MAX), Stamp::MAX);
        // A round that stamps nothing goes to the start of the next one that does.
        assert_eq!(apply(8 * gap + 9), 2 * gap);
        assert_eq!(apply(1_000_001 * gap), 3 * gap);
        let stamps = [0, 3, 7 * gap, 7 * gap + 5, 8 * gap + 9, 1_000_000 * gap + 1];
        assert!(stamps
            .windows(2)
            .all(|pair| apply(pair[0]) <= apply(pair[1])));
    }
}
