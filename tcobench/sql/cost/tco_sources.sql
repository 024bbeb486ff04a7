-- tco_sources: one row per run and cost term, naming where each price assumption comes from.
-- Its columns (run_id, term, key, source, as_of), with their meaning: tco_sources.yml beside this file.
-- No arithmetic here: this view only shows provenance next to the numbers in `tco`.
-- reads: -; tables: runs, hardware, site, ops
CREATE OR REPLACE VIEW tco_sources AS
SELECT r.run_id, 'hardware' AS term, r.hardware_key AS key, h.source, h.as_of
FROM runs AS r LEFT JOIN hardware AS h ON h.key = r.hardware_key
UNION ALL
SELECT r.run_id, 'site' AS term, r.site_key AS key, s.source, s.as_of
FROM runs AS r LEFT JOIN site AS s ON s.key = r.site_key
UNION ALL
SELECT r.run_id, 'ops' AS term, r.ops_key AS key, o.source, o.as_of
FROM runs AS r LEFT JOIN ops AS o ON o.key = r.ops_key;
