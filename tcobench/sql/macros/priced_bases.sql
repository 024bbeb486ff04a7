-- priced_bases(): a table macro, not a view. The cost bases (texts, e.g. 'owned') some run of the store is priced
-- on (view cost_basis), in order: what a --basis without a priced run is told it may take.
--   basis
-- reads: cost_basis
CREATE OR REPLACE MACRO priced_bases() AS TABLE
SELECT DISTINCT basis FROM cost_basis ORDER BY 1;
