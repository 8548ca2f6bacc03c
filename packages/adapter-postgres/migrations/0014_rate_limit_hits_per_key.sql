-- 0014_rate_limit_hits_per_key: the hits one batch makes on one key write its row once (docs/storage.md,
-- "Rate limits").
--
-- rate_limit_hits (0005) upserted each hit on its own: a batch of a busy workspace's requests,
-- all on one key, wrote that row once per request. `tat` is indexed (rate_limits_by_tat, for the
-- sweep), so each of those writes was a new row version with an entry in both indexes, and a
-- batch of 25 hits cost PostgreSQL about 24 µs of CPU per hit (bench/PERFORMANCE-NOTES.md). Now a
-- key hit once in a batch is still one upsert, and a key hit several times is locked once (its
-- row created first when missing), its hits decided one after the other in the order given on the
-- state the one before left, and its row written once with the last state.
--
-- The decisions are the ones 0005 makes, hit by hit: GCRA on the key's theoretical arrival time
-- `tat`, at the later of the caller's time and the key's own clock `now_ms`, a refused hit leaving
-- `tat` unchanged. A missing row is a row whose `tat` and `now_ms` are below every time, which the
-- placeholder inserted for a missing key is (it never commits as such: the same transaction writes
-- the last state over it). Callers still sort a batch by key, so a key's hits are adjacent and two
-- processes' batches lock the rows they share in the same order.
--
-- Arguments and result as in 0005: parallel arrays, one element per hit (`keys`, `times` in ms
-- since the epoch, `intervals` and `tolerances` in ms); one row per hit, in the order given (`ord`,
-- from 1), with the key's state after it. Names are unqualified: the migration runner applies this
-- file with search_path set to the Parley schema (PARLEY_SCHEMA, default "parley"), and SET
-- search_path FROM CURRENT keeps that schema for the function's body.
CREATE OR REPLACE FUNCTION rate_limit_hits(keys text[], times bigint[], intervals bigint[], tolerances bigint[])
RETURNS TABLE (ord integer, decided_tat bigint, decided_allowed boolean, decided_at bigint)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  hits integer := coalesce(array_length(keys, 1), 0);
  run_start integer := 1;
  run_end integer;
  key_tat bigint;
  key_allowed boolean;
  key_now bigint;
BEGIN
  WHILE run_start <= hits LOOP
    run_end := run_start;
    WHILE run_end < hits AND keys[run_end + 1] = keys[run_start] LOOP
      run_end := run_end + 1;
    END LOOP;

    IF run_end = run_start THEN
      -- One hit of this key: one upsert, as in 0005.
      ord := run_start;
      INSERT INTO rate_limits AS r (key, tat, allowed, now_ms)
      VALUES (keys[run_start], times[run_start] + intervals[run_start], true, times[run_start])
      ON CONFLICT (key) DO UPDATE SET
        allowed = greatest(r.tat, greatest(r.now_ms, times[run_start])) - greatest(r.now_ms, times[run_start]) <= tolerances[run_start],
        tat = CASE
          WHEN greatest(r.tat, greatest(r.now_ms, times[run_start])) - greatest(r.now_ms, times[run_start]) <= tolerances[run_start]
          THEN greatest(r.tat, greatest(r.now_ms, times[run_start])) + intervals[run_start]
          ELSE r.tat
        END,
        now_ms = greatest(r.now_ms, times[run_start])
      RETURNING r.tat, r.allowed, r.now_ms INTO decided_tat, decided_allowed, decided_at;
      RETURN NEXT;
    ELSE
      -- Several: the row locked once, each hit decided on the state the one before left, one write.
      INSERT INTO rate_limits (key, tat, allowed, now_ms)
      VALUES (keys[run_start], -9223372036854775808, true, -9223372036854775808)
      ON CONFLICT (key) DO NOTHING;
      SELECT r.tat, r.allowed, r.now_ms INTO key_tat, key_allowed, key_now
      FROM rate_limits r WHERE r.key = keys[run_start] FOR UPDATE;
      FOR hit IN run_start .. run_end LOOP
        key_now := greatest(key_now, times[hit]);
        key_allowed := greatest(key_tat, key_now) - key_now <= tolerances[hit];
        IF key_allowed THEN
          key_tat := greatest(key_tat, key_now) + intervals[hit];
        END IF;
        ord := hit;
        decided_tat := key_tat;
        decided_allowed := key_allowed;
        decided_at := key_now;
        RETURN NEXT;
      END LOOP;
      UPDATE rate_limits SET tat = key_tat, allowed = key_allowed, now_ms = key_now WHERE key = keys[run_start];
    END IF;

    run_start := run_end + 1;
  END LOOP;
END
$$;

INSERT INTO schema_migrations (version, name) VALUES (14, 'rate_limit_hits_per_key') ON CONFLICT (version) DO NOTHING;
