/**
 * Exchange (apps/api/src/http/exchange.ts): one request and its answer over node's own objects. A real
 * node:http server builds an Exchange per request and answers what it read; requests go over node:http
 * so that Host and other headers can be set freely.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TRUST_NO_PROXY, parseTrustedProxies, type ProxyTrust } from '@hearth/core/net';
import { Exchange } from '../../apps/api/src/http/exchange';

interface Seen {
  path: string;
  query: Record<string, unknown>;
  queryIsFresh: boolean;
  contentLength: number | null;
  header: string;
  ip: string;
  host: string;
  protocol: string;
}

let server: http.Server;
let port: number;
/** What the next request is answered with, after the Exchange has read it. */
let trust: ProxyTrust = TRUST_NO_PROXY;
let respond: (exchange: Exchange) => void = () => undefined;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const exchange = new Exchange(req, res, trust);
    const first = exchange.query();
    first.mutated = 'yes';
    const seen: Seen = {
      path: exchange.path,
      query: exchange.query(),
      queryIsFresh: exchange.query().mutated === undefined,
      contentLength: exchange.contentLength ?? null,
      header: exchange.header('x-repeated'),
      ip: exchange.ip,
      host: exchange.host,
      protocol: exchange.protocol,
    };
    req.resume();
    req.on('end', () => {
      exchange.body = seen;
      respond(exchange);
      exchange.send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
afterEach(() => {
  trust = TRUST_NO_PROXY;
  respond = () => undefined;
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  seen: Seen;
}

function request(path: string, options: { method?: string; headers?: http.OutgoingHttpHeaders; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, seen: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('the request', () => {
  test('the path is the URL before the query, as sent (not decoded)', async () => {
    expect((await request('/v1/config/tables/a%20b?x=1')).seen.path).toBe('/v1/config/tables/a%20b');
    expect((await request('/v1/flags')).seen.path).toBe('/v1/flags');
    expect((await request('/v1/flags?')).seen.path).toBe('/v1/flags');
  });

  test('the query: decoded, repeated names as arrays, a fresh object per call', async () => {
    const { seen } = await request('/v1/flags?limit=5&tag=a&tag=b&name=caf%C3%A9+bar&empty=&bare');
    expect(seen.query).toEqual({ limit: '5', tag: ['a', 'b'], name: 'café bar', empty: '', bare: '' });
    expect(seen.queryIsFresh).toBe(true);
    expect((await request('/v1/flags')).seen.query).toEqual({});
  });

  test('the content length: the declared number, none when absent', async () => {
    expect((await request('/x', { method: 'POST', body: 'hello' })).seen.contentLength).toBe(5);
    expect((await request('/x', { method: 'POST', headers: { 'Content-Length': 0 }, body: '' })).seen.contentLength).toBe(0);
    expect((await request('/x')).seen.contentLength).toBeNull();
    // Chunked: no declared length.
    const chunked = await new Promise<Answer>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/x', method: 'POST' }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, seen: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.write('part one, ');
      req.end('part two');
    });
    expect(chunked.seen.contentLength).toBeNull();
  });

  test('a repeated header is one value, joined by node', async () => {
    const { seen } = await request('/x', { headers: { 'X-Repeated': ['a', 'b'] } });
    expect(seen.header).toBe('a, b');
  });
});

describe('address, host and protocol through trust', () => {
  const forwarded = { 'X-Forwarded-For': '6.6.6.6, 203.0.113.7', 'X-Forwarded-Host': 'play.example.com, inner.local', 'X-Forwarded-Proto': 'HTTPS' };

  test('no proxy trusted: the peer, the Host header and http, whatever X-Forwarded-* says', async () => {
    const { seen } = await request('/x', { headers: { Host: 'api.local:8080', ...forwarded } });
    expect({ ip: seen.ip, host: seen.host, protocol: seen.protocol }).toEqual({ ip: '127.0.0.1', host: 'api.local:8080', protocol: 'http' });
  });

  test('one trusted hop: the entry it appended, and the first X-Forwarded-Host and -Proto', async () => {
    trust = parseTrustedProxies('1');
    const { seen } = await request('/x', { headers: { Host: 'api.local:8080', ...forwarded } });
    expect({ ip: seen.ip, host: seen.host, protocol: seen.protocol }).toEqual({ ip: '203.0.113.7', host: 'play.example.com', protocol: 'https' });
  });

  test('a trusted list: the first address off the list, walking from the peer', async () => {
    trust = parseTrustedProxies('loopback, 10.0.0.0/8');
    const { seen } = await request('/x', { headers: { 'X-Forwarded-For': '6.6.6.6, 198.51.100.4, 10.1.2.3' } });
    expect(seen.ip).toBe('198.51.100.4');
    // Without X-Forwarded-Host or -Proto, the Host header and the connection's own protocol.
    expect(seen.host).toBe(`127.0.0.1:${port}`);
    expect(seen.protocol).toBe('http');
  });

  test('a list the peer is not on: nothing forwarded counts', async () => {
    trust = parseTrustedProxies('10.0.0.0/8');
    const { seen } = await request('/x', { headers: { Host: 'api.local', ...forwarded } });
    expect({ ip: seen.ip, host: seen.host, protocol: seen.protocol }).toEqual({ ip: '127.0.0.1', host: 'api.local', protocol: 'http' });
  });
});

describe('the answer', () => {
  test('a body is JSON with its exact length; set headers go out', async () => {
    respond = (exchange) => {
      exchange.status = 201;
      exchange.body = { name: 'café', n: 1 };
      exchange.setHeader('X-One', 1);
      exchange.setHeaders({ 'X-Two': 'two' });
    };
    const answer = await request('/x');
    expect(answer.status).toBe(201);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.text));
    expect(JSON.parse(answer.text)).toEqual({ name: 'café', n: 1 });
    expect(answer.headers['x-one']).toBe('1');
    expect(answer.headers['x-two']).toBe('two');
  });

  test.each([
    ['204', 204, { ignored: true }],
    ['304', 304, { ignored: true }],
    ['a null body', 200, null],
  ])('%s carries no body and no Content-Type', async (_name, status, body) => {
    respond = (exchange) => {
      exchange.status = status;
      exchange.body = body;
    };
    const answer = await request('/x');
    expect(answer.status).toBe(status);
    expect(answer.text).toBe('');
    expect(answer.headers['content-type']).toBeUndefined();
  });

  test('HEAD: the same headers and length as GET, no body', async () => {
    respond = (exchange) => {
      exchange.body = { fixed: 'answer' };
    };
    const get = await request('/same');
    const head = await request('/same', { method: 'HEAD' });
    expect(head.status).toBe(get.status);
    expect(head.text).toBe('');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
  });
});
