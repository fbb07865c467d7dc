/** randomId: base62 ids of the asked length from the CSPRNG, drawn from a pool refilled 4 KB at a time. */
import { randomId } from '@hearth/core';

test('ids are base62 of the asked length, all distinct across many pool refills', () => {
  const ids = Array.from({ length: 5_000 }, () => randomId()); // ~24 bytes each: ~30 refills of 4 KB
  for (const id of ids) expect(id).toMatch(/^[0-9a-zA-Z]{22}$/);
  expect(new Set(ids).size).toBe(ids.length);
  expect(randomId(7)).toMatch(/^[0-9a-zA-Z]{7}$/);
  expect(randomId(300)).toMatch(/^[0-9a-zA-Z]{300}$/);
});

test('every character is about equally likely (no bias from the byte → character mapping)', () => {
  const counts = new Map<string, number>();
  const text = Array.from({ length: 2_000 }, () => randomId(31)).join(''); // 62,000 characters
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  expect(counts.size).toBe(62);
  // 1,000 expected each; a biased mapping (byte % 62 without rejection) gives the first 8 ~1,190.
  const chiSquare = [...counts.values()].reduce((sum, n) => sum + (n - 1_000) ** 2 / 1_000, 0);
  expect(chiSquare).toBeLessThan(120); // 61 degrees of freedom: p < 1e-5 above ~120
});
