/** @module Test helper: JSON calls to a running server process with a bearer key. Not built. */

/** A JSON response: status and parsed body (`undefined` when empty). */
export interface ApiResult<T = any> {
  status: number;
  body: T;
}

/** Calls `base` + `path` with `key`, sending `json` when given. */
export async function apiCall<T = any>(
  base: string,
  key: string,
  method: string,
  path: string,
  json?: unknown,
): Promise<ApiResult<T>> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(json === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
  const text = await response.text();
  return { status: response.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

/** `apiCall` bound to one server and key; throws unless the status is `expected` (when given). */
export function apiFor(base: string, key: string) {
  return async <T = any>(method: string, path: string, json?: unknown, expected?: number): Promise<T> => {
    const result = await apiCall<T>(base, key, method, path, json);
    if (expected !== undefined && result.status !== expected)
      throw new Error(`${method} ${path}: expected ${expected}, got ${result.status} ${JSON.stringify(result.body)}`);
    return result.body;
  };
}
