-- window_open: the sample instant that opens a measurement window, for view energy (telemetry, per device) and
-- view engine_load (engine metrics): an aggregate over one series' sample times ts (ns) given the window start t0
-- (runs.measure_start_ns, ns):
--   window_open(ts, t0) = the last sample at or before t0, else the first sample                          ns
-- Its pair is window_close (run/window_close.sql); counters are read at these two instants.
-- reads: -
CREATE OR REPLACE MACRO window_open(ts, t0) AS coalesce(max(ts) FILTER (WHERE ts <= t0), min(ts));
