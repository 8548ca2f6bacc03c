/** @module Every relative link in README.md and docs/*.md resolves: the file exists and, with a `#fragment`, so does the heading. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const base = heading[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Relative link targets outside code: `[text](target)`, without external URLs. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('documentation links', () => {
  it('README.md is a front page of at most 20 KB', () => {
    expect(readFileSync(join(root, 'README.md')).length).toBeLessThanOrEqual(20 * 1024);
  });

  it.each(pages)('every relative link in %s resolves', (page) => {
    const markdown = readFileSync(join(root, page), 'utf8');
    const broken: string[] = [];
    for (const link of linksOf(markdown)) {
      const [path, fragment] = link.split('#') as [string, string | undefined];
      const target = path === '' ? join(root, page) : join(root, dirname(page), decodeURI(path));
      if (!existsSync(target)) broken.push(`${link} (no ${relative(root, target)})`);
      else if (fragment && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(fragment))
        broken.push(`${link} (no heading #${fragment})`);
    }
    expect(broken).toEqual([]);
  });
});
