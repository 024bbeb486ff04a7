-- price_sources(ids, hardware_keys): a table macro, not a view. Where every price the runs of the LIST ids were costed
-- with comes from (view tco_sources, each row once), and the [rental] rows of the price table (table rental) that price
-- the hardware keys of the LIST hardware_keys, as term 'rental'; by term and key: the report's provenance
-- (tasks/report/assets/tables.py).
--   term, key, source, as_of     (tco_sources; rental: 'rental', its key, source, as_of)
-- reads: tco_sources; tables: rental
CREATE OR REPLACE MACRO price_sources(ids, hardware_keys) AS TABLE
SELECT DISTINCT term, key, source, as_of FROM tco_sources WHERE run_id IN (SELECT unnest(ids))
UNION ALL
SELECT 'rental', key, source, as_of FROM rental WHERE list_contains(hardware_keys, hardware)
ORDER BY term, key;
