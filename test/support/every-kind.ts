/**
 * One document of every kind Hearth applies, in one project: the fixture of the tests that walk every
 * kind (`hearth get` and `describe`, the operator's undo of every field). Names start with `prefix`:
 * `<prefix>-plan`, project `<prefix>`, environment `<prefix>-live`, `<prefix>-gold`... Each kind's
 * document is the first of its kind, so a test adds what it needs besides after them.
 */
import type { AnyManifest } from '@hearth/core/manifests';
import { dashboardMember } from './dashboards';
import * as m from './manifests';

export function oneOfEveryKind(prefix: string, { licenceProducts = ['editor'] }: { licenceProducts?: string[] } = {}): AnyManifest[] {
  const env = `${prefix}-live`;
  const gold = `${prefix}-gold`;
  return [
    m.plan(`${prefix}-plan`),
    m.project(prefix, { plan: `${prefix}-plan` }),
    m.environment(env, prefix),
    m.serverKey(`${prefix}-key`, env),
    m.licenceKey(`${prefix}-licence`, prefix, licenceProducts),
    m.gameConfig(`${prefix}-config`, { environment: env, values: [{ key: 'motd', type: 'string', value: 'hi' }], flags: [{ name: 'f', enabled: true }] }),
    m.legalDocument(`${prefix}-terms`, { environment: env, title: 'Terms', url: 'https://example.com/terms', version: '1', required: true }),
    m.tour(`${prefix}-tour`, { environment: env, name: 'Basics' }),
    m.blogCategory(`${prefix}-news`, { environment: env, name: 'News' }),
    m.blogPost(`${prefix}-post`, {
      environment: env,
      title: 'Hello',
      category: `${prefix}-news`,
      status: 'published',
      publishedAt: '2026-01-02T00:00:00Z',
      content: { blocks: [{ type: 'heading', level: 2, text: 'Hi' }] },
    }),
    m.realm(`${prefix}-season`, { environment: env, number: 1, name: 'Season 1', startAt: '2026-01-01T00:00:00Z', endAt: '2026-04-01T00:00:00Z' }),
    m.currency(gold, { environment: env, name: 'Gold', scope: 'account', kind: 'balance', max: 1000000 }),
    m.itemType(`${prefix}-potion`, {
      environment: env,
      name: 'Potion',
      category: 'consumable',
      ownership: 'counted',
      purchasable: true,
      prices: [{ currencyKey: gold, amount: 10 }],
    }),
    m.cardType(`${prefix}-archer`, {
      environment: env,
      slug: 'archer',
      name: 'Archer',
      perDeckLimit: 3,
      purchasable: true,
      prices: [{ currencyKey: gold, amount: 50 }],
    }),
    m.cardTemplate(`${prefix}-foil`, { environment: env, name: 'Foil', data: { finish: 'foil' } }),
    m.skillTree(`${prefix}-tree`, {
      environment: env,
      name: 'Combat',
      nodes: [
        { key: 'slash', name: 'Slash', prices: [{ currencyKey: gold, amount: 10 }] },
        { key: 'cleave', name: 'Cleave', parents: ['slash'] },
      ],
    }),
    dashboardMember(`${prefix}-member`, { project: prefix, subject: 'someone', environments: [{ environment: env, permissions: ['open_dashboard'] }] }),
    m.product(`${prefix}-product`, {
      environment: env,
      sku: 'gold-pack',
      name: 'Gold pack',
      storeItemId: 1,
      entitlement: 'gold-pack',
      prices: [{ currency: 'USD', amount: 199 }],
    }),
  ];
}
