-- 0006_agent_settings: an agent's own settings become top-level fields of its record
-- (docs/api.md#resources, "Agent settings"). Parley used to read `tools`, `maxSteps` and `autoReply`
-- from inside `configuration`; `configuration` is now the caller's alone and never read.
--
-- Every agent stored before (a record without a top-level `tools`) gets the three from its
-- configuration, and its configuration loses them; every other key of it stays. A key moves only
-- when its value is one Parley acted on: `tools` a list of objects, `maxSteps` a number,
-- `autoReply` a boolean. Any other value was never a setting (Parley used the default), so it stays
-- in the configuration and the setting takes its default: no tools, 8 steps, replies on.
-- The version goes up by one, as for any write that changes what the API returns, so entity tags
-- taken before the upgrade no longer match. Events recorded before keep the agent as it was then.
--
-- Names are unqualified: the migration runner applies this file with search_path set to the
-- Parley schema (PARLEY_SCHEMA, default "parley").
WITH old AS (
  SELECT workspace_id, id, COALESCE(data -> 'configuration', '{}'::jsonb) AS conf
  FROM agents
  WHERE NOT data ? 'tools'
), settings AS (
  SELECT workspace_id, id, conf,
         COALESCE(jsonb_typeof(conf -> 'tools') = 'array'
                  AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements(conf -> 'tools') AS tool
                                  WHERE jsonb_typeof(tool) <> 'object'), false) AS has_tools,
         COALESCE(jsonb_typeof(conf -> 'maxSteps') = 'number', false) AS has_max_steps,
         COALESCE(jsonb_typeof(conf -> 'autoReply') = 'boolean', false) AS has_auto_reply
  FROM old
)
UPDATE agents AS a
SET data = a.data || jsonb_build_object(
      'configuration', s.conf - array_remove(ARRAY[
        CASE WHEN s.has_tools THEN 'tools' END,
        CASE WHEN s.has_max_steps THEN 'maxSteps' END,
        CASE WHEN s.has_auto_reply THEN 'autoReply' END], NULL),
      'tools', CASE WHEN s.has_tools THEN s.conf -> 'tools' ELSE '[]'::jsonb END,
      'maxSteps', CASE WHEN s.has_max_steps THEN s.conf -> 'maxSteps' ELSE '8'::jsonb END,
      'autoReply', CASE WHEN s.has_auto_reply THEN s.conf -> 'autoReply' ELSE 'true'::jsonb END),
    version = a.version + 1
FROM settings AS s
WHERE a.workspace_id = s.workspace_id AND a.id = s.id;

-- Recorded here too, so a DBA applying the files with their own tooling leaves a schema Parley sees as current.
INSERT INTO schema_migrations (version, name) VALUES (6, 'agent_settings') ON CONFLICT (version) DO NOTHING;
