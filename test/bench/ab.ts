/**
 * A/B of two API servers measured at the same moment, for telling what a change does: both on the
 * server's core, each loaded by a loader of its own with the same job of one bench target, so the
 * machine's drift (bare koa alone swings 2x within a minute here) touches both alike. Two copies of
 * the same server read within ±2% of each other, round after round.
 *
 *   AB_TARGET=blog-posts AB_A_TREE=/tmp/base node --import tsx test/bench/ab.ts
 *
 * A and B run this tree's server (test/bench/servers/hearth-api.ts), or another checkout's
 * (AB_A_TREE, AB_B_TREE: a `git worktree` of the code before a change, its node_modules linked to
 * this one's with @hearth/* pointing into it); AB_A_ENV / AB_B_ENV add variables
 * (e.g. `BENCH_EXPERIMENT=no-redis`), AB_A_NODE_ARGS / AB_B_NODE_ARGS node flags (e.g. `--cpu-prof`).
 * Prints each round's req/s and µs per request of both and the median of B/A.
 *
 * `AB_A_TREE=koa` puts bare koa's hello-world on side A: B/A is then the read's share of koa at the same
 * moment, on the same core (not `make bench`'s figure, which has each alone on the core, in turns).
 */
import path from 'node:path';
import Redis from 'ioredis';
import globalSetup from '../support/global-setup';
import { TEST_REDIS_URL } from '../support/env';
import { BENCH_DIR, startChild, keepRedisOffServerCore } from './child';
import { TARGETS, measured, phaseJob } from './http';
import type { PhaseJob } from './loader';

/** As `make bench` loads each target. */
const CONNECTIONS = 50;

/** Side A as bare koa, for the read's share of it at the same moment. */
const KOA = 'koa';
const scriptOf = (tree: string | undefined) =>
  tree === KOA ? 'servers/koa-hello.ts' : tree ? path.relative(BENCH_DIR, path.join(tree, 'test/bench/servers/hearth-api.ts')) : 'servers/hearth-api.ts';
const envOf = (spec: string | undefined): Record<string, string> =>
  Object.fromEntries(
    (spec ?? '')
      .split(' ')
      .filter(Boolean)
      .map((kv) => kv.split('=') as [string, string]),
  );

async function main(): Promise<void> {
  await globalSetup();
  const target = TARGETS.find((t) => t.id === (process.env.AB_TARGET ?? 'blog-posts'))!;
  const seconds = Number(process.env.AB_SECONDS ?? 3);
  const rounds = Number(process.env.AB_ROUNDS ?? 8);
  const side = (name: string, tree: string | undefined, env: Record<string, string>) => {
    const server = startChild(scriptOf(tree), {
      role: 'server',
      placement: 'split',
      stdout: `/tmp/ab-${name}.log`,
      env,
      nodeArgs: (process.env[`AB_${name}_NODE_ARGS`] ?? '').split(' ').filter(Boolean),
    });
    const loader = startChild('loader.ts', { role: 'loader', placement: 'split', stdout: 'inherit' });
    return { name, server, loader };
  };
  const a = side('A', process.env.AB_A_TREE, envOf(process.env.AB_A_ENV));
  const b = side('B', process.env.AB_B_TREE, envOf(process.env.AB_B_ENV));
  const redis = new Redis(TEST_REDIS_URL);
  const putBack = await keepRedisOffServerCore(redis, console.log);
  try {
    const jobs = await Promise.all(
      [a, b].map(async (s) => {
        const ready = await s.server.next('ready');
        await s.loader.next('ready');
        const prepared = await (s.name === 'A' && process.env.AB_A_TREE === KOA ? TARGETS.find((t) => t.id === 'koa')! : target).prepare(ready, s.server);
        return (durationSeconds: number): PhaseJob => phaseJob(prepared, CONNECTIONS, durationSeconds);
      }),
    );
    const both = (d: number) => Promise.all([measured(a.server, a.loader, redis, jobs[0](d)), measured(b.server, b.loader, redis, jobs[1](d))]);
    await both(3);
    const ratios: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const [fa, fb] = await both(seconds);
      ratios.push(fb.reqPerSec / fa.reqPerSec);
      console.log(
        `A ${Math.round(fa.reqPerSec)} req/s ${fa.serverMicrosPerRequest.toFixed(1)} µs core ${fa.serverCore.toFixed(2)} | B ${Math.round(fb.reqPerSec)} req/s ${fb.serverMicrosPerRequest.toFixed(1)} µs core ${fb.serverCore.toFixed(2)} | B/A ${ratios[i].toFixed(3)} µs A/B ${(fa.serverMicrosPerRequest / fb.serverMicrosPerRequest).toFixed(3)}`,
      );
    }
    const sorted = [...ratios].sort((x, y) => x - y);
    console.log(`median B/A ${sorted[Math.floor(sorted.length / 2)].toFixed(3)} over ${rounds} rounds`);
  } finally {
    for (const s of [a, b]) {
      s.loader.send({ type: 'stop' });
      s.server.send({ type: 'stop' });
    }
    await Promise.all([a, b].flatMap((s) => [s.server.exited, s.loader.exited]));
    putBack();
    await redis.quit();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
