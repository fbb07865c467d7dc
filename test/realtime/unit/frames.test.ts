/**
 * Parsing client frames: TypeBox schemas compiled by ajv, as the API validates bodies, with the field
 * that is wrong in `details.field`. The same refusals on a live socket: test/realtime/socket.test.ts.
 */
import { parseClientFrame } from '@hearth/realtime';

function fieldOf(text: string): string | undefined {
  const parsed = parseClientFrame(text);
  if (!('error' in parsed)) return undefined;
  expect(parsed.error.code).toBe('invalid-request');
  expect(parsed.error.message).toEqual(expect.any(String));
  return (parsed.error.details as { field: string }).field;
}

test('the four client frames, with and without an id', () => {
  expect(parseClientFrame('{"v":1,"type":"authorize","id":"a","payload":{"token":"t"}}')).toEqual({ type: 'authorize', id: 'a', token: 't' });
  expect(parseClientFrame('{"v":1,"type":"subscribe","id":2,"payload":{"sessionId":"s"}}')).toEqual({ type: 'subscribe', id: 2, sessionId: 's' });
  expect(parseClientFrame('{"v":1,"type":"unsubscribe","payload":{"sessionId":"s"}}')).toEqual({ type: 'unsubscribe', sessionId: 's' });
  expect(parseClientFrame('{"v":1,"type":"ping"}')).toEqual({ type: 'ping' });
  expect(parseClientFrame('{"v":1,"type":"ping","payload":{}}')).toEqual({ type: 'ping' });
  expect(parseClientFrame(`{"v":1,"type":"ping","id":${Number.MAX_SAFE_INTEGER}}`)).toEqual({ type: 'ping', id: Number.MAX_SAFE_INTEGER });
});

test.each([
  ['{"v":1,', 'frame'],
  ['[1,2]', 'frame'],
  ['null', 'frame'],
  ['"ping"', 'frame'],
  ['{"v":1}', 'type'],
  ['{"v":1,"type":5}', 'type'],
  ['{"v":1,"type":"dance"}', 'type'],
  ['{"v":1,"type":"constructor"}', 'type'],
  ['{"v":1,"type":"toString"}', 'type'],
  ['{"type":"ping"}', 'v'],
  ['{"v":2,"type":"ping"}', 'v'],
  ['{"v":"1","type":"ping"}', 'v'],
  ['{"v":1,"type":"ping","extra":true}', 'extra'],
  ['{"v":1,"type":"ping","payload":[]}', 'payload'],
  ['{"v":1,"type":"ping","payload":null}', 'payload'],
  ['{"v":1,"type":"ping","payload":{"a":1}}', 'payload.a'],
  ['{"v":1,"type":"ping","id":{}}', 'id'],
  ['{"v":1,"type":"ping","id":""}', 'id'],
  ['{"v":1,"type":"ping","id":1.5}', 'id'],
  [`{"v":1,"type":"ping","id":${Number.MAX_SAFE_INTEGER + 2}}`, 'id'],
  [`{"v":1,"type":"ping","id":"${'i'.repeat(65)}"}`, 'id'],
  ['{"v":1,"type":"authorize"}', 'payload.token'],
  ['{"v":1,"type":"authorize","payload":{"token":42}}', 'payload.token'],
  ['{"v":1,"type":"authorize","payload":{"token":""}}', 'payload.token'],
  [`{"v":1,"type":"authorize","payload":{"token":"${'t'.repeat(4001)}"}}`, 'payload.token'],
  ['{"v":1,"type":"authorize","payload":{"token":"t","extra":1}}', 'payload.extra'],
  ['{"v":1,"type":"subscribe","payload":{}}', 'payload.sessionId'],
  [`{"v":1,"type":"subscribe","payload":{"sessionId":"${'s'.repeat(65)}"}}`, 'payload.sessionId'],
  ['{"v":1,"type":"unsubscribe","payload":{"sessionId":""}}', 'payload.sessionId'],
  ['{"v":1,"type":"unsubscribe","payload":{"sessionId":"s","more":1}}', 'payload.more'],
])('%s is refused naming %s', (text, field) => {
  expect(fieldOf(text)).toBe(field);
});

test('a usable id is echoed on the refusal of the rest of the frame; an unusable one is not', () => {
  expect(parseClientFrame('{"v":2,"type":"ping","id":"echo-me"}')).toMatchObject({ id: 'echo-me', error: { details: { field: 'v' } } });
  expect(parseClientFrame('{"v":1,"type":"subscribe","id":7,"payload":{}}')).toMatchObject({ id: 7, error: { details: { field: 'payload.sessionId' } } });
  expect(parseClientFrame('{"v":1,"type":"ping","id":[]}')).not.toHaveProperty('id');
});
