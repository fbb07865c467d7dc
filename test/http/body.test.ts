/** The media type and JSON rules of request bodies (apps/api/src/http/body.ts), without a server. */
import { Refusal } from '@hearth/core';
import { isJsonMediaType, parseJsonBody } from '../../apps/api/src/http/body';

test.each(['application/json', 'APPLICATION/JSON', 'application/json; charset=utf-8', 'application/json; charset="UTF-8"', 'application/json; profile=x'])(
  '%s is JSON',
  (header) => expect(isJsonMediaType(header)).toBe(true),
);

test.each(['', 'text/plain', 'application/json; charset=latin1', 'application/json;', 'application/json; =x', 'application/ld+json', '*/*'])(
  '%j is not JSON',
  (header) => expect(isJsonMediaType(header)).toBe(false),
);

function refusalOf(text: string): unknown {
  try {
    parseJsonBody(text);
  } catch (err) {
    return err instanceof Refusal ? err.toBody() : err;
  }
  return 'parsed';
}

test('JSON values of every kind parse, null included', () => {
  expect(parseJsonBody('{"a": [1, {"b": null}]}')).toEqual({ a: [1, { b: null }] });
  expect(parseJsonBody(' null ')).toBeNull();
  expect(parseJsonBody('"x"')).toBe('x');
  expect(parseJsonBody('{"constructor": "plain", "prototype": 1}')).toEqual({ constructor: 'plain', prototype: 1 });
});

test('malformed JSON is invalid-request naming body', () => {
  expect(refusalOf('{"a":')).toEqual({ error: 'invalid-request', message: 'The body is not valid JSON.', details: { field: 'body' } });
});

test.each([
  '{"__proto__": {}}',
  '{"a": {"__proto__": null}}',
  '[{"\\u005f\\u005fproto\\u005f\\u005f": 1}]',
  '{"constructor": {"prototype": {}}}',
  '{"a": [{"constructor": {"prototype": 1}}]}',
])('%s is refused, naming body', (text) => {
  expect(refusalOf(text)).toEqual({ error: 'invalid-request', message: expect.stringMatching(/__proto__/), details: { field: 'body' } });
  expect(Object.prototype).not.toHaveProperty('polluted');
});
