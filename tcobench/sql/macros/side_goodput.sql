-- side_goodput(on_basis, ids): a table macro, not a view. One row: the night-weighted (macro night_weighted_mean) goodput
-- of the runs of the LIST ids that have an SLO, on the cost basis on_basis (text; view goodput).
--   good_fraction         night-weighted mean of goodput.good_fraction                                fraction
--   good_tokens_per_usd   night-weighted mean of goodput.good_output_tokens_per_usd                  tokens/USD
-- reads: goodput, night_weighted_mean
CREATE OR REPLACE MACRO side_goodput(on_basis, ids) AS TABLE
SELECT
    night_weighted_mean(list((good_fraction, date))) AS good_fraction,
    night_weighted_mean(list((good_output_tokens_per_usd, date))) AS good_tokens_per_usd
FROM goodput
WHERE basis = on_basis AND run_id IN (SELECT unnest(ids)) AND has_slo;
