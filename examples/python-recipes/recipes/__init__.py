"""memcached recipes as a Python service writes them, for `mcsim test`."""
