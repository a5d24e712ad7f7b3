//! `stats settings`: the start-up settings, as memcached 1.6.18 (Debian's build, with
//! extstore and TLS compiled in) reports them when started as
//! `memcached -l 127.0.0.1 -p PORT -U 0 -m MB -I BYTES -o slab_chunk_max=BYTES [-M]`.
//! The settings the simulator models come from its [`ServerConfig`]; the rest are that
//! build's defaults, which no simulated behaviour depends on.

use crate::server::config::ServerConfig;

/// The `STAT` lines, in memcached's order. `verbosity` is the level last set with the
/// `verbosity` command and `oldest` the server time before which `flush_all` hid items.
pub fn settings_report(
    config: &ServerConfig,
    verbosity: u32,
    oldest: u32,
) -> Vec<(String, String)> {
    let evictions = if config.no_evict { "off" } else { "on" };
    let modelled = [
        ("maxbytes", config.memory_limit.to_string()),
        ("tcpport", config.tcp_port.to_string()),
        ("verbosity", verbosity.to_string()),
        ("oldest", oldest.to_string()),
        ("evictions", evictions.to_string()),
        ("growth_factor", format!("{:.2}", config.growth_factor)),
        ("item_size_max", config.item_size_max.to_string()),
        ("slab_chunk_max", config.slab_chunk_max.to_string()),
    ];
    BUILD_DEFAULTS
        .iter()
        .map(|&(name, value)| {
            let value = modelled
                .iter()
                .find(|(n, _)| *n == name)
                .map_or_else(|| value.to_string(), |(_, v)| v.clone());
            (name.to_string(), value)
        })
        .collect()
}

/// Every setting in memcached's order, with the build's default (an empty value is
/// filled from the configuration).
const BUILD_DEFAULTS: [(&str, &str); 76] = [
    ("maxbytes", ""),
    ("maxconns", "1024"),
    ("tcpport", ""),
    ("udpport", "0"),
    ("inter", "127.0.0.1"),
    ("verbosity", ""),
    ("oldest", ""),
    ("evictions", ""),
    ("domain_socket", "NULL"),
    ("umask", "700"),
    ("shutdown_command", "no"),
    ("growth_factor", ""),
    ("chunk_size", "48"),
    ("num_threads", "4"),
    ("num_threads_per_udp", "4"),
    ("stat_key_prefix", ":"),
    ("detail_enabled", "no"),
    ("reqs_per_event", "20"),
    ("cas_enabled", "yes"),
    ("tcp_backlog", "1024"),
    ("binding_protocol", "auto-negotiate"),
    ("auth_enabled_sasl", "no"),
    ("auth_enabled_ascii", "no"),
    ("item_size_max", ""),
    ("maxconns_fast", "yes"),
    ("hashpower_init", "0"),
    ("slab_reassign", "yes"),
    ("slab_automove", "1"),
    ("slab_automove_ratio", "0.80"),
    ("slab_automove_window", "30"),
    ("slab_chunk_max", ""),
    ("lru_crawler", "yes"),
    ("lru_crawler_sleep", "100"),
    ("lru_crawler_tocrawl", "0"),
    ("tail_repair_time", "0"),
    ("flush_enabled", "yes"),
    ("dump_enabled", "yes"),
    ("hash_algorithm", "murmur3"),
    ("lru_maintainer_thread", "yes"),
    ("lru_segmented", "yes"),
    ("hot_lru_pct", "20"),
    ("warm_lru_pct", "40"),
    ("hot_max_factor", "0.20"),
    ("warm_max_factor", "2.00"),
    ("temp_lru", "no"),
    ("temporary_ttl", "61"),
    ("idle_timeout", "0"),
    ("watcher_logbuf_size", "262144"),
    ("worker_logbuf_size", "65536"),
    ("read_buf_mem_limit", "0"),
    ("track_sizes", "no"),
    ("inline_ascii_response", "no"),
    ("ext_item_size", "512"),
    ("ext_item_age", "4294967295"),
    ("ext_low_ttl", "0"),
    ("ext_recache_rate", "2000"),
    ("ext_wbuf_size", "4194304"),
    ("ext_compact_under", "0"),
    ("ext_drop_under", "0"),
    ("ext_max_sleep", "1000000"),
    ("ext_max_frag", "0.80"),
    ("slab_automove_freeratio", "0.010"),
    ("ext_drop_unread", "no"),
    ("ssl_enabled", "no"),
    ("ssl_chain_cert", "(null)"),
    ("ssl_key", "(null)"),
    ("ssl_verify_mode", "0"),
    ("ssl_keyformat", "1"),
    ("ssl_ciphers", "NULL"),
    ("ssl_ca_cert", "NULL"),
    ("ssl_wbuf_size", "16384"),
    ("ssl_session_cache", "no"),
    ("ssl_kernel_tls", "no"),
    ("ssl_min_version", "tlsv1.2"),
    ("num_napi_ids", "(null)"),
    ("memory_file", "(null)"),
];
