/**
 * docs/cli.md: every failure of `hearth` is one line on stderr and exit 1, never a stack trace. The
 * commands come from the commander program itself (apps/cli/src/program.ts), so a command added there
 * is walked here without this file changing:
 * - a group (`hearth keys`) named without one of its commands, and with one it does not have, and
 *   every command given an option it does not take (commander's own refusals): in this process, the
 *   program's output captured, and once through the real executable;
 * - every command reaching its action with a bad input, through the real executable: its required
 *   options and arguments given, but no database (DATABASE_URL unset, no `.hearth/` in its folder),
 *   or the bad value named in BAD_INPUT for the commands that need none.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Command, CommanderError } from 'commander';
import { CliError } from '../../apps/cli/src/output';
import { buildProgram, isGroup } from '../../apps/cli/src/program';
import { type CliResult, runHearth, tempDir } from './run-hearth';

jest.setTimeout(300_000);

interface Named {
  /** The words after `hearth`: `['keys', 'create']`. */
  words: string[];
  command: Command;
}

function everyCommand(command: Command, words: string[] = []): Named[] {
  return command.commands.flatMap((sub) => {
    const named = [...words, sub.name()];
    return [{ words: named, command: sub }, ...everyCommand(sub, named)];
  });
}

const program = buildProgram();
const commands = everyCommand(program);
const groups = [{ words: [] as string[], command: program }, ...commands.filter((c) => isGroup(c.command))];
const leaves = commands.filter((c) => c.command.commands.length === 0);

const folder = tempDir();
const aFile = path.join(folder, 'a-file');
fs.writeFileSync(aFile, 'not a folder\n');

/** Commands that need no database: the bad input given to them instead. */
const BAD_INPUT: Record<string, string[]> = {
  crds: ['--chart', path.join(folder, 'no-chart')],
  dev: ['--data-dir', aFile],
};

/** What reaches a command's action: each required option and argument given a value. */
function actionArguments(named: Named): string[] {
  const key = named.words.join(' ');
  if (BAD_INPUT[key]) return [...named.words, ...BAD_INPUT[key]];
  const options = named.command.options.filter((o) => o.mandatory).flatMap((o) => [o.long ?? o.short ?? '', 'x1']);
  const args = named.command.registeredArguments.filter((a) => a.required).map(() => 'x1');
  return [...named.words, ...args, ...options];
}

/** Exit 1, exactly one line on stderr starting `hearth: `, and nothing of a stack trace. */
function expectOneLineFailure(run: Pick<CliResult, 'code' | 'stderr'>, label: string): string {
  const lines = run.stderr.split('\n').filter((line) => line.trim() !== '');
  expect({ label, code: run.code, lines: lines.length }).toEqual({ label, code: 1, lines: 1 });
  expect(lines[0]).toMatch(/^hearth: \S/);
  expect(lines[0]).not.toMatch(/\bat \S+ \(|\bat .*:\d+:\d+|Error:\s*$/);
  return lines[0];
}

/** At most two commands at a time (the machine is shared). */
async function inTurns<T, R>(items: T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]);
    }
  };
  await Promise.all([worker(), worker()]);
  return results;
}

test('the program has groups and commands to walk', () => {
  expect(groups.length).toBeGreaterThan(5);
  expect(leaves.length).toBeGreaterThan(20);
  // `hearth dev` has commands (`hearth dev store …`) and runs itself: not a group that refuses to.
  const dev = program.commands.find((c) => c.name() === 'dev')!;
  expect([dev.commands.length > 0, isGroup(dev)]).toEqual([true, false]);
});

/** Runs the program in this process as `hearth <words>`: what it would print on stderr, and how it ended. */
async function inProcess(words: string[]): Promise<{ stderr: string; code: number; thrown?: unknown }> {
  const ours = buildProgram();
  let stderr = '';
  const quiet = (command: Command) => {
    command.exitOverride().configureOutput({ writeErr: (text) => (stderr += text), writeOut: () => undefined });
    command.commands.forEach(quiet);
  };
  quiet(ours);
  try {
    await ours.parseAsync(['node', 'hearth', ...words]);
    return { stderr, code: 0 };
  } catch (err) {
    // commander's own refusals end with its exit code; a command's failure is what main.ts prints, `hearth: <message>`.
    if (err instanceof CommanderError) return { stderr, code: err.exitCode };
    if (err instanceof CliError) return { stderr: `${stderr}hearth: ${err.message}\n`, code: 1, thrown: err };
    return { stderr, code: -1, thrown: err };
  }
}

test('a group named without a command, or with one it does not have, says which it has in one line', async () => {
  for (const { words, command } of groups) {
    const names = command.commands.map((c) => c.name());
    const none = expectOneLineFailure(await inProcess(words), `hearth ${words.join(' ')}`);
    expect(none).toContain(names.join(', '));
    const unknown = expectOneLineFailure(await inProcess([...words, 'no-such-command']), `hearth ${words.join(' ')} no-such-command`);
    expect(unknown).toContain("'no-such-command'");
  }
});

test('every command refuses an option it does not take (or a required one missing) in one line, pointing at its --help', async () => {
  for (const { words } of leaves) {
    const line = expectOneLineFailure(await inProcess([...words, '--no-such-option']), `hearth ${words.join(' ')} --no-such-option`);
    expect(line).toContain(`(hearth ${words.join(' ')} --help shows what it takes)`);
  }
});

test('the real executable prints those refusals as one line on stderr and exits 1', async () => {
  expect(expectOneLineFailure(await runHearth(['keys'], {}), 'hearth keys')).toBe(
    'hearth: name a command of hearth keys: create, list, revoke (hearth keys --help)',
  );
  expect(expectOneLineFailure(await runHearth(['keys', 'create', '--name', 'ci'], {}), 'hearth keys create --name ci')).toBe(
    "hearth: required option '--environment <appKey>' not specified (hearth keys create --help shows what it takes)",
  );
});

test('every command that reaches its action with a bad input fails in one line (the real executable)', async () => {
  const runs = await inTurns(leaves, async (named) => {
    const args = actionArguments(named);
    return { args, line: expectOneLineFailure(await runHearth(args, {}, 60_000, folder), `hearth ${args.join(' ')}`) };
  });
  // The action itself answered, not commander (whose refusals point at --help).
  expect(runs.filter((r) => r.line.includes('--help')).map((r) => r.args.join(' '))).toEqual([]);
});
