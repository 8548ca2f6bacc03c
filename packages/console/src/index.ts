/**
 * @module @parley/console: Parley's web console — a static single-page app (built by Vite into
 * `dist/app`) that calls the Parley API it is served beside — and {@link consoleRoutes}, the Hono
 * routes that serve it with a strict Content-Security-Policy, long-lived caching of its hashed
 * files and compression (docs/console.md).
 */
import { Hono, type Context } from 'hono';
import { basePath } from 'hono/route';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';

/**
 * Where the built app lives: `dist/app` of this package (from the sources too, so tests that run
 * them serve the built app).
 */
export const consoleAppDirectory: string = fileURLToPath(new URL('../dist/app/', import.meta.url));

/**
 * The Content-Security-Policy of every console response (CSP Level 3): scripts, styles, images,
 * fonts and requests from the console's own origin only; no inline script or style, no plug-ins,
 * no `<base>` and never inside a frame. The app makes no request to anywhere else.
 */
export const CONSOLE_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Header fields of every console response (security headers; `Vary` because of compression). */
const COMMON_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONSOLE_CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  Vary: 'Accept-Encoding',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** One file of the app, with its compressed forms (made once, when the app is first served). */
interface StaticFile {
  type: string;
  body: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer> | undefined;
  br: Uint8Array<ArrayBuffer> | undefined;
  etag: string;
}

const bytes = (buffer: Buffer): Uint8Array<ArrayBuffer> => new Uint8Array(buffer);

function load(directory: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else {
        const body = readFileSync(path);
        const type = TYPES[extname(name)] ?? 'application/octet-stream';
        // Text compresses; below 1 KiB it is not worth a header.
        const compressible = !type.startsWith('image/png') && body.length >= 1024;
        files.set(relative(directory, path).split(sep).join('/'), {
          type,
          body: bytes(body),
          gzip: compressible ? bytes(gzipSync(body, { level: 9 })) : undefined,
          br: compressible
            ? bytes(brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }))
            : undefined,
          etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
        });
      }
    }
  };
  walk(directory);
  return files;
}

/** The encodings the request accepts, by RFC 9110 §12.5.3 (a `q=0` refuses one). */
function accepts(header: string | undefined, coding: string): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [name, ...params] = part.trim().split(';');
    if (name?.trim().toLowerCase() !== coding) return false;
    const q = params.map((param) => param.trim()).find((param) => param.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

function send(c: Context, file: StaticFile, cacheControl: string): Response {
  const headers = new Headers({ ...COMMON_HEADERS, 'Content-Type': file.type, 'Cache-Control': cacheControl });
  headers.set('ETag', file.etag);
  if (c.req.header('If-None-Match') === file.etag) return new Response(null, { status: 304, headers });
  const encoding = c.req.header('Accept-Encoding');
  let body = file.body;
  if (file.br && accepts(encoding, 'br')) {
    body = file.br;
    headers.set('Content-Encoding', 'br');
  } else if (file.gzip && accepts(encoding, 'gzip')) {
    body = file.gzip;
    headers.set('Content-Encoding', 'gzip');
  }
  headers.set('Content-Length', String(body.byteLength));
  return new Response(c.req.method === 'HEAD' ? null : body, { status: 200, headers });
}

function plain(status: 404 | 503, text: string): Response {
  return new Response(text, {
    status,
    headers: { ...COMMON_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' },
  });
}

/** Options of {@link consoleRoutes}. */
export interface ConsoleRoutesOptions {
  /** The built app to serve; default {@link consoleAppDirectory}. */
  directory?: string;
}

/**
 * The console's routes, to be mounted beside the Parley API: `host.route('/console', consoleRoutes())`
 * when the API is at `/api` (the app calls `../api/…` relative to itself, so mount it as a sibling
 * of `api` under whatever prefix the API has).
 * - `GET <mount>` redirects (308) to `<mount>/`, so the app's relative URLs resolve;
 * - `GET <mount>/` is the app's page (`Cache-Control: no-cache`, with an `ETag`);
 * - `GET <mount>/assets/<file>` are its scripts, styles and images, whose names carry a hash of
 *   their content: `Cache-Control: public, max-age=31536000, immutable`; unknown names are 404.
 * Every response carries {@link CONSOLE_CONTENT_SECURITY_POLICY} and is compressed (Brotli or
 * gzip, as `Accept-Encoding` allows) when that is worth it. The files are read, hashed and
 * compressed once, on the first request. Without a built app the page is 503 saying so.
 */
export function consoleRoutes(options: ConsoleRoutesOptions = {}): Hono {
  const directory = options.directory ?? consoleAppDirectory;
  let files: Map<string, StaticFile> | undefined;
  const app = new Hono();
  const filesOrNothing = () => {
    try {
      files ??= load(directory);
    } catch {
      return undefined;
    }
    return files;
  };
  const page = (c: Context) => {
    const index = filesOrNothing()?.get('index.html');
    if (!index) return plain(503, 'The console is not built: run `npm run build` (packages/console).');
    return send(c, index, 'no-cache');
  };
  app.get('/*', (c) => {
    // The path below the mount point: '' (the mount point itself), '/', '/assets/<file>' or other.
    const rest = c.req.path.slice(basePath(c).replace(/\/$/, '').length);
    if (rest === '') {
      // The page's relative URLs need the trailing slash.
      const url = new URL(c.req.url);
      return c.redirect(`${url.pathname}/${url.search}`, 308);
    }
    if (rest === '/') return page(c);
    const asset = /^\/assets\/([^/]+)$/.exec(rest)?.[1];
    const file = asset === undefined ? undefined : filesOrNothing()?.get(`assets/${asset}`);
    if (!file) return plain(404, 'Not found.');
    return send(c, file, 'public, max-age=31536000, immutable');
  });
  return app;
}
