//! The memcached text protocol, both directions.
