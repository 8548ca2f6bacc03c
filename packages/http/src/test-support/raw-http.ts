/**
 * @module Test helpers: HTTP/1.1 over a raw TCP socket, to send what well-behaved clients never
 * send (bad framing, huge headers, bodies the server refuses) and to watch how the server answers
 * and closes. Not built.
 */
import { connect, type Socket } from 'node:net';

/** A parsed response, and how the connection ended. */
export interface RawResponse {
  status: number;
  /** Header names lowercased. */
  headers: Record<string, string>;
  body: string;
  /** The server closed its side (FIN) after the response. */
  closedByServer: boolean;
  /** A socket error seen while sending or reading (e.g. `ECONNRESET`), if any. */
  error?: string;
}

/** A request to write: the head (request line and header lines, without the blank line) and a body. */
export interface RawRequest {
  head: string[];
  /** Sent as is after the head, or chunked in 64 KiB chunks when `chunked`. */
  body?: Buffer;
  chunked?: boolean;
  /** Bytes written after the head and body (e.g. a second, pipelined request). */
  trailer?: string;
}

/** The request's bytes on the wire. */
function encode(request: RawRequest): Uint8Array[] {
  const parts: Uint8Array[] = [Buffer.from(`${request.head.join('\r\n')}\r\n\r\n`)];
  const body = request.body ?? Buffer.alloc(0);
  if (request.chunked) {
    for (let offset = 0; offset < body.length; offset += 65_536) {
      const chunk = body.subarray(offset, offset + 65_536);
      parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
    }
    parts.push(Buffer.from('0\r\n\r\n'));
  } else if (body.length > 0) {
    parts.push(body);
  }
  if (request.trailer) parts.push(Buffer.from(request.trailer));
  return parts;
}

/** A chunked body (no trailer fields) from the start of `data`; `null` while incomplete. */
function dechunk(data: Buffer): { body: Buffer; rest: Buffer } | null {
  const chunks: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd < 0) return null;
    const size = parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16);
    if (size === 0)
      return data.length < lineEnd + 4 ? null : { body: Buffer.concat(chunks), rest: data.subarray(lineEnd + 4) };
    if (data.length < lineEnd + 2 + size + 2) return null;
    chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}

/**
 * Parses one response (status line, headers, a `Content-Length` or chunked body) from the start of `data`;
 * `null` while incomplete. Interim 1xx responses are skipped.
 */
export function parseResponse(data: Buffer): { response: Omit<RawResponse, 'closedByServer'>; rest: Buffer } | null {
  let buffer = data;
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const [statusLine = '', ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(statusLine.split(' ')[1]);
    if (status >= 100 && status < 200) {
      buffer = buffer.subarray(end + 4);
      continue;
    }
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      const chunked = dechunk(buffer.subarray(end + 4));
      return chunked && { response: { status, headers, body: chunked.body.toString('utf8') }, rest: chunked.rest };
    }
    const length = Number(headers['content-length'] ?? 0);
    if (buffer.length < end + 4 + length) return null;
    return {
      response: { status, headers, body: buffer.subarray(end + 4, end + 4 + length).toString('utf8') },
      rest: buffer.subarray(end + 4 + length),
    };
  }
}

/**
 * Sends `request` on a new connection to `port` on 127.0.0.1 while reading, resolves with the
 * first response once it is complete and the connection has ended (the client half-closes after
 * the response, as curl and undici do), or rejects when no whole response arrived.
 */
export function rawExchange(port: number, request: RawRequest, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let received: Buffer = Buffer.alloc(0);
    let parsed: Omit<RawResponse, 'closedByServer'> | undefined;
    let closedByServer = false;
    let error: string | undefined;
    const timer = setTimeout(() => socket.destroy(new Error(`no complete response within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (parsed) return;
      const result = parseResponse(received);
      if (!result) return;
      parsed = result.response;
      // Done reading: stop sending (a refused body need not be sent) and close our side.
      socket.end();
    });
    socket.on('end', () => (closedByServer = true));
    socket.on('error', (cause: NodeJS.ErrnoException) => (error = cause.code ?? cause.message));
    socket.on('close', () => {
      clearTimeout(timer);
      if (parsed) resolve({ ...parsed, closedByServer, ...(error ? { error } : {}) });
      else
        reject(
          new Error(
            `connection closed without a complete response (${error ?? 'no error'}; ${received.length} bytes received)`,
          ),
        );
    });
    for (const part of encode(request)) {
      if (socket.writable) socket.write(part);
    }
  });
}

/** Every response the server sends on one connection, after writing `bytes` at once; resolves when the connection ends. */
export function rawResponses(port: number, bytes: string | Buffer, timeoutMs = 10_000): Promise<RawResponse[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.on('error', () => {});
    socket.on('end', () => socket.end());
    socket.on('close', () => {
      clearTimeout(timer);
      const responses: RawResponse[] = [];
      let rest: Buffer = received;
      for (let next = parseResponse(rest); next; next = parseResponse(rest)) {
        responses.push({ ...next.response, closedByServer: true });
        rest = next.rest;
      }
      if (responses.length === 0)
        reject(new Error(`no response (${received.length} bytes: ${received.toString('latin1').slice(0, 200)})`));
      else resolve(responses);
    });
    socket.write(bytes);
  });
}
