//! Talking to a real memcached.
