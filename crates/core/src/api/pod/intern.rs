//! `Str`: an immutable, shared string (`Arc<str>`), and the interner that makes the pod store's
//! repeating strings one allocation each.
//!
//! A pod store repeats the same few strings thousands of times: namespaces, label and annotation
//! keys, revision hashes, condition types and statuses, images, node names, owners. Reading them
//! through [`intern`] gives every pod the same `Arc`. The interner cannot grow without bound:
//! when its table reaches twice the size it had after its last sweep (and at least
//! [`Interner::MIN_SWEEP`]), it drops the strings no pod holds any more, so it holds at most
//! about twice what the live pods share (plus the floor).

use std::{
    borrow::Borrow,
    collections::HashSet,
    fmt,
    hash::{BuildHasherDefault, Hash, Hasher},
    ops::Deref,
    sync::{Arc, LazyLock, Mutex},
};

use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

/// Strings longer than this are not interned (they are rarely shared: probe output,
/// last-applied configurations); each reader gets its own copy.
pub const INTERN_MAX: usize = 128;

/// An immutable shared string. Deserializing one interns it (up to [`INTERN_MAX`] bytes);
/// [`fresh`] and [`opt_fresh`] read strings that are unique per object (names, UIDs) without
/// interning them.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Str(Arc<str>);

impl Str {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A string of its own (not interned).
    pub fn new(s: &str) -> Self {
        Str(Arc::from(s))
    }

    /// Whether both are the same allocation (interned strings of equal text are).
    pub fn ptr_eq(a: &Str, b: &Str) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl Deref for Str {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Str {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Self {
        intern(s)
    }
}

impl From<String> for Str {
    fn from(s: String) -> Self {
        intern(&s)
    }
}

impl From<&String> for Str {
    fn from(s: &String) -> Self {
        intern(s)
    }
}

impl From<Str> for String {
    fn from(s: Str) -> Self {
        s.as_str().to_owned()
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Str> for String {
    fn eq(&self, other: &Str) -> bool {
        **self == *other.0
    }
}

impl PartialEq<Str> for &str {
    fn eq(&self, other: &Str) -> bool {
        **self == *other.0
    }
}

impl Serialize for Str {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

struct StrVisitor {
    interned: bool,
}

impl de::Visitor<'_> for StrVisitor {
    type Value = Str;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Str, E> {
        Ok(if self.interned {
            intern(v)
        } else {
            Str::new(v)
        })
    }
}

impl<'de> Deserialize<'de> for Str {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(StrVisitor { interned: true })
    }
}

impl schemars::JsonSchema for Str {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
    fn inline_schema() -> bool {
        true
    }
}

/// A string unique to its object (name, UID, resourceVersion, IP): read without interning.
struct Fresh(Str);

impl<'de> Deserialize<'de> for Fresh {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(StrVisitor { interned: false }).map(Fresh)
    }
}

/// `deserialize_with` for a `Str` that is not worth interning.
pub fn fresh<'de, D: Deserializer<'de>>(d: D) -> Result<Str, D::Error> {
    Option::<Fresh>::deserialize(d).map(|f| f.map(|f| f.0).unwrap_or_default())
}

/// `deserialize_with` for an `Option<Str>` that is not worth interning.
pub fn opt_fresh<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Str>, D::Error> {
    Option::<Fresh>::deserialize(d).map(|f| f.map(|f| f.0))
}

/// The shared string for `s` (its own copy when longer than [`INTERN_MAX`]).
pub fn intern(s: &str) -> Str {
    if s.len() > INTERN_MAX {
        return Str::new(s);
    }
    // A poisoned lock only means another thread panicked mid-insert; the set is still valid.
    let mut interner = INTERNER.lock().unwrap_or_else(|e| e.into_inner());
    interner.intern(s)
}

/// How many strings the process-wide interner holds (for tests and benchmarks).
pub fn interned() -> usize {
    INTERNER.lock().unwrap_or_else(|e| e.into_inner()).len()
}

static INTERNER: LazyLock<Mutex<Interner>> = LazyLock::new(|| Mutex::new(Interner::new()));

/// A set of shared strings that sweeps out the ones nobody else holds when it has doubled.
pub struct Interner {
    set: HashSet<Str, BuildHasherDefault<FxHasher>>,
    sweep_at: usize,
    floor: usize,
}

impl Default for Interner {
    fn default() -> Self {
        Self::new()
    }
}

impl Interner {
    /// The table is never swept below this many strings.
    pub const MIN_SWEEP: usize = 4096;

    pub fn new() -> Self {
        Self::with_floor(Self::MIN_SWEEP)
    }

    /// An interner swept first at `floor` strings (tests use a small one).
    pub fn with_floor(floor: usize) -> Self {
        Interner {
            set: HashSet::default(),
            sweep_at: floor.max(1),
            floor: floor.max(1),
        }
    }

    pub fn intern(&mut self, s: &str) -> Str {
        if let Some(found) = self.set.get(s) {
            return found.clone();
        }
        if self.set.len() >= self.sweep_at {
            self.sweep();
        }
        let new = Str::new(s);
        self.set.insert(new.clone());
        new
    }

    /// Drops the strings only the interner holds; the next sweep comes at twice what is left
    /// (never below the first floor).
    pub fn sweep(&mut self) {
        self.set.retain(|s| Arc::strong_count(&s.0) > 1);
        self.set.shrink_to_fit();
        self.sweep_at = (2 * self.set.len()).max(self.floor);
    }

    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

/// A fast non-cryptographic hash (the Fx hash rustc uses) for short strings.
#[derive(Default)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        for b in chunks.remainder() {
            self.add(u64::from(*b));
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
}

impl FxHasher {
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}
