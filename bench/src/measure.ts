/**
 * @module What `npm run bench` and `npm run bench:peers` measure with: a process's CPU time from
 * /proc, one autocannon window's figures, and medians over rounds.
 */
import { execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;

/** CPU time `pid` has used (utime + stime), in clock ticks. */
export function cpuTicks(pid: number): number {
  // Fields after the command name (which may contain spaces): utime and stime are 14th and 15th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
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
