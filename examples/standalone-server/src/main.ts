/**
 * @module Example (a): the ready-made server, started from code rather than with `parley serve`.
 * Settings come from the environment exactly as for the command (PORT, HOST, API_KEYS, …).
 * Run it: `npm run build && npm start -w @parley-examples/standalone-server`.
 */
import { loadConfig, startServer } from '@parley/http/server';

// Invalid settings throw a ConfigError naming every problem, as `parley serve` prints them.
const running = await startServer(loadConfig(process.env));

// Stop accepting connections, let in-flight requests finish, close Redis (when used), then exit.
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void running.close().then(() => process.exit(0));
  });
}
