//! String interning: small numbers for strings, in first-appearance order.

use rustc_hash::FxHashMap as HashMap;

/// Assigns small numbers to strings, remembering first-appearance order.
#[derive(Default)]
pub(crate) struct Interner {
    ids: HashMap<Box<str>, u32>,
    names: Vec<Box<str>>,
    /// The number given last: events of one run mostly come together, so
    /// comparing with it first saves most lookups.
    last: u32,
}

impl Interner {
    pub(crate) fn intern(&mut self, s: &str) -> u32 {
        if let Some(name) = self.names.get(self.last as usize)
            && **name == *s
        {
            return self.last;
        }
        let id = match self.ids.get(s) {
            Some(&id) => id,
            None => {
                let id = self.names.len() as u32;
                self.names.push(s.into());
                self.ids.insert(s.into(), id);
                id
            }
        };
        self.last = id;
        id
    }

    /// The number of `s`, if it has one.
    pub(crate) fn get(&self, s: &str) -> Option<u32> {
        self.ids.get(s).copied()
    }

    /// How many strings were interned.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    pub(crate) fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
}
