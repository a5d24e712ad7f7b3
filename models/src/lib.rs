//! Memcached recipes, modelled for mcsim.
