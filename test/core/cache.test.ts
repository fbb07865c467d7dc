/**
 * The per-process cache: entries live for their time-to-live, and expired ones do not pile up. Its
 * clock is the test's, standing still until moved, so a slow machine cannot let entries expire mid-test.
 */
import { TtlCache } from '@hearth/core';
import { TestClock } from '../support/clock';

let clock: TestClock;
beforeEach(() => {
  clock = new TestClock({ at: 1_000_000 });
});

/** Moves the cache's clock on. */
const pass = (ms: number) => clock.advance(ms);

test('an entry is served until its time-to-live, then gone', async () => {
  const cache = new TtlCache<string, number>(60, undefined, clock);
  cache.set('a', 1);
  expect(cache.get('a')).toBe(1);
  await pass(59);
  expect(cache.get('a')).toBe(1);
  await pass(1);
  expect(cache.get('a')).toBeUndefined();
});

test('expired entries that are never read again are dropped by later writes', async () => {
  const cache = new TtlCache<string, number>(50, undefined, clock);
  for (let i = 0; i < 1000; i++) cache.set(`old-${i}`, i);
  expect(cache.size).toBe(1000);
  await pass(70);
  cache.set('new', 1);
  expect(cache.size).toBe(1);
  expect(cache.get('new')).toBe(1);
});

test('entries with a longer time-to-live of their own survive the sweep', async () => {
  const cache = new TtlCache<string, number>(50, undefined, clock);
  cache.set('long', 1, 10_000);
  cache.set('short', 2);
  await pass(70);
  cache.set('new', 3);
  expect([cache.get('long'), cache.get('short'), cache.get('new')]).toEqual([1, undefined, 3]);
});

test('the size bound drops the oldest entry', () => {
  const cache = new TtlCache<string, number>(60_000, 3, clock);
  for (const key of ['a', 'b', 'c', 'd']) cache.set(key, 1);
  expect([cache.get('a'), cache.get('b'), cache.get('d')]).toEqual([undefined, 1, 1]);
});
