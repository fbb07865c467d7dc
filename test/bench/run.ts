/**
 * `make bench` (`npm run bench`): throughput and latency of the HTTP API against bare koa, from one
 * run on this machine, then the realtime bench (test/bench/realtime.ts) when it exists. Prints a
 * table, checks the targets, and writes the figures into docs/performance.md.
 *
 *   npm run bench -- [--duration S] [--warmup S] [--connections N] [--only koa,players-me,flags-304,legal-documents,legal-documents-cors,fastify-cors,blog-posts,commerce-catalog,saves-put,currency-credit,currency-credit-hot,item-purchase,card-purchase,skill-node-unlock,stat-increment,realtime]
 *                    [--share 0.8] [--cpu-prof DIR] [--no-docs] [--strict]
 * Runs with --only, another --share or a BENCH_EXPERIMENT (see servers/hearth-api.ts) leave
 * docs/performance.md alone.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import globalSetup from '../support/global-setup';
import { BENCH_DIR, pinningNote } from './child';
import { DEFAULT_LOG_DIR, type HttpBenchOptions, runHttpBench, type TargetResult } from './http';
import { evaluate, machineFacts, realtimeVerdicts, renderDocsBlock, renderTable, writeDocs, type RealtimeOutcome, type Verdict } from './report';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: process.env.BENCH_DURATION ?? '10' },
    warmup: { type: 'string', default: process.env.BENCH_WARMUP ?? '5' },
    connections: { type: 'string', default: process.env.BENCH_CONNECTIONS ?? '50' },
    share: { type: 'string', default: '0.8' },
    only: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'no-docs': { type: 'boolean', default: false },
    strict: { type: 'boolean', default: process.env.BENCH_STRICT === '1' },
  },
});

const log = (line: string) => process.stderr.write(line + '\n');

/** Runs the realtime bench as a child and collects the figures it prints on its `BENCH_JSON ` line. */
async function runRealtimeBench(): Promise<RealtimeOutcome> {
  const script = path.join(BENCH_DIR, 'realtime.ts');
  if (!fs.existsSync(script)) {
    log('realtime: test/bench/realtime.ts does not exist; skipped');
    return null;
  }
  log('realtime: running test/bench/realtime.ts');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
    let figures: RealtimeOutcome = null;
    let pending = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (line.startsWith('BENCH_JSON ')) figures = JSON.parse(line.slice('BENCH_JSON '.length));
        else log(`  realtime | ${line}`);
      }
    });
    child.on('exit', (code) => {
      if (pending.startsWith('BENCH_JSON ')) figures = JSON.parse(pending.slice('BENCH_JSON '.length));
      if (code !== 0) return reject(new Error(`test/bench/realtime.ts exited with code ${code}`));
      if (figures === null) return reject(new Error('test/bench/realtime.ts printed no BENCH_JSON line'));
      resolve(figures);
    });
  });
}

async function main(): Promise<void> {
  const options: HttpBenchOptions = {
    warmupSeconds: Number(values.warmup),
    durationSeconds: Number(values.duration),
    connections: Number(values.connections),
    loadShare: Number(values.share),
    cpuProfDir: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined,
    only: values.only?.split(','),
    logDir: DEFAULT_LOG_DIR,
  };
  await globalSetup(); // the migrated template the server's fresh database is copied from
  const machine = await machineFacts();
  log(`machine: ${machine.cpus}× ${machine.cpuModel}, node ${machine.node}; ${pinningNote()}`);
  log(
    `method: warm-up ${options.warmupSeconds} s, peak ${options.durationSeconds} s with ${options.connections} connections, then ${options.loadShare * 100}% of peak for ${options.durationSeconds} s`,
  );

  const http: TargetResult[] = await runHttpBench(options, log);
  // A failed realtime bench is reported with the HTTP figures rather than losing them.
  let realtimeFailed = false;
  const realtime =
    options.only && !options.only.includes('realtime')
      ? null
      : await runRealtimeBench().catch((err: Error) => {
          realtimeFailed = true;
          log(`realtime: ${err.message}`);
          return { failed: err.message };
        });

  const verdicts: Verdict[] = [...evaluate(http, options.loadShare), ...realtimeVerdicts(realtime)];
  process.stdout.write('\n' + renderTable(http, realtime, verdicts, options.loadShare) + '\n');

  const results = { at: new Date().toISOString(), machine, pinning: pinningNote(), options, http, realtime, verdicts };
  fs.writeFileSync(path.join(options.logDir, 'results.json'), JSON.stringify(results, null, 2));
  if (process.env.BENCH_EXPERIMENT) log(`experiment: BENCH_EXPERIMENT=${process.env.BENCH_EXPERIMENT} (the figures are not the product's)`);
  if (!values['no-docs'] && !options.only && options.loadShare === 0.8 && !process.env.BENCH_EXPERIMENT) {
    writeDocs(renderDocsBlock(results));
    log('docs/performance.md: figures of this run written');
  }
  log(`figures as JSON: ${path.join(options.logDir, 'results.json')}`);
  const missed = verdicts.filter((v) => !v.met);
  if (realtimeFailed || (missed.length > 0 && values.strict)) process.exitCode = 1;
}

main().catch((err) => {
  console.error(`bench failed: ${err instanceof Error ? err.stack : err}`);
  process.exit(1);
});
