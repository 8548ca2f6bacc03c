/**
 * @module The load generator of `npm run bench`: `wrk` when it is installed (Debian's `wrk`
 * package), autocannon otherwise, with the generator's own CPU time, so a run shows how much of
 * the machine the load took from the server it measures.
 */
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Which load generator this machine has: `wrk` when it is on PATH. */
export const LOAD_GENERATOR: 'wrk' | 'autocannon' =
  spawnSync('sh', ['-c', 'command -v wrk']).status === 0 ? 'wrk' : 'autocannon';

/** One load: `connections` keep-alive connections sending `method` to `url` for `seconds`. */
export interface LoadOptions {
  url: string;
  /**
   * Paths the requests go to in turn instead of `url`'s (each request the next one, over all
   * connections, from the first again after the last): a load spread over several records.
   */
  paths?: string[];
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  seconds: number;
}

/** What one load did: requests completed, 2xx among them, req/s, latency p50/p99 in ms, failures, and the generator's CPU µs. */
export interface LoadResult {
  requests: number;
  ok: number;
  rps: number;
  p50: number;
  p99: number;
  /** Non-2xx answers, socket errors and timeouts. */
  errors: number;
  /** CPU time the load generator used (user + system), in µs: wrk's own process, or this process while autocannon ran. */
  generatorCpuUs: number;
}

/** Runs one load with {@link LOAD_GENERATOR}. */
export function runLoad(options: LoadOptions): Promise<LoadResult> {
  return LOAD_GENERATOR === 'wrk' ? wrk(options) : autocannonLoad(options);
}

async function autocannonLoad(options: LoadOptions): Promise<LoadResult> {
  const before = process.cpuUsage();
  const result = await autocannon({
    url: options.url,
    method: options.method,
    connections: options.connections,
    duration: options.seconds,
    headers: options.headers,
    ...(options.body && { body: options.body }),
    ...(options.paths && { requests: [{ setupRequest: inTurn(options.paths) }] }),
  });
  const cpu = process.cpuUsage(before);
  return {
    requests: result.requests.total,
    ok: result['2xx'],
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
    generatorCpuUs: cpu.user + cpu.system,
  };
}

/** An autocannon `setupRequest` giving each request the next of `paths`. */
function inTurn(paths: string[]) {
  let next = 0;
  return <Request extends { path?: string }>(request: Request): Request => {
    const path = paths[next]!;
    next = (next + 1) % paths.length;
    return { ...request, path };
  };
}

/**
 * One wrk process (one thread: the server, and on these machines its store, need the other
 * core) with a Lua script setting the method, headers and body. The shell's `times` prints the
 * CPU its finished children used (from wait(2)'s rusage), which is wrk's own CPU time.
 */
async function wrk(options: LoadOptions): Promise<LoadResult> {
  const folder = mkdtempSync(join(tmpdir(), 'parley-bench-wrk-'));
  const script = join(folder, 'request.lua');
  const headers = Object.entries(options.headers).map(
    ([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`,
  );
  writeFileSync(
    script,
    [
      `wrk.method = "${options.method}"`,
      ...headers,
      ...(options.body ? [`wrk.body = ${JSON.stringify(options.body)}`] : []),
      // With paths: each request the next one (one thread, so one counter for every connection).
      ...(options.paths
        ? [
            `local paths = {${options.paths.map((path) => JSON.stringify(path)).join(', ')}}`,
            'local next = 0',
            'request = function()',
            '  next = next % #paths + 1',
            '  return wrk.format(nil, paths[next])',
            'end',
          ]
        : []),
    ].join('\n'),
  );
  try {
    const command = `wrk -t1 -c${options.connections} -d${options.seconds}s --timeout 10s --latency -s '${script}' '${options.url}'; times`;
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn('sh', ['-c', command], { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}: ${text}`))));
    });
    return parseWrk(output);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** wrk's summary (with `--latency`) followed by the shell's `times` lines. */
function parseWrk(output: string): LoadResult {
  const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? 0);
  const requests = number(/(\d+) requests in/);
  const non2xx = number(/Non-2xx or 3xx responses: (\d+)/);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const socketErrors = socket ? socket.slice(1).reduce((sum, count) => sum + Number(count), 0) : 0;
  const latencyMs = (percent: number) => {
    const match = new RegExp(`^\\s+${percent}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(output);
    if (!match) return NaN;
    return Number(match[1]) * ({ us: 0.001, ms: 1, s: 1000 } as const)[match[2] as 'us' | 'ms' | 's'];
  };
  // `times`: the shell's own user and system time, then its children's, as `0m1.230000s 0m0.450000s`.
  const times = [...output.matchAll(/^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/gm)].at(-1);
  const seconds = (minutes: string, rest: string) => Number(minutes) * 60 + Number(rest);
  return {
    requests,
    ok: requests - non2xx,
    rps: number(/Requests\/sec:\s+([\d.]+)/),
    p50: latencyMs(50),
    p99: latencyMs(99),
    errors: non2xx + socketErrors,
    generatorCpuUs: times ? (seconds(times[1]!, times[2]!) + seconds(times[3]!, times[4]!)) * 1e6 : NaN,
  };
}
