//! A service's shared state: what every handler of the service reads,
//! behind one `Arc`, cloned per request for the price of a counter.

use std::ops::Deref;
use std::sync::Arc;

/// The state of a service's handlers; derefs to what it holds.
pub struct Shared<T>(Arc<T>);

impl<T> Shared<T> {
    pub fn new(inner: T) -> Self {
        Self(Arc::new(inner))
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T> Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
