/**
 * Core's refusals on the command line (apps/cli/src/refusals.ts): the field core names is said as the
 * flag that carried it, whether core names it relative to its input or still under a request part.
 */
import { Refusal, refuse } from '@hearth/core';
import { refusalOnTheCommandLine } from '../../apps/cli/src/refusals';

const FLAGS = { realmId: '--realm', amount: '--amount' };

test('a refused field is named by its flag, with the code and core’s message', () => {
  const relative = refusalOnTheCommandLine(refuse.invalid('realmId', 'This currency is held on the account inventory.'), FLAGS);
  expect(relative.message).toBe('invalid-request (--realm): This currency is held on the account inventory.');
  // Core's refusals that still name the request part come out the same: never `body.realmId`.
  const prefixed = refusalOnTheCommandLine(refuse.invalid('body.realmId', 'Name the inventory by inventoryId or by realmId, not both.'), FLAGS);
  expect(prefixed.message).toBe('invalid-request (--realm): Name the inventory by inventoryId or by realmId, not both.');
  expect(prefixed.message).not.toMatch(/body\./);
});

test('a refusal without a field, or with one no flag carries, keeps just its code and message', () => {
  expect(refusalOnTheCommandLine(new Refusal('insufficient-balance', 'Not enough gems.'), FLAGS).message).toBe('insufficient-balance: Not enough gems.');
  expect(refusalOnTheCommandLine(refuse.invalid('data', 'Too big.'), FLAGS).message).toBe('invalid-request: Too big.');
});
