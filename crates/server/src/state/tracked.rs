//! A map that remembers which of its rows were changed, so what a round persists follows
//! from what it did, not from a list of hand-written marks that a new code path forgets.
//!
//! The methods are BTreeMap's, with one rule: every access that can change a row
//! (`get_mut`, `insert`, `remove`, `entry`, `values_mut`, `iter_mut`) marks its key, and
//! `take_touched` hands the marked keys to the actor, which writes those rows. Reads never
//! mark, so a path that only looks must use `get`: a `get_mut` that changes nothing still
//! costs a write.
//!
//! Three doors bypass the marks, each for a reason: `insert_stored` puts a row exactly as
//! the store holds it (loading: nothing to write back); `get_mut_unstored` /
//! `iter_mut_unstored` reach the fields of a value that are never stored (a node's
//! liveness, its desired-state generation and who runs on it), and a stored field
//! changed through them would be lost at the next restart; `stored_elsewhere` /
//! `store_itself` move a row in and out of another row that holds it (an array task
//! listed in its array's row, `unwritten.rs`, which checks that a restart rebuilds it).

use std::borrow::Borrow;
use std::collections::{btree_map, BTreeMap, BTreeSet};
use std::ops::{Index, RangeBounds};

pub struct Tracked<K, V> {
    map: BTreeMap<K, V>,
    touched: BTreeSet<K>,
}

impl<K, V> Default for Tracked<K, V> {
    fn default() -> Self {
        Tracked {
            map: BTreeMap::new(),
            touched: BTreeSet::new(),
        }
    }
}

impl<K: Ord + Clone, V> Tracked<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Rows as the store holds them: none is marked.
    pub fn stored(rows: impl IntoIterator<Item = (K, V)>) -> Self {
        Tracked {
            map: rows.into_iter().collect(),
            touched: BTreeSet::new(),
        }
    }

    // Reads: never mark.

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.get(key)
    }

    pub fn contains_key<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.contains_key(key)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn keys(&self) -> btree_map::Keys<'_, K, V> {
        self.map.keys()
    }

    pub fn values(&self) -> btree_map::Values<'_, K, V> {
        self.map.values()
    }

    pub fn iter(&self) -> btree_map::Iter<'_, K, V> {
        self.map.iter()
    }

    pub fn range<Q, R>(&self, range: R) -> btree_map::Range<'_, K, V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
        R: RangeBounds<Q>,
    {
        self.map.range(range)
    }

    pub fn first_key_value(&self) -> Option<(&K, &V)> {
        self.map.first_key_value()
    }

    pub fn last_key_value(&self) -> Option<(&K, &V)> {
        self.map.last_key_value()
    }

    // Changes: mark what they reach.

    /// The row to change, marked (only if it exists).
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let (k, _) = self.map.get_key_value(key)?;
        self.touched.insert(k.clone());
        self.map.get_mut(key)
    }

    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        self.touched.insert(key.clone());
        self.map.insert(key, value)
    }

    pub fn remove<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let (k, v) = self.map.remove_entry(key)?;
        self.touched.insert(k);
        Some(v)
    }

    pub fn entry(&mut self, key: K) -> btree_map::Entry<'_, K, V> {
        self.touched.insert(key.clone());
        self.map.entry(key)
    }

    /// Every row, each marked.
    pub fn values_mut(&mut self) -> btree_map::ValuesMut<'_, K, V> {
        self.touched.extend(self.map.keys().cloned());
        self.map.values_mut()
    }

    /// Every row, each marked.
    pub fn iter_mut(&mut self) -> btree_map::IterMut<'_, K, V> {
        self.touched.extend(self.map.keys().cloned());
        self.map.iter_mut()
    }

    // The doors around the marks (see the module's comment).

    /// Puts a row as the store holds it (loading): not marked.
    pub fn insert_stored(&mut self, key: K, value: V) -> Option<V> {
        self.map.insert(key, value)
    }

    /// Drops a row the store already holds as it is (its round committed): not marked,
    /// so nothing is written or deleted. The job history leaves memory this way.
    pub fn remove_written<Q>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        debug_assert!(
            !self.touched.contains(key),
            "a row dropped before its change was written"
        );
        self.map.remove(key)
    }

    /// A row whose never-stored fields change: not marked.
    pub fn get_mut_unstored<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.map.get_mut(key)
    }

    /// Every row, for never-stored fields: none marked.
    pub fn iter_mut_unstored(&mut self) -> btree_map::IterMut<'_, K, V> {
        self.map.iter_mut()
    }

    /// Unmarks a row that another row stores this round (an array task its array's row
    /// lists, `unwritten.rs`): its own is not written.
    pub fn stored_elsewhere<Q>(&mut self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.touched.remove(key);
    }

    /// Marks a row unchanged in memory that the store must now hold itself (an array
    /// task its array's row no longer lists).
    pub fn store_itself<Q>(&mut self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        if let Some((k, _)) = self.map.get_key_value(key) {
            self.touched.insert(k.clone());
        }
    }

    // The marks.

    /// The keys changed since the last call (the actor writes their rows), now cleared.
    pub fn take_touched(&mut self) -> BTreeSet<K> {
        std::mem::take(&mut self.touched)
    }

    /// The keys changed since the last `take_touched`.
    pub fn touched(&self) -> &BTreeSet<K> {
        &self.touched
    }
}

impl<K, Q, V> Index<&Q> for Tracked<K, V>
where
    K: Ord + Clone + Borrow<Q>,
    Q: Ord + ?Sized,
{
    type Output = V;

    fn index(&self, key: &Q) -> &V {
        &self.map[key]
    }
}

impl<'a, K, V> IntoIterator for &'a Tracked<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = btree_map::Iter<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.map.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::Tracked;

    fn keys(t: &mut Tracked<u64, String>) -> Vec<u64> {
        t.take_touched().into_iter().collect()
    }

    #[test]
    fn changes_mark_their_keys_and_reads_do_not() {
        let mut t = Tracked::stored([(1, "a".to_string()), (2, "b".into()), (3, "c".into())]);
        assert!(t.touched().is_empty(), "loaded rows need no write");
        // Reads of every kind.
        let _ = (t.get(&1), t.contains_key(&2), t.len(), t[&3].clone());
        let _ = (t.iter().count(), t.values().count(), t.keys().count());
        let _ = t.range(1..3).count();
        assert_eq!(keys(&mut t), Vec::<u64>::new());
        t.get_mut(&2).unwrap().push('!');
        t.insert(7, "new".into());
        assert!(t.get_mut(&9).is_none(), "a missing key is not marked");
        assert_eq!(keys(&mut t), vec![2, 7]);
        assert_eq!(keys(&mut t), Vec::<u64>::new(), "taking clears the marks");
        t.entry(3).or_default().push('?');
        t.remove(&1);
        assert_eq!(keys(&mut t), vec![1, 3]);
        t.values_mut().for_each(|v| v.clear());
        assert_eq!(keys(&mut t), vec![2, 3, 7]);
    }

    #[test]
    fn the_doors_around_the_marks_stay_unmarked() {
        let mut t: Tracked<u64, String> = Tracked::new();
        t.insert_stored(1, "a".into());
        t.get_mut_unstored(&1).unwrap().push('x');
        for (_, v) in t.iter_mut_unstored() {
            v.push('y');
        }
        assert_eq!(t[&1], "axy");
        assert!(t.take_touched().is_empty());
    }
}
