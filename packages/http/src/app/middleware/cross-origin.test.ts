/** @module CORS over `app.request()`: preflights without a key, headers on successes and errors, nothing when unset; `CORS_ORIGINS`. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../cli/config.js';
import { harness } from '../../test-support/harness.js';
import { EXPOSED_HEADERS } from './cross-origin.js';

const APP = 'http://app.example.com';

const preflight = (origin: string) => ({
  Origin: origin,
  'Access-Control-Request-Method': 'POST',
  'Access-Control-Request-Headers': 'authorization, content-type',
});

describe('CORS (corsOrigins)', () => {
  it('answers a preflight from an allowed origin with 204 and no key, counting no quota', async () => {
    const h = await harness({ corsOrigins: [APP, 'https://admin.example.com'] });
    const response = await h.call('OPTIONS', '/api/agents', { key: null, headers: preflight(APP) });
    expect(response.status).toBe(204);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBe(APP);
    expect(response.headers.get('Access-Control-Allow-Methods')).toBe('GET,POST,PATCH,DELETE');
    expect(response.headers.get('Access-Control-Allow-Headers')?.toLowerCase()).toContain('authorization');
    expect(response.headers.get('Vary')).toContain('Origin');
    expect(response.headers.get('RateLimit')).toBeNull();
  });

  it('still needs the key for the actual request; successes and errors carry the CORS headers', async () => {
    const h = await harness({ corsOrigins: [APP] });
    const ok = await h.call('GET', '/api/agents', { headers: { Origin: APP } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('Access-Control-Allow-Origin')).toBe(APP);
    expect(ok.headers.get('Access-Control-Expose-Headers')).toBe(EXPOSED_HEADERS.join(','));
    const unauthorized = await h.call('GET', '/api/agents', { key: null, headers: { Origin: APP } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('Access-Control-Allow-Origin')).toBe(APP);
    const missing = await h.call('GET', '/api/agents/agt_missing', { headers: { Origin: APP } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('Access-Control-Allow-Origin')).toBe(APP);
  });

  it('gives an origin not in the list no Access-Control-Allow-Origin, so its page cannot read the answer', async () => {
    const h = await harness({ corsOrigins: [APP] });
    const response = await h.call('GET', '/api/agents', { headers: { Origin: 'http://evil.example.com' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBeNull();
    const refused = await h.call('OPTIONS', '/api/agents', {
      key: null,
      headers: preflight('http://evil.example.com'),
    });
    expect(refused.headers.get('Access-Control-Allow-Origin')).toBeNull();
  });

  it("'*' allows every origin", async () => {
    const h = await harness({ corsOrigins: '*' });
    const response = await h.call('GET', '/api/agents', { headers: { Origin: 'http://anywhere.example' } });
    expect(response.headers.get('Access-Control-Allow-Origin')).toBe('*');
  });

  it('sends no CORS headers when unset, and a preflight is an ordinary unauthenticated request', async () => {
    const h = await harness();
    const response = await h.call('GET', '/api/agents', { headers: { Origin: APP } });
    expect([...response.headers.keys()].filter((name) => name.startsWith('access-control-'))).toEqual([]);
    const options = await h.call('OPTIONS', '/api/agents', { key: null, headers: preflight(APP) });
    expect(options.status).toBe(401);
    expect(options.headers.get('Access-Control-Allow-Origin')).toBeNull();
  });
});

describe('CORS_ORIGINS', () => {
  it('takes * or comma-separated origins; unset or empty means none', () => {
    expect(loadConfig({}).corsOrigins).toBeUndefined();
    expect(loadConfig({ CORS_ORIGINS: '' }).corsOrigins).toBeUndefined();
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
  });

  it.each([
    'https://app.example.com/',
    'https://app.example.com/path',
    'app.example.com',
    '*,https://app.example.com',
    'ftp://files.example.com',
    ',',
  ])('refuses %j with a message naming the variable', (value) => {
    expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(/CORS_ORIGINS: Expected \* or comma-separated origins/);
  });
});
