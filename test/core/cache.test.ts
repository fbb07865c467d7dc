/**
 * The per-process cache: entries live for their time-to-live, and expired ones do not pile up. The
 * clock is jest's (Date.now included), so a slow machine cannot let entries expire mid-test.
 */
import { TtlCache } from '@hearth/core';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

/** Moves the cache's clock (Date.now) on. */
function pass(ms: number): void {
  jest.setSystemTime(Date.now() + ms);
}

test('an entry is served until its time-to-live, then gone', () => {
  const cache = new TtlCache<string, number>(60);
  cache.set('a', 1);
  expect(cache.get('a')).toBe(1);
  pass(59);
  expect(cache.get('a')).toBe(1);
  pass(1);
  expect(cache.get('a')).toBeUndefined();
});

test('expired entries that are never read again are dropped by later writes', () => {
  const cache = new TtlCache<string, number>(50);
  for (let i = 0; i < 1000; i++) cache.set(`old-${i}`, i);
  expect(cache.size).toBe(1000);
  pass(70);
  cache.set('new', 1);
  expect(cache.size).toBe(1);
  expect(cache.get('new')).toBe(1);
});

test('entries with a longer time-to-live of their own survive the sweep', () => {
  const cache = new TtlCache<string, number>(50);
  cache.set('long', 1, 10_000);
  cache.set('short', 2);
  pass(70);
  cache.set('new', 3);
  expect([cache.get('long'), cache.get('short'), cache.get('new')]).toEqual([1, undefined, 3]);
});

test('the size bound drops the oldest entry', () => {
  const cache = new TtlCache<string, number>(60_000, 3);
  for (const key of ['a', 'b', 'c', 'd']) cache.set(key, 1);
  expect([cache.get('a'), cache.get('b'), cache.get('d')]).toEqual([undefined, 1, 1]);
});
