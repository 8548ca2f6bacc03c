/**
 * @module Every TypeScript block (```ts / ```typescript) in README.md, docs/*.md and
 * packages/*\/README.md compiles against the workspace packages, so the examples cannot rot. Each
 * block is written as a module of its own into a temporary folder inside the repository (so
 * `@parley/*`, `hono`, `ioredis`… resolve as after an install: the built packages' declarations,
 * which `npm test` builds first) and the folder is compiled once with the repository's compiler
 * options (strict). A block that is deliberately a fragment says so on the line before its fence,
 * `<!-- fragment: why -->`, and is skipped; keep those rare.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  ...readdirSync(join(root, 'packages'))
    .map((name) => `packages/${name}/README.md`)
    .filter((page) => {
      try {
        return readFileSync(join(root, page)).length > 0;
      } catch {
        return false;
      }
    }),
];

interface Block {
  page: string;
  /** 1-based line of the block's first code line in `page`. */
  line: number;
  code: string;
  /** The reason given in `<!-- fragment: … -->`, when the block is not compiled. */
  fragment?: string;
}

function blocksOf(page: string): Block[] {
  const lines = readFileSync(join(root, page), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index++) {
    const open = /^(\s*)```(ts|typescript)\s*$/.exec(lines[index]!);
    if (!open) {
      // Skip over other fenced blocks so a ```ts inside them is not taken for one.
      const other = /^(\s*)(```+)/.exec(lines[index]!);
      if (other) while (++index < lines.length && !lines[index]!.trimStart().startsWith(other[2]!));
      continue;
    }
    const indent = open[1]!.length;
    const start = index + 1;
    while (++index < lines.length && lines[index]!.trim() !== '```');
    const code = lines
      .slice(start, index)
      .map((line) => line.slice(indent))
      .join('\n');
    const fragment = /^\s*<!--\s*fragment:\s*(.+?)\s*-->\s*$/.exec(lines[start - 2] ?? '')?.[1];
    blocks.push({ page, line: start + 1, code, ...(fragment ? { fragment } : {}) });
  }
  return blocks;
}

const blocks = pages.flatMap(blocksOf);
const checked = blocks.filter((block) => block.fragment === undefined);
const folder = mkdtempSync(join(root, '.docs-typescript-'));
const fileOf = (block: Block) =>
  join(folder, `${block.page.replaceAll('/', '_').replace(/\.md$/, '')}_L${block.line}.ts`);
const problems = new Map<string, string[]>();

beforeAll(() => {
  for (const block of checked) writeFileSync(fileOf(block), `${block.code}\nexport {};\n`);
  const base = ts.readConfigFile(join(root, 'tsconfig.base.json'), ts.sys.readFile).config as {
    compilerOptions: object;
  };
  const { options } = ts.convertCompilerOptionsFromJson(
    { ...base.compilerOptions, noEmit: true, declaration: false, declarationMap: false, sourceMap: false },
    folder,
  );
  const program = ts.createProgram(checked.map(fileOf), options);
  const byFile = new Map(checked.map((block) => [ts.sys.resolvePath(fileOf(block)).replaceAll('\\', '/'), block]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName ?? '(options)';
    const block = byFile.get(file);
    const where = diagnostic.file
      ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
      : { line: 0, character: 0 };
    // Named by the page's own line, so the message points into the Markdown.
    const at = block ? `${block.page}:${block.line + where.line}` : `${file}:${where.line + 1}`;
    const text = `${at}:${where.character + 1} TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(
      diagnostic.messageText,
      '\n',
    )}`;
    const key = block ? `${block.page}:${block.line}` : '(outside the blocks)';
    problems.set(key, [...(problems.get(key) ?? []), text]);
  }
}, 120_000);

afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('TypeScript blocks in the documentation', () => {
  it('finds the blocks, and fragments are rare and say why', () => {
    expect(checked.length).toBeGreaterThanOrEqual(15);
    expect(blocks.length - checked.length).toBeLessThanOrEqual(3);
  });

  it('reports nothing outside the blocks themselves', () => {
    expect(problems.get('(outside the blocks)') ?? []).toEqual([]);
  });

  it.each(checked.map((block) => `${block.page}:${block.line}`))('the block at %s compiles', (key) => {
    expect(problems.get(key) ?? []).toEqual([]);
  });
});
