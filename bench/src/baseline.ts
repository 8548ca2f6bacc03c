/**
 * @module The baseline of `npm run bench`'s no-regression check: Parley's packages at an earlier
 * commit, built once into a folder of their own, on which the benchmark runs its current Parley
 * target (targets/parley.js). A GET row measured on it and on this checkout in the same run, in
 * interleaved rounds, differs by what the commits between them changed; a row compared with the
 * figures of an earlier run differs also by the machine, which on a shared host moved one row by
 * 57 % on code no commit had touched (docs/performance.md).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repository = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Makes Parley's packages at git revision `revision` ready to run and returns the path of this
 * benchmark's target script placed among them (its `@parley/*` imports resolve to that commit's
 * packages). The folder, `<tmpdir>/parley-bench-baseline-<commit>`, is kept for the next run: the
 * first run exports the commit (`git archive`), installs its lockfile (`npm ci`) and builds
 * `@parley/http` with what it depends on, about two minutes; later runs reuse it.
 * @throws Error when the revision is not in this clone, or its install or build fails (with the command's output)
 */
export function baselineTarget(revision: string): { commit: string; script: string } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repository, encoding: 'utf8' }).trim();
  let commit: string;
  try {
    commit = git('rev-parse', '--verify', '--quiet', `${revision}^{commit}`);
  } catch {
    throw new Error(
      `BENCH_BASELINE: ${revision} is not a commit of this clone (a shallow clone lacks it: git fetch --unshallow), or set BENCH_BASELINE=0 to leave the baseline out`,
    );
  }
  const folder = join(tmpdir(), `parley-bench-baseline-${commit}`);
  const built = join(folder, '.built');
  if (!existsSync(built)) {
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder, { recursive: true });
    console.log(`Building the baseline, Parley at ${commit.slice(0, 7)}, in ${folder} (once per machine)…`);
    const run = (command: string, args: string[]) =>
      execFileSync(command, args, { cwd: folder, stdio: ['ignore', 'ignore', 'inherit'] });
    run('sh', ['-c', `git -C '${repository}' archive ${commit} | tar -x`]);
    run('npm', ['ci', '--no-audit', '--no-fund']);
    run('npx', ['turbo', 'run', 'build', '--filter=@parley/http...', '--output-logs=errors-only']);
    writeFileSync(built, `${commit}\n`);
  }
  const script = join(folder, 'bench', 'targets', 'parley.js');
  mkdirSync(join(folder, 'bench', 'targets'), { recursive: true });
  copyFileSync(fileURLToPath(new URL('./targets/parley.js', import.meta.url)), script);
  return { commit, script };
}
