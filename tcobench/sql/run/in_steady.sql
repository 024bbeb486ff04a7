-- in_steady(first_ns, decode_ns, lo_ns, hi_ns): a macro, not a view. The one rule for "this request decoded in the
-- steady state": its decode midpoint lies in the steady window [lo_ns, hi_ns] (view steady_window's
-- steady_start_ns, steady_end_ns). Read by view steady_window (its steady TPOT percentiles and request count) and by
-- the frontier's requests (tasks/analysis/compare/frontier.py), so both use the same requests.
--   first_ns      start_ns + ttft_ns: the request's first content token                                       ns
--   decode_ns     the time from its first to its last token (request_metrics.decode_ns)                         ns
--   in_steady     first_ns + decode_ns / 2 BETWEEN lo_ns AND hi_ns                                             BOOLEAN
-- reads: -
CREATE OR REPLACE MACRO in_steady(first_ns, decode_ns, lo_ns, hi_ns) AS
    first_ns + decode_ns / 2 BETWEEN lo_ns AND hi_ns;
