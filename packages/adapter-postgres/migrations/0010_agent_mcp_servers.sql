-- 0010_agent_mcp_servers: agents gain `mcpServers`, the MCP servers whose tools they may call
-- (docs/mcp.md). Every agent stored before gets the default, none (`[]`); its header values live
-- in the hidden `mcpHeaders` field, absent until it has some. The version goes up by one, as for
-- any write that changes what the API returns, so entity tags taken before no longer match.
--
-- Names are unqualified: the migration runner applies this file with search_path set to the
-- Parley schema (PARLEY_SCHEMA, default "parley").
UPDATE agents
SET data = data || '{"mcpServers": []}'::jsonb,
    version = version + 1
WHERE NOT data ? 'mcpServers';

-- Recorded here too, so a DBA applying the files with their own tooling leaves a schema Parley sees as current.
INSERT INTO schema_migrations (version, name) VALUES (10, 'agent_mcp_servers') ON CONFLICT (version) DO NOTHING;
