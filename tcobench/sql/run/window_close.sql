-- window_close: the sample instant that closes a measurement window, for view energy (telemetry, per device) and
-- view engine_load (engine metrics): an aggregate over one series' sample times ts (ns) given the window end t1
-- (runs.measure_end_ns, ns):
--   window_close(ts, t1) = the first sample at or after t1, else the last sample                          ns
-- Its pair is window_open (run/window_open.sql); counters are read at these two instants.
-- reads: -
CREATE OR REPLACE MACRO window_close(ts, t1) AS coalesce(min(ts) FILTER (WHERE ts >= t1), max(ts));
