-- 0005_rate_limit_batches: many rate-limit hits decided in one statement (docs/storage.md,
-- "Rate limits").
--
-- Each process sends the hits of all requests that arrived while its previous batch was in
-- flight as one call of this function: one round trip for many requests instead of one each.
-- Every hit is still its own upsert, decided in the order given, exactly as a single hit was
-- decided before (0004): GCRA on the key's theoretical arrival time `tat`, at the later of the
-- caller's time and the key's own clock `now_ms`, a refused hit leaving `tat` unchanged. Callers
-- sort a batch by key, so two processes' batches lock the rows they share in the same order and
-- never deadlock.
--
-- Arguments are parallel arrays, one element per hit: `keys` (the workspace id), `times` (the
-- caller's time, ms since the epoch), `intervals` (the emission interval, ms) and `tolerances`
-- (limit − 1 intervals, ms). One row per hit, in the order given (`ord`, from 1).
--
-- Names are unqualified: the migration runner applies this file with search_path set to the
-- Parley schema (PARLEY_SCHEMA, default "parley"), and SET search_path FROM CURRENT keeps that
-- schema for the function's body whatever the caller's search_path is.
CREATE FUNCTION rate_limit_hits(keys text[], times bigint[], intervals bigint[], tolerances bigint[])
RETURNS TABLE (ord integer, decided_tat bigint, decided_allowed boolean, decided_at bigint)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  FOR i IN 1 .. coalesce(array_length(keys, 1), 0) LOOP
    ord := i;
    INSERT INTO rate_limits AS r (key, tat, allowed, now_ms)
    VALUES (keys[i], times[i] + intervals[i], true, times[i])
    ON CONFLICT (key) DO UPDATE SET
      allowed = greatest(r.tat, greatest(r.now_ms, times[i])) - greatest(r.now_ms, times[i]) <= tolerances[i],
      tat = CASE
        WHEN greatest(r.tat, greatest(r.now_ms, times[i])) - greatest(r.now_ms, times[i]) <= tolerances[i]
        THEN greatest(r.tat, greatest(r.now_ms, times[i])) + intervals[i]
        ELSE r.tat
      END,
      now_ms = greatest(r.now_ms, times[i])
    RETURNING r.tat, r.allowed, r.now_ms INTO decided_tat, decided_allowed, decided_at;
    RETURN NEXT;
  END LOOP;
END
$$;

INSERT INTO schema_migrations (version, name) VALUES (5, 'rate_limit_batches') ON CONFLICT (version) DO NOTHING;
