/**
 * @module What `npm run bench` and `npm run bench:peers` measure with: a process's CPU time from
 * /proc, one autocannon window's figures, and medians over rounds.
 */
import { execSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;

/** CPU time `pid` has used (utime + stime), in clock ticks. */
export function cpuTicks(pid: number): number {
  // Fields after the command name (which may contain spaces): utime and stime are 14th and 15th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * CPU time a server of several processes has used, in clock ticks: utime + stime of `root` and of
 * every process descending from it (found by walking the parent pids in /proc), plus `root`'s
 * cutime + cstime — the CPU of the children it has already reaped, so that a process which exits
 * between two readings (a PostgreSQL backend whose client closed its connection) still counts.
 * For a PostgreSQL server, `root` is its postmaster.
 */
export function processTreeTicks(root: number): number {
  const parents = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  let reaped = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // After the command name: state, ppid, …; utime, stime, cutime, cstime are the 14th–17th fields.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(entry);
    const parent = Number(fields[1]);
    parents.set(parent, [...(parents.get(parent) ?? []), pid]);
    ticks.set(pid, Number(fields[11]) + Number(fields[12]));
    if (pid === root) reaped = Number(fields[13]) + Number(fields[14]);
  }
  let total = reaped;
  for (const found = [root]; found.length > 0;) {
    const pid = found.pop()!;
    total += ticks.get(pid) ?? 0;
    found.push(...(parents.get(pid) ?? []));
  }
  return total;
}

/** µs of CPU per request: `ticks` of CPU over `requests` requests. */
export function cpuUsPerRequest(ticks: number, requests: number): number {
  return ((ticks / TICKS_PER_SECOND) * 1e6) / Math.max(requests, 1);
}

/** One measured window: server CPU µs per request, req/s, latency p50/p99 in ms, failed requests. */
export interface Figures {
  cpuUs: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

/** The median of each figure over rounds; errors are summed. */
export function medianFigures(runs: Figures[]): Figures {
  return {
    cpuUs: median(runs.map((run) => run.cpuUs)),
    rps: median(runs.map((run) => run.rps)),
    p50: median(runs.map((run) => run.p50)),
    p99: median(runs.map((run) => run.p99)),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}

/** `value` with thousands separators and `digits` decimals. */
export const fixed = (value: number, digits = 0) =>
  value.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** A Redis server's own CPU time (`used_cpu_user` + `used_cpu_sys`) from the text of `INFO cpu`, in µs. */
export function redisCpuUs(info: string): number {
  const seconds = (field: string) => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6;
}
